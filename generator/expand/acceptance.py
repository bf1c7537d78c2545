"""The acceptance plan: which HCCL Test runs prove the fabric, and the bus bandwidth each must reach.

Scopes in topology order: one server (HCCS inside the server), one access unit (a leaf, or a
multi-rail group), one pod or supernode, the whole cluster, and a sweep of neighbouring leaf pairs
that tells a bad leaf (both of its pairs slow) from a bad pair of paths (one pair slow).

Expected bus bandwidth (NCCL-tests convention, GB/s = 10^9 bytes/s; domain.md §2.5):
  one server:       efficiency x intra-server busbw from the catalog (HCCS) [U]
  one supernode:    measured, not judged: its servers' NPUs talk over the supernode interconnect
                    (HCCS across the SuperPoD, HCCL rank_table_config_a3.md: ranks of one
                    super_pod_id), not the RoCE leaf, and no public bus-bandwidth figure for it
                    was found (an A3 node has no intra-server figure either)
  one leaf:         efficiency x NPU port speed / 8
  across the spine: efficiency x NPU port speed / 8 / leaf oversubscription (down : up bandwidth)
  across the core:  the same; spines are sized non-blocking toward the cores (fabric.py), so the
                    leaf ratio stays the only reduction [assumption stated in the plan]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from generator import hccl_cost
from generator.blueprint.spec import Blueprint
from generator.catalog import HostModel
from generator.model import Acceptance, AcceptanceScope, Fabric, Link, NpuServer
from generator.vocab import DomainKind, LinkKind, Plane, ScopeKind

Units = tuple[tuple[str, tuple[str, ...]], ...]


def acceptance_plan(
    bp: Blueprint,
    servers: Sequence[NpuServer],
    links: Sequence[Link],
    fabric: Fabric | None,
    models: Mapping[str, HostModel],
    mtu: int,
) -> Acceptance:
    """`models`: catalog host model of each NPU server, by server name; `mtu`: the NPU ports'
    (hccn.conf), which sets RoCE's goodput."""
    a = bp.acceptance
    eff = float(a.efficiency)
    settings = {
        "efficiency": eff,
        "min_bytes": a.min_bytes,
        "max_bytes": a.max_bytes,
        "iters": a.iters,
        "warmup": a.warmup,
        "batch": a.batch,
        "checkpoint_write_gbps": float(a.checkpoint_write_gbps),
        "idle_power_max_w": a.idle_power_max_w,
        "compile_cache": msgspec.to_builtins(a.compile_cache),
    }
    if not servers or fabric is None:
        return Acceptance(**settings)
    leaves: dict[str, list[str]] = {}
    unit_pod: dict[str, str] = {}
    supernodes: dict[str, list[str]] = {}
    for s in servers:
        unit = s.domain(DomainKind.LEAF)
        name = unit.name if unit else s.name
        leaves.setdefault(name, []).append(s.name)
        pod = s.domain(DomainKind.POD)
        unit_pod[name] = pod.name if pod else ""
        sn = s.domain(DomainKind.SUPERNODE)
        if sn and name not in supernodes.setdefault(sn.name, []):
            supernodes[sn.name].append(name)
    port_gbps = _port_gbps(servers, links)
    ranks_per_server = len(servers[0].devices)
    ratio, down, up = _leaf_ratio(links)
    hccs = models[servers[0].name].intra_server_busbw
    stated_hccs = round(hccs, 2) if hccs else 0.0  # as the plan states it (predict reads that)
    nic = port_gbps / 8
    spine = nic / ratio
    ratio_text = f"busiest leaf {down}:{up} Gb/s down:up"

    def scope(kind: str, ops: tuple[str, ...], units: Units, tiers: str, bound: float, how: str):
        size = max(len(_servers_of(kind, u, leaves)) for u in units) * ranks_per_server
        expected = round(eff * bound, 2)
        formula = f"{eff:g} x {how} = {expected:g} GB/s" if bound else how
        first = len(_servers_of(kind, units[0], leaves))
        return [
            AcceptanceScope(
                kind=kind,
                op=op,
                units=units,
                ranks=size,
                tiers=tiers,
                bound_gbytes_s=round(bound, 2),
                expected_busbw=expected,
                formula=formula,
                collision_free=_collision_free(
                    servers=first,
                    per_server=ranks_per_server,
                    op=op,
                    size=a.max_bytes,
                    hccs=stated_hccs,
                    bound=round(bound, 2),
                    mtu=mtu,
                ),
            )
            for op in ops
        ]

    nic_how = f"{port_gbps:g} Gb/s NPU port / 8"
    spine_how = f"{nic_how} / {ratio:g} (leaf oversubscription, {ratio_text})"
    out: list[AcceptanceScope] = []
    server_units = tuple((s.name, (s.name,)) for s in servers)
    if hccs:
        out += scope(
            kind=ScopeKind.SERVER,
            ops=("all_reduce",),
            units=server_units,
            tiers="HCCS",
            bound=hccs,
            how=f"{hccs:g} GB/s intra-server busbw (catalog, unconfirmed)",
        )
    else:
        out += scope(
            kind=ScopeKind.SERVER,
            ops=("all_reduce",),
            units=server_units,
            tiers="HCCS",
            bound=0,
            how="no intra_server_busbw_gbytes_s in the catalog: measured, not judged",
        )
    names = list(leaves)
    shared = tuple((n, (n,)) for n in names if len(leaves[n]) > 1)
    if shared:
        out += scope(
            kind=ScopeKind.LEAF,
            ops=("all_reduce", "all_gather"),
            units=shared,
            tiers="leaf",
            bound=nic,
            how=nic_how,
        )
    top = "leaf, spine, core" if fabric.tiers >= 3 else "leaf, spine"
    pods: dict[str, list[str]] = {}
    for n in names:
        if unit_pod[n]:
            pods.setdefault(unit_pod[n], []).append(n)
    if len(pods) > 1:
        units = tuple((p, tuple(ls)) for p, ls in pods.items())
        out += scope(
            kind=ScopeKind.POD,
            ops=("all_reduce",),
            units=units,
            tiers="leaf, spine",
            bound=spine,
            how=spine_how,
        )
    if len(supernodes) > 1:
        units = tuple((sn, tuple(ls)) for sn, ls in supernodes.items())
        out += scope(
            kind=ScopeKind.SUPERNODE,
            ops=("all_reduce",),
            units=units,
            tiers="supernode interconnect",
            bound=0,
            how="the supernode interconnect, not the RoCE leaf: no public bus-bandwidth "
            "figure for it, measured, not judged",
        )
    if len(names) > 1:
        units = ((ScopeKind.CLUSTER.value, tuple(names)),)  # its one unit, named as the scope
        out += scope(
            kind=ScopeKind.CLUSTER,
            ops=("all_reduce", "all_gather"),
            units=units,
            tiers=top,
            bound=spine,
            how=spine_how,
        )
    if len(names) > 2:
        pairs = tuple(
            (f"{a}+{b}", (a, b)) for a, b in zip(names, names[1:] + names[:1], strict=True)
        )
        same = tuple(p for p in pairs if unit_pod[p[1][0]] == unit_pod[p[1][1]])
        cross = tuple(p for p in pairs if unit_pod[p[1][0]] != unit_pod[p[1][1]])
        for units, tiers in ((same, "leaf, spine"), (cross, top)):
            if units:
                out += scope(
                    kind=ScopeKind.LEAF_PAIR,
                    ops=("all_reduce",),
                    units=units,
                    tiers=tiers,
                    bound=spine,
                    how=spine_how,
                )
    return Acceptance(
        **settings,
        ranks_per_server=ranks_per_server,
        leaves=tuple((n, tuple(ss)) for n, ss in leaves.items()),
        scopes=tuple(out),
    )


def _collision_free(
    *, servers: int, per_server: int, op: str, size: int, hccs: float, bound: float, mtu: int
) -> float | None:
    """The scope's busbw with no hash collision (hccl_cost.collision_free, `wanka predict`'s
    own figure for the scope), at the plan's largest size; None where it judges nothing."""
    if not bound:
        return None
    return hccl_cost.collision_free(
        servers, per_server, size, op=op, hccs=hccs, nic_gbytes_s=bound, mtu=mtu
    )


def _servers_of(kind: str, unit: tuple[str, tuple[str, ...]], leaves: Mapping) -> list[str]:
    if kind == ScopeKind.SERVER:
        return [unit[0]]
    return [s for leaf in unit[1] for s in leaves[leaf]]


def _port_gbps(servers: Sequence[NpuServer], links: Sequence[Link]) -> float:
    """Parameter-plane bandwidth per rank (Gb/s): a server's NPU links over its ranks, the
    slowest server's."""
    total: dict[str, int] = {}
    parameter, host = Plane.PARAMETER, LinkKind.HOST  # members read once (vocab.py)
    for x in links:
        if x.plane == parameter and x.kind == host:
            total[x.a_device] = total.get(x.a_device, 0) + x.speed
    return min(total.get(s.name, 0) / max(len(s.devices), 1) for s in servers)


def _leaf_ratio(links: Sequence[Link]) -> tuple[float, int, int]:
    """The highest cabled down : up bandwidth of a parameter leaf (1 when the uplinks carry all of
    it, or there are none), with that leaf's down and up Gb/s."""
    down: dict[str, int] = {}
    up: dict[str, int] = {}
    parameter, host, uplink = Plane.PARAMETER, LinkKind.HOST, LinkKind.UPLINK  # read once
    for x in links:
        if x.plane != parameter:
            continue
        if x.kind == host:
            down[x.b_device] = down.get(x.b_device, 0) + x.speed
        elif x.kind == uplink:
            up[x.a_device] = up.get(x.a_device, 0) + x.speed
    rows = [(d / up[leaf] if up.get(leaf) else 0.0, d, up.get(leaf, 0)) for leaf, d in down.items()]
    ratio, d, u = max(rows, default=(0.0, 0, 0))
    return max(1.0, ratio), d, u
