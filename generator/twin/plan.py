"""What the twin builds, decided from a rendered folder alone (no root needed to make a Plan).

One network namespace per device and one more per VPN instance of a device (this kernel has no
VRF device), NPU servers split into the host, its NPUs' NIC stack (each NPU NIC is its own
network stack on the card; here one namespace with a routing table per NIC, as `hccn_tool
-gateway` gives each NIC its own gateway) and its BMC. Every row of files/cabling.csv is a veth
pair. A VLAN is one Linux bridge per VLAN per switch (bridge VLAN filtering and 802.1Q devices do
not work on this kernel); an Eth-Trunk or a host bond is emulated by its first member only.
Routing: FRR (zebra, staticd, bgpd, ospfd) where the config runs BGP or OSPF; kernel routes
(metric = preference, routes over a dead link ignored) where it has only static routes.
"""

from __future__ import annotations

import configparser
import csv
import ipaddress
import re
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from generator.twin import pod as pods
from generator.twin import vrp
from generator.verify.inventory import hosts as read_hosts
from generator.vocab import Plane

OUTSIDE = ipaddress.IPv4Address("198.18.0.1")  # "the internet", as verify names it (RFC 2544)
PREFIX = "wt-"  # every namespace the twin makes starts with it (twin down removes them)
_SPEED = re.compile(r"^(\d*)(GE|Eth-Trunk|MEth|GigabitEthernet)", re.I)


def ifname(port: str) -> str:
    """A port name as a Linux interface name (15 characters at most): 400GE1/0/1:2 -> 400ge1-0-1_2,
    GigabitEthernet0/0/0 -> gi0-0-0, Vlanif50 -> vlan50; longer names get a checksum."""
    name = (
        port.replace("GigabitEthernet", "gi").replace("Vlanif", "vlan").replace("Eth-Trunk", "et")
    )
    name = name.lower().replace("/", "-").replace(":", "_")
    if len(name) > 15:
        name = f"p{zlib.crc32(port.encode()):08x}"
    return name


def ns_name(device: str, part: str = "") -> str:
    return f"{PREFIX}{device}" + (f".{part.strip('_')}" if part else "")


@dataclass(slots=True)
class Netns:
    name: str
    device: str
    kind: str  # switch, router, firewall, host, npu, bmc, outside
    commands: list[str] = field(default_factory=list)  # `ip -batch` lines, run inside
    frr: str = ""  # frr.conf, when the namespace runs FRR
    daemons: tuple[str, ...] = ()
    nft: str = ""  # an nftables ruleset, when it filters
    sysctls: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Link:
    a: tuple[str, str]  # (namespace, interface)
    b: tuple[str, str]
    cable: str
    plane: str
    line: int  # in files/cabling.csv


@dataclass(slots=True)
class Plan:
    folder: Path
    pod: int = 0  # one pod of the parameter plane only (generator.twin.pod), 0: everything
    namespaces: dict[str, Netns] = field(default_factory=dict)
    links: list[Link] = field(default_factory=list)
    ports: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)  # (dev, port) ->
    addresses: dict[ipaddress.IPv4Address, tuple[str, str]] = field(
        default_factory=dict
    )  # -> ns, if
    devices: dict[str, vrp.Device] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what is emulated differently, and why
    hostvars: dict[str, dict] = field(default_factory=dict)
    groups: dict[str, set[str]] = field(default_factory=dict)
    bmc_gateways: dict[str, str] = field(default_factory=dict)
    hosts_done: bool = False  # the hosts' keyfiles are in (twin.bring_up)

    def ns(self, name: str, device: str, kind: str) -> Netns:
        if name not in self.namespaces:
            self.namespaces[name] = Netns(name, device, kind)
            self.namespaces[name].commands.append("link set lo up")
        return self.namespaces[name]

    def address(self, ns: Netns, address: ipaddress.IPv4Interface, dev: str) -> None:
        ns.commands.append(f"address add {address} dev {dev}")
        self.addresses.setdefault(address.ip, (ns.name, dev))


def cabling(folder: Path) -> list[tuple[int, dict[str, str]]]:
    with open(folder / "files" / "cabling.csv", newline="", encoding="utf-8") as fh:
        return list(enumerate(csv.DictReader(fh), 2))


def _host_ns(plan: Plan, device: str, port: str) -> tuple[str, str]:
    if port.startswith("npu"):
        return ns_name(device, "npu"), "npu"
    if port == "bmc":
        return ns_name(device, "bmc"), "bmc"
    return ns_name(device), "host"  # vocabulary: twin namespace kind


def plan(
    folder: Path, keyfiles: dict[str, dict[str, configparser.ConfigParser]], pod: int = 0
) -> Plan:
    """The twin of a rendered folder; `keyfiles` are the NetworkManager keyfiles host_network
    writes for each host (generator.twin.hosts renders them with the real role). `pod`: that pod
    of the parameter plane only, the rest stood in for at the cores (generator.twin.pod)."""
    p = Plan(folder, pod, devices=vrp.devices(folder))
    p.hostvars, p.groups, _ = read_hosts(folder)
    rows = cabling(folder)
    if pod:
        keep, rows, count = pods.select(p.devices, p.groups, rows, pod)
        p.devices = {name: _public(dev) for name, dev in p.devices.items() if name in keep}
        p.notes.append(
            f"pod {pod} of {count}: its parameter leaves and spines, its NPU servers' NPU NICs "
            "and the cores cabled to it; each core announces the other pods' leaf subnets "
            "itself (a blackhole route), as it would pass them on from their spines; no other "
            "plane, no management VPN"
        )
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
    with open(folder / "files" / "ip-plan.csv", newline="", encoding="utf-8") as fh:
        p.bmc_gateways = {
            r["device"]: r["gateway"] for r in csv.DictReader(fh) if r["port"] == "bmc"
        }
    p.notes.append("BMCs are addressed from files/ip-plan.csv (no generated file configures them)")
    _hosts(p, folder, keyfiles)
    _outside(p)
    p.notes.append(
        "host bonds and Eth-Trunks run on their first member only (no bond device on this "
        "kernel); an M-LAG peer-link carries the first VLAN over its first member, and both "
        "leaves answer for the gateway address, each with its own MAC: a Linux bridge drops "
        "frames that carry its own address, so the shared `mac-address` of M-LAG's "
        "active-active gateway is not set (measured on cluster-1k: with it, a leaf reached no "
        "host cabled to its peer)"
    )
    return p


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
    router = "router" if dev.path.startswith("files/border") else "switch"
    kind = "firewall" if dev.zones else router  # vocabulary: twin namespace kind
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
    """Cabled ports: addresses, and access ports (or an Eth-Trunk's member) into their VLAN."""
    for iface in dev.interfaces.values():
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


def _first_member(p: Plan, dev: vrp.Device, trunk: int) -> str:
    """The Eth-Trunk member that carries a peer-link in the twin (the others stay out of the
    bridge: two would make a loop, and this kernel has no bond)."""
    members = [
        i.name
        for i in dev.interfaces.values()
        if i.trunk == trunk and (dev.name, i.name) in p.ports
    ]
    return ifname(members[0]) if members else ""


def _hosts(
    p: Plan, folder: Path, keyfiles: dict[str, dict[str, configparser.ConfigParser]]
) -> None:
    for ns in list(p.namespaces.values()):
        hv = p.hostvars.get(ns.device, {})
        if ns.kind == "host":  # vocabulary: twin namespace kind
            _keyfiles(p, ns, keyfiles.get(ns.device, {}))
        elif ns.kind == "npu":
            _npus(p, ns, folder / "files" / "hccn" / f"{ns.device}.conf")
        elif ns.kind == "bmc" and hv.get("bmc_address"):
            address = ipaddress.ip_interface(hv["bmc_address"])
            p.address(ns, address, "bmc")
            if gateway := p.bmc_gateways.get(ns.device):
                ns.commands.append(f"route add default via {gateway}")


def add_keyfiles(
    p: Plan, keyfiles: dict[str, dict[str, configparser.ConfigParser]]
) -> dict[str, list[str]]:
    """The hosts' keyfiles, into a plan made without them (the role was still running); return
    namespace -> the commands they added."""
    added = {}
    for ns in p.namespaces.values():
        if ns.kind == "host":  # vocabulary: twin namespace kind
            before = len(ns.commands)
            _keyfiles(p, ns, keyfiles.get(ns.device, {}))
            added[ns.name] = ns.commands[before:]
    return added


def _npus(p: Plan, ns: Netns, path: Path) -> None:
    """An NPU server's NICs from its /etc/hccn.conf: address, netmask, gateway per NIC i, each NIC
    answering ARP only for its own address and routing from its own table (table 100 + i)."""
    values = dict(
        line.split("=", 1) for line in path.read_text(encoding="utf-8").splitlines() if "=" in line
    )
    ns.sysctls |= {"net.ipv4.conf.all.arp_ignore": "1", "net.ipv4.conf.all.arp_announce": "2"}
    i = 0
    while f"address_{i}" in values:
        address = ipaddress.ip_interface(f"{values[f'address_{i}']}/{values[f'netmask_{i}']}")
        dev = f"npu{i}"
        p.address(ns, address, dev)
        if gw := values.get(f"gateway_{i}"):
            ns.commands += [
                f"route add {address.network} dev {dev} src {address.ip} table {100 + i}",
                f"route add default via {gw} dev {dev} table {100 + i}",
                f"rule add from {address.ip} table {100 + i} priority {100 + i}",
            ]
        i += 1


def _keyfiles(p: Plan, ns: Netns, files: dict[str, configparser.ConfigParser]) -> None:
    """What NetworkManager makes of the keyfiles host_network wrote: addresses, gateways (unless
    never-default), routes (in their table), routing rules; a bond on its first member."""
    members = {}
    for kf in files.values():
        if kf.get("connection", "master", fallback=""):
            members.setdefault(kf["connection"]["master"], kf["connection"]["interface-name"])
    for kf in files.values():
        if "ipv4" not in kf or kf["ipv4"].get("method") != "manual":
            continue
        dev = kf["connection"]["interface-name"]
        dev = members.get(dev, dev)
        v4 = kf["ipv4"]
        for key in sorted(k for k in v4 if re.fullmatch(r"address\d+", k)):
            address, _, gw = v4[key].partition(",")
            p.address(ns, ipaddress.ip_interface(address), ifname(dev))
            if gw and v4.get("never-default", "false") != "true":
                ns.commands.append(f"route add default via {gw} dev {ifname(dev)}")
        for key in sorted(k for k in v4 if re.fullmatch(r"route\d+", k)):
            net, gw = v4[key].split(",")[:2]
            options = dict(o.split("=") for o in v4.get(f"{key}_options", "").split(",") if o)
            table = f" table {options['table']}" if "table" in options else ""
            ns.commands.append(f"route add {net} via {gw} dev {ifname(dev)}{table}")
        for key in sorted(k for k in v4 if re.fullmatch(r"routing-rule\d+", k)):
            ns.commands.append(f"rule add {v4[key]}")


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
                    outside = outside or p.ns(ns_name("outside"), "outside", "outside")
                    name = f"to-{dev.name}"[:15]
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
        routers = [
            str(next(iter(p.devices[d].interfaces[i].addresses)).ip)
            for (d, i), (ns, _) in p.ports.items()
            if ns != outside.name
            and any(k.plane == Plane.PROVIDER and k.a == (ns, ifname(i)) for k in p.links)
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
