"""expand(blueprint) -> Cluster: racks, devices, every link on every plane, every address.

`expand` is the list of steps; each step is a function in this package with its inputs and
outputs in its signature. Design errors of independent parts (each plane's switching, each
plane's pool, the rack budget) are collected and reported together, each located. When each of
them has a value that works (a larger model, a wider pool), the cluster is built on with those
values and raised with them (`Substituted`), so the design checks of that cluster are reported in
the same run."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import msgspec

from generator.blueprint.facts import NpuFacts
from generator.blueprint.semantic import spec_planned, spec_servers
from generator.blueprint.spec import Blueprint
from generator.catalog import Catalog, build_catalog
from generator.errors import BlueprintError, Problem, format_path
from generator.expand import growth
from generator.expand.acceptance import acceptance_plan
from generator.expand.addressing import PlaneAddresses, allocate
from generator.expand.border import attach, border_routing, shared_storage_addresses
from generator.expand.devices import Placer, build, devices, host_endpoints, link_facts
from generator.expand.ecmp import ecmp_paths, switch_facts
from generator.expand.fabric import PlaneBuild, UpperTooSmall
from generator.expand.flows import required_flows
from generator.expand.hardware import hardware, with_airflow, with_licences
from generator.expand.host_nics import storage_nics
from generator.expand.layout import Floor
from generator.expand.links import WireSet, cable, fabric
from generator.expand.planes import (
    HOST_MTU,
    PLANE_CODE,
    PlaneSpec,
    lossless_classes,
    lossless_of,
    plane_specs,
    roce_planes,
    switch_mtus,
)
from generator.expand.ports import spine_lanes
from generator.expand.racks import ZONES, assign_cdus, place_hosts, rack_loads
from generator.expand.ranks import (
    apply_facts,
    domain_namer,
    hccl_environment,
    npu_nic_limits,
    npu_servers,
    rank_table_version,
)
from generator.expand.remedies import ecmp_options
from generator.expand.services import (
    host_settings,
    scheduler_settings,
    services,
    ztp_path,
    ztp_relay,
)
from generator.expand.settings import resolve_settings
from generator.model import Cluster, Fabric, Growth, Lossless
from generator.names import host_name_problems, name_problems
from generator.records import replace
from generator.vocab import Plane, Role

__all__ = ["PLANE_CODE", "expand", "plane_specs"]
Progress = Callable[[str], None]
T = TypeVar("T")


def _noop(_: str) -> None:
    pass


class Substituted(BlueprintError):
    """Expansion problems that each have a value that works: `cluster` is the cluster built with
    every suggested value applied (nothing is written from it; its design checks are reported
    with the problems)."""

    def __init__(self, problems: list[Problem], cluster: Cluster) -> None:
        super().__init__(problems)
        self.cluster = cluster


class Problems:
    """Design errors collected across steps; `check()` raises them all at once when one of them
    stops the build (no value to go on with), `settle(cluster)` at the end otherwise."""

    def __init__(self) -> None:
        self.found: list[Problem] = []
        self.blocked = False  # a problem without a substitute: the build cannot go on

    def attempt(self, step: Callable[..., T], *args: Any) -> T | None:
        try:
            return step(*args)
        except BlueprintError as e:
            self.found.extend(e.problems)
            self.blocked = True
            return None

    def check(self) -> None:
        if self.blocked:
            raise BlueprintError(self.found)

    def settle(self, cluster: Cluster) -> Cluster:
        """The cluster, or `Substituted` with it when it was built on suggested values."""
        if self.found:
            raise Substituted(self.found, cluster)
        return cluster

    def plane(
        self, spec: PlaneSpec, eps: list, catalog: Catalog, rule: int = 0
    ) -> tuple[PlaneSpec, PlaneBuild | None]:
        """A plane's switching. When the model above the leaves lacks ports, the problem names
        the smallest catalog model that has them, and the plane is built with it so that the
        planes after it are checked in the same run (nothing is written while problems stand)."""
        try:
            return spec, build(spec, eps, catalog, rule)
        except UpperTooSmall as e:
            alt = upper_model(catalog, e.speed, e.need + BORDER_SPARE)
            self.found.extend(
                replace(p, hint=_upper_hint(spec, e, alt, catalog)) for p in e.problems
            )
            if alt is None:
                self.blocked = True
                return spec, None
            spec = replace(spec, spine=alt, core=alt)
            return spec, self.attempt(build, spec, eps, catalog, rule)
        except BlueprintError as e:
            self.found.extend(e.problems)
            self.blocked = True
            return spec, None

    def pool(self, spec: PlaneSpec, allocate_in: Callable[[str], T], taken: list) -> T | None:
        """A plane's addresses. A pool too small is reported with the smallest wider pool that
        holds the plane (in place, or the first free block of 10.0.0.0/8 when widening it would
        overlap another plane's pool), and the plane is allocated from that pool."""
        try:
            return allocate_in(spec.pool)
        except BlueprintError as e:
            net = ipaddress.ip_network(spec.pool, strict=False)
            others = [t for t in taken if t != net]
            for prefix in range(net.prefixlen - 1, 7, -1):
                wide = _free(net.supernet(new_prefix=prefix), others)
                try:
                    got = allocate_in(str(wide))
                except BlueprintError:
                    continue
                key = format_path((*spec.where, "pool"))
                self.found.extend(
                    replace(p, hint=f"{p.hint}: set {key}: {wide}") for p in e.problems
                )
                taken.append(wide)
                return got
            self.found.extend(e.problems)
            self.blocked = True
            return None


def expand(
    bp: Blueprint,
    catalog: Catalog | None = None,
    progress: Progress = _noop,
    facts: NpuFacts | None = None,
) -> Cluster:
    """The whole cluster from a validated blueprint (defaults filled) and, for A3 supernodes, the
    NPU facts collected from the hardware. With `growth.cards`, the planned final build is laid
    out and the part built now kept (generator.expand.growth)."""
    catalog = catalog or build_catalog(bp.catalog)
    servers = spec_servers(bp, catalog) or 0
    planned = spec_planned(bp, catalog)
    if not planned or planned == servers:
        return _expand(bp, catalog, progress, Growth(planned, servers), facts)
    final = _at_planned_size(bp, catalog, progress, planned, facts)
    if planned > servers:
        progress(f"keeping the {servers:,} servers built now")
        kept = growth.prefix(final, servers, Growth(planned, servers))
        return replace(kept, acceptance=_acceptance(bp, kept, catalog))
    cluster = _expand(bp, catalog, progress, Growth(planned, servers), facts)
    return replace(cluster, growth=Growth(planned, servers, growth.moved(final, cluster)))


def _at_planned_size(
    bp: Blueprint,
    catalog: Catalog,
    progress: Progress,
    planned: int,
    facts: NpuFacts | None,
) -> Cluster:
    """The cluster at its planned final size; its design errors say they are the plan's."""
    sized = msgspec.structs.replace(
        bp, compute=msgspec.structs.replace(bp.compute, cards=None, servers=planned)
    )
    try:
        return _expand(sized, catalog, progress, Growth(planned, planned), facts)
    except BlueprintError as e:
        cards = bp.growth.cards if bp.growth else 0
        raise BlueprintError(
            [replace(p, message=f"{p.message} (at the planned size, growth.cards {cards:,})")
             for p in e.problems]
        ) from None  # fmt: skip


# Ports a suggested upper model keeps free beyond the leaves' uplinks: the border routers and
# firewalls (a pair each, one link to every business spine and in-band core) land there.
BORDER_SPARE = 4


def upper_model(catalog: Catalog, speed: int, need: int) -> str | None:
    """The catalog switch with the fewest ports at `speed` GE that still has `need` of them
    (the same rule `wanka size` prints its spine choice from)."""
    fits = [
        (len(spine_lanes(m, speed)[0]), m.power_w, name)
        for name, m in catalog.switches.items()
        if m.platform == "huawei-ce" and len(spine_lanes(m, speed)[0]) >= need
    ]
    return min(fits)[2] if fits else None


def _free(net: Any, taken: list) -> Any:
    """`net`, or the first block of its size in 10.0.0.0/8 that overlaps none of `taken`."""
    if not any(net.overlaps(t) for t in taken):
        return net
    blocks = ipaddress.ip_network("10.0.0.0/8").subnets(new_prefix=net.prefixlen)
    return next((b for b in blocks if not any(b.overlaps(t) for t in taken)), net)


def _upper_hint(spec: PlaneSpec, e: UpperTooSmall, alt: str | None, catalog: Catalog) -> str:
    key = format_path(e.key)
    if alt is None:
        out = f"no catalog switch has {e.need} ports at {e.speed}GE"
    else:
        have = len(spine_lanes(catalog.switches[alt], e.speed)[0])
        out = f"set {key}: {alt} ({have} ports at {e.speed}GE, {e.need} needed)"
    if spec.plane == Plane.PARAMETER and spec.tiers == 2:  # the only plane with a `tiers` key
        out += ", or tiers: 3 (pods under cores)"
    return out


def _expand(
    bp: Blueprint,
    catalog: Catalog,
    progress: Progress,
    grown: Growth,
    facts: NpuFacts | None,
) -> Cluster:
    problems = Problems()
    specs = plane_specs(bp)
    floor = Floor()
    hosts = place_hosts(bp, catalog, floor)
    named = {
        Role.NPU_SERVER: hosts.servers,
        Role.STORAGE_NODE: hosts.storage_nodes,
        Role.MANAGEMENT_NODE: hosts.management_nodes,
    }
    if names := host_name_problems(named):  # records below are keyed by name
        raise BlueprintError(names)
    progress(f"placed {len(hosts.model):,} hosts in {len(floor.racks):,} racks")

    npu_models = [m for m in hosts.model.values() if m.kind == Role.NPU_SERVER]
    npu_subnets = max((m.npu_subnets_per_server for m in npu_models), default=0)
    builds: dict[str, PlaneBuild] = {}
    unbuilt = False  # a plane that could not be built even with a larger model
    for plane, eps in host_endpoints(hosts, floor).items():
        if plane in specs and eps:
            rule = npu_subnets if plane == Plane.PARAMETER else 0
            specs[plane], b = problems.plane(specs[plane], eps, catalog, rule)
            unbuilt |= b is None
            if b is not None:
                builds[plane] = b
                progress(f"{plane} plane: {len(b.leaves)} leaves, {b.tiers} tiers")
    if unbuilt:
        problems.check()

    placer = Placer(bp, floor, catalog)
    for plane, b in builds.items():
        placer.plane(specs[plane], b)
    placer.border(bp)
    specs[Plane.OOB], oob = problems.plane(specs[Plane.OOB], placer.oob_endpoints(hosts), catalog)
    if oob is None:
        problems.check()
    assert oob is not None
    builds[Plane.OOB] = oob
    placer.plane(specs[Plane.OOB], builds[Plane.OOB])
    progress(f"oob plane: {len(builds[Plane.OOB].leaves)} access switches")

    splits = {
        sw.name: sw.splits for b in builds.values() for sw in (*b.leaves, *b.spines, *b.cores)
    }
    attached = attach(bp, builds, hosts, placer.placed.model, splits)
    dies = max((m.dies_per_npu for m in npu_models), default=1)
    addrs = _allocate(specs, builds, problems, npu_subnets or dies)
    if attached.shared_storage:
        where = ("networks", "storage", "pool")
        pool = bp.networks.storage.pool
        shared = problems.attempt(shared_storage_addresses, pool, attached.shared_storage, where)
        if shared is not None:
            addrs[Plane.STORAGE] = shared
    plane_pools = {p: specs[p].pool for p in (Plane.BUSINESS, Plane.INBAND, Plane.OOB)}
    routing = problems.attempt(border_routing, bp, plane_pools, attached)
    problems.check()
    assert routing is not None
    progress("addresses allocated")

    devs = devices(bp, specs, hosts, floor, builds, placer.placed, splits, addrs)
    racks = floor.freeze(ZONES)
    rack_by = {r.name: r for r in racks}
    devs = with_airflow(devs, rack_by, bp.zones.training.airflow)
    wire_sets = [
        WireSet(p, PLANE_CODE[p].upper(), b.wires, addrs[p].p2p) for p, b in builds.items()
    ]
    wire_sets.append(WireSet(Plane.BORDER, "BRD", attached.border, routing.p2p))
    if attached.shared_storage:
        wire_sets.append(WireSet(Plane.STORAGE, "STO", attached.shared_storage))
    links, trunks = cable(wire_sets, floor, rack_by, catalog, splits)
    progress(f"{len(links):,} links cabled")
    devs = link_facts(ecmp_paths(devs, links), links)
    cdus = assign_cdus(racks, floor, bp.zones.training)
    cdu_of = {rack: c.name for c in cdus for rack in c.racks}
    racks = tuple(replace(r, cdu=cdu_of[r.name]) if r.name in cdu_of else r for r in racks)
    racks = rack_loads(racks, devs)
    nic_limits = npu_nic_limits(hosts.model.values())
    npu_mtu_limit = min((n.mtu_max for n in nic_limits), default=HOST_MTU)
    lossless = lossless_classes(bp, npu_mtu_limit)
    fabrics = tuple(fabric(specs[plane], b) for plane, b in builds.items())
    pools = (*(a.pool for a in addrs.values()), *routing.pools)
    by_name = {d.name: d for d in devs}
    namer = domain_namer(by_name, racks, cdus, _fabric_of(fabrics, Plane.PARAMETER))
    servers = npu_servers(devs, links, addrs, hosts.model, namer)
    version = rank_table_version(bp, servers)
    servers, missing = apply_facts(servers, facts, version)
    svc = services(devs, pools)
    subnets = ztp_relay(tuple(s for a in addrs.values() for s in a.subnets), svc)
    cluster = Cluster(
        name=bp.metadata.name,
        site=bp.metadata.site,
        racks=racks,
        devices=devs,
        links=links,
        subnets=subnets,
        addresses=tuple(x for a in addrs.values() for x in a.addresses),
        pools=pools,
        fabrics=fabrics,
        cdus=cdus,
        lossless=lossless,
        npu_servers=servers,
        roce_planes=roce_planes(bp),
        switch_facts=switch_facts(devs, catalog),
        npu_nic_limits=nic_limits,
        missing_facts=missing,
        facts_file=facts.file if facts else "",
        trunks=trunks,
        hccl_env=hccl_environment(
            bp, lossless_of(Plane.PARAMETER, bp.networks.parameter.lossless, npu_mtu_limit)
        ),
        services=svc,
        routes=routing.routes,
        uplinks=routing.uplinks,
        source_nat=routing.nat,
        border_ospf=routing.ospf,
        flows=required_flows(bp),
        scheduler=scheduler_settings(bp, _fabric_of(fabrics, Plane.PARAMETER)),
        host_settings=host_settings(bp, version),
        settings=resolve_settings(bp, catalog),
        growth=grown,
        storage_nics=storage_nics(hosts.model.values()),
        ztp_path=ztp_path(devs, links, subnets, svc),
        switch_mtus=switch_mtus(builds, lossless),
        hardware=hardware(devs, catalog),
        ecmp_options=ecmp_options(devs, fabrics, catalog),
        standard_lengths_m=catalog.standard_lengths_m,
        acceptance=acceptance_plan(
            bp,
            servers,
            links,
            _fabric_of(fabrics, Plane.PARAMETER),
            {s.name: hosts.model[s.name] for s in servers},
            _npu_mtu(lossless),
        ),
    )
    if names := name_problems(cluster):  # before any file is named after a device or group
        raise BlueprintError([*problems.found, *names])
    return problems.settle(with_licences(cluster))


def _acceptance(bp: Blueprint, c: Cluster, catalog: Catalog):
    models = {s.name: catalog.hosts[c.device_by_name[s.name].model] for s in c.npu_servers}
    fabric = c.fabric(Plane.PARAMETER)
    return acceptance_plan(bp, c.npu_servers, c.links, fabric, models, _npu_mtu(c.lossless))


def _npu_mtu(lossless: tuple[Lossless, ...]) -> int:
    """The NPU ports' MTU as hccn.conf writes it: the parameter plane's lossless class's."""
    cls = next((x for x in lossless if x.plane == Plane.PARAMETER), None)
    return cls.mtu if cls else HOST_MTU


def _fabric_of(fabrics: tuple[Fabric, ...], plane: str) -> Fabric | None:
    return next((f for f in fabrics if f.plane == plane), None)


def _allocate(
    specs: Mapping[str, PlaneSpec],
    builds: Mapping[str, PlaneBuild],
    problems: Problems,
    dies: int = 1,
) -> dict[str, PlaneAddresses]:
    """Every plane's addresses from its pool; every pool that is too small is reported. On the
    parameter plane `dies` subnets per single-rail leaf: the server model's npu_subnets_per_server,
    else its NPU dies (A3: a subnet per die position)."""
    out = {}
    taken = [ipaddress.ip_network(s.pool, strict=False) for s in specs.values()]
    for plane, b in builds.items():
        spec = specs[plane]
        a = problems.pool(
            spec,
            lambda pool, s=spec, b=b: allocate(
                b,
                s.plane,
                pool,
                (*s.where, "pool"),
                subnet_per_group=s.subnet_per_group,
                bond_name=s.bond,
                vlan=s.vlan,
                dies=dies if s.plane == Plane.PARAMETER else 1,
            ),
            taken,
        )
        if a is not None:
            out[plane] = a
    return out
