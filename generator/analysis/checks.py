"""Design rules run on every generate: check(cluster, failures) -> findings. Errors stop the run.

Each rule reads the Cluster and its settings (cluster.settings, resolved once in expand), never
the blueprint itself."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator

from generator.analysis.failure_domains import Review
from generator.analysis.failure_review import review, worst_share
from generator.analysis.finding import ERROR, INFO, WARNING, Check, Finding, accepted
from generator.analysis.hardware import (
    ecmp_limit,
    lossless_class,
    lossless_commands,
    npu_facts,
    npu_nic,
    optic_reach,
    provider,
    switch_capabilities,
    switch_mtu,
)
from generator.analysis.physical import split_ports
from generator.analysis.placement import RequestError, placement
from generator.analysis.redundancy import dad_path, firewall_paths
from generator.errors import YamlPath
from generator.expand.fabric import parse_ratio
from generator.expand.racks import budget_remedy, rack_budget
from generator.model import Cluster, Rack, ip
from generator.vocab import LinkKind, Plane, RackKind, Role, Zone


def check(cluster: Cluster, failures: Review | None = None) -> list[Finding]:
    """Every finding, errors first. `failures` is the failure-domain review when the caller
    already has it (generator.analysis.analyse); otherwise it is computed here."""
    findings = [
        *oversubscription(cluster),
        *ports_left(cluster),
        *pool_usage(cluster),
        *provider(cluster),
        *power_and_cooling(cluster),
        *business_spof(cluster),
        *dad_path(cluster),
        *firewall_paths(cluster),
        *legacy_design(cluster),
        *lossless_class(cluster),
        *lossless_commands(cluster),
        *ecmp_limit(cluster),
        *switch_capabilities(cluster),
        *npu_facts(cluster),
        *npu_nic(cluster),
        *switch_mtu(cluster),
        *optic_reach(cluster),
        *split_ports(cluster),
        *parallel_placement(cluster),
        *growth(cluster),
        *failure_domains(cluster, failures or review(cluster)),
    ]
    order = {ERROR: 0, WARNING: 1, INFO: 2}
    return sorted(
        accepted(findings, cluster.settings.accepted),
        key=lambda f: (order[f.severity], f.code, f.message),
    )


def oversubscription(cluster: Cluster) -> Iterator[Finding]:
    for fabric in cluster.fabrics:
        if not fabric.oversubscription:
            continue
        a, b = parse_ratio(fabric.oversubscription)
        where = ("networks", fabric.plane, "oversubscription")
        capacity_down = fabric.down_lanes * fabric.down_speed
        capacity_up = fabric.uplinks * fabric.up_speed
        worse = capacity_down * b > capacity_up * a
        leaves = cluster.devices_with(Role.LEAF, fabric.plane)
        bad = [d.name for d in leaves if d.down_gbps * b > d.up_gbps * a]
        if worse or bad:
            yield Finding(
                ERROR,
                Check.OVERSUBSCRIPTION,
                f"{fabric.plane} plane leaves exceed {a}:{b}: {capacity_down}G toward hosts, {capacity_up}G up"
                + (f" ({len(bad)} leaves, first {bad[0]})" if bad else ""),
                where,
            )
        else:
            yield Finding(
                INFO,
                Check.OVERSUBSCRIPTION,
                f"{fabric.plane} plane leaf: {capacity_down}G down / {capacity_up}G up "
                f"({_ratio(capacity_down, capacity_up)}), {fabric.tiers} tiers",
                where,
            )
        spines = cluster.devices_with(Role.SPINE, fabric.plane)
        if fabric.tiers == 3:  # a pod still filling up (growth) has spare uplinks, never fewer
            growing = cluster.growth.planned_servers > cluster.growth.servers
            unequal = [
                d.name
                for d in spines
                if d.down_gbps > d.up_gbps or (d.down_gbps < d.up_gbps and not growing)
            ]
            if unequal:
                yield Finding(
                    ERROR,
                    Check.OVERSUBSCRIPTION,
                    f"{fabric.plane} pod spines not 1:1: {unequal[0]}",
                    where,
                )


def _ratio(down: int, up: int) -> str:
    if not up:
        return "no uplinks"
    r = down / up
    return f"{r:g}:1" if r >= 1 else f"1:{1 / r:g}"


def ports_left(cluster: Cluster) -> Iterator[Finding]:
    host_lanes: dict[str, int] = defaultdict(int)
    to_hosts = frozenset((LinkKind.HOST, LinkKind.MGMT))  # members read once (vocab.py)
    for link in cluster.links:
        if link.kind in to_hosts:
            host_lanes[link.b_device] += 1
    for fabric in cluster.fabrics:
        role = (
            Role.LEAF
            if fabric.plane in (Plane.PARAMETER, Plane.STORAGE, Plane.BUSINESS)
            else Role.ACCESS
        )
        partial = [
            (d.name, host_lanes[d.name])
            for d in cluster.devices_with(role, fabric.plane)
            if host_lanes[d.name] < fabric.down_lanes
        ]
        growing = cluster.growth.planned_servers > cluster.growth.servers
        if partial and fabric.plane == Plane.PARAMETER and not growing:  # a plan fills them later
            name, used = partial[0]
            full = fabric.down_lanes * fabric.rails  # cards that fill one leaf (group)
            yield Finding(
                WARNING,
                Check.PORTS_LEFT,
                f"{len(partial)} parameter leaves are not full (e.g. {name} uses {used} of "
                f"{fabric.down_lanes} host lanes): a job there gets fewer cards per leaf (make "
                f"compute.cards a multiple of {full}, or plan the rest with growth.cards)",
                ("compute",),  # vocabulary: blueprint key
            )
        free = sum(fabric.down_lanes - n for _, n in partial)
        yield Finding(
            INFO, Check.PORTS_LEFT, f"{fabric.plane} plane: {free} host lanes free for growth"
        )


def pool_usage(cluster: Cluster) -> Iterator[Finding]:
    for pool in cluster.pools:
        pct = 100 * pool.used / pool.size
        text = f"{pool.plane} pool {ip(pool.network)}/{pool.prefix}: {pool.used:,} of {pool.size:,} addresses ({pct:.1f}%)"
        if pct > 80:
            where = (*(("networks", "management") if Plane(pool.plane).is_management else ("networks",)),
                     pool.plane, "pool")  # fmt: skip
            text += f" (give {'.'.join(where)} a shorter prefix)"
        yield Finding(WARNING if pct > 80 else INFO, Check.POOL_USAGE, text)


def power_and_cooling(cluster: Cluster) -> Iterator[Finding]:
    zone_load: dict[str, float] = defaultdict(float)
    zone_budget: dict[str, float] = defaultdict(float)
    tight: dict[YamlPath, list[Rack]] = defaultdict(list)  # by the setting that removes it
    for rack in cluster.racks:
        kw = rack.load_kw
        zone_load[rack.zone] += kw
        zone_budget[rack.zone] += rack.power_kw
        limit = min(rack.power_kw, rack.cooling_kw)
        if kw > limit:
            yield Finding(
                ERROR,
                Check.RACK_POWER,
                f"rack {rack.name} ({rack.kind}) draws {kw:.1f} kW, over its {limit:g} kW "
                f"{'cooling' if rack.cooling_kw < rack.power_kw else 'power'} budget "
                f"({budget_remedy(rack, kw)})",
                rack_budget(rack),
            )
        elif kw > 0.9 * limit:
            tight[rack_budget(rack)].append(rack)
    for where, racks in tight.items():
        shown = ", ".join(
            f"{r.name} ({r.load_kw:.1f}/{min(r.power_kw, r.cooling_kw):g} kW)" for r in racks[:3]
        ) + (f" and {len(racks) - 3} more" if len(racks) > 3 else "")
        yield Finding(
            WARNING,
            Check.RACK_POWER,
            f"{len(racks)} {racks[0].kind} {'racks have' if len(racks) > 1 else 'rack has'} less "
            f"than 10% power headroom: {shown} "
            f"({budget_remedy(racks[0])})",
            where,
        )
    for zone in sorted(zone_load):
        yield Finding(
            INFO,
            Check.RACK_POWER,
            f"{zone} zone: {zone_load[zone]:.1f} kW in racks budgeted for {zone_budget[zone]:.1f} kW",
        )
    for cdu in cluster.cdus:
        if cdu.load_kw > cdu.capacity_kw:
            yield Finding(
                ERROR,
                Check.CDU_CAPACITY,
                f"{cdu.name} carries {cdu.load_kw:.1f} kW, over {cdu.capacity_kw:g} kW",
                ("zones", "training", "cdu", "capacity_kw"),
            )
    yield from cdu_redundancy(cluster)
    yield from cooling_stated(cluster)


# N+1: "If your system needs four chillers or coolant distribution units (CDUs) to maintain
# performance, N+1 means installing five. If one unit fails, the others can still handle the
# load" (Vertiv, "How N+1 redundancy supports continuous data center cooling",
# https://www.vertiv.com/en-us/about/news-and-insights/articles/educational-articles/how-n1-redundancy-supports-continuous-data-center-cooling).
# The CDUs of a zone are taken to share its secondary loop, so any of them can carry any rack.
def cdu_redundancy(cluster: Cluster) -> Iterator[Finding]:
    """The liquid-cooled zone's CDUs carry its whole load with any one of them out (N+1)."""
    if not cluster.cdus:
        return
    cdus = cluster.cdus
    load = sum(c.load_kw for c in cdus)
    cap = min(c.capacity_kw for c in cdus)
    worst = max(cdus, key=lambda c: c.load_kw / c.capacity_kw)
    fullest = (
        f"fullest {worst.name} at {worst.load_kw:.1f} of {worst.capacity_kw:g} kW "
        f"({worst.load_kw / worst.capacity_kw:.0%})"
    )
    left = (len(cdus) - 1) * cap
    if left >= load:
        yield Finding(
            INFO,
            Check.CDU_CAPACITY,
            f"{len(cdus)} CDUs carry {load:,.1f} kW; with one out the other {len(cdus) - 1} "
            f"hold {left:,.0f} kW (N+1 holds); {fullest}",
        )
        return
    need = math.ceil(load / cap - 1e-9) + 1
    yield Finding(
        WARNING,
        Check.CDU_CAPACITY,
        f"the training zone's {_cdus(len(cdus))} of {cap:g} kW carry {load:,.1f} kW ({fullest}); with one out the rest hold {left:,.0f} kW, so a CDU "
        f"failure or service stops racks (design rule N+1: any one CDU out, the others carry the "
        f"load). Install {need} CDUs of {cap:g} kW on the zone's shared secondary loop, "
        f"{need - len(cdus)} more than the plan",
        ("zones", "training", "cdu", "capacity_kw"),
    )


def _cdus(n: int) -> str:
    return f"{n} CDU" if n == 1 else f"{n} CDUs"


def cooling_stated(cluster: Cluster) -> Iterator[Finding]:
    """The training zone's cooling, said once with its alternative, and whether the blueprint
    chose it or the schema default (liquid) applied (Settings.cooling_chosen)."""
    racks = [r for r in cluster.racks if r.zone == Zone.TRAINING and r.kind == RackKind.COMPUTE]
    if not racks:
        return
    kind = racks[0].cooling
    heaviest = max(r.load_kw for r in racks)
    budget = min(r.cooling_kw for r in racks)
    how = (
        "chosen in the blueprint"
        if cluster.settings.cooling_chosen
        else "not written, so the schema default applied: write it to make it a choice"
    )
    if kind == "liquid":
        text = (
            f"training zone cooling: liquid, {_cdus(len(cluster.cdus))} (zones.training.cooling, "
            f"{how}). The alternative, air, needs no CDU but must remove up to {heaviest:.1f} kW "
            "per compute rack through room air, and the server model must support air cooling"
        )
    else:
        text = (
            f"training zone cooling: air (zones.training.cooling, {how}), racks of up to "
            f"{heaviest:.1f} kW against a {budget:g} kW cooling budget. The alternative, liquid "
            "(the schema default), adds CDUs (zones.training.cdu.capacity_kw) and takes denser racks"
        )
    yield Finding(INFO, Check.COOLING, text, ("zones", "training", "cooling"))


def business_spof(cluster: Cluster) -> Iterator[Finding]:
    settings = cluster.settings
    if not settings.networks.business.leaf.mlag:
        yield Finding(
            WARNING,
            Check.BUSINESS_SPOF,
            "business leaves are not M-LAG pairs: one leaf failure cuts its servers off (set "
            "networks.business.leaf.mlag: true)",
            ("networks", "business", "leaf", "mlag"),
        )
    if len(cluster.devices_with(Role.SPINE, Plane.BUSINESS)) < 2:
        yield Finding(
            WARNING,
            Check.BUSINESS_SPOF,
            "one business spine: a single point of failure (set networks.business.spine.count: 2)",
            ("networks", "business", "spine", "count"),
        )
    for key, pair in (
        ("router", settings.zones.border.router.pair),  # vocabulary: blueprint key
        ("firewall", settings.zones.border.firewall.pair),  # vocabulary: blueprint key
    ):
        if not pair:
            yield Finding(
                WARNING,
                Check.BUSINESS_SPOF,
                f"a single border {key}: the only way in has no redundancy (set "
                f"zones.border.{key}.pair: true)",
                ("zones", "border", key, "pair"),
            )


def legacy_design(cluster: Cluster) -> Iterator[Finding]:
    """The reasons for leaving the 百卡 design (the QCon 2025 Beijing talk 大模型在超大规模集群性能提升实践:
    "我们从多轨方案转变为单轨方案", "将 NFS 协议改为 DPC")."""
    settings = cluster.settings
    fabric = cluster.fabric(Plane.PARAMETER)
    if settings.networks.parameter.rail == "multi" and fabric and cluster.npu_servers:
        devs = cluster.npu_servers[0].devices
        subnets = len({(d.ip >> (32 - d.prefix), d.prefix) for d in devs})
        yield Finding(
            WARNING,
            Check.MULTI_RAIL,
            f"multi-rail parameter plane: each server is cabled to {fabric.rails} different leaves, "
            "so maintenance cost is high and availability drops (the seeds moved to single-rail for "
            f"this); the {len(devs)} NPU IPs of a server also land in {subnets} subnets (set "
            "networks.parameter.rail: single)",
            ("networks", "parameter", "rail"),
        )
    if settings.networks.storage.mode == "shared":
        yield Finding(
            WARNING,
            Check.SHARED_STORAGE_PLANE,
            "storage traffic shares the business plane: data is exposed to everything that reaches the "
            "business network through the border router, and sample reads compete with business "
            "traffic (set networks.storage.mode: dedicated)",
            ("networks", "storage", "mode"),
        )
    if settings.zones.storage.access == "nfs":
        yield Finding(
            WARNING,
            Check.NFS_ACCESS,
            "storage reached over NFS: an open file protocol (data-leak risk) and slower than the DPC "
            "client (set zones.storage.access: dpc)",
            ("zones", "storage", "access"),
        )


def parallel_placement(cluster: Cluster) -> Iterator[Finding]:
    """The blueprint's hccl.parallelism laid over the whole cluster: heavy groups stay scaled up."""
    sizes = cluster.settings.parallelism
    if not sizes:
        return
    where = ("hccl", "parallelism")
    try:
        reports = placement(cluster, cluster.npu_servers, **sizes)
    except RequestError as err:  # located at the blueprint's own line, not the CLI's flags
        key = next((k for k in (*err.fix, *err.keys) if k in sizes), "")
        sets = ", ".join(f"hccl.parallelism.{k}: {v}" for k, v in err.fix.items())
        hint = f" (set {sets})" if sets else ""
        yield Finding(ERROR, Check.PARALLELISM, err.text + hint, (*where, key) if key else where)
        return
    for r in reports:
        if r.warning:
            at = (*where, r.kind) if r.kind in sizes else where
            yield Finding(WARNING, Check.PARALLELISM, r.warning, at)
        else:
            yield Finding(
                INFO, Check.PARALLELISM, f"{r.kind} groups of {r.size}: widest tier {r.tier}", where
            )


def growth(cluster: Cluster) -> Iterator[Finding]:
    """Inside the planned size the build is a stable prefix of the plan; beyond it, say what
    the larger build moves (generator.expand.growth)."""
    g, where = cluster.growth, ("growth", "cards")
    npus = cluster.cards_per_server
    if g.beyond and g.moved:
        shown = ", ".join(g.moved[:4]) + (
            f" and {len(g.moved) - 4} more" if len(g.moved) > 4 else ""
        )
        yield Finding(
            WARNING,
            Check.GROWTH,
            f"{g.servers * npus:,} cards is beyond the planned {g.planned_servers * npus:,}: the "
            f"fabric is re-planned for the larger size and {len(g.moved):,} devices of the planned "
            f"build move: {shown} (raise growth.cards to at least {g.servers * npus:,} before the "
            "first phase is installed, or re-cable as `wanka diff` lists)",
            where,
        )
    elif g.planned_servers > g.servers:
        yield Finding(
            INFO,
            Check.GROWTH,
            f"built now: {g.servers:,} of {g.planned_servers:,} planned servers; spines, cores, "
            "racks, pools and ASNs are laid out for the planned size",
            where,
        )


# The blueprint setting that shrinks each kind of failure domain; switches serve what they serve.
FAILURE_SETTINGS = {
    "CDU": "zones.training.cdu.capacity_kw (smaller CDUs)",
    "rack (compute)": "zones.training.rack.servers",
}


def _failure_hint(kinds: Iterable[str]) -> str:
    kinds = list(kinds)
    parts = [f"lower {FAILURE_SETTINGS[k]}" for k in dict.fromkeys(kinds) if k in FAILURE_SETTINGS]
    if any(k not in FAILURE_SETTINGS for k in kinds):
        parts.append(
            "a switch, or the network rack holding it, stops every server it serves (hosts are "
            "single-homed to their in-band access switch)"
        )
    return "; ".join([*parts, "or raise design.max_failure_share to accept them"])


def failure_domains(cluster: Cluster, rev: Review) -> Iterator[Finding]:
    """No single failure (switch, cable, rack, CDU) interrupts more than design.max_failure_share
    of the cards; failures no larger than one server are inherent and not counted."""
    limit = cluster.settings.design.max_failure_share
    where = ("design", "max_failure_share")
    over = [x for x in worst_share(rev) if x[3] > limit]
    if over:
        shown = ", ".join(
            f"{kind} {unit}: {n:,} ({share:.1%})" for kind, unit, n, share in over[:4]
        )
        more = f" and {len(over) - 4} more" if len(over) > 4 else ""
        yield Finding(
            WARNING,
            Check.FAILURE_DOMAIN,
            f"one failure interrupts more than {limit:.1%} of the {rev.cards:,} cards: {shown}{more} "
            f"(files/failure-domains.md says why; {_failure_hint(k for k, *_ in over)})",
            where,
        )
    if rev.jobs:
        job = rev.jobs[-1]
        yield Finding(
            INFO,
            Check.FAILURE_DOMAIN,
            f"a job on all {job.cards:,} cards is interrupted every {job.mtbi_hours:,.1f} h "
            f"({job.per_day:.1f} a day) at the catalog's failure rates",
            where,
        )
