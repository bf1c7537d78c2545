"""Phased build-out: the cluster built now as a stable prefix of the planned final build.

With `growth.cards` in the blueprint, expand lays out the FINAL cluster (spines, cores, network
racks, rows, CDUs, pools, ASNs, ranks), then keeps what the first `compute.cards` cards need: the
first NPU servers in rank order and every device a kept device depends on. Nothing kept depends
on how many cards are built now, so growing inside the planned size only adds devices, cables
and addresses; it never moves or renumbers one that exists (issue #17).
"""

from __future__ import annotations

from generator.expand.devices import link_facts
from generator.expand.racks import rack_loads
from generator.model import Cluster, Device, Growth
from generator.records import replace
from generator.vocab import Plane, Role

# Switches decide their presence plane by plane, data planes before the management planes
# (whose access switches serve every other device's management port), lowest tier first.
TIER = {Role.LEAF: 1, Role.ACCESS: 1, Role.SPINE: 2, Role.CORE: 3}


def prefix(final: Cluster, servers: int, growth: Growth) -> Cluster:
    """The part of `final` the first `servers` NPU servers (in rank order) need."""
    built = {s.name for s in final.npu_servers[:servers]}
    present = {
        d.name
        for d in final.devices
        if d.name in built or d.role not in (*TIER, Role.NPU_SERVER)  # hosts, border, firewalls
    }
    neighbours: dict[str, list[Device]] = {}
    by_name = final.device_by_name
    for x in final.links:
        neighbours.setdefault(x.a_device, []).append(by_name[x.b_device])
        neighbours.setdefault(x.b_device, []).append(by_name[x.a_device])
    for plane in (p for p in Plane if p.has_hosts):
        switches = sorted(
            (d for d in final.devices if d.plane == plane and d.role in TIER),
            key=lambda d: TIER[d.role],
        )
        for d in switches:
            if any(_serves(d, n, plane) and n.name in present for n in neighbours.get(d.name, ())):
                present.add(d.name)
    return _keep(final, present, built, growth)


def _serves(switch: Device, other: Device, plane: str) -> bool:
    """Whether `switch` is needed because `other` is: `other` is a host, or a switch below it
    in its plane; a management switch is needed by any device it reaches but its own uplinks."""
    if other.is_host:
        return True
    if other.plane == plane:
        return TIER.get(other.role, 0) < TIER[switch.role]
    return Plane(plane).is_management


def _keep(final: Cluster, present: set[str], built: set[str], growth: Growth) -> Cluster:
    links = tuple(x for x in final.links if x.a_device in present and x.b_device in present)
    devices = link_facts(tuple(d for d in final.devices if d.name in present), links)
    racks_used = {d.rack for d in devices}
    racks = rack_loads(tuple(r for r in final.racks if r.name in racks_used), devices)
    load = {r.name: r.load_kw for r in racks}
    cdus = tuple(
        replace(c, racks=kept, load_kw=round(sum(load.get(r, 0.0) for r in kept), 3))
        for c in final.cdus
        if (kept := tuple(r for r in c.racks if r in racks_used))
    )
    legs: dict[str, int] = {}  # a trunk is installed with its first patched leg
    for x in links:
        if x.trunk_id:
            legs[x.trunk_id] = legs.get(x.trunk_id, 0) + 1
    return replace(
        final,
        racks=racks,
        devices=devices,
        links=links,
        trunks=tuple(replace(t, legs=legs[t.trunk_id]) for t in final.trunks if t.trunk_id in legs),
        ztp_path=tuple(p for p in final.ztp_path if p[0] in present),
        subnets=tuple(s for s in final.subnets if present.issuperset(s.owners)),
        addresses=tuple(a for a in final.addresses if a.device in present),
        cdus=cdus,
        npu_servers=tuple(s for s in final.npu_servers if s.name in built),
        missing_facts=tuple(n for n in final.missing_facts if n in built),
        growth=growth,
    )


def moved(planned: Cluster, built: Cluster) -> tuple[str, ...]:
    """Devices of the planned build that a build beyond it places elsewhere (rack, U), with
    where they were and where they go: what must move when the cluster outgrows its plan."""
    where = {d.name: (d.rack, d.u) for d in built.devices}
    return tuple(
        f"{d.name} {d.rack} U{d.u} -> {where[d.name][0]} U{where[d.name][1]}"
        for d in planned.devices
        if d.name in where and where[d.name] != (d.rack, d.u)
    )
