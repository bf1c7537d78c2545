"""Growth as a phase-1 decision (issue #32): what the next step up costs without a plan, the
`growth.cards` that makes it free, and what reserving it costs now.

The next step is one eighth more NPU servers (+12.5 %), rounded up to whole parameter-plane leaf
groups (the servers one leaf, or one group of rail leaves, serves) and whole supernodes, and at
least one such group. One eighth is a stated choice, not a vendor figure: big enough to be the
next purchase order of a cluster this size, small enough to be the one that comes first, and a
whole number of the units the fabric is built from (on 2,048 cards: +256, the step the issue
measured). The blueprint is expanded once more at that size without a plan and compared with the
build now by the comparison `wanka diff` makes (generator.analysis.changes, without the rendered switch
configurations). The recommended `growth.cards` is the next step's size, the smallest plan that
covers it: inside a plan, growing only adds (generator.expand.growth; tests/unit/test_growth.py
proves it); the reservation is that plan's build now (growth.prefix of the next step) against the
build without a plan. Large clusters are not measured during generate (MEASURED_BELOW_LINKS says
why); their review gives the next step as the default plan and the `wanka diff` that measures it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace
from math import lcm
from typing import Any

import msgspec

from generator.analysis.changes import disturbances, model_report
from generator.blueprint.spec import Blueprint
from generator.errors import BlueprintError, format_path
from generator.expand import expand
from generator.expand.growth import prefix
from generator.model import Cluster, Growth
from generator.vocab import Plane

STEP_SHARE = 8  # the next step adds one eighth of the servers built now
# `wanka generate` measures the step only below this many links (where the pipeline runs in one
# process, generator.parallel.PARALLEL_FROM_LINKS): at 10,240 cards (30,071 links) the extra
# expand and comparison added about a fifth to the run's CPU time (0.7-1.0 s on 4.6-5 s), far
# over the tenth it may cost; there the review says how to measure it with `wanka diff`.
MEASURED_BELOW_LINKS = 20_000


@dataclass(frozen=True, slots=True)
class GrowthCost:
    servers: int  # NPU servers built now
    step: int  # NPU servers the next step adds
    unit: int  # servers of one parameter leaf group (and whole supernodes): the step's unit
    cards_per_server: int
    planned: int  # the blueprint's growth plan in servers, 0 without one
    disturbances: tuple[tuple[str, int], ...] = ()  # (kind, count) the step without a plan makes
    moved: tuple[str, ...] = ()  # the devices that step moves, by name
    # what the recommended plan costs now, against the build without a plan
    switches: int = 0  # switches installed now beyond the unplanned build's
    rack_units: int = 0  # rack units those devices take
    racks: int = 0  # racks installed now beyond the unplanned build's
    power_kw: float = 0.0  # nameplate power installed now beyond the unplanned build's
    upper_ports: int = 0  # spine and core ports cabled at the next step, left free now
    held_racks: int = 0  # floor positions kept free for the step's racks
    problem: str = ""  # why the next step does not fit the blueprint (no cost then)
    measured: bool = True  # False: too large to measure during generate (MEASURED_BELOW_LINKS)

    @property
    def cards(self) -> int:
        return self.servers * self.cards_per_server

    @property
    def next_cards(self) -> int:
        return (self.servers + self.step) * self.cards_per_server

    @property
    def total(self) -> int:
        return sum(n for _, n in self.disturbances)

    @property
    def covered(self) -> bool:
        """The blueprint's plan already reaches the next step."""
        return self.planned >= self.servers + self.step

    @property
    def recommended(self) -> int:
        """growth.cards to set: the next step's size when that step disturbs installed gear
        and no plan covers it yet, else 0."""
        return self.next_cards if (self.total or not self.measured) and not self.covered else 0


def step_size(cluster: Cluster, bp: Blueprint) -> tuple[int, int]:
    """(servers the next step adds, the unit it is counted in)."""
    fabric = next((f for f in cluster.fabrics if f.plane == Plane.PARAMETER), None)
    supernode = bp.compute.supernode.servers if bp.compute.supernode else 1
    unit = lcm(max(1, fabric.hosts_per_group if fabric else 1), supernode)
    want = -(-len(cluster.npu_servers) // STEP_SHARE)
    return max(unit, -(-want // unit) * unit), unit


def _sized(bp: Blueprint, servers: int) -> Blueprint:
    """The blueprint at `servers` NPU servers, without a growth plan."""
    compute = msgspec.structs.replace(bp.compute, cards=None, servers=servers)
    return msgspec.structs.replace(bp, compute=compute, growth=None)


def next_step_cost(cluster: Cluster, bp: Blueprint) -> GrowthCost | None:
    """The next step up from `cluster` (expanded from the validated blueprint `bp`) without a
    plan, and with the recommended one; None without NPU servers."""
    now = len(cluster.npu_servers)
    if not now:
        return None
    step, unit = step_size(cluster, bp)
    plan = cluster.growth.planned_servers
    base = GrowthCost(
        servers=now, step=step, unit=unit, cards_per_server=cluster.cards_per_server, planned=plan
    )
    target = now + step
    if len(cluster.links) >= MEASURED_BELOW_LINKS:
        return replace(base, measured=False)
    try:
        grown = expand(_sized(bp, target))
        # the build now without a plan: this cluster, unless its plan reaches beyond it
        unplanned = cluster if plan <= now else expand(_sized(bp, now))
    except BlueprintError as e:
        p = e.problems[0]
        where = format_path(p.path)
        hint = f" ({p.hint})" if p.hint else ""
        return replace(base, problem=f"{where}: {p.message}{hint}")
    shown = disturbances(model_report(unplanned, grown))
    kinds = Counter(x["kind"] for x in shown)
    reserved = prefix(grown, now, Growth(target, now))
    return replace(
        base,
        disturbances=tuple(kinds.items()),  # in generator.analysis.changes' order
        moved=tuple(x["item"] for x in shown if x["kind"] == "device moved"),
        **reservation(unplanned, reserved, grown),
    )


def reservation(unplanned: Cluster, reserved: Cluster, grown: Cluster) -> dict[str, Any]:
    """What the plan installs now beyond the unplanned build, and what it keeps free."""

    def switches(c: Cluster) -> list:
        return [d for d in c.devices if d.is_switch]

    # the switches whose ports a plan keeps free for the step
    upper = {d.name for d in reserved.devices if d.role.is_upper}

    def upper_ends(c: Cluster) -> int:
        return sum((x.a_device in upper) + (x.b_device in upper) for x in c.links)

    return {
        "switches": len(switches(reserved)) - len(switches(unplanned)),
        "rack_units": sum(d.height_u for d in reserved.devices)
        - sum(d.height_u for d in unplanned.devices),
        "racks": len(reserved.racks) - len(unplanned.racks),
        "power_kw": round(reserved.power_kw - unplanned.power_kw, 1),  # the model's racks' load
        "upper_ports": upper_ends(grown) - upper_ends(reserved),
        "held_racks": len(grown.racks) - len(reserved.racks),
    }


def summary(cost: GrowthCost) -> dict[str, str]:
    """The review's growth paragraph as sentences (README.md and report.html format the same
    dict): the step, its cost without a plan, the plan, its YAML line, what reserving costs."""
    c = cost
    out = {
        "step": f"The next step up from {c.cards:,} cards is +{c.step * c.cards_per_server:,} "
        f"cards ({c.next_cards:,}): one eighth more servers, rounded up to whole units of "
        f"{c.unit:,} servers (one parameter leaf group; whole supernodes where the cluster has "
        "them).",
        "cost": _cost(c),
        "plan": "",
        "yaml": "",
        "reserve": "",
    }
    if c.problem:
        return out
    if c.covered:
        out["plan"] = (
            f"The blueprint's plan, growth.cards {c.planned * c.cards_per_server:,}, covers it: "
            "growing inside the plan only adds."
        )
    elif c.recommended and not c.measured:
        out["plan"] = (
            f"Default recommendation (not measured): growth.cards {c.recommended:,}, the next "
            "step, or the final size if larger; growing inside a plan only adds."
        )
    elif c.recommended:
        out["plan"] = (
            f"Recommended before phase 1: growth.cards {c.recommended:,} (or the final size, if "
            "larger); the step then only adds devices, cables and addresses."
        )
        out["reserve"] = (
            f"Reserving it costs now: {c.switches:+,} switches, {c.rack_units:+,} rack units, "
            f"{c.racks:+,} racks, {c.power_kw:+,.1f} kW nameplate; {c.upper_ports:,} spine and "
            f"core ports left free and {c.held_racks:,} rack position"
            f"{'s' if c.held_racks != 1 else ''} held on the floor for the step."
        )
    if c.recommended:
        out["yaml"] = f"growth: {{cards: {c.recommended}}}"
    return out


def _cost(c: GrowthCost) -> str:
    if c.problem:
        return f"That size does not fit this blueprint: {c.problem}."
    if not c.measured:
        return (
            "Not measured by wanka generate at this size: it would expand the blueprint once "
            "more (about a fifth more CPU at 10,240 cards). To measure it, copy the blueprint "
            f"with compute.cards: {c.next_cards} (compute.servers: {c.servers + c.step}) and run "
            "`wanka diff BLUEPRINT COPY`: it counts "
            "what moves and names the plan that avoids it."
        )
    if not c.total:
        return (
            "Without a growth plan it only adds devices, cables and addresses: nothing installed "
            "moves, so no plan is needed for it."
        )
    listed = ", ".join(f"{n:,} {_plural(k)}" for k, n in c.disturbances)
    names = ", ".join(c.moved[:8]) + (f" and {len(c.moved) - 8:,} more" if len(c.moved) > 8 else "")
    return (
        f"Without a growth plan it disturbs installed gear {c.total:,} times: {listed}"
        + (f" (moved: {names})" if c.moved else "")
        + ". Counted as wanka diff counts them (devices, cables, addresses, ASNs, ranks), "
        "switch configurations aside."
    )


def _plural(kind: str) -> str:
    """A disturbance kind of generator.analysis.changes for a count: 'device moved' -> 'devices moved'."""
    noun, rest = kind.split(" ", 1)
    return f"{noun}{'es' if noun.endswith('ss') else 's'} {rest}"
