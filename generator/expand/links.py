"""Wires into cabled links (cable ids, lengths from the floor, media, point-to-point addresses),
and each plane's sizing summary."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from generator.catalog import Catalog
from generator.expand.fabric import PlaneBuild, Wire
from generator.expand.layout import Floor, run_length
from generator.expand.planes import PlaneSpec
from generator.model import Fabric, Link, Rack


@dataclass(frozen=True, slots=True)
class WireSet:
    """The wires of one cable-id series: their plane, cable prefix and p2p addresses."""

    plane: str
    code: str  # cable id prefix, e.g. PAR
    wires: Sequence[Wire]
    p2p: Mapping[int, tuple[int, int]] = field(default_factory=dict)  # wire index -> (a, b)


def cable(
    sets: Sequence[WireSet], floor: Floor, rack_by: Mapping[str, Rack], catalog: Catalog
) -> tuple[Link, ...]:
    links: list[Link] = []
    media: dict[tuple[int, int], tuple] = {}  # (speed, length) -> medium, optic, reach
    # a run between two racks does not depend on the U positions, one inside a rack only on
    # their distance (layout.run_length): its cable length is worked out once per rack pair
    lengths: dict[tuple[str, str] | int, int] = {}
    for ws in sets:
        cable_ids: dict[tuple, str] = {}
        prefix = f"{ws.code}-"
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
            kind = "mgmt" if ws.plane == "oob" and w.kind == "host" else w.kind
            chosen = media.get((w.speed, length))
            if chosen is None:
                medium = catalog.medium(w.speed, length)
                chosen = media[(w.speed, length)] = (medium, *catalog.optic(medium, w.speed))
            medium, optic, reach = chosen
            links.append(
                Link(
                    cid,
                    ws.plane,
                    kind,
                    w.a_device,
                    w.a_port,
                    w.b_device,
                    w.b_port,
                    w.speed,
                    medium,
                    length,
                    a_ip,
                    b_ip,
                    31 if a_ip else 0,
                    optic,
                    reach,
                )
            )
    return tuple(links)


def fabric(spec: PlaneSpec, b: PlaneBuild) -> Fabric:
    return Fabric(
        spec.plane,
        spec.routing,
        b.tiers,
        b.rails,
        b.hosts_per_group,
        spec.leaf,
        spec.spine,
        spec.core if b.tiers == 3 else "",
        b.plan.split,
        len(b.plan.lanes),
        b.wires[0].speed if b.wires else 0,
        len(b.plan.uplinks),
        b.plan.up_speed,
        b.spines_per_pod,
        b.leaves_per_pod,
        b.pods,
        b.cores_per_plane,
        spec.oversubscription,
    )
