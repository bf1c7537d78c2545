"""Switching for one plane: access groups, leaf port plan, and 2- or 3-tier Clos above it.

Pure functions of catalog models and counts. Port assignment is positional and stable: leaf i's
uplink k always lands on the same spine port, so adding servers appends, never re-patches.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from generator.catalog import SwitchModel
from generator.errors import BlueprintError, Problem, YamlPath
from generator.expand.ports import LeafPlan, describe_ports, leaf_port_plan, spine_lanes
from generator.records import record
from generator.vocab import LinkKind, Role

__all__ = ["LeafPlan", "leaf_port_plan", "parse_ratio"]  # sizing and checks read these here


@record
class Endpoint:
    """A host (or switch management port) that needs `ports` on a plane."""

    host: str
    ports: tuple[str, ...]
    speed: int
    group: tuple  # hosts with different groups never share a leaf (zone, row, ...)


@dataclass(slots=True)
class Switch:
    name: str
    role: str  # leaf | spine | core | access
    index: int
    pod: int | None = None  # three tiers: its pod
    splits: dict[str, str] = field(default_factory=dict)


@record
class Wire:
    """A logical link before placement: a_* is the lower tier."""

    kind: str  # host | uplink | peer-link
    a_device: str
    a_port: str
    b_device: str
    b_port: str
    speed: int
    cable: tuple  # legs with the same cable key share one physical cable
    member: int = -1  # host links: slot of the host in its access group
    port_index: int = -1  # host links: which of the host's ports on this plane


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


class UpperTooSmall(BlueprintError):
    """The switch model above the leaves lacks ports: `need` lanes at `speed` GE on each upper
    switch (`key`: the blueprint's model key). expand names a catalog model that has them and,
    to report the other planes' problems in the same run, goes on as if it had been chosen."""

    def __init__(self, problem: Problem, key: YamlPath, speed: int, need: int) -> None:
        super().__init__([problem])
        self.key, self.speed, self.need = key, speed, need


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


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


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
    speed = endpoints[0].speed
    plan = leaf_port_plan(leaf, speed, ratio, split, peer_links, uplinks, (*where, Role.LEAF))
    lanes = len(plan.lanes)
    ports_per_host = len(endpoints[0].ports)
    if ports_per_host % rails:
        raise ValueError("ports per host must be a multiple of rails")
    per_leaf = ports_per_host // rails  # host port p goes to leaf p % rails of its group
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
    groups = access_groups(endpoints, lanes, per_leaf)
    hosts_per_group = lanes // per_leaf

    leaves: list[Switch] = []
    wires: list[Wire] = []
    members: dict[str, list[str]] = {}
    leaf_groups: list[tuple[str, ...]] = []
    for group in groups:
        names = []
        for _r in range(rails):
            sw = Switch(f"{code}-{role_names[0]}-{len(leaves) + 1:04d}", "leaf", len(leaves))
            if plan.split != "none":
                sw.splits = {parent: plan.split for _, parent in plan.lanes}
            leaves.append(sw)
            members[sw.name] = [ep.host for ep in group]
            names.append(sw.name)
        leaf_groups.append(tuple(names))
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
        for i in range(1, rails, 2):  # M-LAG / dual-homed pairs: peer-link between leaf i-1 and i
            for port in plan.peer_ports:
                wires.append(
                    Wire(
                        kind=LinkKind.PEER_LINK,
                        a_device=names[i - 1],
                        a_port=port,
                        b_device=names[i],
                        b_port=port,
                        speed=plan.up_speed,
                        cable=(names[i - 1], port),
                    )
                )

    spine_lane_list, spine_split = spine_lanes(spine, plan.up_speed)
    radix = len(spine_lane_list)
    upper_key = (*where, role_names[1], "model")  # management planes name theirs `core`
    n_up = len(plan.uplinks)
    n_leaves = len(leaves)
    if radix == 0:
        raise UpperTooSmall(
            Problem(
                upper_key,
                f"{role_names[1]} model {spine.name} has no {plan.up_speed}GE ports for the "
                f"leaf uplinks (its ports: {describe_ports(spine)})",
            ),
            upper_key,
            plan.up_speed,
            1,
        )
    two_tier = _two_tier_spines(n_leaves, n_up, radix, spine_count)
    if two_tier is None and (tiers == 2 or isinstance(spine_count, int)):
        if isinstance(spine_count, int) and n_up % spine_count:
            raise BlueprintError([_bad_count(where, spine_count, n_up)])
        count = spine_count if isinstance(spine_count, int) else n_up
        need = n_leaves * (n_up // count)
        raise UpperTooSmall(
            Problem(
                upper_key,
                f"{n_leaves} leaves x {n_up} uplinks cannot be built in 2 tiers: "
                f"{role_names[1]} {spine.name} has {radix} ports at {plan.up_speed}GE, "
                f"each of {count} {role_names[1]}s would need {need}",
            ),
            upper_key,
            plan.up_speed,
            need,
        )
    spines: list[Switch] = []
    cores: list[Switch] = []
    if two_tier is not None and tiers != 3:
        s = two_tier
        per = n_up // s
        spines = [Switch(f"{code}-{role_names[1]}-{i + 1:03d}", "spine", i) for i in range(s)]
        for leaf_sw in leaves:
            for j, port in enumerate(plan.uplinks):
                sp, k = spines[j % s], j // s
                wires.append(
                    _uplink(
                        leaf_sw.name,
                        port,
                        sp,
                        spine_lane_list[leaf_sw.index * per + k],
                        spine_split,
                        plan.up_speed,
                    )
                )
        return PlaneBuild(
            leaves=leaves,
            spines=spines,
            cores=cores,
            wires=wires,
            leaf_members=members,
            leaf_groups=leaf_groups,
            tiers=2,
            rails=rails,
            hosts_per_group=hosts_per_group,
            plan=plan,
            spines_per_pod=s,
            leaves_per_pod=n_leaves,
            pods=1,
            cores_per_plane=0,
        )

    # Three tiers: pods of leaves under `n_up` pod spines (one link each), pod spine i of every
    # pod in core plane i; pod spines are 1:1 (half their lanes down, half up).
    s = n_up
    per_pod = radix // 2
    pods = math.ceil(n_leaves / per_pod)
    core_lanes, core_split = spine_lanes(core, plan.up_speed)
    if not core_lanes:
        key = (*where, "core", "model")
        raise UpperTooSmall(
            Problem(key, f"core model {core.name} has no {plan.up_speed}GE ports"),
            key,
            plan.up_speed,
            1,
        )
    cores_per_plane = math.ceil(n_leaves / len(core_lanes))
    for plane_i in range(s):
        for c in range(cores_per_plane):
            cores.append(Switch(f"{code}-core-{plane_i + 1:02d}-{c + 1:02d}", "core", len(cores)))
    core_next = [0] * len(cores)
    for pod in range(pods):
        pod_leaves = leaves[pod * per_pod : (pod + 1) * per_pod]
        pod_spines = [
            Switch(f"{code}-pod{pod + 1:02d}-spine-{i + 1:02d}", "spine", len(spines) + i, pod)
            for i in range(s)
        ]
        spines.extend(pod_spines)
        for local, leaf_sw in enumerate(pod_leaves):
            leaf_sw.pod = pod
            for j, port in enumerate(plan.uplinks):
                wires.append(
                    _uplink(
                        leaf_sw.name,
                        port,
                        pod_spines[j],
                        spine_lane_list[local],
                        spine_split,
                        plan.up_speed,
                    )
                )
        offset = pod * per_pod  # global round-robin keeps every core within one link of the others
        for i, sp in enumerate(pod_spines):
            for j in range(len(pod_leaves)):
                core_sw = cores[i * cores_per_plane + (offset + j) % cores_per_plane]
                lane, parent = spine_lane_list[per_pod + j]
                if spine_split != "none":
                    sp.splits[parent] = spine_split
                c_lane, c_parent = core_lanes[core_next[core_sw.index]]
                core_next[core_sw.index] += 1
                if core_split != "none":
                    core_sw.splits[c_parent] = core_split
                wires.append(
                    Wire(
                        kind=LinkKind.UPLINK,
                        a_device=sp.name,
                        a_port=lane,
                        b_device=core_sw.name,
                        b_port=c_lane,
                        speed=plan.up_speed,
                        cable=(core_sw.name, c_parent),
                    )
                )
    return PlaneBuild(
        leaves=leaves,
        spines=spines,
        cores=cores,
        wires=wires,
        leaf_members=members,
        leaf_groups=leaf_groups,
        tiers=3,
        rails=rails,
        hosts_per_group=hosts_per_group,
        plan=plan,
        spines_per_pod=s,
        leaves_per_pod=per_pod,
        pods=pods,
        cores_per_plane=cores_per_plane,
    )


def _uplink(
    lower: str, port: str, upper: Switch, lane_parent: tuple[str, str], split: str, speed: int
) -> Wire:
    """Lower switch `port` to `upper`'s lane; a lane of a split port records the split on `upper`."""
    lane, parent = lane_parent
    if split != "none":
        upper.splits[parent] = split
    return Wire(
        kind=LinkKind.UPLINK,
        a_device=lower,
        a_port=port,
        b_device=upper.name,
        b_port=lane,
        speed=speed,
        cable=(upper.name, parent),
    )


def _two_tier_spines(n_leaves: int, n_up: int, radix: int, spine_count: str | int) -> int | None:
    if isinstance(spine_count, int):
        ok = n_up % spine_count == 0 and n_leaves * (n_up // spine_count) <= radix
        return spine_count if ok else None
    candidates = [d for d in _divisors(n_up) if d >= min(4, n_up)]
    return next((d for d in candidates if n_leaves * (n_up // d) <= radix), None)


def _bad_count(where: YamlPath, spine_count: int, n_up: int) -> Problem:
    return Problem(
        (*where, "spine", "count"),
        f"{spine_count} spines do not divide the {n_up} uplinks of each leaf evenly",
        f"use one of {', '.join(map(str, _divisors(n_up)))}",
    )
