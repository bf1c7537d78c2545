"""Management services (NTP, syslog, SNMP, ZTP) every device is pointed at, and the blueprint
settings the host configuration and the schedulers read, defaults resolved here once."""

from __future__ import annotations

import msgspec

from generator.blueprint.spec import Blueprint
from generator.model import (
    Device,
    Fabric,
    HostSettings,
    Link,
    Pool,
    SchedulerSettings,
    Services,
    Subnet,
    network_of,
)
from generator.records import replace
from generator.vocab import LinkKind, Plane, Role

SERVICE_ROLE = {
    "ntp": "controller",
    "ztp": "controller",
    "syslog": "monitoring",
    "snmp": "monitoring",
}


def services(devices: tuple[Device, ...], pools: tuple[Pool, ...]) -> Services:
    """Each service on the management nodes of its role (controllers: NTP and ZTP; monitoring
    nodes: syslog and SNMP), on every management node when there is none of that role."""
    nodes = sorted((d for d in devices if d.role == Role.MANAGEMENT_NODE), key=lambda d: d.name)

    def on(role: str) -> tuple[int, ...]:
        chosen = [d for d in nodes if d.name.startswith(f"{role}-")] or nodes
        return tuple(d.mgmt.ip for d in chosen if d.mgmt is not None)

    return Services(
        **{service: on(role) for service, role in SERVICE_ROLE.items()},
        pools=tuple((p.network, p.prefix) for p in pools if p.plane in (Plane.INBAND, Plane.OOB)),
    )


def ztp_relay(subnets: tuple[Subnet, ...], svc: Services) -> tuple[Subnet, ...]:
    """The out-of-band subnets' gateways relay DHCP to the ZTP servers: a factory-default
    switch broadcasts its DHCP request from its MEth port in the out-of-band access VLAN, and the
    controllers are in the in-band zone behind the firewalls (flow `ztp`). The relay sends from
    its gateway address, in the out-of-band pool the flow's firewall rule permits."""
    if not svc.ztp:
        return subnets
    return tuple(replace(s, dhcp_relay=svc.ztp) if s.plane == Plane.OOB else s for s in subnets)


def ztp_path(
    devices: tuple[Device, ...],
    links: tuple[Link, ...],
    subnets: tuple[Subnet, ...],
    svc: Services,
) -> tuple[tuple[str, str], ...]:
    """The switches a relayed ZTP request and the SFTP download cross between a factory-default
    switch and the ZTP servers: the out-of-band gateways that relay (Subnet.dhcp_relay), the
    in-band gateways of the ZTP servers, and every switch above either toward the firewalls (the
    uplinks of their plane; the firewalls join the planes). ZTP cannot build these: nothing
    answers a switch's DHCP request until they route, and the out-of-band gateways are managed on
    their loopback, with no port asking for a lease. In device order, each with why it is on the
    path: relay (an out-of-band gateway that relays), server-gateway (the ZTP servers' in-band
    gateway) or transit (a switch above either)."""
    relays = {o for s in subnets if s.dhcp_relay for o in s.owners}
    server_gateways = {
        o
        for s in subnets
        if s.plane == Plane.INBAND and any(network_of(a, s.prefix) == s.network for a in svc.ztp)
        for o in s.owners
    }
    up: dict[str, set[str]] = {}
    uplink, management = LinkKind.UPLINK, frozenset((Plane.OOB, Plane.INBAND))  # read once
    for x in links:
        if x.kind == uplink and x.plane in management:
            up.setdefault(x.a_device, set()).add(x.b_device)
    path: set[str] = set()
    todo = [*relays, *server_gateways]
    while todo:
        name = todo.pop()
        if name not in path:
            path.add(name)
            todo.extend(up.get(name, ()))
    kind = dict.fromkeys(server_gateways, "server-gateway") | dict.fromkeys(relays, "relay")
    return tuple((d.name, kind.get(d.name, "transit")) for d in devices if d.name in path)


def scheduler_settings(bp: Blueprint, fabric: Fabric | None) -> SchedulerSettings:
    """tor_level auto: single_layer for a leaf-only parameter plane, double_layer with spines
    (MindCluster has no third level: a 3-tier plane is double_layer)."""
    volcano, mindcluster = bp.scheduler.volcano, bp.scheduler.mindcluster
    tor_level: str = mindcluster.tor_level
    if tor_level == "auto":
        tor_level = "single_layer" if fabric and fabric.tiers <= 1 else "double_layer"
    return SchedulerSettings(
        volcano_mode=volcano.mode,
        volcano_namespace=volcano.namespace,
        mindcluster_namespace=mindcluster.namespace,
        tor_level=tor_level,
    )


def host_settings(bp: Blueprint, rank_table_version: str) -> HostSettings:
    storage, ops = bp.zones.storage, bp.operations
    return HostSettings(
        software_versions=tuple(msgspec.structs.asdict(bp.software).items()),
        storage_access=storage.access,
        dpc_filesystems=tuple(msgspec.structs.asdict(f) for f in storage.filesystems),
        npu_temperature_max_c=ops.npu_temperature_max_c,
        thermal_guard=msgspec.structs.asdict(ops.thermal_guard),
        rank_table_version=rank_table_version,
    )
