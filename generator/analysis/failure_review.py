"""Every failure the review considers, the worst of each class, and how often a job is
interrupted: review(cluster) -> Review. The cost of one failure is failure_domains.impact.

Rates come from cluster.settings (catalog models' `failure_rate_per_year`, the blueprint's
`design.failure_rates`), resolved once in expand.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from generator.analysis.failure_domains import (
    ClassRow,
    Failure,
    Impact,
    JobRisk,
    Review,
    _Index,
    impact,
    topology,
)
from generator.model import Cluster, Device, NpuServer
from generator.vocab import DomainKind, LinkKind, Plane, Role


def device_kind(d: Device) -> str:
    if d.role == Role.NPU_SERVER:
        return "NPU server"
    if d.role in (Role.STORAGE_NODE, Role.MANAGEMENT_NODE):
        return d.role.replace("-", " ")
    if d.role == Role.BORDER_ROUTER:
        return "border router"
    if d.role == Role.FIREWALL:
        return "firewall"  # vocabulary: display text
    return f"{d.plane} {d.role}"


def failures(cluster: Cluster) -> list[Failure]:
    """Every single failure the review considers, except cables (see `cable_failures`)."""
    settings = cluster.settings
    rate = settings.model_failure_rates
    out = [
        Failure(device_kind(d), d.name, frozenset((d.name,)), rate=rate.get(d.model, 0.0))
        for d in cluster.devices
    ]
    by_rack: dict[str, list[str]] = defaultdict(list)
    for d in cluster.devices:
        by_rack[d.rack].append(d.name)
    for r in cluster.racks:
        if by_rack.get(r.name):
            out.append(
                Failure(
                    f"rack ({r.kind})",
                    r.name,
                    frozenset(by_rack[r.name]),
                    rate=settings.design.failure_rates.rack,
                )
            )
    for cdu in cluster.cdus:
        devices = frozenset(n for rack in cdu.racks for n in by_rack.get(rack, ()))
        out.append(Failure("CDU", cdu.name, devices, rate=settings.design.failure_rates.cdu))
    return out


def cable_failures(cluster: Cluster, plane: str, kind: str) -> list[Failure]:
    """One failure per cable of `plane` and link kind (host | uplink)."""
    rate = cluster.settings.design.failure_rates.cable
    ids = dict.fromkeys(x.cable_id for x in cluster.links if x.plane == plane and x.kind == kind)
    return [
        Failure(
            kind=f"{plane} {kind} cable",
            name=c,
            devices=frozenset(),
            cables=frozenset((c,)),
            rate=rate,
        )
        for c in ids
    ]


CLASS_ORDER = (
    "NPU server",
    "parameter host cable",
    "parameter leaf",
    "parameter uplink cable",
    "parameter spine",
    "parameter core",
    "storage leaf",
    "storage spine",
    "business leaf",
    "business spine",
    "inband access",
    "inband core",
    "oob access",
    "oob core",
    "border router",
    "firewall",
    "storage node",
    "management node",
    "rack (compute)",
    "rack (network)",
    "rack (storage)",
    "rack (management)",
    "CDU",
)


def _severity(i: Impact) -> tuple:
    return (
        i.cards_interrupted,
        i.npu_ports_cut,
        i.cards_slowed,
        max(i.leaf_uplink_lost, i.pod_uplink_lost),
        sum(i.hosts_cut.values()),
        sum(i.hosts_degraded.values()),
    )


def review(cluster: Cluster) -> Review:
    """The failure-domain review: the worst failure of every class, and job interruption rates.
    The pipeline computes it once (generator.analysis.analyse) and hands it to every output."""
    ix = topology(cluster)
    settings = cluster.settings
    rates = {
        "rack": settings.design.failure_rates.rack,
        "cdu": settings.design.failure_rates.cdu,
        "cable": settings.design.failure_rates.cable,
    }
    everything = failures(cluster)
    worst: dict[str, tuple[Failure, Impact]] = {}
    units: dict[str, int] = defaultdict(int)
    per_year: dict[str, float] = defaultdict(float)
    max_rate: dict[str, float] = defaultdict(float)
    impacts: list[tuple[Failure, Impact]] = []
    server_sample: dict[int, tuple[Failure, Impact]] = {}
    for f in everything:
        units[f.kind] += 1
        per_year[f.kind] += f.rate
        max_rate[f.kind] = max(max_rate[f.kind], f.rate)
        if f.kind == "NPU server":  # each costs its own cards; one per size is enough
            name = next(iter(f.devices))
            n = ix.cards.get(name, 0)
            if n not in server_sample:
                server_sample[n] = (f, impact(cluster, f, ix))
            i = server_sample[n][1]
            if worst.get(f.kind) is None or n > worst[f.kind][1].cards_interrupted:
                worst[f.kind] = server_sample[n]
            continue
        i = impact(cluster, f, ix)
        impacts.append((f, i))
        if f.kind not in worst or _severity(i) > _severity(worst[f.kind][1]):
            worst[f.kind] = (f, i)

    for kind, f, i in _cable_worst(cluster, ix):
        worst[kind] = (f, i)
    cable_rate = settings.design.failure_rates.cable
    for plane, link_kind in ((Plane.PARAMETER, LinkKind.HOST), (Plane.PARAMETER, LinkKind.UPLINK)):
        n = len({x.cable_id for x in cluster.links if x.plane == plane and x.kind == link_kind})
        kind = f"{plane} {link_kind} cable"
        units[kind], per_year[kind], max_rate[kind] = n, n * cable_rate, cable_rate

    rows = []
    for kind in sorted(worst, key=lambda k: (CLASS_ORDER.index(k) if k in CLASS_ORDER else 99, k)):
        f, i = worst[kind]
        plane = ""
        if len(f.devices) == 1 and not kind.startswith(("rack", "CDU")):
            plane = cluster.device_by_name[next(iter(f.devices))].plane
        elif kind.endswith("cable"):
            plane = kind.split()[0]
        rows.append(
            ClassRow(
                kind=kind,
                plane=plane,
                units=units[kind],
                rate=max_rate[kind],
                per_year=per_year[kind],
                worst=f.name,
                impact=i,
            )
        )

    jobs = tuple(_job_risks(cluster, ix, everything, impacts))
    model_rates = settings.model_failure_rates
    used = {d.model for d in cluster.devices}
    unrated = tuple(sorted(m for m in used if m in model_rates and not model_rates[m]))
    per = max(ix.cards.values(), default=0)
    return Review(
        cards=sum(ix.cards.values()),
        cards_per_server=per,
        job_sizes=tuple(ix.domains),
        rows=tuple(rows),
        jobs=jobs,
        unrated=unrated,
        rates=rates,
    )


def _cable_worst(cluster: Cluster, ix: _Index) -> Iterable[tuple[str, Failure, Impact]]:
    """The worst parameter-plane host and uplink cable, found without evaluating every cable:
    the host cable reaching the most servers (then legs), the uplink cable carrying the largest
    share of its leaf's uplinks (ties: the lowest cable id)."""
    par = ix.planes.get(Plane.PARAMETER)
    if par is None:
        return
    rate = cluster.settings.design.failure_rates.cable
    if par.cable_legs:
        legs = par.cable_legs
        cable = min(legs, key=lambda c: (-len({h for h, _, _ in legs[c]}), -len(legs[c]), c))
        f = Failure(
            kind="parameter host cable",
            name=cable,
            devices=frozenset(),
            cables=frozenset((cable,)),
            rate=rate,
        )
        yield f.kind, f, impact(cluster, f, ix)
    best: tuple[float, str] | None = None
    for sw, ups in par.up.items():
        per_cable: dict[str, int] = defaultdict(int)
        for _, speed, c in ups:
            per_cable[c] += speed
        for c, speed in per_cable.items():
            key = (-speed / par.up_total[sw], c)
            if best is None or key < best:
                best = key
    if best is not None:
        f = Failure(
            kind="parameter uplink cable",
            name=best[1],
            devices=frozenset(),
            cables=frozenset((best[1],)),
            rate=rate,
        )
        yield f.kind, f, impact(cluster, f, ix)


def _job_risks(
    cluster: Cluster,
    ix: _Index,
    everything: list[Failure],
    impacts: list[tuple[Failure, Impact]],
) -> Iterable[JobRisk]:
    """Interruptions per year of a job of one server and of each reviewed size, the job placed in
    the first domain (in rank order) of its kind."""
    server_rate = {f.name: f.rate for f in everything if f.kind == "NPU server"}
    sizes: dict[int, tuple[list[str], str]] = {}
    if cluster.npu_servers:
        first = cluster.npu_servers[0]
        sizes[ix.cards[first.name]] = ([first.name], f"one server ({first.name})")
    for size, key in ix.domains.items():
        target = next(k for k, total in ix.domain_cards[size].items() if total == size)
        servers = [s for s in cluster.npu_servers if key[s.name] == target]
        label = _domain_label(servers[0], ix.levels[size])
        sizes.setdefault(size, ([s.name for s in servers], label))
    cable_rate = cluster.settings.design.failure_rates.cable
    for size in sorted(sizes):
        members, where = sizes[size]
        job = set(members)
        by_kind: dict[str, float] = defaultdict(float)
        for name in members:
            by_kind["NPU server"] += server_rate.get(name, 0.0)
        for f, i in impacts:
            if f.rate and not i.interrupted.isdisjoint(job):
                by_kind[f.kind] += f.rate
        if cable_rate:
            hit: set[tuple[str, str]] = set()
            for h in members:
                for plane, p in ix.planes.items():
                    ports = p.host_ports.get(h)
                    if not ports:
                        continue
                    if plane == Plane.PARAMETER:
                        hit.update((plane, c) for _, c in ports)
                    elif (plane == Plane.INBAND or ix.storage_path.get(h) == plane) and len(
                        {c for _, c in ports}
                    ) == 1:  # one cable carries every port of the plane
                        hit.add((plane, ports[0][1]))
            for plane, _ in hit:
                by_kind[f"{plane} host cable"] += cable_rate
        total = sum(by_kind.values())
        ranked = tuple(
            sorted(((k, v) for k, v in by_kind.items() if v), key=lambda kv: (-kv[1], kv[0]))
        )
        yield JobRisk(cards=size, servers=len(members), where=where, per_year=total, by_kind=ranked)


def _domain_label(server: NpuServer, level: str) -> str:
    """The domain a job is placed in, by the name every other output gives it."""
    domain = server.domain(level)
    if domain is None:  # level "cluster"
        return "the whole cluster"
    if level == DomainKind.LEAF and len(server.leaves) > 1:
        return f"rail group {domain.name}"
    return f"{level} {domain.name}"


def interruptions_per_day(rate_per_card_year: float, cards: int) -> float:
    """Expected card failures a day for `cards` cards: the arithmetic of §2.2 of the article
    十万亿参数的算力账先算到绝望."""
    return rate_per_card_year * cards / 365.25


def worst_share(rev: Review) -> list[tuple[str, str, int, float]]:
    """(class, unit, cards interrupted, share) for every class whose worst failure interrupts more
    than one server's cards, largest share first."""
    out = []
    for row in rev.rows:
        n = row.impact.cards_interrupted
        if rev.cards and n > rev.cards_per_server:
            out.append((row.kind, row.worst, n, n / rev.cards))
    return sorted(out, key=lambda x: (-x[3], x[0]))
