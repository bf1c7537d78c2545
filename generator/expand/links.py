"""Wires into cabled links (cable ids, lengths from the floor, media, point-to-point addresses),
structured runs where a breakout cannot be one cable, and each plane's sizing summary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from generator.catalog import Catalog
from generator.expand.fabric import PlaneBuild, Wire
from generator.expand.layout import Floor, run_length
from generator.expand.planes import PlaneSpec
from generator.model import Fabric, Link, Rack, Trunk
from generator.records import replace
from generator.vocab import LinkKind, Plane

HARNESS = ("DAC", "AOC")  # media a breakout cable is made of (cables.yaml: breakout where split)


@dataclass(frozen=True, slots=True)
class WireSet:
    """The wires of one cable-id series: their plane, cable prefix and p2p addresses."""

    plane: str
    code: str  # cable id prefix, e.g. PAR
    wires: Sequence[Wire]
    p2p: Mapping[int, tuple[int, int]] = field(default_factory=dict)  # wire index -> (a, b)


def cable(
    sets: Sequence[WireSet],
    floor: Floor,
    rack_by: Mapping[str, Rack],
    catalog: Catalog,
    splits: Mapping[str, Mapping[str, str]],
) -> tuple[tuple[Link, ...], tuple[Trunk, ...]]:
    """The links of every wire set, and the trunks that replace the breakout cables of split
    ports whose legs cannot be one cable (`structure`). `splits`: switch -> parent -> split."""
    links: list[Link] = []
    trunks: list[Trunk] = []
    cassettes: dict[str, int] = {}  # rack -> cassettes placed
    media: dict[tuple[int, int], tuple] = {}  # (speed, length) -> medium, optic, reach
    # a run between two racks does not depend on the U positions, one inside a rack only on
    # their distance (layout.run_length): its cable length is worked out once per rack pair
    lengths: dict[tuple[str, str] | int, int] = {}
    for ws in sets:
        cable_ids: dict[tuple, str] = {}
        legs: dict[str, list[int]] = {}  # cable id -> indexes in links of its split-lane legs
        prefix = f"{ws.code}-"
        host = LinkKind.HOST  # a host wire of the oob plane is a management cable (per set)
        host_kind = LinkKind.MGMT if ws.plane == Plane.OOB else host
        for i, w in enumerate(ws.wires):
            cid = cable_ids.get(w.cable)
            if cid is None:  # PAR-000001: zfill is what f"{n:06d}" writes, in half the time
                cid = cable_ids[w.cable] = prefix + str(len(cable_ids) + 1).zfill(6)
            ra, ua = floor.position[w.a_device]
            rb, ub = floor.position[w.b_device]
            run = (ra, rb) if ra != rb else abs(ua - ub)
            length = lengths.get(run)
            if length is None:
                length = catalog.standard_length(run_length(rack_by[ra], ua, rack_by[rb], ub))
                lengths[run] = length
            a_ip, b_ip = ws.p2p.get(i, (0, 0))
            kind = host_kind if w.kind == host else w.kind
            chosen = media.get((w.speed, length))
            if chosen is None:
                medium = catalog.medium(w.speed, length)
                chosen = media[(w.speed, length)] = (medium, *catalog.optic(medium, w.speed))
            medium, optic, reach = chosen
            if w.b_device == w.cable[0] and w.b_port != w.cable[1]:  # a lane of a split port
                legs.setdefault(cid, []).append(len(links))
            links.append(
                Link(
                    cable_id=cid,
                    plane=ws.plane,
                    kind=kind,
                    a_device=w.a_device,
                    a_port=w.a_port,
                    b_device=w.b_device,
                    b_port=w.b_port,
                    speed=w.speed,
                    media=medium,
                    length_m=length,
                    a_ip=a_ip,
                    b_ip=b_ip,
                    prefix=31 if a_ip else 0,
                    optic=optic,
                    reach_m=reach,
                )
            )
        for indexes in legs.values():
            far = {floor.position[links[i].a_device][0] for i in indexes}
            if len(far) > 1 or links[indexes[0]].media not in HARNESS:
                trunks.append(
                    structure(
                        links=links,
                        indexes=indexes,
                        floor=floor,
                        rack_by=rack_by,
                        catalog=catalog,
                        splits=splits,
                        cassettes=cassettes,
                    )
                )
    return tuple(links), tuple(trunks)


def structure(
    links: list[Link],
    indexes: list[int],
    floor: Floor,
    rack_by: Mapping[str, Rack],
    catalog: Catalog,
    splits: Mapping[str, Mapping[str, str]],
    cassettes: dict[str, int],
) -> Trunk:
    """A breakout whose legs land in more than one rack, or that needs pluggable optics, as a
    structured run: an MPO trunk from the split port to a breakout cassette in the switch's rack
    (at its top U [assumed]: the panel's U is not placed), and a patch cord from cassette port k
    to the device of lane k. `links[i]` for i in `indexes` become the patch cords (cable ids
    TRUNK.k); the fibre is the first that holds the longest channel (catalog.structured)."""
    first = links[indexes[0]]
    switch, parent = first.b_device, first.b_port.rpartition(":")[0]
    split = splits.get(switch, {}).get(parent, "")
    lanes = int(split.partition("x")[0] or 1)  # 4x100GE: 4
    rack_name, u = floor.position[switch]
    rack = rack_by[rack_name]
    top = rack.height_u
    trunk_m = catalog.standard_length(run_length(rack, u, rack, top))
    cords = {}
    for i in indexes:
        ra, ua = floor.position[links[i].a_device]
        cords[i] = catalog.standard_length(run_length(rack, top, rack_by[ra], ua))
    fibre, entry = catalog.structured(split, trunk_m + max(cords.values()))
    cassettes[rack_name] = n = cassettes.get(rack_name, 0) + 1
    cassette = f"{rack_name}-CAS-{n:03d}"
    for i in indexes:
        lane = int(links[i].b_port.rpartition(":")[2])
        links[i] = replace(
            links[i],
            cable_id=f"{first.cable_id}.{lane}",
            media=fibre,
            length_m=cords[i],
            optic=entry.get("leg_optic", ""),
            reach_m=int(entry.get("reach_m", 0)),
            trunk_id=first.cable_id,
            cassette_port=lane,
        )
    return Trunk(
        trunk_id=first.cable_id,
        plane=first.plane,
        device=switch,
        port=parent,
        split=split,
        speed=lanes * first.speed,
        lanes=lanes,
        rack=rack_name,
        cassette=cassette,
        media=fibre,
        length_m=trunk_m,
        optic=entry.get("port_optic", ""),
        reach_m=int(entry.get("reach_m", 0)),
        connector=entry.get("trunk", ""),
        cord=entry.get("cord", ""),
        legs=len(indexes),
    )


def fabric(spec: PlaneSpec, b: PlaneBuild) -> Fabric:
    return Fabric(
        plane=spec.plane,
        routing=spec.routing,
        tiers=b.tiers,
        rails=b.rails,
        hosts_per_group=b.hosts_per_group,
        leaf_model=spec.leaf,
        spine_model=spec.spine,
        core_model=spec.core if b.tiers == 3 else "",
        split=b.plan.split,
        down_lanes=len(b.plan.lanes),
        down_speed=b.wires[0].speed if b.wires else 0,
        uplinks=len(b.plan.uplinks),
        up_speed=b.plan.up_speed,
        spines_per_pod=b.spines_per_pod,
        leaves_per_pod=b.leaves_per_pod,
        pods=b.pods,
        cores_per_plane=b.cores_per_plane,
        oversubscription=spec.oversubscription,
    )
