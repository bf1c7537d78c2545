"""expand(blueprint) -> Cluster: racks, devices, every link on every plane, every address."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from generator.catalog import Catalog, HostModel, build_catalog
from generator.errors import BlueprintError, Problem
from generator.expand.addressing import PlaneAddresses, allocate, parse_pool
from generator.expand.fabric import Endpoint, PlaneBuild, Wire, build_plane, parse_ratio
from generator.expand.layout import Floor, run_length
from generator.model import Cdu, Cluster, Device, Fabric, Link, Rack

PLANE_CODE = {"parameter": "par", "storage": "sto", "business": "biz", "inband": "inb", "oob": "oob", "border": "brd"}
ZONES = ("training", "storage", "management")
Progress = Callable[[str], None]


def _noop(_: str) -> None:
    pass


def server_names(bp: Mapping[str, Any], count: int) -> list[str]:
    c = bp["compute"]
    return [c["hostname"].format(index=c["index_start"] + i) for i in range(count)]


def server_count(bp: Mapping[str, Any], model: HostModel) -> int:
    c = bp["compute"]
    return c["servers"] if "servers" in c else c["cards"] // model.npus


def expand(bp: Mapping[str, Any], catalog: Catalog | None = None, progress: Progress = _noop) -> Cluster:
    """The whole cluster from a validated blueprint (defaults filled)."""
    catalog = catalog or build_catalog(bp.get("catalog"))
    zones, nets = bp["zones"], bp["networks"]
    server = catalog.hosts[bp["compute"]["server"]]
    servers = server_names(bp, server_count(bp, server))
    floor = Floor()
    host_model: dict[str, HostModel] = {}

    # Hosts into racks: training rows of compute racks, then storage and management zones.
    tz = zones["training"]
    rack_cfg, per_rack = tz["rack"], tz["rack"]["servers"]
    rack_power = rack_cfg["power_kw"]
    if per_rack * server.power_w > rack_power * 1000:
        raise BlueprintError(
            [
                Problem(
                    ("zones", "training", "rack", "servers"),
                    f"{per_rack} x {server.name} draw {per_rack * server.power_w / 1000:g} kW, "
                    f"over the rack budget of {rack_power:g} kW",
                    f"at most {int(rack_power * 1000 // server.power_w)} servers per rack, or raise power_kw",
                )
            ]
        )
    if per_rack * server.height_u > rack_cfg["height_u"]:
        raise BlueprintError(
            [
                Problem(
                    ("zones", "training", "rack", "servers"),
                    f"{per_rack} x {server.height_u}U servers do not fit a {rack_cfg['height_u']}U rack",
                    "",
                )
            ]
        )
    cooling_kw = rack_cfg.get("cooling_kw", rack_power)
    row = 0
    rack = None
    racks_per_row = tz["row"]["racks"]
    for i, name in enumerate(servers):
        if i % per_rack == 0:
            if row == 0 or len(floor.rows[("training", row)]) == racks_per_row:
                row = floor.new_row("training")
            rack = floor.new_rack("training", row, "compute", rack_cfg["height_u"], rack_power, cooling_kw, tz["cooling"])
        floor.place(rack, name, server.height_u, server.power_w)
        host_model[name] = server
    training_rows = row

    sz = zones["storage"]
    storage_model = catalog.hosts[sz["nodes"]["model"]]
    storage_nodes = [f"stor-{i + 1:03d}" for i in range(sz["nodes"]["count"])]
    _fill_zone(floor, "storage", storage_nodes, storage_model, sz["rack"]["nodes"], sz["rack"]["power_kw"], host_model)
    mz = zones["management"]
    mgmt_model = catalog.hosts[mz["model"]]
    mgmt_nodes = [f"{role}-{i + 1:02d}" for role, n in sorted(mz["nodes"].items()) for i in range(n)]
    _fill_zone(floor, "management", mgmt_nodes, mgmt_model, 16, 15, host_model)
    if not floor.zone_rows.get("management"):
        floor.new_row("management")
    progress(f"placed {len(host_model):,} hosts in {len(floor.racks):,} racks")

    def host_row(host: str) -> tuple[str, int]:
        slot = floor.racks[floor.position[host][0]]
        return slot.zone, slot.row

    def endpoints(hosts: list[str], role: str) -> list[Endpoint]:
        out = []
        for h in hosts:
            spec = host_model[h].port(role)
            if spec:
                out.append(Endpoint(h, spec.names(), spec.speed, (host_row(h)[0],)))
        return out

    builds: dict[str, PlaneBuild] = {}
    pn = nets["parameter"]
    npu = server.port("npu")
    builds["parameter"] = build_plane(
        plane="parameter", code="par", endpoints=endpoints(servers, "npu"),
        leaf=_switch(catalog, pn["leaf"]["model"], ("networks", "parameter", "leaf", "model")),
        spine=_switch(catalog, pn["spine"]["model"], ("networks", "parameter", "spine", "model")),
        core=_switch(catalog, pn["core"]["model"], ("networks", "parameter", "core", "model")),
        ratio=parse_ratio(pn["oversubscription"]), split=pn["leaf"]["split"],
        rails=npu.count if pn["rail"] == "multi" else 1, tiers=pn["tiers"], spine_count=pn["spine"]["count"],
        where=("networks", "parameter"),
    )
    progress(f"parameter plane: {len(builds['parameter'].leaves)} leaves, {builds['parameter'].tiers} tiers")
    sn = nets["storage"]
    shared_storage = sn["mode"] == "shared"
    if not shared_storage:
        stor_eps = endpoints(servers, "storage") + endpoints(storage_nodes, "storage")
        if stor_eps:
            builds["storage"] = build_plane(
                plane="storage", code="sto", endpoints=stor_eps,
                leaf=_switch(catalog, sn["leaf"]["model"], ("networks", "storage", "leaf", "model")),
                spine=_switch(catalog, sn["spine"]["model"], ("networks", "storage", "spine", "model")),
                core=_switch(catalog, sn["spine"]["model"], ("networks", "storage", "spine", "model")),
                ratio=parse_ratio(sn["oversubscription"]), split=sn["leaf"]["split"],
                rails=len(stor_eps[0].ports), tiers="auto", spine_count=sn["spine"]["count"],
                where=("networks", "storage"),
            )
    bn = nets["business"]
    biz_eps = endpoints(servers, "business")
    mlag = bn["leaf"]["mlag"]
    builds["business"] = build_plane(
        plane="business", code="biz", endpoints=biz_eps,
        leaf=_switch(catalog, bn["leaf"]["model"], ("networks", "business", "leaf", "model")),
        spine=_switch(catalog, bn["spine"]["model"], ("networks", "business", "spine", "model")),
        core=_switch(catalog, bn["spine"]["model"], ("networks", "business", "spine", "model")),
        ratio=parse_ratio(bn["oversubscription"]), split="auto",
        rails=len(biz_eps[0].ports) if mlag else 1, tiers=2, spine_count=bn["spine"]["count"],
        peer_links=2 if mlag else 0, where=("networks", "business"),
    )
    mn = nets["management"]
    builds["inband"] = build_plane(
        plane="inband", code="inb", endpoints=endpoints(servers + storage_nodes + mgmt_nodes, "inband"),
        leaf=_switch(catalog, mn["inband"]["access"]["model"], ("networks", "management", "inband", "access", "model")),
        spine=_switch(catalog, mn["inband"]["core"]["model"], ("networks", "management", "inband", "core", "model")),
        core=_switch(catalog, mn["inband"]["core"]["model"], ("networks", "management", "inband", "core", "model")),
        ratio=None, split="auto", rails=1, tiers=2, spine_count="auto", uplinks=2,
        where=("networks", "management", "inband"),
    )
    progress("storage, business and in-band planes built")

    # Switches into network racks: access switches in the row of their first host; spines and
    # cores of the parameter and storage planes in the training zone's spine rows; everything
    # that joins zones (business spines, management cores, border) in the management zone.
    switch_models: dict[str, tuple[str, str, str]] = {}  # name -> (role, plane, model)
    net_power = tz["network_rack"]["power_kw"]
    spine_row = floor.new_row("training")
    mgmt_row = floor.zone_rows["management"]

    def place_switch(name: str, role: str, plane: str, model_name: str, zone: str, row_: int) -> None:
        m = catalog.switches[model_name]
        switch_models[name] = (role, plane, model_name)
        floor.place_network(zone, row_, name, m.height_u, m.power_w, net_power)

    plane_models = {
        "parameter": (pn["leaf"]["model"], pn["spine"]["model"], pn["core"]["model"]),
        "storage": (sn["leaf"]["model"], sn["spine"]["model"], sn["spine"]["model"]),
        "business": (bn["leaf"]["model"], bn["spine"]["model"], bn["spine"]["model"]),
        "inband": (mn["inband"]["access"]["model"], mn["inband"]["core"]["model"], mn["inband"]["core"]["model"]),
    }
    for plane, b in builds.items():
        leaf_m, spine_m, core_m = plane_models[plane]
        leaf_role = "access" if plane == "inband" else "leaf"
        for leaf in b.leaves:
            zone, r = host_row(b.leaf_members[leaf.name][0])
            place_switch(leaf.name, leaf_role, plane, leaf_m, zone, r)
        upper_zone, upper_row = ("training", spine_row) if plane in ("parameter", "storage") else ("management", mgmt_row)
        upper_role = "core" if plane == "inband" else "spine"
        for sp in b.spines:
            place_switch(sp.name, upper_role, plane, spine_m, upper_zone, upper_row)
        for c in b.cores:
            place_switch(c.name, "core", plane, core_m, upper_zone, upper_row)
    border = zones["border"]
    border_devices = []
    for role, key in (("border-router", "router"), ("firewall", "firewall")):
        cfg = border[key]
        for i in range(2 if cfg["pair"] else 1):
            name = f"{'rtr' if key == 'router' else 'fw'}-{i + 1:02d}"
            place_switch(name, role, "border", cfg["model"], "management", mgmt_row)
            border_devices.append(name)

    # Out-of-band: every BMC and every switch management port, per zone, in floor order.
    oob_eps: list[Endpoint] = []
    for zone in ZONES:
        for row_ in range(1, floor.zone_rows.get(zone, 0) + 1):
            for slot in floor.rows[(zone, row_)]:
                for dev in slot.devices:
                    if dev in host_model:
                        spec = host_model[dev].port("bmc")
                        if spec:
                            oob_eps.append(Endpoint(dev, spec.names(), spec.speed, (zone,)))
                    else:
                        mgmt_port = catalog.switches[switch_models[dev][2]].mgmt_port
                        oob_eps.append(Endpoint(dev, (mgmt_port,), 1, (zone,)))
    builds["oob"] = build_plane(
        plane="oob", code="oob", endpoints=oob_eps,
        leaf=_switch(catalog, mn["oob"]["access"]["model"], ("networks", "management", "oob", "access", "model")),
        spine=_switch(catalog, mn["oob"]["core"]["model"], ("networks", "management", "oob", "core", "model")),
        core=_switch(catalog, mn["oob"]["core"]["model"], ("networks", "management", "oob", "core", "model")),
        ratio=None, split="auto", rails=1, tiers=2, spine_count="auto", uplinks=2,
        where=("networks", "management", "oob"),
    )
    ob = builds["oob"]
    for leaf in ob.leaves:
        zone, r = _row_of(floor, ob.leaf_members[leaf.name][0], host_row)
        place_switch(leaf.name, "access", "oob", mn["oob"]["access"]["model"], zone, r)
    for sp in ob.spines:
        place_switch(sp.name, "core", "oob", mn["oob"]["core"]["model"], "management", mgmt_row)
    progress(f"out-of-band plane: {len(ob.leaves)} access switches")

    # Border and shared-storage attachments: extra wires on free ports (split where needed).
    extra: list[Wire] = []
    used: dict[str, set[str]] = {}
    for b in builds.values():
        for w in b.wires:
            used.setdefault(w.a_device, set()).add(w.a_port)
            used.setdefault(w.b_device, set()).add(w.b_port)
    switch_meta = {sw.name: sw for b in builds.values() for sw in (*b.leaves, *b.spines, *b.cores)}
    splits: dict[str, dict[str, str]] = {name: sw.splits for name, sw in switch_meta.items()}

    def free_port(dev: str, speed: int, where: tuple) -> str:
        model = catalog.switches[switch_models[dev][2]]
        taken = used.setdefault(dev, set())
        dev_splits = splits.setdefault(dev, {})
        for p in model.ports:  # a free port at the speed, or a free lane of a matching split
            k = p.speed // speed
            want = f"{k}x{speed}GE"
            if p.speed == speed and p.name not in taken and p.name not in dev_splits:
                taken.add(p.name)
                return p.name
            if k > 1 and p.speed == k * speed and want in p.splits and dev_splits.get(p.name, want) == want:
                if p.name in taken and p.name not in dev_splits:
                    continue
                lane = next((f"{p.name}:{i}" for i in range(1, k + 1) if f"{p.name}:{i}" not in taken), None)
                if lane:
                    dev_splits[p.name] = want
                    taken.update((lane, p.name))
                    return lane
        raise BlueprintError(
            [Problem(where, f"{dev} ({model.name}) has no free {speed}GE port left", "choose a larger model")]
        )

    biz_spines = [s.name for s in builds["business"].spines]
    inb_cores = [s.name for s in builds["inband"].spines]
    fws = [d for d in border_devices if d.startswith("fw-")]
    rtrs = [d for d in border_devices if d.startswith("rtr-")]
    bwhere = ("zones", "border")
    for i, fw in enumerate(fws):
        for targets in (biz_spines, inb_cores):
            for t in targets:
                extra.append(_wire_on_free("uplink", fw, t, 100, free_port, bwhere))
        for r in rtrs:
            extra.append(_wire_on_free("uplink", fw, r, 100, free_port, bwhere))
    if shared_storage:
        for node in storage_nodes:
            spec = host_model[node].port("storage")
            for p, port in enumerate(spec.names() if spec else ()):
                sp = biz_spines[p % len(biz_spines)]
                extra.append(Wire("host", node, port, sp, free_port(sp, spec.speed, ("networks", "storage", "mode")), spec.speed, (sp, port + node)))
    progress("border attached")

    # Addresses.
    plane_pools = {
        "parameter": (pn["pool"], ("networks", "parameter", "pool"), False, "", 0),
        "storage": (sn["pool"], ("networks", "storage", "pool"), False, "", 0),
        "business": (bn["pool"], ("networks", "business", "pool"), mlag, "bond0", bn["vlan"]),
        "inband": (mn["inband"]["pool"], ("networks", "management", "inband", "pool"), False, "", 0),
        "oob": (mn["oob"]["pool"], ("networks", "management", "oob", "pool"), False, "", 0),
    }
    addrs: dict[str, PlaneAddresses] = {}
    for plane, b in builds.items():
        pool, where, per_group, bond, vlan = plane_pools[plane]
        addrs[plane] = allocate(b, plane, pool, where, subnet_per_group=per_group, bond_name=bond, vlan=vlan)
    progress("addresses allocated")

    # ASNs (routed planes): cores share one, spines one per pod, leaves one each.
    asn_base = pn["routing"]["asn_base"]
    asn: dict[str, int] = {}
    for offset, plane in ((0, "parameter"), (100_000, "storage")):
        b = builds.get(plane)
        if not b:
            continue
        for c in b.cores:
            asn[c.name] = asn_base + offset
        for sp in b.spines:
            asn[sp.name] = asn_base + offset + 1 + max(sp.pod, 0)
        for leaf in b.leaves:
            asn[leaf.name] = asn_base + offset + 1000 + leaf.index

    # Devices.
    positions = floor.position
    devices: list[Device] = []
    supernode = bp["compute"].get("supernode", {}).get("servers")
    for i, name in enumerate(servers):
        rack_name, u = positions[name]
        devices.append(Device(name, "npu-server", "", server.name, rack_name, u, server.height_u, server.power_w, i,
                              supernode=i // supernode if supernode else -1))
    for role, names, model in (("storage-node", storage_nodes, storage_model), ("management-node", mgmt_nodes, mgmt_model)):
        for i, name in enumerate(names):
            rack_name, u = positions[name]
            devices.append(Device(name, role, "", model.name, rack_name, u, model.height_u, model.power_w, i))
    loopbacks = {k: v for a in addrs.values() for k, v in a.loopbacks.items()}
    index_in_role: dict[tuple[str, str], int] = {}
    for name, (role, plane, model_name) in switch_models.items():
        m = catalog.switches[model_name]
        rack_name, u = positions[name]
        sw = switch_meta.get(name)
        key = (role, plane)
        index_in_role[key] = index_in_role.get(key, -1) + 1
        devices.append(
            Device(
                name, role, plane, model_name, rack_name, u, m.height_u, m.power_w, index_in_role[key],
                pod=sw.pod if sw else -1, asn=asn.get(name, 0), loopback=loopbacks.get(name, 0),
                splits=tuple(sorted(splits.get(name, {}).items(), key=lambda kv: _port_key(kv[0]))),
            )
        )

    racks = floor.freeze(ZONES)
    rack_by = {r.name: r for r in racks}
    links = _cable(builds, extra, addrs, positions, rack_by, catalog)
    progress(f"{len(links):,} links cabled")

    cdus = _assign_cdus(racks, floor, tz)
    racks = tuple(_with_cdu(r, cdus) for r in racks)
    return Cluster(
        name=bp["metadata"]["name"],
        site=bp["metadata"]["site"],
        blueprint=bp,
        racks=racks,
        devices=tuple(devices),
        links=links,
        subnets=tuple(s for a in addrs.values() for s in a.subnets),
        addresses=tuple(x for a in addrs.values() for x in a.addresses),
        pools=tuple(a.pool for a in addrs.values()),
        fabrics=tuple(_fabric(plane, b, plane_models[plane] if plane in plane_models else (mn["oob"]["access"]["model"], mn["oob"]["core"]["model"], mn["oob"]["core"]["model"]), nets) for plane, b in builds.items()),
        cdus=cdus,
    )


def _switch(catalog: Catalog, name: str, where):  # noqa: ANN001
    model = catalog.switches.get(name)
    if model is None:
        raise BlueprintError([Problem(where, f"unknown switch model {name!r}", "see `wanka catalog`")])
    return model


def _fill_zone(floor: Floor, zone: str, names: list[str], model: HostModel, per_rack: int, power_kw: float, host_model: dict) -> None:
    if not names:
        return
    row = floor.new_row(zone)
    rack = None
    for i, name in enumerate(names):
        if i % per_rack == 0 or not rack.fits(model.height_u, model.power_w):
            rack = floor.new_rack(zone, row, zone if zone != "storage" else "storage", 42, max(power_kw, model.power_w / 1000), max(power_kw, model.power_w / 1000), "air")
        floor.place(rack, name, model.height_u, model.power_w)
        host_model[name] = model


def _row_of(floor: Floor, dev: str, host_row) -> tuple[str, int]:  # noqa: ANN001
    slot = floor.racks[floor.position[dev][0]]
    return slot.zone, slot.row


def _wire_on_free(kind: str, a: str, b: str, speed: int, free_port, where) -> Wire:  # noqa: ANN001
    pa, pb = free_port(a, speed, where), free_port(b, speed, where)
    return Wire(kind, a, pa, b, pb, speed, (a, pa))


def _port_key(name: str) -> tuple:
    import re

    return tuple(int(x) if x.isdigit() else x for x in re.split(r"(\d+)", name))


def _cable(builds, extra, addrs, positions, rack_by, catalog) -> tuple[Link, ...]:  # noqa: ANN001
    links: list[Link] = []
    for plane, wires, p2p in [*((p, b.wires, addrs[p].p2p) for p, b in builds.items()), ("border", extra, {})]:
        code = PLANE_CODE[plane].upper()
        cable_ids: dict[tuple, str] = {}
        for i, w in enumerate(wires):
            cid = cable_ids.get(w.cable)
            if cid is None:
                cid = cable_ids[w.cable] = f"{code}-{len(cable_ids) + 1:06d}"
            ra, ua = positions[w.a_device]
            rb, ub = positions[w.b_device]
            length = catalog.standard_length(run_length(rack_by[ra], ua, rack_by[rb], ub))
            a_ip, b_ip = p2p.get(i, (0, 0))
            plane_of = "storage" if plane == "business" and w.kind == "host" and w.a_device.startswith("stor-") else plane
            links.append(
                Link(cid, plane_of if plane != "border" else "border", "mgmt" if plane == "oob" and w.kind == "host" and w.a_device not in () else w.kind,
                     w.a_device, w.a_port, w.b_device, w.b_port, w.speed, catalog.medium(w.speed, length), length,
                     a_ip, b_ip, 31 if a_ip else 0)
            )
    return tuple(links)


def _assign_cdus(racks: tuple[Rack, ...], floor: Floor, tz: Mapping[str, Any]) -> tuple[Cdu, ...]:
    if tz["cooling"] != "liquid":
        return ()
    cap = tz["cdu"]["capacity_kw"]
    out: list[Cdu] = []
    current: list[str] = []
    load = 0.0
    for r in racks:
        if r.zone != "training" or r.kind != "compute":
            continue
        kw = floor.racks[r.name].load_w / 1000
        if current and load + kw > cap:
            out.append(Cdu(f"CDU-{len(out) + 1:02d}", cap, tuple(current), round(load, 3)))
            current, load = [], 0.0
        current.append(r.name)
        load += kw
    if current:
        out.append(Cdu(f"CDU-{len(out) + 1:02d}", cap, tuple(current), round(load, 3)))
    return tuple(out)


def _with_cdu(rack: Rack, cdus: tuple[Cdu, ...]) -> Rack:
    for c in cdus:
        if rack.name in c.racks:
            from dataclasses import replace

            return replace(rack, cdu=c.name)
    return rack


def _fabric(plane: str, b: PlaneBuild, models: tuple[str, str, str], nets: Mapping[str, Any]) -> Fabric:
    ratio = {"parameter": nets["parameter"]["oversubscription"], "storage": nets["storage"]["oversubscription"],
             "business": nets["business"]["oversubscription"]}.get(plane, "")
    return Fabric(
        plane, b.tiers, b.rails, b.hosts_per_group, models[0], models[1], models[2] if b.tiers == 3 else "",
        b.plan.split, len(b.plan.lanes), b.wires[0].speed if b.wires else 0, len(b.plan.uplinks), b.plan.up_speed,
        b.spines_per_pod, b.leaves_per_pod, b.pods, b.cores_per_plane, ratio,
    )
