"""Switching for one plane: access groups, leaf port plan, the leaves, and the 2- or 3-tier
Clos above them (generator.expand.upper_tiers).

Pure functions of catalog models and counts. Port assignment is positional and stable: a host's
port always lands on the same leaf lane, so adding servers appends, never re-patches.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from generator.catalog import SwitchModel
from generator.errors import BlueprintError, Problem, YamlPath
from generator.expand.ports import LeafPlan, leaf_port_plan
from generator.expand.upper_tiers import Switch, Upper, UpperTooSmall, Wire, upper_tiers
from generator.records import Record
from generator.vocab import LinkKind, Role

# sizing and checks read these here; expand, border and links read UpperTooSmall and Wire here
__all__ = ["LeafPlan", "UpperTooSmall", "Wire", "leaf_port_plan", "parse_ratio"]


class Endpoint(Record, kw_only=True):
    """A host (or switch management port) that needs `ports` on a plane."""

    host: str
    ports: tuple[str, ...]
    speed: int
    group: tuple  # hosts with different groups never share a leaf (zone, row, ...)


@dataclass(slots=True)
class PlaneBuild:
    leaves: list[Switch]
    spines: list[Switch]
    cores: list[Switch]
    wires: list[Wire]
    leaf_members: dict[str, list[str]]  # leaf -> hosts in order (address slot = position)
    leaf_groups: list[tuple[str, ...]]  # leaves of each access group (M-LAG pair, rail group)
    tiers: int
    rails: int
    hosts_per_group: int
    plan: LeafPlan
    spines_per_pod: int
    leaves_per_pod: int
    pods: int
    cores_per_plane: int


def parse_ratio(text: str) -> tuple[int, int]:
    a, b = text.split(":")
    return int(a), int(b)


def access_groups(endpoints: Sequence[Endpoint], lanes: int, per_leaf: int) -> list[list[Endpoint]]:
    """Consecutive endpoints with the same group key, chunked to fill one access group
    (`per_leaf`: the ports a host has on each leaf of its group)."""
    if not endpoints:
        return []
    per_group = lanes // per_leaf
    groups: list[list[Endpoint]] = []
    current: list[Endpoint] = []
    for ep in endpoints:
        if current and (len(current) == per_group or current[0].group != ep.group):
            groups.append(current)
            current = []
        current.append(ep)
    groups.append(current)
    return groups


def build_plane(
    *,
    plane: str,
    code: str,
    endpoints: Sequence[Endpoint],
    leaf: SwitchModel,
    spine: SwitchModel,
    core: SwitchModel,
    ratio: tuple[int, int] | None,
    split: str,
    rails: int,
    tiers: str | int,
    spine_count: str | int,
    peer_links: int = 0,
    uplinks: int | None = None,
    where: YamlPath,
    role_names: tuple[str, str] = (Role.LEAF, Role.SPINE),
) -> PlaneBuild:
    """Access leaves for `endpoints`, then spines (and cores) above them; switch names are
    `<code>-<role_names[0]>-NNNN` and `<code>-<role_names[1]>-NNN`."""
    plan = leaf_port_plan(
        model=leaf,
        down_speed=endpoints[0].speed,
        ratio=ratio,
        split=split,
        peer_links=peer_links,
        uplinks=uplinks,
        where=(*where, Role.LEAF),
    )
    access = _leaves(
        endpoints, plan, leaf=leaf, code=code, name=role_names[0], rails=rails, where=where
    )
    upper = upper_tiers(
        access.leaves,
        plan,
        spine=spine,
        core=core,
        code=code,
        name=role_names[1],
        tiers=tiers,
        spine_count=spine_count,
        where=where,
    )
    return _plane(access, upper, plan, rails)


@dataclass(slots=True)
class _Access:
    """The leaf tier: switches, host and peer-link wires, hosts per leaf, leaves per group."""

    leaves: list[Switch]
    wires: list[Wire]
    members: dict[str, list[str]]
    groups: list[tuple[str, ...]]
    hosts_per_group: int


def _ports_per_leaf(
    plan: LeafPlan, leaf: SwitchModel, ports_per_host: int, *, rails: int, where: YamlPath
) -> int:
    """Ports a host has on each leaf of its access group (host port p goes to leaf p % rails)."""
    if ports_per_host % rails:
        raise ValueError("ports per host must be a multiple of rails")
    per_leaf = ports_per_host // rails
    lanes = len(plan.lanes)
    if lanes < per_leaf:
        raise BlueprintError(
            [
                Problem(
                    (*where, "leaf", "model"),
                    f"{leaf.name} has {lanes} host lanes, a host needs {per_leaf}",
                    "",
                )
            ]
        )
    return per_leaf


def _leaves(
    endpoints: Sequence[Endpoint],
    plan: LeafPlan,
    *,
    leaf: SwitchModel,
    code: str,
    name: str,
    rails: int,
    where: YamlPath,
) -> _Access:
    """`rails` leaves per access group (`<code>-<name>-NNNN`), the group's hosts' links to them
    (host port p to leaf p % rails) and the M-LAG peer-links."""
    speed = endpoints[0].speed
    per_leaf = _ports_per_leaf(plan, leaf, len(endpoints[0].ports), rails=rails, where=where)
    groups = access_groups(endpoints, len(plan.lanes), per_leaf)
    access = _Access(
        leaves=[], wires=[], members={}, groups=[], hosts_per_group=len(plan.lanes) // per_leaf
    )
    leaves, wires = access.leaves, access.wires
    for group in groups:
        names = []
        for _r in range(rails):
            sw = Switch(f"{code}-{name}-{len(leaves) + 1:04d}", Role.LEAF, len(leaves))
            if plan.split != "none":
                sw.splits = {parent: plan.split for _, parent in plan.lanes}
            leaves.append(sw)
            access.members[sw.name] = [ep.host for ep in group]
            names.append(sw.name)
        access.groups.append(tuple(names))
        for slot, ep in enumerate(group):
            for p, port in enumerate(ep.ports):
                leaf_name, lane_index = names[p % rails], slot * per_leaf + p // rails
                lane, parent = plan.lanes[lane_index]
                wires.append(
                    Wire(
                        kind=LinkKind.HOST,
                        a_device=ep.host,
                        a_port=port,
                        b_device=leaf_name,
                        b_port=lane,
                        speed=speed,
                        cable=(leaf_name, parent),
                        member=slot,
                        port_index=p,
                    )
                )
        wires += _peer_links(names, plan)
    return access


def _peer_links(names: list[str], plan: LeafPlan) -> list[Wire]:
    """M-LAG / dual-homed pairs of an access group: a peer-link between leaf i-1 and i."""
    return [
        Wire(
            kind=LinkKind.PEER_LINK,
            a_device=names[i - 1],
            a_port=port,
            b_device=names[i],
            b_port=port,
            speed=plan.up_speed,
            cable=(names[i - 1], port),
        )
        for i in range(1, len(names), 2)
        for port in plan.peer_ports
    ]


def _plane(access: _Access, upper: Upper, plan: LeafPlan, rails: int) -> PlaneBuild:
    return PlaneBuild(
        leaves=access.leaves,
        spines=upper.spines,
        cores=upper.cores,
        wires=access.wires + upper.wires,
        leaf_members=access.members,
        leaf_groups=access.groups,
        tiers=upper.tiers,
        rails=rails,
        hosts_per_group=access.hosts_per_group,
        plan=plan,
        spines_per_pod=upper.spines_per_pod,
        leaves_per_pod=upper.leaves_per_pod,
        pods=upper.pods,
        cores_per_plane=upper.cores_per_plane,
    )
