"""The routing and monitor-link parts of a switch's structured config (generator.artifacts.switches):
the model's protocol, ASNs, ECMP width, static routes and host subnets, spelled as the templates
want them."""

from __future__ import annotations

from typing import Any

from generator.artifacts.switch_ports import Context
from generator.model import Device, ip, network_of
from generator.vocab import LinkKind

Config = dict[str, Any]
OSPF_PROCESS, OSPF_AREA = 1, "0.0.0.0"


def wildcard(prefix: int) -> str:
    """The wildcard mask of a prefix length (ACL rules, OSPF network statements)."""
    return ip((1 << (32 - prefix)) - 1)


def monitor_link(dev: Device, cx: Context, ports: Config) -> Config | None:
    """M-LAG members: server trunks go down when every uplink is down (traffic then takes the
    other member instead of the peer-link)."""
    if dev.name not in cx.mlag_peer:
        return None
    ifaces = ports["interfaces"]
    uplinks = [i["name"] for i in ifaces if i.get("profile") == "fabric"]  # vocabulary: profile
    downlinks = [
        {"name": i["name"], "id": n}
        for n, i in enumerate((i for i in ifaces if "mlag" in i), start=1)
    ]
    if not uplinks or not downlinks:
        return None
    return {"group": 1, "uplinks": uplinks, "downlinks": downlinks}


def routing(dev: Device, cx: Context, ports: Config) -> Config | None:
    """BGP (one ASN per switch as the model assigns) or OSPF area 0 over the addressed links;
    the loopback and the host subnet are announced; ECMP as wide as the uplinks."""
    routed = [
        e
        for e in cx.ends.get(dev.name, ())
        if e.local_ip and e.link.kind == LinkKind.UPLINK and e.link.plane == dev.plane
    ]
    if not dev.loopback:
        return None
    static = [
        {
            "network": ip(r.network),
            "prefix": r.prefix,
            "next_hop": ip(r.next_hop),
            "preference": r.preference,
        }
        for r in cx.cluster.routes
        if r.device == dev.name and not r.vrf
    ]
    advertised = [r for r in cx.cluster.routes if r.device == dev.name and r.advertise]
    redistribute = {
        "default": any(r.prefix == 0 for r in advertised),
        "static": any(r.prefix for r in advertised),
    }
    protocol = cx.cluster.routing(dev.plane)
    width = max(1, dev.ecmp_paths)  # within the model's limit (design check `ecmp`)
    router_id = ip(dev.loopback)
    if protocol == "bgp" and dev.asn:
        networks = [{"address": router_id, "prefix": 32}]
        networks += [
            {"address": ip(sn.network), "prefix": sn.prefix} for sn in cx.subnets.get(dev.name, ())
        ]
        peers = [
            {"address": ip(e.far_ip), "asn": cx.devices[e.far].asn, "device": e.far}
            for e in sorted(routed, key=lambda e: e.far_ip)
        ]
        return {
            "protocol": "bgp",
            "asn": dev.asn,
            "router_id": router_id,
            "ecmp": width,
            "networks": networks,
            "peers": peers,
            "static": static,
            "redistribute": redistribute,
        }
    nets = {(network_of(e.local_ip, e.link.prefix), e.link.prefix) for e in routed}
    nets.add((dev.loopback, 32))
    nets.update((sn.network, sn.prefix) for sn in cx.subnets.get(dev.name, ()))
    return {
        "protocol": "ospf",
        "process": OSPF_PROCESS,
        "router_id": router_id,
        "ecmp": width,
        "area": OSPF_AREA,
        "networks": [{"address": ip(n), "wildcard": wildcard(p)} for n, p in sorted(nets)],
        "silent": [i["name"] for i in ports["interfaces"] if i.get("mode") == "vlanif"],
        "static": static,
        "redistribute": redistribute,
    }
