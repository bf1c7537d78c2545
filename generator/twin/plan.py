"""What the twin builds, decided from a rendered folder alone (no root needed to make a Plan).

One network namespace per device and one more per VPN instance of a device (this kernel has no
VRF device), NPU servers split into the host, its NPUs' NIC stack (each NPU NIC is its own
network stack on the card; here one namespace with a routing table per NIC, as `hccn_tool
-gateway` gives each NIC its own gateway) and its BMC. Every row of files/cabling.csv is a veth
pair. A VLAN is one Linux bridge per VLAN per switch (bridge VLAN filtering and 802.1Q devices do
not work on this kernel); an Eth-Trunk or a host bond is emulated by its first member only.
Routing: FRR (zebra, staticd, bgpd, ospfd) where the config runs BGP or OSPF; kernel routes
(metric = preference, routes over a dead link ignored) where it has only static routes.

The folder is read and its names checked in generator.twin.intake; the hosts' addresses and
routes come from their files in generator.twin.plan_hosts; namespaces are named after the
instance (generator.twin.instance).
"""

from __future__ import annotations

import configparser
import ipaddress
import zlib
from pathlib import Path

from generator.twin import kernel, plan_hosts, vrp
from generator.twin import pod as pods
from generator.twin.instance import ns_name
from generator.twin.intake import (
    CABLING,
    IFNAME,
    IP_PLAN,
    Refused,
    address,
    cabling,
    checked,
    configs,
    host_names,
    ifname,
    table,
    wanka_output,
)
from generator.twin.records import Link, Plan
from generator.verify.inventory import hosts as read_hosts
from generator.vocab import HostPort, NsKind, Plane

# host port names (the catalog's server ports): a server's NPU ports are npu0, npu1, ...
NPU_PORT, BMC_PORT = HostPort.NPU, HostPort.BMC
OUTSIDE = ipaddress.IPv4Address("198.18.0.1")  # "the internet", as verify names it (RFC 2544)


# --- bounds of one run ---------------------------------------------------------------------
# pod-128 makes 124 namespaces and 395 cables, cluster-1k about 600 and 2,500; a 10,240-card
# build 5,165 namespaces, which is run one pod at a time (--pod). A folder asking for more is
# refused before anything is made.
MAX_NAMESPACES = 4096
MAX_LINKS = 16384
MAX_DEVICES = 4096  # configurations in files/switches and files/border
# ... in a build read whole but run in shards (`twin prove`, `twin export`): a 102,400-card build
# has 6,188; each shard is bounded by the memory it may take (generator.twin.shard)
MAX_SHARDED = 16384


def _host_ns(plan: Plan, device: str, port: str) -> tuple[str, str]:
    if port.startswith(NPU_PORT):
        return ns_name(device, NsKind.NPU), NsKind.NPU
    if port == BMC_PORT:
        return ns_name(device, NsKind.BMC), NsKind.BMC
    return ns_name(device), NsKind.HOST


def plan(
    folder: Path,
    keyfiles: dict[str, dict[str, configparser.ConfigParser]],
    pod: int = 0,
    bounded: bool = True,
) -> Plan:
    """The twin of a rendered folder; `keyfiles` are the NetworkManager keyfiles host_network
    writes for each host (generator.twin.hosts renders them with the real role). `pod`: that pod
    of the parameter plane only, the rest stood in for at the cores (generator.twin.pod).
    `bounded`: refused over what one run on this machine makes (not for an export, whose
    runtime spreads it over several machines: generator.twin.clab)."""
    wanka_output(folder)
    p = Plan(folder, pod, devices=configs(folder, MAX_DEVICES if bounded else MAX_SHARDED))
    p.hostvars, p.groups, p.hostlines = read_hosts(folder)
    host_names(folder, p.hostvars)
    known = p.devices.keys() | p.hostvars.keys()
    rows = cabling(folder, len(known))
    for line, row in rows:
        for side in "ab":
            if row[f"{side}_device"] not in known:
                raise Refused(
                    f"{CABLING}:{line}: {row[side + '_device']} is neither a configured device "
                    "(files/switches, files/border) nor a host of hosts.yml"
                )
    if pod:
        keep, rows, count = pods.select(p.devices, p.groups, rows, pod)
        p.devices = {name: _public(dev) for name, dev in p.devices.items() if name in keep}
        p.notes.append(
            f"pod {pod} of {count}: its parameter leaves and spines, its NPU servers' NPU NICs "
            "and the cores cabled to it; each core announces the other pods' leaf subnets "
            "itself (a blackhole route), as it would pass them on from their spines; no other "
            "plane, no management VPN"
        )
    if bounded:
        _bound(p, rows)
    for dev in p.devices.values():
        _device(p, dev)
    first_member = _bond_members(p.hostvars)
    for line, row in rows:
        ends = []
        for side in "ab":
            device, port = row[f"{side}_device"], row[f"{side}_port"]
            if device in p.devices:
                iface = p.devices[device].interfaces.get(port)
                ns = ns_name(device, iface.vpn if iface else "")
            else:
                ns, kind = _host_ns(p, device, port)
                p.ns(ns, device, kind)
            ends.append((device, port, ns))
        if any(port in first_member.get(dev, ()) for dev, port, _ in ends):
            continue  # a bond's other members: the bond is emulated by its first member
        for device, port, ns in ends:
            p.ports[(device, port)] = (ns, ifname(port))
        (_da, pa, na), (_db, pb, nb) = ends
        p.links.append(
            Link(
                a=(na, ifname(pa)),
                b=(nb, ifname(pb)),
                cable=row["cable_id"],
                plane=row["plane"],
                line=line,
            )
        )
    for dev in p.devices.values():
        _ports(p, dev)
    for line, r in table(folder, IP_PLAN, ("device", "port", "gateway")):
        if r["port"] == BMC_PORT and r["gateway"]:
            where = f"{IP_PLAN}:{line}"
            p.bmc_gateways[checked("device", r["device"], where)] = str(
                address(r["gateway"], where)
            )
    p.notes.append("BMCs are addressed from files/ip-plan.csv (no generated file configures them)")
    plan_hosts.add_hosts(p, folder, keyfiles)
    _outside(p)
    for link in p.links:  # ifname keeps to IFNAMSIZ: a guard, not a limit a folder can reach
        for _, dev in (link.a, link.b):
            if not IFNAME.fullmatch(dev):
                raise Refused(f"{CABLING}:{link.line}: '{dev}' is not a Linux interface name")
    kernel.multicast_room(p)  # after every cable and bridge: sized from them
    p.notes.append(
        "host bonds and Eth-Trunks run on their first member only (no bond device on this "
        "kernel); an M-LAG peer-link carries the first VLAN over its first member, and both "
        "leaves answer for the gateway address, each with its own MAC: a Linux bridge drops "
        "frames that carry its own address, so the shared `mac-address` of M-LAG's "
        "active-active gateway is not set (measured on cluster-1k: with it, a leaf reached no "
        "host cabled to its peer)"
    )
    return p


def _bound(p: Plan, rows: list[tuple[int, dict[str, str]]]) -> None:
    """Refused before anything is built when the folder asks for more than one run makes."""
    names = {ns_name(d.name, v) for d in p.devices.values() for v in d.vpns or [vrp.PUBLIC]}
    for _, row in rows:
        for side in "ab":
            device = row[f"{side}_device"]
            if device not in p.devices:
                names.add(ns_name(device, _host_part(row[f"{side}_port"])))
        if len(names) > MAX_NAMESPACES:
            break
    if len(names) > MAX_NAMESPACES or len(rows) > MAX_LINKS:
        raise Refused(
            f"{CABLING}: {len(rows):,} cables and {len(names):,}{'+' * (len(names) > MAX_NAMESPACES)}"
            f" namespaces: one twin makes at most {MAX_NAMESPACES:,} namespaces and "
            f"{MAX_LINKS:,} cables (a larger build runs one pod at a time: --pod N)"
        )


def _host_part(port: str) -> str:
    return NsKind.NPU if port.startswith(NPU_PORT) else NsKind.BMC if port == BMC_PORT else ""


def _bond_members(hostvars: dict[str, dict]) -> dict[str, set[str]]:
    """Host -> the bond members after the first (their cables are not emulated)."""
    out = {}
    for host, hv in hostvars.items():
        bond = hv.get("business_bond") or {}
        if len(bond.get("members") or []) > 1:
            out[host] = set(bond["members"][1:])
    return out


def _public(dev: vrp.Device) -> vrp.Device:
    """The device without its management VPN (a one-pod twin has no management plane)."""
    dev.interfaces = {k: i for k, i in dev.interfaces.items() if i.vpn == vrp.PUBLIC}
    dev.statics = [s for s in dev.statics if s.vpn == vrp.PUBLIC]
    return dev


def _device(p: Plan, dev: vrp.Device) -> None:
    router = NsKind.ROUTER if dev.path.startswith("files/border") else NsKind.SWITCH
    kind = NsKind.FIREWALL if dev.zones else router
    for vpn in dev.vpns or [vrp.PUBLIC]:
        ns = p.ns(ns_name(dev.name, vpn), dev.name, kind)
        ns.sysctls |= {
            "net.ipv4.ip_forward": "1",
            "net.ipv4.conf.all.ignore_routes_with_linkdown": "1",
        }
    for iface in dev.interfaces.values():
        ns = p.namespaces[ns_name(dev.name, iface.vpn)]
        if iface.name.startswith("LoopBack"):
            for a in iface.addresses:
                p.address(ns, a, "lo")
        elif iface.name.startswith("Vlanif"):
            bridge = ifname(iface.name)
            ns.commands += [f"link add {bridge} type bridge", f"link set {bridge} up"]
            for a in iface.addresses:
                p.address(ns, a, bridge)


def _ports(p: Plan, dev: vrp.Device) -> None:
    """Cabled ports: addresses, and access ports (or an Eth-Trunk's member) into their VLAN (a
    VLAN without a Vlanif gets its bridge here: the loop runs over the ports it started with); a
    port with `shutdown` is down ("The shutdown command shuts down an interface": CE6800
    V300R023C00 shutdown.json), so its cable carries nothing."""
    for iface in list(dev.interfaces.values()):
        if (dev.name, iface.name) not in p.ports:
            continue
        ns = p.namespaces[ns_name(dev.name, iface.vpn)]
        name = ifname(iface.name)
        trunk = dev.interfaces.get(f"Eth-Trunk{iface.trunk}") if iface.trunk is not None else None
        vlan = iface.access_vlan if iface.access_vlan is not None else (trunk and trunk.access_vlan)
        if vlan is not None and f"Vlanif{vlan}" not in dev.interfaces:
            ns.commands += [f"link add vlan{vlan} type bridge", f"link set vlan{vlan} up"]
            dev.interfaces[f"Vlanif{vlan}"] = vrp.Interface(f"Vlanif{vlan}", 0)
        if trunk is not None and trunk.peer_link and name == _first_member(p, dev, iface.trunk):
            bridges = sorted(i for i in dev.interfaces if i.startswith("Vlanif"))
            vlan = (
                int(bridges[0][6:]) if bridges else None
            )  # the first VLAN only: one veth, one bridge
        if vlan is not None:
            ns.commands.append(f"link set {name} master vlan{vlan}")
            if iface.isolate_group is not None:  # one group per switch: the bridge's isolated ports
                ns.commands.append(f"link set {name} type bridge_slave isolated on")
        for a in iface.addresses:
            p.address(ns, a, name)
        if iface.shutdown:  # after the cable ends come up (run.configure): the port stays down
            ns.commands.append(f"link set {name} down")


def _first_member(p: Plan, dev: vrp.Device, trunk: int) -> str:
    """The Eth-Trunk member that carries a peer-link in the twin (the others stay out of the
    bridge: two would make a loop, and this kernel has no bond)."""
    members = [
        i.name
        for i in dev.interfaces.values()
        if i.trunk == trunk and (dev.name, i.name) in p.ports
    ]
    return ifname(members[0]) if members else ""


def add_keyfiles(
    p: Plan, keyfiles: dict[str, dict[str, configparser.ConfigParser]]
) -> dict[str, list[str]]:
    """The hosts' keyfiles, into a plan made without them (the role was still running); return
    namespace -> the commands they added."""
    added = {}
    for ns in p.namespaces.values():
        if ns.kind == NsKind.HOST:
            before = len(ns.commands)
            plan_hosts.apply_keyfiles(p, ns, keyfiles.get(ns.device, {}))
            added[ns.name] = ns.commands[before:]
    return added


def _outside(p: Plan) -> None:
    """The provider: a namespace on every router interface that is addressed but not cabled and
    that a default route points through, holding that next hop, and the internet at OUTSIDE."""
    outside = None
    for dev in p.devices.values():
        for iface in dev.interfaces.values():
            if (dev.name, iface.name) in p.ports or not iface.addresses:
                continue
            for route in dev.statics:
                if route.network.prefixlen == 0 and route.next_hop in iface.addresses[0].network:
                    outside = outside or p.ns(
                        ns_name(NsKind.OUTSIDE), NsKind.OUTSIDE, NsKind.OUTSIDE
                    )
                    name = f"to-{dev.name}"
                    name = name if len(name) <= 15 else f"to{zlib.crc32(dev.name.encode()):08x}"
                    p.ports[(dev.name, iface.name)] = (
                        ns_name(dev.name, iface.vpn),
                        ifname(iface.name),
                    )
                    p.links.append(
                        Link(
                            a=(ns_name(dev.name, iface.vpn), ifname(iface.name)),
                            b=(outside.name, name),
                            cable="provider",
                            plane=Plane.PROVIDER,
                            line=iface.line,
                        )
                    )
                    near = p.namespaces[ns_name(dev.name, iface.vpn)]
                    p.address(near, iface.addresses[0], ifname(iface.name))
                    net = iface.addresses[0].network
                    p.address(
                        outside, ipaddress.ip_interface(f"{route.next_hop}/{net.prefixlen}"), name
                    )
    if outside:
        p.address(outside, ipaddress.ip_interface(f"{OUTSIDE}/32"), "lo")
        # the provider stops sending into a hand-off whose link is down, as its router would
        outside.sysctls["net.ipv4.conf.all.ignore_routes_with_linkdown"] = "1"
        handoffs = {k.a for k in p.links if k.plane == Plane.PROVIDER}  # one pass: not per port
        routers = [
            str(next(iter(p.devices[d].interfaces[i].addresses)).ip)
            for (d, i), (ns, _) in p.ports.items()
            if ns != outside.name and (ns, ifname(i)) in handoffs
        ]
        for dev in p.devices.values():  # the provider routes each NAT pool to the hand-offs
            for pool in dev.address_groups.values():
                for a in pool:
                    hops = " ".join(f"nexthop via {r}" for r in routers)
                    outside.commands.append(f"route add {a}/32 {hops}")
        if any(d.address_groups for d in p.devices.values()):
            p.notes.append(
                "the provider routes the firewalls' NAT pools to the routers' hand-offs "
                "(the provider's side of the contract: nothing generated configures it)"
            )
