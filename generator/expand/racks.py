"""Hosts onto the floor (training rows of compute racks, then the storage and management zones)
and liquid-cooled racks onto CDUs."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from generator.blueprint.semantic import spec_servers
from generator.blueprint.spec import Blueprint, Training
from generator.catalog import Catalog, HostModel
from generator.errors import BlueprintError, Problem, YamlPath, format_path
from generator.expand.layout import Floor
from generator.model import Cdu, Device, Rack
from generator.records import replace
from generator.vocab import RackKind, Zone

ZONES = tuple(Zone)  # floor order
# The management zone has no rack setting: its racks take 16 nodes on a 15 kW budget each.
MANAGEMENT_RACK_NODES, MANAGEMENT_RACK_KW = 16, 15


# The blueprint setting that bounds a rack's power, by what the rack holds (analysis/checks.py
# power_and_cooling names it in its rack-power findings). The kind decides it: compute racks
# stand in the training zone only, storage and management racks in their own zone (place_hosts),
# and every network rack, in whichever zone it stands (a training row, the spine row, the storage
# or management zone), takes zones.training.network_rack.power_kw (expand/devices.py Placer).
# Management racks have no setting (MANAGEMENT_RACK_KW): a node model of lower power removes
# their finding.
RACK_BUDGET: dict[RackKind, YamlPath] = {
    RackKind.COMPUTE: ("zones", "training", "rack", "power_kw"),
    RackKind.NETWORK: ("zones", "training", "network_rack", "power_kw"),
    RackKind.STORAGE: ("zones", "storage", "rack", "power_kw"),
    RackKind.MANAGEMENT: ("zones", "management", "model"),
}
_FEWER = {  # the other setting that removes it: fewer hosts in a rack
    RackKind.COMPUTE: "zones.training.rack.servers",
    RackKind.STORAGE: "zones.storage.rack.nodes",
}


def rack_budget(rack: Rack) -> YamlPath:
    """The YAML path of the blueprint setting that removes a rack-power finding about `rack`: its
    power budget, a compute rack's cooling when that is the lower of the two, or a management
    rack's node model (the one setting of that zone that changes its racks' load)."""
    if rack.kind == RackKind.COMPUTE and rack.cooling_kw < rack.power_kw:
        return ("zones", "training", "rack", "cooling_kw")
    return RACK_BUDGET[rack.kind]


def budget_remedy(rack: Rack, at_least: float | None = None) -> str:
    """What removes a rack-power finding: the setting to raise (to `at_least` kW when given), or
    the other change that does it."""
    where = format_path(rack_budget(rack))
    if rack.kind == RackKind.MANAGEMENT:
        return (
            f"management racks take {MANAGEMENT_RACK_NODES} nodes on a {MANAGEMENT_RACK_KW} kW "
            f"budget, no blueprint setting: choose a {where} of lower power"
        )
    raise_it = f"raise {where}" + (f" to at least {math.ceil(at_least)}" if at_least else "")
    return f"{raise_it}, or lower {_FEWER[rack.kind]}" if rack.kind in _FEWER else raise_it


@dataclass(slots=True)
class Hosts:
    servers: list[str]
    storage_nodes: list[str]
    management_nodes: list[str]
    model: dict[str, HostModel]


def rack_problems(bp: Blueprint, server: HostModel) -> list[Problem]:
    """A compute rack must hold its servers' power, heat and height."""
    rack_cfg = bp.zones.training.rack
    per_rack, power_kw = rack_cfg.servers, rack_cfg.power_kw
    cooling_kw = power_kw if rack_cfg.cooling_kw is None else rack_cfg.cooling_kw
    where = ("zones", "training", "rack", "servers")
    out = []
    load_kw = per_rack * server.power_w / 1000
    limit = min(power_kw, cooling_kw)
    if load_kw > limit:
        out.append(
            Problem(
                where,
                f"{per_rack} x {server.name} draw {load_kw:g} kW, over the rack's "
                f"{'power' if power_kw <= cooling_kw else 'cooling'} budget of {limit:g} kW",
                f"at most {int(limit * 1000 // server.power_w)} servers per rack, or raise the budget",
            )
        )
    if per_rack * server.height_u > rack_cfg.height_u:
        out.append(
            Problem(
                where,
                f"{per_rack} x {server.height_u}U servers do not fit a {rack_cfg.height_u}U rack",
            )
        )
    return out


def place_hosts(bp: Blueprint, catalog: Catalog, floor: Floor) -> Hosts:
    """Training rows of compute racks, then the storage and management zones."""
    tz, sz, mz = bp.zones.training, bp.zones.storage, bp.zones.management
    server = catalog.hosts[bp.compute.server]
    problems = rack_problems(bp, server)
    if problems:
        raise BlueprintError(problems)
    rack_cfg = tz.rack
    per_rack, power_kw = rack_cfg.servers, rack_cfg.power_kw
    cooling_kw = power_kw if rack_cfg.cooling_kw is None else rack_cfg.cooling_kw
    c = bp.compute
    servers = [
        c.hostname.format(index=c.index_start + i) for i in range(spec_servers(bp, catalog) or 0)
    ]
    model: dict[str, HostModel] = {}
    row, rack = 0, None
    for i, name in enumerate(servers):
        if i % per_rack == 0:
            if row == 0 or len(floor.rows[(Zone.TRAINING, row)]) == tz.row.racks:
                row = floor.new_row(Zone.TRAINING)
            rack = floor.new_rack(
                zone=Zone.TRAINING,
                row=row,
                kind=RackKind.COMPUTE,
                height_u=rack_cfg.height_u,
                power_kw=power_kw,
                cooling_kw=cooling_kw,
                cooling=tz.cooling,
            )
        floor.place(rack, name, server.height_u, server.power_w)
        model[name] = server

    storage = [f"stor-{i + 1:03d}" for i in range(sz.nodes.count)]
    fill_zone(
        floor=floor,
        zone=Zone.STORAGE,
        kind=RackKind.STORAGE,
        names=storage,
        model=catalog.hosts[sz.nodes.model],
        per_rack=sz.rack.nodes,
        power_kw=sz.rack.power_kw,
        out=model,
    )
    management = [f"{role}-{i + 1:02d}" for role, n in sorted(mz.nodes.items()) for i in range(n)]
    fill_zone(
        floor=floor,
        zone=Zone.MANAGEMENT,
        kind=RackKind.MANAGEMENT,
        names=management,
        model=catalog.hosts[mz.model],
        per_rack=MANAGEMENT_RACK_NODES,
        power_kw=MANAGEMENT_RACK_KW,
        out=model,
    )
    if not floor.zone_rows.get(Zone.MANAGEMENT):
        floor.new_row(Zone.MANAGEMENT)
    return Hosts(servers, storage, management, model)


def fill_zone(
    floor: Floor,
    zone: Zone,
    kind: RackKind,
    names: list[str],
    model: HostModel,
    per_rack: int,
    power_kw: float,
    out: dict[str, HostModel],
) -> None:
    if not names:
        return
    row = floor.new_row(zone)
    budget = max(power_kw, model.power_w / 1000)
    rack = None
    for i, name in enumerate(names):
        if i % per_rack == 0 or not rack.fits(model.height_u, model.power_w):
            rack = floor.new_rack(
                zone=zone,
                row=row,
                kind=kind,
                height_u=42,
                power_kw=budget,
                cooling_kw=budget,
                cooling="air",
            )
        floor.place(rack, name, model.height_u, model.power_w)
        out[name] = model


def assign_cdus(racks: tuple[Rack, ...], floor: Floor, tz: Training) -> tuple[Cdu, ...]:
    """Liquid-cooled compute racks onto N+1 CDUs of the zone's capacity: N is what the load
    needs, and one more is placed so that with any one CDU out the others carry the load (they
    share the zone's secondary loop; the schema's cdu description cites the rule). The racks are
    spread in floor order over the N+1 CDUs, each about an equal share; when the racks are too
    few or too heavy to spread, a standby CDU that feeds the loop but no rack of its own is
    placed (named in the plan and the bill of materials like the others)."""
    if tz.cooling != "liquid":
        return ()
    cap = tz.cdu.capacity_kw
    loads = [
        (r.name, floor.racks[r.name].load_w / 1000)
        for r in racks
        if r.zone == Zone.TRAINING and r.kind == RackKind.COMPUTE
    ]
    if not loads:
        return ()
    total = sum(kw for _, kw in loads)
    groups = _spread(loads, len(_fill(loads, cap)) + 1)
    if any(sum(kw for _, kw in g) > cap for g in groups):
        groups = _fill(loads, cap)  # a share over capacity: fill each CDU instead
    while (len(groups) - 1) * cap < total:  # N+1: a standby on the shared loop
        groups.append([])
    return tuple(
        Cdu(
            name=f"CDU-{i:02d}",
            capacity_kw=cap,
            racks=tuple(name for name, _ in g),
            load_kw=round(sum(kw for _, kw in g), 3),
        )
        for i, g in enumerate(groups, 1)
    )


Loads = list[tuple[str, float]]  # (rack, kW) in floor order


def _fill(loads: Loads, cap: float) -> list[Loads]:
    """Racks in floor order, each CDU filled up to `cap` (the fewest CDUs of that order)."""
    out: list[Loads] = [[]]
    for rack in loads:
        if out[-1] and sum(kw for _, kw in out[-1]) + rack[1] > cap:
            out.append([])
        out[-1].append(rack)
    return out


def _spread(loads: Loads, n: int) -> list[Loads]:
    """Racks in floor order over `n` CDUs, each rack to the share its middle falls in."""
    share = sum(kw for _, kw in loads) / n
    out: list[Loads] = [[] for _ in range(n)]
    before = 0.0
    for name, kw in loads:
        out[min(n - 1, int((before + kw / 2) // share))].append((name, kw))
        before += kw
    return [g for g in out if g]


def rack_loads(racks: tuple[Rack, ...], devices: Iterable[Device]) -> tuple[Rack, ...]:
    """The racks, each with the nameplate power of the devices in it (`Rack.load_kw`)."""
    load: dict[str, float] = {}
    for d in devices:
        load[d.rack] = load.get(d.rack, 0.0) + d.power_w / 1000
    return tuple(replace(r, load_kw=load.get(r.name, 0.0)) for r in racks)
