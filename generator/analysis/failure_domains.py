"""Failure domains: what one failure costs (impact), over the topology indexed once (topology).

Pure functions of the Cluster (its settings hold the failure rates); failure_review builds the
review of every failure class and the job interruption rates on top. The figures are analytic: each
failure's effect is read from the model's adjacency (host port -> leaf -> spine -> core), never by
searching a graph, so the review of 100k cards stays cheap. tests/unit/test_failures.py checks them
against brute-force reachability and max-flow on a networkx graph of the 10,240-card example.

Definitions (the design review repeats them):
- a failure is one device, one cable, one rack (all its devices lose power) or one CDU (its
  liquid-cooled racks shut down);
- an NPU port is *cut off* when it loses every path to the spine/core layer of the parameter plane;
- a server's job is *interrupted* when the server is down, any of its NPU ports is cut off, or it
  loses every port of its storage path (DPC mounts hang) or of the in-band network (the scheduler
  loses the node and evicts its pods);
- a card is *slowed* when its leaf lost part of its uplink bandwidth, or its pod (3 tiers) lost part
  of its bandwidth toward the cores;
- a job of J cards is placed inside one domain of the smallest kind that holds J cards (leaf,
  supernode, pod, cluster), the way topology-aware scheduling places it; a failure *loses* the
  jobs that no longer fit.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from generator.model import Cluster
from generator.vocab import DomainKind, LinkKind, Plane, Role

HOURS_PER_YEAR = 8766.0  # 365.25 days
# the members topology() compares every device and link with, read once (vocab.py)
_UPPER = frozenset(r for r in Role if r.is_upper)
_LOWER = frozenset(r for r in Role if r.is_lower)
_TO_HOSTS = frozenset((LinkKind.HOST, LinkKind.MGMT))
_PEER_LINK, _UPLINK = LinkKind.PEER_LINK, LinkKind.UPLINK


@dataclass(frozen=True, slots=True)
class Failure:
    kind: str  # failure class, e.g. "parameter leaf", "rack (network)", "CDU"
    name: str  # the device, rack, CDU or cable that fails
    devices: frozenset[str]  # devices that stop
    cables: frozenset[str] = frozenset()  # cable ids that break
    rate: float = 0.0  # failures of this one unit per year


@dataclass(frozen=True, slots=True)
class Impact:
    cards_down: int  # cards in servers that stop (failed, unpowered, uncooled)
    npu_ports_cut: int  # NPU ports of running servers without a path to the spine/core layer
    interrupted: frozenset[str]  # NPU servers whose job stops
    cards_interrupted: int
    cards_slowed: int  # cards of running servers behind a leaf or pod that lost bandwidth
    leaf_uplink_lost: float  # largest share of a reachable parameter leaf's uplinks lost
    pod_uplink_lost: float  # largest share of a pod's bandwidth toward the cores lost
    hosts_cut: Mapping[str, int]  # plane -> hosts that lose every port on it (running hosts)
    hosts_degraded: Mapping[str, int]  # plane -> hosts that keep the plane with less bandwidth
    jobs_lost: tuple[tuple[int, int], ...]  # (job cards, jobs of that size no longer placeable)


@dataclass(frozen=True, slots=True)
class ClassRow:
    kind: str
    plane: str
    units: int  # how many of this kind the cluster has
    rate: float  # failures per unit per year (largest in the class)
    per_year: float  # failures per year of the whole class
    worst: str  # the unit whose failure costs most
    impact: Impact


@dataclass(frozen=True, slots=True)
class JobRisk:
    cards: int
    servers: int
    where: str  # the domain the job was placed in
    per_year: float  # interruptions per year
    by_kind: tuple[tuple[str, float], ...]  # failure class -> interruptions per year, largest first

    @property
    def mtbi_hours(self) -> float:
        return HOURS_PER_YEAR / self.per_year if self.per_year else float("inf")

    @property
    def per_day(self) -> float:
        return self.per_year / 365.25


@dataclass(frozen=True, slots=True)
class Review:
    cards: int
    cards_per_server: int
    job_sizes: tuple[int, ...]
    rows: tuple[ClassRow, ...]
    jobs: tuple[JobRisk, ...]
    unrated: tuple[str, ...]  # catalog models without a failure rate (counted as 0)
    rates: Mapping[str, float] = field(default_factory=dict)  # rack, cdu, cable (settings)


# --- the topology, indexed once ---------------------------------------------------------------


@dataclass(slots=True)
class _Plane:
    name: str
    tiers: int = 2
    host_ports: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # (sw, cable)
    switch_hosts: dict[str, list[str]] = field(default_factory=dict)  # sw -> hosts (per port)
    up: dict[str, list[tuple[str, int, str]]] = field(default_factory=dict)  # lower -> (upper,...)
    up_cable: dict[str, list[tuple[str, str, int]]] = field(default_factory=dict)  # (lower, upper)
    below: dict[str, list[str]] = field(default_factory=dict)  # upper -> lower switches
    up_total: dict[str, int] = field(default_factory=dict)
    peers: dict[str, list[tuple[str, str]]] = field(default_factory=dict)  # leaf -> (peer, cable)
    top: set[str] = field(default_factory=set)  # spines and cores
    spine_up: dict[str, list[tuple[str, int, str]]] = field(default_factory=dict)  # 3 tiers
    spine_cable: dict[str, str] = field(default_factory=dict)  # pod spine's uplink cable -> spine
    core_spines: dict[str, list[str]] = field(default_factory=dict)
    pod_core_total: dict[int, int] = field(default_factory=dict)
    pod_spines: dict[int, list[str]] = field(default_factory=dict)
    pod_ports: dict[int, int] = field(default_factory=dict)  # NPU ports per pod
    cable_legs: dict[str, list[tuple[str, str, str]]] = field(default_factory=dict)  # host cables
    below_speed: dict[str, list[tuple[str, int]]] = field(default_factory=dict)  # upper -> lower
    pod_pairs: dict[int, dict[tuple[str, str], int]] = field(default_factory=dict)  # spine, core
    # pod -> spine or core -> its (spine, core) pairs in pod_pairs, with their speed
    pod_device_pairs: dict[int, dict[str, list[tuple[tuple[str, str], int]]]] = field(
        default_factory=dict
    )
    switches: set[str] = field(default_factory=set)
    cables: set[str] = field(default_factory=set)


@dataclass(slots=True)
class _Index:
    cluster: Cluster
    planes: dict[str, _Plane]
    cards: dict[str, int]  # NPU server -> cards
    pod_of: dict[str, int]  # switch -> pod
    storage_path: dict[str, str]  # NPU server -> plane its storage traffic uses ("" = none)
    domains: dict[int, dict[str, object]]  # job size -> server -> domain key
    domain_cards: dict[int, dict[object, int]]
    levels: dict[int, str]  # job size -> leaf | supernode | pod | cluster
    ports_per_card: int = 1  # parameter-plane NPU ports of one card: its dies (A3: 2)


def topology(cluster: Cluster) -> _Index:
    """The adjacency the analysis reads, indexed once per cluster."""
    by_name = cluster.device_by_name
    planes: dict[str, _Plane] = {}
    for f in cluster.fabrics:
        planes[f.plane] = _Plane(f.plane, f.tiers)
    for d in cluster.devices:
        if d.plane in planes and d.role in _UPPER:
            planes[d.plane].top.add(d.name)
    pod_of = {d.name: d.pod or 0 for d in cluster.devices if d.is_switch}
    for link in cluster.links:
        p = planes.get(link.plane)
        if p is None:
            continue
        if link.kind in _TO_HOSTS:
            p.host_ports.setdefault(link.a_device, []).append((link.b_device, link.cable_id))
            p.switch_hosts.setdefault(link.b_device, []).append(link.a_device)
            p.cable_legs.setdefault(link.cable_id, []).append(
                (link.a_device, link.a_port, link.b_device)
            )
        elif link.kind == _PEER_LINK:
            p.peers.setdefault(link.a_device, []).append((link.b_device, link.cable_id))
            p.peers.setdefault(link.b_device, []).append((link.a_device, link.cable_id))
        elif link.kind == _UPLINK:
            lower_role = by_name[link.a_device].role
            if lower_role in _LOWER:
                p.up.setdefault(link.a_device, []).append(
                    (link.b_device, link.speed, link.cable_id)
                )
                p.up_cable.setdefault(link.cable_id, []).append(
                    (link.a_device, link.b_device, link.speed)
                )
                p.up_total[link.a_device] = p.up_total.get(link.a_device, 0) + link.speed
                below = p.below.setdefault(link.b_device, [])
                if not below or below[-1] != link.a_device:
                    below.append(link.a_device)
            else:  # pod spine -> core
                p.spine_up.setdefault(link.a_device, []).append(
                    (link.b_device, link.speed, link.cable_id)
                )
                p.spine_cable[link.cable_id] = link.a_device
                spines = p.core_spines.setdefault(link.b_device, [])
                if not spines or spines[-1] != link.a_device:
                    spines.append(link.a_device)
                pod = pod_of[link.a_device]
                p.pod_core_total[pod] = p.pod_core_total.get(pod, 0) + link.speed
    for p in planes.values():
        for below in p.below.values():
            below[:] = list(dict.fromkeys(below))
        for spines in p.core_spines.values():
            spines[:] = list(dict.fromkeys(spines))
        per_upper: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for sw, ups in p.up.items():
            for u, speed, c in ups:
                per_upper[u][sw] += speed
                p.cables.add(c)
            p.switches.add(sw)
        p.below_speed = {u: list(lows.items()) for u, lows in per_upper.items()}
        p.switches.update(p.top, p.switch_hosts)
        for s, ups in p.spine_up.items():
            p.pod_spines.setdefault(pod_of[s], []).append(s)
            pairs = p.pod_pairs.setdefault(pod_of[s], defaultdict(int))
            for core, speed, c in ups:
                pairs[(s, core)] += speed
                p.cables.add(c)
        for pod, pairs in p.pod_pairs.items():
            by_device = p.pod_device_pairs[pod] = defaultdict(list)
            for (s, core), speed in pairs.items():
                by_device[s].append(((s, core), speed))
                by_device[core].append(((s, core), speed))
        p.cables.update(p.cable_legs)
        for peers in p.peers.values():
            p.cables.update(c for _, c in peers)
    par = planes.get(Plane.PARAMETER)
    if par is not None:
        for sw, hosts in par.switch_hosts.items():
            pod = pod_of.get(sw, 0)
            par.pod_ports[pod] = par.pod_ports.get(pod, 0) + len(hosts)

    cards = {s.name: s.npus for s in cluster.npu_servers}
    shared = cluster.settings.networks.storage.mode == "shared"
    storage_path = {}
    for s in cluster.npu_servers:
        if Plane.STORAGE in planes and s.name in planes[Plane.STORAGE].host_ports:
            storage_path[s.name] = Plane.STORAGE
        elif shared and Plane.BUSINESS in planes and s.name in planes[Plane.BUSINESS].host_ports:
            storage_path[s.name] = Plane.BUSINESS
        else:
            storage_path[s.name] = ""

    domains, domain_cards, levels = _job_domains(cluster, cards)
    return _Index(
        cluster=cluster,
        planes=planes,
        cards=cards,
        pod_of=pod_of,
        storage_path=storage_path,
        domains=domains,
        domain_cards=domain_cards,
        levels=levels,
        ports_per_card=cluster.npu_servers[0].dies_per_npu if cluster.npu_servers else 1,
    )


def _job_domains(
    cluster: Cluster, cards: Mapping[str, int]
) -> tuple[dict[int, dict[str, object]], dict[int, dict[object, int]], dict[int, str]]:
    """Job sizes worth reviewing, each with the domain a job of that size is placed in."""
    levels: list[tuple[str, dict[str, object]]] = [
        (DomainKind.LEAF, {s.name: s.leaves for s in cluster.npu_servers})
    ]
    if any(s.supernode is not None for s in cluster.npu_servers):
        levels.append((DomainKind.SUPERNODE, {s.name: s.supernode for s in cluster.npu_servers}))
    fabric = cluster.fabric(Plane.PARAMETER)
    if fabric is not None and fabric.tiers == 3 and fabric.pods > 1:
        levels.append((DomainKind.POD, {s.name: s.pod for s in cluster.npu_servers}))
    levels.append((DomainKind.CLUSTER, {s.name: 0 for s in cluster.npu_servers}))
    domains: dict[int, dict[str, object]] = {}
    domain_cards: dict[int, dict[object, int]] = {}
    names: dict[int, str] = {}
    for level, key in levels:
        totals: dict[object, int] = defaultdict(int)
        for name, k in key.items():
            totals[k] += cards[name]
        size = max(totals.values(), default=0)
        if size and size not in domains:
            domains[size] = key
            domain_cards[size] = dict(totals)
            names[size] = level
    return domains, domain_cards, names


# --- one failure ------------------------------------------------------------------------------


def impact(cluster: Cluster, failure: Failure, index: _Index | None = None) -> Impact:
    """What one failure costs (analytic)."""
    ix = index or topology(cluster)
    dead = failure.devices
    dead_cables = failure.cables
    cards = ix.cards
    interrupted: set[str] = {d for d in dead if d in cards}
    cards_down = sum(cards[d] for d in interrupted)
    hosts_cut: dict[str, int] = {}
    hosts_degraded: dict[str, int] = {}
    npu_ports_cut = 0
    plane_cut: dict[str, set[str]] = {}
    leaf_lost_par: dict[str, float] = {}
    pod_lost: dict[int, float] = {}

    for p in ix.planes.values():
        if not (dead & p.switches) and not (dead_cables & p.cables):
            continue  # failed hosts alone cut nobody else off this plane
        parameter = p.name == Plane.PARAMETER
        # Uplink bandwidth each lower switch loses, and the switches whose reach may change.
        lost_up: dict[str, int] = defaultdict(int)
        touched: set[str] = set()
        for d in dead:
            if d in p.switch_hosts or d in p.up:
                touched.add(d)
            for sw, speed in p.below_speed.get(d, ()):
                lost_up[sw] += speed
        for c in dead_cables:
            for sw, u, speed in p.up_cable.get(c, ()):
                if u not in dead:
                    lost_up[sw] += speed
        touched.update(lost_up)
        for sw in list(touched):
            touched.update(peer for peer, _ in p.peers.get(sw, ()))

        def up_ok(sw: str, p: _Plane = p, lost_up: dict[str, int] = lost_up) -> bool:
            if sw in dead:
                return False
            return sw in p.top or lost_up.get(sw, 0) < p.up_total.get(sw, 0)

        reach: dict[str, bool] = {}
        for sw in touched:
            reach[sw] = sw not in dead and (
                up_ok(sw)
                or any(
                    peer not in dead and c not in dead_cables and up_ok(peer)
                    for peer, c in p.peers.get(sw, ())
                )
            )

        # Ports cut per host: on unreachable switches (switch_hosts lists a host once per
        # port), or on broken host cables to a switch still reached.
        cuts: Counter[str] = Counter()
        for sw, ok in reach.items():
            if not ok:
                cuts.update(p.switch_hosts.get(sw, ()))
        for c in dead_cables:
            for host, _, sw in p.cable_legs.get(c, ()):
                if reach.get(sw, True):
                    cuts[host] += 1
        cut_hosts: set[str] = set()
        partly: set[str] = set()
        for h, cut in cuts.items():
            if h in dead:
                continue
            ports = p.host_ports[h]
            if parameter:
                npu_ports_cut += cut
                if h in cards:
                    interrupted.add(h)
            if cut == len(ports):
                cut_hosts.add(h)
            else:
                partly.add(h)
        plane_cut[p.name] = cut_hosts

        # Bandwidth lost on switches that still reach the top.
        degraded = set(partly)
        for sw, lost in lost_up.items():
            if not lost or not reach.get(sw) or sw in p.top or not p.up_total.get(sw):
                continue
            if parameter:
                leaf_lost_par[sw] = lost / p.up_total[sw]
            else:
                degraded.update(p.switch_hosts.get(sw, ()))  # less the dead, below
        if parameter and p.tiers == 3:
            pods = {ix.pod_of[s] for s in dead if s in p.spine_up}
            for core in dead:
                pods.update(ix.pod_of[s] for s in p.core_spines.get(core, ()))
            pods.update(ix.pod_of[p.spine_cable[c]] for c in dead_cables if c in p.spine_cable)
            for pod in pods:
                # the pod's (spine, core) pairs with a dead end, each once
                by_device = p.pod_device_pairs[pod]
                lost = sum({pair: v for d in dead for pair, v in by_device.get(d, ())}.values())
                if dead_cables:
                    lost += sum(
                        speed
                        for s in p.pod_spines.get(pod, ())
                        if s not in dead
                        for core, speed, c in p.spine_up[s]
                        if core not in dead and c in dead_cables
                    )
                if lost and p.pod_core_total.get(pod):
                    pod_lost[pod] = lost / p.pod_core_total[pod]
        if not parameter:
            cut_n = len(cut_hosts)
            deg_n = len(degraded - cut_hosts - dead)
            if cut_n:
                hosts_cut[p.name] = cut_n
            if deg_n:
                hosts_degraded[p.name] = deg_n

    for plane in (Plane.STORAGE, Plane.BUSINESS):
        interrupted.update(h for h in plane_cut.get(plane, ()) if ix.storage_path.get(h) == plane)
    interrupted.update(h for h in plane_cut.get(Plane.INBAND, ()) if h in cards)

    # Slowed cards: NPU ports of running servers on a leaf (or in a pod) that lost bandwidth,
    # counted as cards (a port per die: ports_per_card).
    cards_slowed = 0
    par = ix.planes.get(Plane.PARAMETER)
    if par is not None and (leaf_lost_par or pod_lost):
        counted: set[str] = set()
        for sw in leaf_lost_par:
            if pod_lost.get(ix.pod_of.get(sw, 0)):
                continue  # counted with its pod
            counted.add(sw)
            cards_slowed += sum(1 for h in par.switch_hosts.get(sw, ()) if h not in interrupted)
        gone_by_pod: dict[int, int] = defaultdict(int)
        for h in interrupted:
            for sw, _ in par.host_ports.get(h, ()):
                gone_by_pod[ix.pod_of.get(sw, 0)] += 1
        for pod in pod_lost:
            cards_slowed += par.pod_ports.get(pod, 0) - gone_by_pod[pod]
            # ports on cut-off leaves belong to interrupted servers and are already subtracted

    return Impact(
        cards_down=cards_down,
        npu_ports_cut=npu_ports_cut,
        interrupted=frozenset(interrupted),
        cards_interrupted=sum(cards[h] for h in interrupted),
        cards_slowed=cards_slowed // ix.ports_per_card,
        leaf_uplink_lost=max(leaf_lost_par.values(), default=0.0),
        pod_uplink_lost=max(pod_lost.values(), default=0.0),
        hosts_cut=hosts_cut,
        hosts_degraded=hosts_degraded,
        jobs_lost=_jobs_lost(ix, interrupted),
    )


def _jobs_lost(ix: _Index, interrupted: Iterable[str]) -> tuple[tuple[int, int], ...]:
    out = []
    for size, key in ix.domains.items():
        gone: dict[object, int] = defaultdict(int)
        for h in interrupted:
            gone[key[h]] += ix.cards[h]
        totals = ix.domain_cards[size]
        lost = sum(totals[d] // size - (totals[d] - g) // size for d, g in gone.items())
        out.append((size, lost))
    return tuple(out)
