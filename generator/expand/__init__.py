"""expand(blueprint) -> Cluster: racks, devices, every link on every plane, every address."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from generator.blueprint.semantic import server_count
from generator.catalog import Catalog, HostModel, SwitchModel, build_catalog
from generator.errors import BlueprintError, Problem, YamlPath
from generator.expand.addressing import PlaneAddresses, allocate
from generator.expand.fabric import Endpoint, PlaneBuild, Wire, build_plane, parse_ratio
from generator.expand.layout import Floor, run_length
from generator.expand.settings import resolve_settings
from generator.model import (
    Cdu,
    Cluster,
    Device,
    Fabric,
    Link,
    Lossless,
    NpuDevice,
    NpuServer,
    Rack,
)

PLANE_CODE = {
    "parameter": "par",
    "storage": "sto",
    "business": "biz",
    "inband": "inb",
    "oob": "oob",
    "border": "brd",
}
ZONES = ("training", "storage", "management")
ASN_OFFSET = {"parameter": 0, "storage": 100_000}  # routed planes; cores, spines per pod, leaves
Progress = Callable[[str], None]


def _noop(_: str) -> None:
    pass


@dataclass(frozen=True, slots=True)
class PlaneSpec:
    """Everything that differs between planes, read once from the blueprint."""

    plane: str
    where: YamlPath
    leaf: str
    spine: str
    core: str
    ratio: tuple[int, int] | None
    oversubscription: str
    split: str
    tiers: str | int
    spine_count: str | int
    pool: str
    leaf_role: str = "leaf"
    upper_role: str = "spine"
    multi_rail: bool = False
    dual_homed: bool = True  # hosts with N ports on this plane use N leaves (pair / rails)
    peer_links: int = 0
    uplinks: int | None = None
    subnet_per_group: bool = False
    bond: str = ""
    vlan: int = 0
    upper_zone: str = "management"


def plane_specs(bp: Mapping[str, Any]) -> dict[str, PlaneSpec]:
    nets = bp["networks"]
    pn, sn, bn, mn = nets["parameter"], nets["storage"], nets["business"], nets["management"]
    specs = {
        "parameter": PlaneSpec(
            "parameter",
            ("networks", "parameter"),
            pn["leaf"]["model"],
            pn["spine"]["model"],
            pn["core"]["model"],
            parse_ratio(pn["oversubscription"]),
            pn["oversubscription"],
            pn["leaf"]["split"],
            pn["tiers"],
            pn["spine"]["count"],
            pn["pool"],
            multi_rail=pn["rail"] == "multi",
            dual_homed=False,
            upper_zone="training",
        ),
        "storage": PlaneSpec(
            "storage",
            ("networks", "storage"),
            sn["leaf"]["model"],
            sn["spine"]["model"],
            sn["spine"]["model"],
            parse_ratio(sn["oversubscription"]),
            sn["oversubscription"],
            sn["leaf"]["split"],
            "auto",
            sn["spine"]["count"],
            sn["pool"],
            upper_zone="training",
        ),
        "business": PlaneSpec(
            "business",
            ("networks", "business"),
            bn["leaf"]["model"],
            bn["spine"]["model"],
            bn["spine"]["model"],
            parse_ratio(bn["oversubscription"]),
            bn["oversubscription"],
            "auto",
            2,
            bn["spine"]["count"],
            bn["pool"],
            dual_homed=bn["leaf"]["mlag"],
            peer_links=2 if bn["leaf"]["mlag"] else 0,
            subnet_per_group=True,
            bond="bond0",
            vlan=bn["vlan"],
        ),
    }
    for plane in ("inband", "oob"):
        m = mn[plane]
        specs[plane] = PlaneSpec(
            plane,
            ("networks", "management", plane),
            m["access"]["model"],
            m["core"]["model"],
            m["core"]["model"],
            None,
            "",
            "auto",
            2,
            "auto",
            m["pool"],
            leaf_role="access",
            upper_role="core",
            dual_homed=False,
            uplinks=2,
        )
    if sn["mode"] == "shared":
        del specs["storage"]
    return specs


@dataclass(slots=True)
class Hosts:
    servers: list[str]
    storage_nodes: list[str]
    management_nodes: list[str]
    model: dict[str, HostModel]


def expand(
    bp: Mapping[str, Any], catalog: Catalog | None = None, progress: Progress = _noop
) -> Cluster:
    """The whole cluster from a validated blueprint (defaults filled)."""
    catalog = catalog or build_catalog(bp.get("catalog"))
    specs = plane_specs(bp)
    floor = Floor()
    hosts = _place_hosts(bp, catalog, floor)
    progress(f"placed {len(hosts.model):,} hosts in {len(floor.racks):,} racks")

    def row_of(dev: str) -> tuple[str, int]:
        slot = floor.racks[floor.position[dev][0]]
        return slot.zone, slot.row

    def endpoints(names: list[str], role: str) -> list[Endpoint]:
        out = []
        for h in names:
            spec = hosts.model[h].port(role)
            if spec:
                out.append(Endpoint(h, spec.names(), spec.speed, (row_of(h)[0],)))
        return out

    plane_hosts = {
        "parameter": endpoints(hosts.servers, "npu"),
        "storage": endpoints(hosts.servers, "storage") + endpoints(hosts.storage_nodes, "storage"),
        "business": endpoints(hosts.servers, "business"),
        "inband": endpoints(hosts.servers + hosts.storage_nodes + hosts.management_nodes, "inband"),
    }
    builds: dict[str, PlaneBuild] = {}
    for plane, eps in plane_hosts.items():
        if plane in specs and eps:
            builds[plane] = _build(specs[plane], eps, catalog)
            progress(
                f"{plane} plane: {len(builds[plane].leaves)} leaves, {builds[plane].tiers} tiers"
            )

    # Switches into network racks: access switches in the row of their first host; spines and
    # cores of the parameter and storage planes in the training zone's spine row; everything
    # that joins zones (business spines, management cores, border) in the management zone.
    switch_model: dict[str, SwitchModel] = {}
    switch_role: dict[str, tuple[str, str]] = {}
    net_power = bp["zones"]["training"]["network_rack"]["power_kw"]
    spine_row = floor.new_row("training")
    mgmt_row = floor.zone_rows["management"]

    def place_switch(
        name: str, role: str, plane: str, model_name: str, zone: str, row: int, side: int
    ) -> None:
        m = catalog.switches[model_name]
        switch_model[name], switch_role[name] = m, (role, plane)
        floor.place_network(zone, row, name, m.height_u, m.power_w, net_power, side)

    def place_plane(spec: PlaneSpec, b: PlaneBuild) -> None:
        """Parameter leaves top-of-rack when all their servers share a rack (shortest cables; a
        rack failure takes only that rack); other switches in network racks, redundant members
        (pair, spine i / i+1) alternating between an A and a B side."""
        for leaf in b.leaves:
            members = b.leaf_members[leaf.name]
            rack = floor.racks[floor.position[members[0]][0]]
            m = catalog.switches[spec.leaf]
            tor = spec.plane == "parameter" and all(
                floor.position[h][0] == rack.name for h in members
            )
            if tor and rack.fits(m.height_u, m.power_w):
                switch_model[leaf.name], switch_role[leaf.name] = m, (spec.leaf_role, spec.plane)
                floor.place(rack, leaf.name, m.height_u, m.power_w)
            else:
                place_switch(
                    leaf.name,
                    spec.leaf_role,
                    spec.plane,
                    spec.leaf,
                    *row_of(members[0]),
                    leaf.index % 2,
                )
        upper = (
            ("training", spine_row) if spec.upper_zone == "training" else ("management", mgmt_row)
        )
        for sp in b.spines:
            place_switch(sp.name, spec.upper_role, spec.plane, spec.spine, *upper, sp.index % 2)
        for c in b.cores:
            place_switch(c.name, "core", spec.plane, spec.core, *upper, c.index % 2)

    for plane, b in builds.items():
        place_plane(specs[plane], b)
    border = bp["zones"]["border"]
    for role, key, prefix in (("border-router", "router", "rtr"), ("firewall", "firewall", "fw")):
        for i in range(2 if border[key]["pair"] else 1):
            place_switch(
                f"{prefix}-{i + 1:02d}",
                role,
                "border",
                border[key]["model"],
                "management",
                mgmt_row,
                i % 2,
            )

    # Out-of-band: every BMC and every switch management port, zone by zone, in floor order.
    oob_eps: list[Endpoint] = []
    for zone in ZONES:
        for row in range(1, floor.zone_rows.get(zone, 0) + 1):
            for slot in floor.rows[(zone, row)]:
                for dev in slot.devices:
                    if dev in hosts.model:
                        spec = hosts.model[dev].port("bmc")
                        if spec:
                            oob_eps.append(Endpoint(dev, spec.names(), spec.speed, (zone,)))
                    else:
                        oob_eps.append(Endpoint(dev, (switch_model[dev].mgmt_port,), 1, (zone,)))
    builds["oob"] = _build(specs["oob"], oob_eps, catalog)
    place_plane(specs["oob"], builds["oob"])
    progress(f"oob plane: {len(builds['oob'].leaves)} access switches")

    splits = {
        sw.name: sw.splits for b in builds.values() for sw in (*b.leaves, *b.spines, *b.cores)
    }
    extra = _attach_border_and_shared_storage(bp, builds, hosts, switch_model, splits)
    addrs = {plane: _allocate(specs[plane], b) for plane, b in builds.items()}
    progress("addresses allocated")

    devices = _devices(bp, hosts, floor, builds, switch_model, switch_role, splits, addrs)
    racks = floor.freeze(ZONES)
    links = _cable(builds, extra, addrs, floor, {r.name: r for r in racks}, catalog)
    progress(f"{len(links):,} links cabled")
    cdus = _assign_cdus(racks, floor, bp["zones"]["training"])
    cdu_of = {rack: c.name for c in cdus for rack in c.racks}
    lossless = lossless_classes(bp)
    return Cluster(
        name=bp["metadata"]["name"],
        site=bp["metadata"]["site"],
        blueprint=bp,
        racks=tuple(replace(r, cdu=cdu_of[r.name]) if r.name in cdu_of else r for r in racks),
        devices=devices,
        links=links,
        subnets=tuple(s for a in addrs.values() for s in a.subnets),
        addresses=tuple(x for a in addrs.values() for x in a.addresses),
        pools=tuple(a.pool for a in addrs.values()),
        fabrics=tuple(_fabric(specs[plane], b) for plane, b in builds.items()),
        cdus=cdus,
        lossless=lossless,
        npu_servers=npu_servers(devices, links, addrs),
        hccl_env=hccl_environment(bp, lossless[0]),
        settings=resolve_settings(bp, catalog),
    )


NIC_LOSSLESS_TC = 3  # assumption: the highest of the NIC's four TCs carries the lossless class


def lossless_classes(bp: Mapping[str, Any]) -> tuple[Lossless, ...]:
    out = []
    for plane in ("parameter", "storage"):
        cfg = bp["networks"][plane].get("lossless")
        if cfg and not (plane == "storage" and bp["networks"]["storage"]["mode"] == "shared"):
            out.append(
                Lossless(
                    plane, cfg["priority"], cfg["dscp"], NIC_LOSSLESS_TC, cfg["ecn"], cfg["mtu"]
                )
            )
    return tuple(out)


def _switch(catalog: Catalog, name: str, where: YamlPath) -> SwitchModel:
    model = catalog.switches.get(name)
    if model is None:
        raise BlueprintError(
            [Problem(where, f"unknown switch model {name!r}", "see `wanka catalog`")]
        )
    return model


def _build(spec: PlaneSpec, eps: list[Endpoint], catalog: Catalog) -> PlaneBuild:
    ports = len(eps[0].ports)
    rails = ports if spec.multi_rail or (spec.dual_homed and ports > 1) else 1
    return build_plane(
        plane=spec.plane,
        code=PLANE_CODE[spec.plane],
        endpoints=eps,
        leaf=_switch(catalog, spec.leaf, (*spec.where, "leaf", "model")),
        spine=_switch(catalog, spec.spine, (*spec.where, "spine", "model")),
        core=_switch(catalog, spec.core, (*spec.where, "core", "model")),
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


def _allocate(spec: PlaneSpec, b: PlaneBuild) -> PlaneAddresses:
    return allocate(
        b,
        spec.plane,
        spec.pool,
        (*spec.where, "pool"),
        subnet_per_group=spec.subnet_per_group,
        bond_name=spec.bond,
        vlan=spec.vlan,
    )


def _place_hosts(bp: Mapping[str, Any], catalog: Catalog, floor: Floor) -> Hosts:
    """Training rows of compute racks, then the storage and management zones."""
    tz, sz, mz = bp["zones"]["training"], bp["zones"]["storage"], bp["zones"]["management"]
    server = catalog.hosts[bp["compute"]["server"]]
    rack_cfg = tz["rack"]
    per_rack, power_kw = rack_cfg["servers"], rack_cfg["power_kw"]
    cooling_kw = rack_cfg.get("cooling_kw", power_kw)
    where = ("zones", "training", "rack", "servers")
    load_kw = per_rack * server.power_w / 1000
    if load_kw > min(power_kw, cooling_kw):
        limit = min(power_kw, cooling_kw)
        raise BlueprintError(
            [
                Problem(
                    where,
                    f"{per_rack} x {server.name} draw {load_kw:g} kW, over the rack's "
                    f"{'power' if power_kw <= cooling_kw else 'cooling'} budget of {limit:g} kW",
                    f"at most {int(limit * 1000 // server.power_w)} servers per rack, or raise the budget",
                )
            ]
        )
    if per_rack * server.height_u > rack_cfg["height_u"]:
        raise BlueprintError(
            [
                Problem(
                    where,
                    f"{per_rack} x {server.height_u}U servers do not fit a {rack_cfg['height_u']}U rack",
                    "",
                )
            ]
        )
    c = bp["compute"]
    servers = [
        c["hostname"].format(index=c["index_start"] + i)
        for i in range(server_count(bp, catalog) or 0)
    ]
    model: dict[str, HostModel] = {}
    row, rack = 0, None
    for i, name in enumerate(servers):
        if i % per_rack == 0:
            if row == 0 or len(floor.rows[("training", row)]) == tz["row"]["racks"]:
                row = floor.new_row("training")
            rack = floor.new_rack(
                "training",
                row,
                "compute",
                rack_cfg["height_u"],
                power_kw,
                cooling_kw,
                tz["cooling"],
            )
        floor.place(rack, name, server.height_u, server.power_w)
        model[name] = server

    storage = [f"stor-{i + 1:03d}" for i in range(sz["nodes"]["count"])]
    _fill_zone(
        floor,
        "storage",
        storage,
        catalog.hosts[sz["nodes"]["model"]],
        sz["rack"]["nodes"],
        sz["rack"]["power_kw"],
        model,
    )
    management = [
        f"{role}-{i + 1:02d}" for role, n in sorted(mz["nodes"].items()) for i in range(n)
    ]
    _fill_zone(floor, "management", management, catalog.hosts[mz["model"]], 16, 15, model)
    if not floor.zone_rows.get("management"):
        floor.new_row("management")
    return Hosts(servers, storage, management, model)


def _fill_zone(
    floor: Floor,
    zone: str,
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
            rack = floor.new_rack(zone, row, zone, 42, budget, budget, "air")
        floor.place(rack, name, model.height_u, model.power_w)
        out[name] = model


def _attach_border_and_shared_storage(
    bp: Mapping[str, Any],
    builds: dict[str, PlaneBuild],
    hosts: Hosts,
    switch_model: dict[str, SwitchModel],
    splits: dict[str, dict[str, str]],
) -> list[Wire]:
    """Firewalls to the business spines, the in-band core and the routers; with a shared storage
    plane, storage nodes dual-homed to the business spines. Free ports, split where needed."""
    used: dict[str, set[str]] = {}
    for b in builds.values():
        for w in b.wires:
            used.setdefault(w.a_device, set()).add(w.a_port)
            used.setdefault(w.b_device, set()).add(w.b_port)

    def free_port(dev: str, speed: int, where: YamlPath) -> str:
        model = switch_model[dev]
        taken = used.setdefault(dev, set())
        dev_splits = splits.setdefault(dev, {})
        for p in model.ports:  # a free port at the speed, else a free lane of a matching split
            k = p.speed // speed
            want = f"{k}x{speed}GE"
            if p.speed == speed and p.name not in taken and p.name not in dev_splits:
                taken.add(p.name)
                return p.name
            whole_in_use = p.name in taken and p.name not in dev_splits
            if (
                k > 1
                and p.speed == k * speed
                and want in p.splits
                and not whole_in_use
                and dev_splits.get(p.name, want) == want
            ):
                lane = next(
                    (f"{p.name}:{i}" for i in range(1, k + 1) if f"{p.name}:{i}" not in taken), None
                )
                if lane:
                    dev_splits[p.name] = want
                    taken.update((lane, p.name))
                    return lane
        raise BlueprintError(
            [
                Problem(
                    where,
                    f"{dev} ({model.name}) has no free {speed}GE port left",
                    "choose a larger model",
                )
            ]
        )

    def wire(a: str, b: str, speed: int, where: YamlPath, a_port: str = "") -> Wire:
        pa = a_port or free_port(a, speed, where)
        pb = free_port(b, speed, where)
        return Wire("uplink" if not a_port else "host", a, pa, b, pb, speed, (a, pa))

    biz_spines = [s.name for s in builds["business"].spines]
    inband_cores = [s.name for s in builds["inband"].spines]
    firewalls = sorted(d for d in switch_model if d.startswith("fw-"))
    routers = sorted(d for d in switch_model if d.startswith("rtr-"))
    where = ("zones", "border")
    extra = [
        wire(fw, t, 100, where) for fw in firewalls for t in (*biz_spines, *inband_cores, *routers)
    ]
    if bp["networks"]["storage"]["mode"] == "shared":
        for node in hosts.storage_nodes:
            spec = hosts.model[node].port("storage")
            for p, port in enumerate(spec.names() if spec else ()):
                sp = biz_spines[p % len(biz_spines)]
                extra.append(
                    wire(node, sp, spec.speed, ("networks", "storage", "mode"), a_port=port)
                )
    return extra


def _devices(
    bp: Mapping[str, Any],
    hosts: Hosts,
    floor: Floor,
    builds: dict[str, PlaneBuild],
    switch_model: dict[str, SwitchModel],
    switch_role: dict[str, tuple[str, str]],
    splits: dict[str, dict[str, str]],
    addrs: dict[str, PlaneAddresses],
) -> tuple[Device, ...]:
    asn_base = bp["networks"]["parameter"]["routing"]["asn_base"]
    asn: dict[str, int] = {}
    for plane, offset in ASN_OFFSET.items():
        b = builds.get(plane)
        for sw in (*b.leaves, *b.spines, *b.cores) if b else ():
            base = asn_base + offset
            asn[sw.name] = {"core": base, "spine": base + 1 + max(sw.pod, 0)}.get(
                sw.role, base + 1000 + sw.index
            )
    pod = {sw.name: sw.pod for b in builds.values() for sw in (*b.leaves, *b.spines, *b.cores)}
    loopbacks = {k: v for a in addrs.values() for k, v in a.loopbacks.items()}
    supernode = bp["compute"].get("supernode", {}).get("servers")
    devices: list[Device] = []
    for role, names in (
        ("npu-server", hosts.servers),
        ("storage-node", hosts.storage_nodes),
        ("management-node", hosts.management_nodes),
    ):
        for i, name in enumerate(names):
            m = hosts.model[name]
            rack, u = floor.position[name]
            sn = i // supernode if supernode and role == "npu-server" else -1
            devices.append(
                Device(name, role, "", m.name, rack, u, m.height_u, m.power_w, i, supernode=sn)
            )
    index: dict[tuple[str, str], int] = {}
    for name, m in switch_model.items():
        role, plane = switch_role[name]
        rack, u = floor.position[name]
        index[(role, plane)] = index.get((role, plane), -1) + 1
        devices.append(
            Device(
                name,
                role,
                plane,
                m.name,
                rack,
                u,
                m.height_u,
                m.power_w,
                index[(role, plane)],
                pod=pod.get(name, -1),
                asn=asn.get(name, 0),
                loopback=loopbacks.get(name, 0),
                splits=tuple(
                    sorted(splits.get(name, {}).items(), key=lambda kv: port_sort_key(kv[0]))
                ),
            )
        )
    return tuple(devices)


def port_sort_key(name: str) -> tuple:
    """Natural order of interface names: 400GE1/0/2 before 400GE1/0/10."""
    return tuple(int(x) if x.isdigit() else x for x in re.split(r"(\d+)", name))


def _cable(
    builds: dict[str, PlaneBuild],
    extra: list[Wire],
    addrs: dict[str, PlaneAddresses],
    floor: Floor,
    rack_by: dict[str, Rack],
    catalog: Catalog,
) -> tuple[Link, ...]:
    links: list[Link] = []
    planes = [(p, b.wires, addrs[p].p2p) for p, b in builds.items()] + [("border", extra, {})]
    for plane, wires, p2p in planes:
        code = PLANE_CODE[plane].upper()
        cable_ids: dict[tuple, str] = {}
        for i, w in enumerate(wires):
            cid = cable_ids.get(w.cable)
            if cid is None:
                cid = cable_ids[w.cable] = f"{code}-{len(cable_ids) + 1:06d}"
            ra, ua = floor.position[w.a_device]
            rb, ub = floor.position[w.b_device]
            length = catalog.standard_length(run_length(rack_by[ra], ua, rack_by[rb], ub))
            a_ip, b_ip = p2p.get(i, (0, 0))
            link_plane = "storage" if plane == "border" and w.kind == "host" else plane
            kind = "mgmt" if plane == "oob" and w.kind == "host" else w.kind
            links.append(
                Link(
                    cid,
                    link_plane,
                    kind,
                    w.a_device,
                    w.a_port,
                    w.b_device,
                    w.b_port,
                    w.speed,
                    catalog.medium(w.speed, length),
                    length,
                    a_ip,
                    b_ip,
                    31 if a_ip else 0,
                )
            )
    return tuple(links)


def _assign_cdus(racks: tuple[Rack, ...], floor: Floor, tz: Mapping[str, Any]) -> tuple[Cdu, ...]:
    """Liquid-cooled compute racks to CDUs in floor order, each CDU filled up to its capacity."""
    if tz["cooling"] != "liquid":
        return ()
    cap = tz["cdu"]["capacity_kw"]
    out: list[Cdu] = []
    current: list[str] = []
    load = 0.0

    def close() -> None:
        out.append(Cdu(f"CDU-{len(out) + 1:02d}", cap, tuple(current), round(load, 3)))

    for r in racks:
        if r.zone != "training" or r.kind != "compute":
            continue
        kw = floor.racks[r.name].load_w / 1000
        if current and load + kw > cap:
            close()
            current, load = [], 0.0
        current.append(r.name)
        load += kw
    if current:
        close()
    return tuple(out)


def _fabric(spec: PlaneSpec, b: PlaneBuild) -> Fabric:
    return Fabric(
        spec.plane,
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


def npu_servers(
    devices: tuple[Device, ...], links: tuple[Link, ...], addrs: dict[str, PlaneAddresses]
) -> tuple[NpuServer, ...]:
    """NPU servers in rank order: supernode, pod, first leaf, server index (neighbouring ranks are
    close in the network)."""
    leaf_of = {
        (x.a_device, x.a_port): x.b_device
        for x in links
        if x.plane == "parameter" and x.kind == "host"
    }
    npu_addr: dict[str, list] = {}
    for a in addrs["parameter"].addresses:
        npu_addr.setdefault(a.device, []).append(a)
    inband = {a.device: a.ip for a in addrs["inband"].addresses}
    pod = {d.name: max(d.pod, 0) for d in devices if d.role == "leaf" and d.plane == "parameter"}
    leaf_index = {d.name: d.index for d in devices if d.role == "leaf" and d.plane == "parameter"}
    out = []
    for d in devices:
        if d.role != "npu-server":
            continue
        devs = tuple(
            NpuDevice(i, a.port, a.ip, a.prefix, a.gateway, leaf_of[(d.name, a.port)])
            for i, a in enumerate(npu_addr.get(d.name, ()))
        )
        leaves = tuple(dict.fromkeys(x.leaf for x in devs))
        out.append(
            NpuServer(
                d.name,
                inband.get(d.name, 0),
                pod[leaves[0]] if leaves else 0,
                d.supernode,
                leaves,
                devs,
            )
        )
    key = {
        s.name: (s.supernode, s.pod, leaf_index[s.leaves[0]] if s.leaves else 0, i)
        for i, s in enumerate(out)
    }
    return tuple(sorted(out, key=lambda s: key[s.name]))


def hccl_environment(bp: Mapping[str, Any], lossless: Lossless) -> tuple[tuple[str, str], ...]:
    """HCCL variables every NPU server shares: the blueprint's hccl.env, with the RDMA class and
    the socket base port derived from the one lossless class and hccl.if_base_port."""
    env = {k: str(v) for k, v in bp["hccl"]["env"].items()}
    env["HCCL_RDMA_SL"] = str(lossless.hccl_rdma_sl)
    env["HCCL_RDMA_TC"] = str(lossless.hccl_rdma_tc)
    env["HCCL_IF_BASE_PORT"] = str(bp["hccl"]["if_base_port"])
    return tuple(sorted(env.items()))
