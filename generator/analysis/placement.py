"""Topology-aware job placement: which servers a job gets, and which tiers its traffic crosses.

Pure functions of the Cluster. A job is kept inside the fewest parameter leaves (access groups
with multi-rail), then the fewest pods / supernodes; parallel groups are laid out Megatron-style
(tp fastest, then sp, then dp, then pp) over the job's ranks in rank order.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from generator.model import Cluster, NpuServer
from generator.vocab import Plane, Tier

TIERS = (Tier.SERVER, Tier.SUPERNODE, Tier.LEAF, Tier.SPINE, Tier.CORE)
TIER_WORDS = {
    Tier.SERVER: "inside one server (HCCS)",
    Tier.SUPERNODE: "inside one supernode (HCCS)",
    Tier.LEAF: "one leaf switch",
    Tier.SPINE: "leaf and spine tiers",
    Tier.CORE: "leaf, spine and core tiers",
}
HEAVY = ("tp", "sp", "ep")  # traffic that should stay in the scale-up domain


class RequestError(Exception):
    """A job request that cannot be met (too many servers, unknown hosts, ...). `keys` are the
    parallel sizes it is about, `text` what is wrong without naming how they were given, and
    `fix` {key: value} the changes that make the layout work (the nearest values that do): the
    CLI names its flags, the design check the blueprint's hccl.parallelism.<key> line."""

    def __init__(self, text: str, keys: tuple[str, ...] = (), fix: dict[str, int] | None = None):
        self.text, self.keys, self.fix = text, keys, fix or {}
        flags = "/".join(f"--{k}" for k in keys)
        tries = " ".join(f"--{k} {v}" for k, v in self.fix.items())
        hint = f" (try {tries})" if tries else ""
        super().__init__(f"{flags}: {text}{hint}" if flags else text)


@dataclass(frozen=True, slots=True)
class Selection:
    servers: tuple[NpuServer, ...]  # rank order
    leaves: int
    pods: int
    supernodes: int
    tier: str  # widest tier the job's traffic crosses

    def summary(self) -> str:
        parts = [
            f"{len(self.servers)} servers on {self.leaves} leaf switch{'es' if self.leaves != 1 else ''}"
        ]
        if self.supernodes:
            parts.append(f"{self.supernodes} supernode{'s' if self.supernodes != 1 else ''}")
        parts.append(f"{self.pods} pod{'s' if self.pods != 1 else ''}")
        return ", ".join(parts) + f"; traffic crosses {TIER_WORDS[self.tier]}"


def _group_key(s: NpuServer) -> tuple[str, ...]:
    return s.leaves  # single-rail: the one leaf; multi-rail: the rail group's leaves


def tier_of(cluster: Cluster, members: Iterable[tuple[NpuServer, int]]) -> str:
    """Widest tier between (server, device index) endpoints."""
    members = list(members)
    servers = {s.name for s, _ in members}
    if len(servers) == 1:
        return Tier.SERVER
    supernodes = {s.supernode for s, _ in members}
    if len(supernodes) == 1 and None not in supernodes:
        return Tier.SUPERNODE
    leaves = {s.devices[d].leaf for s, d in members}
    if len(leaves) == 1:
        return Tier.LEAF
    one_pod = len({s.pod for s, _ in members}) == 1
    if widest_tier(cluster) == Tier.SPINE or one_pod:
        return Tier.SPINE
    return Tier.CORE


def widest_tier(cluster: Cluster) -> str:
    """The widest tier any endpoints of the cluster can be apart: core with a 3-tier fabric."""
    fabric = cluster.fabric(Plane.PARAMETER)
    three = fabric is not None and fabric.tiers >= 3
    return Tier.CORE if three else Tier.SPINE


def _domain(s: NpuServer) -> tuple[int | None, int]:
    return (s.supernode, s.pod)


def select_servers(
    cluster: Cluster,
    count: int | None = None,
    hosts: Sequence[str] | None = None,
    exclude: Sequence[str] = (),
) -> Selection:
    by_name = {s.name: s for s in cluster.npu_servers}
    unknown = [h for h in (*(hosts or ()), *exclude) if h not in by_name]
    if unknown:
        close = difflib.get_close_matches(unknown[0], list(by_name), n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise RequestError(
            f"--hosts/--exclude: unknown NPU server{'s' if len(unknown) > 1 else ''}: "
            f"{', '.join(unknown)}{hint}"
        )
    wanted = set(hosts) if hosts is not None else None
    drained = set(exclude)
    pool = [
        s
        for s in cluster.npu_servers
        if (wanted is None or s.name in wanted) and s.name not in drained
    ]
    if not pool:
        raise RequestError(
            "--hosts/--exclude: no NPU server is left to place the job on "
            "(every candidate is excluded)"
        )
    count = len(pool) if count is None else count
    if count < 1:
        raise RequestError(f"--servers/--cards: {count}: a job needs at least one server")
    if count > len(pool):
        raise RequestError(
            f"--servers/--cards: {count} servers requested but only {len(pool)} available"
            + (f" ({len(drained)} excluded)" if drained else "")
        )

    groups: dict[tuple[str, ...], list[NpuServer]] = {}
    for s in pool:
        groups.setdefault(_group_key(s), []).append(s)
    sizes = sorted((len(g) for g in groups.values()), reverse=True)
    fewest = next(k for k in range(1, len(sizes) + 1) if sum(sizes[:k]) >= count)

    domains: dict[tuple[int | None, int], list[list[NpuServer]]] = {}
    for g in groups.values():
        domains.setdefault(_domain(g[0]), []).append(g)

    def best(gs: list[list[NpuServer]]) -> list[list[NpuServer]]:
        return sorted(gs, key=lambda g: -len(g))[:fewest]

    chosen: list[list[NpuServer]] = []
    fits = [d for d, gs in domains.items() if sum(len(g) for g in best(gs)) >= count]
    if fits:  # one pod / supernode holds it: best fit (least left over), then lowest in rank order
        domain = min(fits, key=lambda d: (sum(len(g) for g in best(domains[d])) - count, d))
        chosen = best(domains[domain])
    else:  # span domains, biggest first, until the fewest leaves cover the job
        for d in sorted(domains, key=lambda d: (-sum(len(g) for g in domains[d]), d)):
            chosen = sorted(chosen + domains[d], key=lambda g: -len(g))[:fewest]
            if sum(len(g) for g in chosen) >= count:
                break
    picked: list[NpuServer] = []
    for g in sorted(chosen, key=lambda g: -len(g)):
        picked += g[: count - len(picked)]
    order = {s.name: i for i, s in enumerate(cluster.npu_servers)}
    servers = tuple(sorted(picked, key=lambda s: order[s.name]))
    members = [(s, d) for s in servers for d in range(s.ranks)]
    return Selection(
        servers=servers,
        leaves=len({leaf for s in servers for leaf in s.leaves}),
        pods=len({s.pod for s in servers}),
        supernodes=len({s.supernode for s in servers if s.supernode is not None}),
        tier=tier_of(cluster, members),
    )


@dataclass(frozen=True, slots=True)
class GroupReport:
    kind: str  # tp | sp | ep | dp | pp
    size: int
    groups: int
    tier: str  # widest tier any group of this kind crosses
    warning: str


def parallel_groups(
    world: int, tp: int, sp: int, dp: int, pp: int, ep: int
) -> dict[str, list[range]]:
    """Rank ranges of every group: rank = t + tp*(s + sp*(d + dp*p)), so a group is an
    arithmetic progression over one index. A kind whose groups are single ranks (size 1) gets
    none: such a group has no traffic."""
    sp_stride, dp_stride = tp * sp, tp * sp * dp  # rank steps of s+1 ... of d+1, of p+1
    out: dict[str, list[range]] = {"tp": [], "sp": [], "dp": [], "pp": [], "ep": []}
    for p in range(pp):
        for d in range(dp if tp > 1 else 0):
            for s in range(sp):
                first = tp * (s + sp * (d + dp * p))
                out["tp"].append(range(first, first + tp))
        for d in range(dp if sp > 1 else 0):
            for t in range(tp):
                first = t + sp_stride * (d + dp * p)
                out["sp"].append(range(first, first + sp * tp, tp))
        for s in range(sp if dp > 1 else 0):
            for t in range(tp):
                first = t + tp * s + dp_stride * p
                out["dp"].append(range(first, first + dp * sp_stride, sp_stride))
                for block in range(0, dp, ep) if ep > 1 else ():
                    start = first + block * sp_stride
                    out["ep"].append(range(start, start + ep * sp_stride, sp_stride))
    for d in range(dp if pp > 1 else 0):
        for s in range(sp):
            for t in range(tp):
                first = t + tp * (s + sp * d)
                out["pp"].append(range(first, first + pp * dp_stride, dp_stride))
    return out


def placement(
    cluster: Cluster,
    servers: Sequence[NpuServer],
    tp: int = 1,
    pp: int = 1,
    dp: int | None = None,
    sp: int = 1,
    ep: int = 1,
) -> list[GroupReport]:
    for name, size in (("tp", tp), ("pp", pp), ("dp", dp), ("sp", sp), ("ep", ep)):
        if size is not None and size < 1:
            raise RequestError(
                f"{size}: a parallel size is a whole number from 1", (name,), {name: 1}
            )
    devices = len(servers[0].devices) if servers else 0
    world = len(servers) * devices
    fixed = tp * sp * pp
    if world % fixed:
        raise RequestError(
            f"{world} ranks ({len(servers)} servers x {devices}) are not a multiple of "
            f"tp*sp*pp = {fixed}",
            ("tp", "sp", "pp"),
            _fitting({"tp": tp, "sp": sp, "pp": pp}, world),
        )
    if dp is None:
        dp = world // fixed
    if fixed * dp != world:
        fix = {"dp": world // fixed}
        if fix["dp"] % ep:  # the expert size must divide the new dp too
            fix["ep"] = _nearest(_divisors(fix["dp"]), ep)
        raise RequestError(
            f"tp*sp*dp*pp = {fixed * dp} but the job has {world} ranks ({len(servers)} servers x "
            f"{devices})",
            ("dp",),
            fix,
        )
    if dp % ep:
        raise RequestError(
            f"ep = {ep} must divide dp = {dp} (expert groups are carved from data-parallel ranks)",
            ("ep",),
            {"ep": _nearest(_divisors(dp), ep)},
        )
    where = [(s, d) for s in servers for d in range(devices)]
    scale_up = Tier.SUPERNODE if any(s.supernode is not None for s in servers) else Tier.SERVER
    scale_up_ranks = devices * (
        sum(1 for s in servers if s.supernode == servers[0].supernode)
        if scale_up == Tier.SUPERNODE
        else 1
    )
    span = {"tp": "tp", "sp": "tp*sp", "ep": "tp*sp*ep"}
    widest = TIERS.index(widest_tier(cluster))
    reports = []
    for kind, groups in parallel_groups(world=world, tp=tp, sp=sp, dp=dp, pp=pp, ep=ep).items():
        size = len(groups[0]) if groups else 0
        if size <= 1:
            continue
        reached = 0  # the widest tier of the groups so far, by index; none can pass `widest`
        for g in groups:
            reached = max(reached, TIERS.index(tier_of(cluster, (where[r] for r in g))))
            if reached == widest:
                break
        tier = TIERS[reached]
        warning = ""
        if kind in HEAVY and TIERS.index(tier) > TIERS.index(scale_up):
            warning = (
                f"{kind} groups leave the scale-up domain: their traffic crosses {TIER_WORDS[tier]}; "
                f"keep {span[kind]} <= {scale_up_ranks} (ranks in one {scale_up})"
            )
        reports.append(
            GroupReport(kind=kind, size=size, groups=len(groups), tier=tier, warning=warning)
        )
    return reports


def _divisors(n: int) -> list[int]:
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted({*small, *(n // d for d in small)})


def _nearest(choices: Sequence[int], value: int) -> int:
    """The choice nearest `value`, the smaller one on a tie."""
    return min(choices, key=lambda c: (abs(c - value), c))


def _fitting(sizes: dict[str, int], world: int) -> dict[str, int]:
    """Sizes to change so that tp*sp*pp divides `world`: the one key whose nearest working value
    is closest to what was asked (tp first on a tie); when no single key can, each in turn the
    divisor of what is left nearest its size."""
    options = []
    for key, size in sizes.items():
        others = math.prod(sizes.values()) // size
        if world % others == 0:
            value = _nearest(_divisors(world // others), size)
            options.append((abs(value - size), list(sizes).index(key), key, value))
    if options:
        _, _, key, value = min(options)
        return {key: value}
    fix, left = {}, world
    for key, size in sizes.items():
        value = _nearest(_divisors(left), size)
        left //= value
        if value != size:
            fix[key] = value
    return fix
