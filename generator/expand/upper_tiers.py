"""The tiers above a plane's leaves: spines (2 tiers), or pods of spines under cores (3 tiers),
and the switch and wire records a plane is built from (generator.expand.fabric builds the leaves).

Port assignment is positional and stable: leaf i's uplink k always lands on the same spine port,
so adding servers appends, never re-patches.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from generator.catalog import SwitchModel
from generator.errors import BlueprintError, Problem, YamlPath
from generator.expand.ports import LeafPlan, describe_ports, spine_lanes
from generator.records import Record
from generator.vocab import LinkKind, Role


@dataclass(slots=True)
class Switch:
    name: str
    role: str  # leaf | spine | core | access
    index: int
    pod: int | None = None  # three tiers: its pod
    splits: dict[str, str] = field(default_factory=dict)


class Wire(Record, kw_only=True):
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


class UpperTooSmall(BlueprintError):
    """The switch model above the leaves lacks ports: `need` lanes at `speed` GE on each upper
    switch (`key`: the blueprint's model key). expand names a catalog model that has them and,
    to report the other planes' problems in the same run, goes on as if it had been chosen."""

    def __init__(self, problem: Problem, key: YamlPath, speed: int, need: int) -> None:
        super().__init__([problem])
        self.key, self.speed, self.need = key, speed, need


@dataclass(slots=True)
class Lanes:
    """An upper-tier switch model's lanes at the uplink speed: [(lane, parent)] and its split."""

    lanes: list[tuple[str, str]]
    split: str


@dataclass(slots=True)
class Upper:
    """The tiers above the leaves and the wires that reach and join them."""

    spines: list[Switch]
    cores: list[Switch]
    wires: list[Wire]
    tiers: int
    spines_per_pod: int
    leaves_per_pod: int
    pods: int = 1
    cores_per_plane: int = 0


def upper_tiers(
    leaves: list[Switch],
    plan: LeafPlan,
    *,
    spine: SwitchModel,
    core: SwitchModel,
    code: str,
    name: str,
    tiers: str | int,
    spine_count: str | int,
    where: YamlPath,
) -> Upper:
    """Spines above `leaves` (`<code>-<name>-NNN`) when 2 tiers hold them and 3 are not asked
    for, else pod spines and cores; UpperTooSmall when the upper model lacks the ports."""
    lanes = Lanes(*spine_lanes(spine, plan.up_speed))
    count = _spine_count(
        len(leaves),
        plan,
        lanes,
        spine=spine,
        name=name,
        tiers=tiers,
        count=spine_count,
        where=where,
    )
    if count is not None and tiers != 3:
        return _two_tier(leaves, plan, lanes, code=code, name=name, count=count)
    return _three_tier(leaves, plan, lanes, core=core, code=code, where=where)


def _spine_count(
    n_leaves: int,
    plan: LeafPlan,
    lanes: Lanes,
    *,
    spine: SwitchModel,
    name: str,
    tiers: str | int,
    count: str | int,
    where: YamlPath,
) -> int | None:
    """Spines of a 2-tier plane, None when the leaves need 3 tiers; the upper model's shortage
    (UpperTooSmall) when it cannot be built as asked."""
    radix = len(lanes.lanes)
    upper_key = (*where, name, "model")  # management planes name theirs `core`
    n_up = len(plan.uplinks)
    if radix == 0:
        raise UpperTooSmall(
            Problem(
                upper_key,
                f"{name} model {spine.name} has no {plan.up_speed}GE ports for the "
                f"leaf uplinks (its ports: {describe_ports(spine)})",
            ),
            upper_key,
            plan.up_speed,
            1,
        )
    two_tier = _two_tier_spines(n_leaves, n_up, radix, count)
    if two_tier is None and (tiers == 2 or isinstance(count, int)):
        if isinstance(count, int) and n_up % count:
            raise BlueprintError([_bad_count(where, count, n_up)])
        spines = count if isinstance(count, int) else n_up
        need = n_leaves * (n_up // spines)
        raise UpperTooSmall(
            Problem(
                upper_key,
                f"{n_leaves} leaves x {n_up} uplinks cannot be built in 2 tiers: "
                f"{name} {spine.name} has {radix} ports at {plan.up_speed}GE, "
                f"each of {spines} {name}s would need {need}",
            ),
            upper_key,
            plan.up_speed,
            need,
        )
    return two_tier


def _two_tier(
    leaves: list[Switch], plan: LeafPlan, lanes: Lanes, *, code: str, name: str, count: int
) -> Upper:
    """`count` spines; leaf i's uplink j to spine j % count, on that spine's lane
    i * per + j // count (`per`: the uplinks each leaf has to each spine)."""
    per = len(plan.uplinks) // count
    spines = [Switch(f"{code}-{name}-{i + 1:03d}", Role.SPINE, i) for i in range(count)]
    wires = []
    for leaf_sw in leaves:
        for j, port in enumerate(plan.uplinks):
            wires.append(
                _uplink(
                    lower=leaf_sw.name,
                    port=port,
                    upper=spines[j % count],
                    lane_parent=lanes.lanes[leaf_sw.index * per + j // count],
                    split=lanes.split,
                    speed=plan.up_speed,
                )
            )
    return Upper(
        spines=spines,
        cores=[],
        wires=wires,
        tiers=2,
        spines_per_pod=count,
        leaves_per_pod=len(leaves),
    )


def _three_tier(
    leaves: list[Switch],
    plan: LeafPlan,
    lanes: Lanes,
    *,
    core: SwitchModel,
    code: str,
    where: YamlPath,
) -> Upper:
    """Pods of leaves under `n_up` pod spines (one link each), pod spine i of every pod in core
    plane i; pod spines are 1:1 (half their lanes down, half up)."""
    s = len(plan.uplinks)
    per_pod = len(lanes.lanes) // 2
    n_leaves = len(leaves)
    pods = math.ceil(n_leaves / per_pod)
    core_lanes = _core_lanes(core, plan.up_speed, where)
    cores_per_plane = math.ceil(n_leaves / len(core_lanes.lanes))
    upper = Upper(
        spines=[],
        cores=[
            Switch(f"{code}-core-{i + 1:02d}-{c + 1:02d}", Role.CORE, i * cores_per_plane + c)
            for i in range(s)
            for c in range(cores_per_plane)
        ],
        wires=[],
        tiers=3,
        spines_per_pod=s,
        leaves_per_pod=per_pod,
        pods=pods,
        cores_per_plane=cores_per_plane,
    )
    core_next = [0] * len(upper.cores)  # next free lane of each core
    for pod in range(upper.pods):
        pod_leaves = leaves[pod * per_pod : (pod + 1) * per_pod]
        pod_spines = [
            Switch(f"{code}-pod{pod + 1:02d}-spine-{i + 1:02d}", Role.SPINE, pod * s + i, pod)
            for i in range(s)
        ]
        upper.spines.extend(pod_spines)
        upper.wires += _pod_uplinks(pod, pod_leaves, pod_spines, plan=plan, lanes=lanes)
        upper.wires += _core_links(
            pod_spines,
            len(pod_leaves),
            pod * per_pod,
            upper,
            lanes=lanes,
            core_lanes=core_lanes,
            core_next=core_next,
            speed=plan.up_speed,
        )
    return upper


def _core_lanes(core: SwitchModel, speed: int, where: YamlPath) -> Lanes:
    """The core model's lanes at the pod spines' uplink speed; UpperTooSmall without any."""
    core_lanes = Lanes(*spine_lanes(core, speed))
    if not core_lanes.lanes:
        key = (*where, "core", "model")
        raise UpperTooSmall(
            Problem(key, f"core model {core.name} has no {speed}GE ports"), key, speed, 1
        )
    return core_lanes


def _pod_uplinks(
    pod: int, pod_leaves: list[Switch], pod_spines: list[Switch], *, plan: LeafPlan, lanes: Lanes
) -> list[Wire]:
    """A pod's leaves up to its spines: leaf uplink j to pod spine j, on the spine's lane of the
    leaf's place in the pod; the leaves learn their pod."""
    wires = []
    for local, leaf_sw in enumerate(pod_leaves):
        leaf_sw.pod = pod
        for j, port in enumerate(plan.uplinks):
            wires.append(
                _uplink(
                    lower=leaf_sw.name,
                    port=port,
                    upper=pod_spines[j],
                    lane_parent=lanes.lanes[local],
                    split=lanes.split,
                    speed=plan.up_speed,
                )
            )
    return wires


def _core_links(
    pod_spines: list[Switch],
    n_leaves: int,
    offset: int,
    upper: Upper,
    *,
    lanes: Lanes,
    core_lanes: Lanes,
    core_next: list[int],
    speed: int,
) -> list[Wire]:
    """A pod's spines up to the cores: spine i to core plane i, one link per leaf below it,
    on the upper half of its lanes. `offset` (the pod's first leaf) continues the global
    round-robin that keeps every core within one link of the others."""
    per_pod, wires = len(lanes.lanes) // 2, []
    for i, sp in enumerate(pod_spines):
        for j in range(n_leaves):
            core_sw = upper.cores[i * upper.cores_per_plane + (offset + j) % upper.cores_per_plane]
            lane, parent = lanes.lanes[per_pod + j]
            if lanes.split != "none":
                sp.splits[parent] = lanes.split
            c_lane, c_parent = core_lanes.lanes[core_next[core_sw.index]]
            core_next[core_sw.index] += 1
            if core_lanes.split != "none":
                core_sw.splits[c_parent] = core_lanes.split
            wires.append(
                Wire(
                    kind=LinkKind.UPLINK,
                    a_device=sp.name,
                    a_port=lane,
                    b_device=core_sw.name,
                    b_port=c_lane,
                    speed=speed,
                    cable=(core_sw.name, c_parent),
                )
            )
    return wires


def _uplink(
    *, lower: str, port: str, upper: Switch, lane_parent: tuple[str, str], split: str, speed: int
) -> Wire:
    """Lower switch `port` to `upper`'s lane; a lane of a split port records the split on
    `upper`."""
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


def _divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]
