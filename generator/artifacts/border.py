"""files/border/<name>.cfg (and its structured config, <name>.yml): the firewalls' and border routers' configurations, and
files/flows.csv, the required flows the firewall policy is written from and `wanka verify` proves.

Firewall (USG6000E): one security zone per plane it faces (business, inband, oob) and `untrust`
toward the routers, default deny between zones, one rule per required flow that crosses zones
(addresses and service from the model's flow table), logging on every rule; static routes from
the model. Router (NE8000): the firewall links and the provider hand-off, static routes from
the model. Both: management port in the management VRF with its gateway, SSH only with hardened
algorithms, AAA on the console and VTY, management ACL, SNMPv3 only with traps to the monitoring
nodes. Every fact is the model's; this module only spells it.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from generator import render
from generator.artifacts import OutputFile, csv_bytes, emitter
from generator.artifacts.switch_routing import OSPF_AREA, OSPF_PROCESS, wildcard
from generator.model import BorderOspf, Cluster, Device, Flow, Link, ip, netmask, network_of
from generator.structured_yaml import to_yaml
from generator.vocab import Plane, Role

Config = dict[str, Any]
TEMPLATES = {"huawei-usg": "border/usg6000e.cfg.j2", "huawei-ne": "border/ne8000.cfg.j2"}
MGMT_ACL = 2000
USER = ("admin", "vault_border_admin_password")
# Security zone priorities are unique on the device, and the built-in zones hold untrust 5, dmz 50,
# trust 85 and local 100 (Huawei forum corpus-3126: "each security zone has a globally unique
# security priority ... The DMZ ... namely, 50"; the business zone had 50 and was refused).
BUILT_IN_ZONES = {"untrust": 5, "dmz": 50, "trust": 85, "local": 100}
# The firewall's own management port (an interface in no zone passes nothing).
MGMT_ZONE = "management"  # vocabulary: USG security zone
ZONE_PRIORITY = {Plane.BUSINESS: 60, Plane.INBAND: 70, Plane.OOB: 80, MGMT_ZONE: 90}
# service-manage keywords of the management port per required flow port: the management port
# permits only HTTP, HTTPS and ping by default (USG admin guide sec_admin_network_interface_0073:
# "HTTP, HTTPS, and Ping are enabled on the management interface"); SSH and SNMP are the flows'.
SERVICE_MANAGE = {("tcp", 22): "ssh", ("udp", 161): "snmp"}
# NQA test of a router's provider gateway: its static default is withdrawn while the gateway stops
# answering, not only when the link goes down (NE40E V800R012C10 configuration guide, "Example for
# Configuring NQA for IPv6 Static Routes": nqa test-instance / test-type icmp / destination-address
# / interval seconds 3 / frequency 9 / start now, `ip route-static ... track nqa ADMIN TEST`; the
# IPv4 route form: Ipv4AddRouteNhIsPub(STATICRTOM) page, ICMP instances only). The frequency must
# exceed (probe-count - 1) x interval + timeout + 1 = (3 - 1) x 3 + 3 + 1 = 10 s with the ICMP
# defaults of 3 probes and a 3 s timeout, or a test "may give no result" (frequency(NQABASEOM),
# pingProbeCount(NQAIP4OM), pingTimeout(NQAIP4OM) pages): 12 s.
NQA = {"admin": "wanka", "test": "provider", "interval": 3, "frequency": 12}
NAT_GROUP = "wanka-nat"  # the firewall's NAT address pool (its section of zones.border.nat)
FLOW_COLUMNS = ("flow", "source", "destination", "protocol", "ports", "zones", "purpose")


def _zone(plane: str) -> str:
    return "untrust" if plane == Plane.BORDER else plane


def _groups(cluster: Cluster) -> dict[str, list[tuple[str, int]]]:
    """Firewall address objects of each flow endpoint group: (address, prefix) pairs."""
    pools = {p.plane: (ip(p.network), p.prefix) for p in cluster.pools}
    mgmt = sorted(
        (ip(d.mgmt.ip), 32)
        for d in cluster.devices
        if d.role == Role.MANAGEMENT_NODE and d.mgmt is not None
    )
    relays = sorted({s.gateway for s in cluster.subnets if s.dhcp_relay})
    return {
        "management-nodes": mgmt,
        "switch-management": [pools[Plane.OOB]],
        "dhcp-relays": [(ip(a), 32) for a in relays],  # the relay sends from its gateway address
        "bmc": [pools[Plane.OOB]],
        "business-hosts": [pools[Plane.BUSINESS]],
        "outside": [],
    }


def _rules(cluster: Cluster) -> list[Config]:
    groups = _groups(cluster)
    rules = []
    for f in cluster.flows:
        if not f.zones[0]:
            continue
        rules.append(
            {
                "name": f.name,
                "description": f.purpose,
                "from": f.zones[0],
                "to": f.zones[1],
                "sources": [{"address": a, "prefix": p} for a, p in groups[f.source]],
                "destinations": [{"address": a, "prefix": p} for a, p in groups[f.destination]],
                "protocol": "" if f.protocol == "any" else f.protocol,
                "ports": [p for p in f.ports if p],
            }
        )
    return rules


def _local_rules(cluster: Cluster) -> tuple[list[Config], list[str]]:
    """The firewall's own traffic on its management port: the required flows to and from the
    switch-management group (which holds the firewall's management address), as local-zone rules
    (USG admin guide sec_admin_secpolicy_0006_new: "Security policies can control ... the local
    traffic ... the FW needs to be managed ... NTP"), and the service-manage keywords the port
    needs for the flows toward it."""
    groups = _groups(cluster)
    rules, manage = [], set()
    for f in cluster.flows:
        if "switch-management" not in (f.source, f.destination):
            continue
        inbound = f.destination == "switch-management"
        far = groups[f.source if inbound else f.destination]
        rules.append(
            {
                "name": f"{f.name}-local",
                "description": f"{f.purpose} (the firewall itself)",
                "from": MGMT_ZONE if inbound else "local",
                "to": "local" if inbound else MGMT_ZONE,
                "sources": [{"address": a, "prefix": p} for a, p in far] if inbound else [],
                "destinations": [] if inbound else [{"address": a, "prefix": p} for a, p in far],
                "protocol": f.protocol,
                "ports": [p for p in f.ports if p],
            }
        )
        if inbound:
            manage |= {
                SERVICE_MANAGE[f.protocol, p] for p in f.ports if (f.protocol, p) in SERVICE_MANAGE
            }
    return rules, sorted(manage)


def _source_nat(dev: Device, cluster: Cluster) -> Config:
    """The firewall's source NAT toward the provider (the model's section and sources)."""
    n = next((x for x in cluster.source_nat if x.device == dev.name), None)
    if n is None:
        return {}
    return {
        "group": NAT_GROUP,
        "first": ip(n.network),
        "last": ip(n.network + (1 << (32 - n.prefix)) - 1),
        "rule": f"{n.zones[0]}-{n.zones[1]}",
        "from": n.zones[0],
        "to": _zone(n.zones[1]),
        "sources": [{"address": ip(a), "prefix": p} for a, p in n.sources],
    }


def structured_config(dev: Device, cluster: Cluster, links: list[Link], rules: list[Config]):
    faces = {}
    interfaces = []
    ospf = next((x for x in cluster.border_ospf if x.device == dev.name), None)
    p2p = set(ospf.networks if ospf else ())
    group = cluster.link_group(dev)  # a firewall of a pair: every border link fails together
    for link in links:
        mine = link.a_device == dev.name
        far, far_port = (link.b_device, link.b_port) if mine else (link.a_device, link.a_port)
        address = link.a_ip if mine else link.b_ip
        plane = cluster.device_by_name[far].plane
        interfaces.append(
            {
                "name": link.a_port if mine else link.b_port,
                "description": f"to {far} {far_port}",
                "address": ip(address),
                "prefix": link.prefix,
                # the OSPF links are point-to-point /31s, as on the switches
                "ospf_p2p": (network_of(address, link.prefix), link.prefix) in p2p,
                "link_group": group,
            }
        )
        faces.setdefault(_zone(plane), []).append(interfaces[-1]["name"])
    firewall = dev.role == Role.FIREWALL
    local_rules, service_manage = _local_rules(cluster) if firewall and dev.mgmt else ([], [])
    if local_rules:
        faces[MGMT_ZONE] = [dev.mgmt.interface]
    for u in cluster.uplinks:
        if u.device == dev.name:
            interfaces.append(
                {
                    "name": u.port,
                    "description": f"provider hand-off, gateway {ip(u.gateway)}",
                    "address": ip(u.ip),
                    "prefix": u.prefix,
                    "ospf_p2p": False,
                    "link_group": 0,
                }
            )
    svc = cluster.services
    m = dev.mgmt
    gateways = {u.gateway for u in cluster.uplinks if u.device == dev.name}
    routes = [
        {
            "vrf": r.vrf,
            "network": ip(r.network),
            "prefix": r.prefix,
            "next_hop": ip(r.next_hop),
            "preference": r.preference,
            "track": f"{NQA['admin']} {NQA['test']}" if r.next_hop in gateways else "",
        }
        for r in cluster.routes
        if r.device == dev.name
    ]
    if m is not None and m.gateway:
        routes += [
            {
                "vrf": m.vrf,
                "network": ip(net),
                "prefix": prefix,
                "next_hop": ip(m.gateway),
                "preference": 60,
                "track": "",
            }
            for net, prefix in svc.pools
        ]
    return {
        "hostname": dev.name,
        "model": dev.model,
        "role": dev.role,
        "management": {
            "interface": m.interface if m else "",
            "vrf": m.vrf if m else "",
            "address": ip(m.ip) if m else "",
            "mask": netmask(m.prefix) if m else "",
            "prefix": m.prefix if m else 0,
            "acl": [
                {"id": 5 * (i + 1), "source": ip(net), "wildcard": ip((1 << (32 - p)) - 1)}
                for i, (net, p) in enumerate(svc.pools)
            ],
            "acl_number": MGMT_ACL,
            "user": USER[0],
            "password": f"{{{{ {USER[1]} }}}}",
            "ntp": [ip(a) for a in svc.ntp],
            "syslog": [ip(a) for a in svc.syslog],
            "service_manage": service_manage,
            # SNMPv3 as on the switches (the model's Services): the user, its group and view, its
            # authentication and privacy modes without keys (roles/border_deploy enters the keys
            # at the device's prompts), and the trap targets, the monitoring nodes
            "snmp": {
                "user": svc.snmp_user,
                "group": svc.snmp_group,
                "view": svc.snmp_view,
                "auth": svc.snmp_auth,
                "priv": svc.snmp_priv,
                "targets": [ip(a) for a in svc.snmp],
            },
        },
        "interfaces": interfaces,
        "zones": [
            {"name": z, "priority": {**BUILT_IN_ZONES, **ZONE_PRIORITY}[z], "interfaces": faces[z]}
            for z in sorted(faces)
        ]
        if firewall
        else [],
        "routes": routes,
        "rules": local_rules + rules if firewall else [],
        "source_nat": _source_nat(dev, cluster),
        "nqa": [{**NQA, "destination": ip(g)} for g in sorted(gateways)],
        "ospf": _ospf(ospf),
    }


def _ospf(o: BorderOspf | None) -> Config:
    """OSPF area 0 on the firewall-router links (the model's BorderOspf), {} when none."""
    if o is None:
        return {}
    return {
        "process": OSPF_PROCESS,
        "router_id": ip(o.router_id),
        "area": OSPF_AREA,
        "networks": [{"address": ip(n), "wildcard": wildcard(p)} for n, p in o.networks],
        "default_route_advertise": o.originate_default,
        "zone": _zone(Plane.BORDER),  # a firewall's OSPF links face the routers
    }


def flows_csv(flows: tuple[Flow, ...]) -> bytes:
    return csv_bytes(
        FLOW_COLUMNS,
        (
            (
                f.name,
                f.source,
                f.destination,
                f.protocol,
                " ".join(str(p) for p in f.ports),
                "-".join(f.zones) if f.zones[0] else "",
                f.purpose,
            )
            for f in flows
        ),
    )


@emitter(late=True)
def emit(cluster: Cluster, analysis: object = None) -> Iterator[OutputFile]:
    yield OutputFile("files/flows.csv", flows_csv(cluster.flows))
    links: dict[str, list[Link]] = {}
    border = Plane.BORDER  # read once (vocab.py)
    for link in cluster.links:
        if link.plane == border:
            links.setdefault(link.a_device, []).append(link)
            links.setdefault(link.b_device, []).append(link)
    rules = _rules(cluster)
    for dev in cluster.devices:
        template = TEMPLATES.get(dev.platform)
        if template is None:
            continue
        cfg = structured_config(dev, cluster, links.get(dev.name, []), rules)
        yield OutputFile(f"files/border/{dev.name}.yml", to_yaml(cfg).encode())
        yield OutputFile(
            f"files/border/{dev.name}.cfg", render.template(template).render(cfg).encode()
        )
