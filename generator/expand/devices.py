"""Switches: each plane built from its hosts, placed in racks, and every device frozen with its
place, ASN, loopback, splits and management address."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache

from generator.blueprint.spec import Blueprint
from generator.catalog import Catalog, SwitchModel
from generator.errors import BlueprintError, Problem, YamlPath
from generator.expand.addressing import PlaneAddresses
from generator.expand.border import border_devices
from generator.expand.fabric import Endpoint, PlaneBuild, build_plane
from generator.expand.layout import Floor
from generator.expand.planes import PLANE_CODE, PlaneSpec
from generator.expand.racks import ZONES, Hosts
from generator.model import (
    CONFIGURED_PLATFORMS,
    MGMT_VRF,
    Address,
    Device,
    Link,
    Management,
    port_sort_key,
)
from generator.records import replace
from generator.vocab import HostPort, LinkKind, Plane, Role, Zone

ASN_OFFSET = {
    Plane.PARAMETER: 0,
    Plane.STORAGE: 100_000,
}  # BGP planes; cores, spines per pod, leaves
MAX_ASN = 4_294_967_294  # 2**32 - 1 is reserved (RFC 7300)


def switch_model(catalog: Catalog, name: str, where: YamlPath) -> SwitchModel:
    model = catalog.switches.get(name)
    if model is None:
        raise BlueprintError(
            [Problem(where, f"unknown switch model {name!r}", "see `wanka catalog`")]
        )
    return model


def build(
    spec: PlaneSpec, eps: list[Endpoint], catalog: Catalog, npu_subnets: int = 0
) -> PlaneBuild:
    """`npu_subnets` (the server model's npu_subnets_per_server): a multi-rail group has that many
    leaves, leaf k carrying ports k, k + n, ... of each server, one subnet each."""
    ports = len(eps[0].ports)
    rails = ports if spec.multi_rail or (spec.dual_homed and ports > 1) else 1
    if spec.multi_rail and 1 < npu_subnets < ports and ports % npu_subnets == 0:
        rails = npu_subnets
    return build_plane(
        plane=spec.plane,
        code=PLANE_CODE[spec.plane],
        endpoints=eps,
        leaf=switch_model(catalog, spec.leaf, (*spec.where, "leaf", "model")),
        spine=switch_model(catalog, spec.spine, (*spec.where, "spine", "model")),
        core=switch_model(catalog, spec.core, (*spec.where, "core", "model")),
        ratio=spec.ratio,
        split=spec.split,
        rails=rails,
        tiers=spec.tiers,
        spine_count=spec.spine_count,
        peer_links=spec.peer_links,
        uplinks=spec.uplinks,
        where=spec.where,
        role_names=(spec.leaf_role, spec.upper_role),
    )


def host_endpoints(hosts: Hosts, floor: Floor) -> dict[str, list[Endpoint]]:
    """The host ports of each data and in-band plane (the out-of-band plane comes last)."""

    def endpoints(names: list[str], role: str) -> list[Endpoint]:
        out = []
        for h in names:
            spec = hosts.model[h].port(role)
            if spec:
                zone = floor.racks[floor.position[h][0]].zone
                out.append(Endpoint(host=h, ports=spec.names, speed=spec.speed, group=(zone,)))
        return out

    return {
        Plane.PARAMETER: endpoints(hosts.servers, HostPort.NPU),
        Plane.STORAGE: endpoints(hosts.servers, HostPort.STORAGE)
        + endpoints(hosts.storage_nodes, HostPort.STORAGE),
        Plane.BUSINESS: endpoints(hosts.servers, HostPort.BUSINESS),
        Plane.INBAND: endpoints(
            hosts.servers + hosts.storage_nodes + hosts.management_nodes,
            HostPort.INBAND,
        ),
    }


@dataclass(slots=True)
class Placed:
    """Switches placed so far: model and (role, plane) by name, in placement order."""

    model: dict[str, SwitchModel] = field(default_factory=dict)
    role: dict[str, tuple[str, str]] = field(default_factory=dict)


class Placer:
    """Switches into racks. Parameter leaves top-of-rack when all their servers share a rack
    (shortest cables; a rack failure takes only that rack); other switches in network racks:
    access switches in the row of their first host; spines and cores of the parameter and storage
    planes in the training zone's spine row; everything that joins zones (business spines,
    management cores, border) in the management zone. Redundant members (pair, spine i / i+1)
    alternate between an A and a B side."""

    def __init__(self, bp: Blueprint, floor: Floor, catalog: Catalog) -> None:
        self.floor, self.catalog, self.placed = floor, catalog, Placed()
        self.net_power = bp.zones.training.network_rack.power_kw
        self.spine_row = floor.new_row(Zone.TRAINING)
        self.mgmt_row = floor.zone_rows[Zone.MANAGEMENT]

    def row_of(self, dev: str) -> tuple[str, int]:
        slot = self.floor.racks[self.floor.position[dev][0]]
        return slot.zone, slot.row

    def switch(self, name: str, role: str, plane: str, model: str, zone: Zone, row: int, side: int):
        m = self.catalog.switches[model]
        self.placed.model[name], self.placed.role[name] = m, (role, plane)
        self.floor.place_network(
            zone=zone,
            row=row,
            name=name,
            height_u=m.height_u,
            power_w=m.power_w,
            power_kw=self.net_power,
            side=side,
        )

    def plane(self, spec: PlaneSpec, b: PlaneBuild) -> None:
        floor, placed = self.floor, self.placed
        for leaf in b.leaves:
            members = b.leaf_members[leaf.name]
            rack = floor.racks[floor.position[members[0]][0]]
            m = self.catalog.switches[spec.leaf]
            tor = spec.plane == Plane.PARAMETER and all(
                floor.position[h][0] == rack.name for h in members
            )
            if tor and rack.fits(m.height_u, m.power_w):
                placed.model[leaf.name], placed.role[leaf.name] = m, (spec.leaf_role, spec.plane)
                floor.place(rack, leaf.name, m.height_u, m.power_w)
            else:
                zone, row = self.row_of(members[0])
                self.switch(
                    name=leaf.name,
                    role=spec.leaf_role,
                    plane=spec.plane,
                    model=spec.leaf,
                    zone=zone,
                    row=row,
                    side=leaf.index % 2,
                )
        zone, row = (
            (Zone.TRAINING, self.spine_row)
            if spec.upper_zone == Zone.TRAINING
            else (Zone.MANAGEMENT, self.mgmt_row)
        )
        for sw, role, model in (
            *((sp, spec.upper_role, spec.spine) for sp in b.spines),
            *((c, Role.CORE, spec.core) for c in b.cores),
        ):
            self.switch(
                name=sw.name,
                role=role,
                plane=spec.plane,
                model=model,
                zone=zone,
                row=row,
                side=sw.index % 2,
            )

    def border(self, bp: Blueprint) -> None:
        for name, role, model in border_devices(bp):
            side = (int(name.rsplit("-", 1)[1]) - 1) % 2  # -01 on the A side, -02 on the B side
            self.switch(
                name=name,
                role=role,
                plane=Plane.BORDER,
                model=model,
                zone=Zone.MANAGEMENT,
                row=self.mgmt_row,
                side=side,
            )

    def oob_endpoints(self, hosts: Hosts) -> list[Endpoint]:
        """Every BMC and every switch management port, zone by zone, in floor order."""
        floor = self.floor
        out: list[Endpoint] = []
        for zone in ZONES:
            for row in range(1, floor.zone_rows.get(zone, 0) + 1):
                for slot in floor.rows[(zone, row)]:
                    for dev in slot.devices:
                        if dev in hosts.model:
                            spec = hosts.model[dev].port(HostPort.BMC)
                            if spec:
                                out.append(
                                    Endpoint(
                                        host=dev, ports=spec.names, speed=spec.speed, group=(zone,)
                                    )
                                )
                        else:
                            port = self.placed.model[dev].mgmt_port
                            out.append(Endpoint(host=dev, ports=(port,), speed=1, group=(zone,)))
        return out


def management(
    name: str,
    model: SwitchModel | None,
    addresses: Mapping[tuple[str, str], list[Address]],
    loopback: int,
    routes: tuple[tuple[int, int], ...] = (),
) -> Management | None:
    """Switches: the oob address of their management port, in the management VRF, else (the
    out-of-band switches themselves) their loopback. Hosts: their in-band address, routing
    `routes` (the pools their in-band port reaches) via its gateway."""
    if model is not None:
        for a in addresses.get((Plane.OOB, name), ()):
            if a.port == model.mgmt_port:
                return Management(
                    ip=a.ip, prefix=a.prefix, interface=a.port, vrf=MGMT_VRF, gateway=a.gateway
                )
        return (
            Management(ip=loopback, prefix=32, interface="LoopBack0", vrf="") if loopback else None
        )
    inband = addresses.get((Plane.INBAND, name))
    if inband:
        a = inband[0]
        return Management(
            ip=a.ip, prefix=a.prefix, interface=a.port, vrf="", gateway=a.gateway, routes=routes
        )
    return None


def devices(
    bp: Blueprint,
    specs: Mapping[str, PlaneSpec],
    hosts: Hosts,
    floor: Floor,
    builds: Mapping[str, PlaneBuild],
    placed: Placed,
    splits: Mapping[str, Mapping[str, str]],
    addrs: Mapping[str, PlaneAddresses],
) -> tuple[Device, ...]:
    """Hosts (servers, storage nodes, management nodes), then switches in placement order. ASNs
    only on the planes that route with BGP: per plane a base, spines per pod, leaves by index."""
    asn_base = bp.networks.parameter.routing.asn_base
    asn: dict[str, int] = {}
    for plane, offset in ASN_OFFSET.items():
        b = builds.get(plane)
        if b is None or specs[plane].routing != "bgp":
            continue
        for sw in (*b.leaves, *b.spines, *b.cores):
            base = asn_base + offset
            asn[sw.name] = {Role.CORE: base, Role.SPINE: base + 1 + (sw.pod or 0)}.get(
                sw.role, base + 1000 + sw.index
            )
    if asn and max(asn.values()) > MAX_ASN:
        highest = max(asn, key=asn.__getitem__)
        raise BlueprintError(
            [
                Problem(
                    ("networks", "parameter", "routing", "asn_base"),
                    f"{highest} would get AS number {asn[highest]:,}, above {MAX_ASN:,}, the "
                    "highest usable 4-byte ASN (RFC 6793; 4294967295 is reserved, RFC 7300)",
                    f"lower asn_base to at most {asn_base - (asn[highest] - MAX_ASN):,}; "
                    "4200000000 starts the private range (RFC 6996)",
                )
            ]
        )
    pod = {sw.name: sw.pod for b in builds.values() for sw in (*b.leaves, *b.spines, *b.cores)}
    loopbacks = {k: v for a in addrs.values() for k, v in a.loopbacks.items()}
    by_device: dict[tuple[str, str], list[Address]] = {}
    for plane in (Plane.INBAND, Plane.OOB):
        for a in addrs[plane].addresses if plane in addrs else ():
            by_device.setdefault((plane, a.device), []).append(a)
    supernode = bp.compute.supernode.servers if bp.compute.supernode else None
    # the pools a host's in-band port routes: its own plane's; the management nodes manage the
    # out-of-band plane too (switch management ports, BMCs), through the firewalls
    pool = {
        p: (a.pool.network, a.pool.prefix)
        for p, a in addrs.items()
        if p in (Plane.INBAND, Plane.OOB)
    }
    inband_routes = {
        role: tuple(pool[p] for p in planes if p in pool)
        for role, planes in (
            (Role.NPU_SERVER, (Plane.INBAND,)),
            (Role.STORAGE_NODE, (Plane.INBAND,)),
            (Role.MANAGEMENT_NODE, (Plane.INBAND, Plane.OOB)),
        )
    }
    port_key = cache(port_sort_key)  # every leaf splits the same port names
    out: list[Device] = []
    for role, names in (
        (Role.NPU_SERVER, hosts.servers),
        (Role.STORAGE_NODE, hosts.storage_nodes),
        (Role.MANAGEMENT_NODE, hosts.management_nodes),
    ):
        for i, name in enumerate(names):
            m = hosts.model[name]
            rack, u = floor.position[name]
            sn = i // supernode if supernode and role == Role.NPU_SERVER else None
            mgmt = management(
                name=name, model=None, addresses=by_device, loopback=0, routes=inband_routes[role]
            )
            out.append(
                Device(
                    name=name,
                    role=role,
                    plane="",
                    model=m.name,
                    rack=rack,
                    u=u,
                    height_u=m.height_u,
                    power_w=m.power_w,
                    index=i,
                    supernode=sn,
                    mgmt=mgmt,
                )
            )
    index: dict[tuple[str, str], int] = {}
    for name, m in placed.model.items():
        role, plane = placed.role[name]
        rack, u = floor.position[name]
        index[(role, plane)] = index.get((role, plane), -1) + 1
        loopback = loopbacks.get(name, 0)
        out.append(
            Device(
                name=name,
                role=role,
                plane=plane,
                model=m.name,
                rack=rack,
                u=u,
                height_u=m.height_u,
                power_w=m.power_w,
                index=index[(role, plane)],
                pod=pod.get(name),
                asn=asn.get(name, 0),
                loopback=loopback,
                splits=tuple(sorted(splits.get(name, {}).items(), key=lambda kv: port_key(kv[0]))),
                platform=m.platform,
                mgmt=management(name, m, by_device, loopback),
            )
        )
    return tuple(out)


def link_facts(devices: tuple[Device, ...], links: Iterable[Link]) -> tuple[Device, ...]:
    """The devices, each switch with what its cabled links make of it: bandwidth toward lower
    and upper tiers, its M-LAG peer, and whether wanka renders its configuration (a platform
    with templates, managed on an address)."""
    down: Counter[str] = Counter()
    up: Counter[str] = Counter()
    peer: dict[str, str] = {}
    toward_b = frozenset((LinkKind.HOST, LinkKind.UPLINK, LinkKind.MGMT))  # members read once
    uplink, peer_link = LinkKind.UPLINK, LinkKind.PEER_LINK  # (vocab.py)
    for link in links:
        if link.kind in toward_b:
            down[link.b_device] += link.speed
            if link.kind == uplink:
                up[link.a_device] += link.speed
        elif link.kind == peer_link:
            peer[link.a_device], peer[link.b_device] = link.b_device, link.a_device
    return tuple(
        replace(
            d,
            down_gbps=down[d.name],
            up_gbps=up[d.name],
            mlag_peer=peer.get(d.name),
            configured=d.platform in CONFIGURED_PLATFORMS and d.mgmt is not None,
        )
        if d.platform
        else d
        for d in devices
    )
