"""Reading a rendered CE/NE/USG configuration (VRP syntax) into what the twin emulates.

The twin reads the text a device would receive, never the model: every fact here comes from a
line of `files/switches/*.cfg` or `files/border/*.cfg`, and keeps that line's number so that a
failure names the file and line behind it. Each line is read by the one VRP reader verify also
uses (generator.verify.vrp.tree, through the command table generator/catalog/commands.yaml):
the view it is typed
in (VRP nests by one space per level under a view: `interface X`, `bgp N`, `ospf 1`,
`acl number N`, `security-policy` > `rule name R`), the form it is (its keywords read as the
device reads them: any case, incomplete but unique, any run of whitespace) and what the twin does
with that form (`twin:`: translated, or counted under a named item it does not emulate). A line
that is no form of its view stops the twin at its file:line (Unreadable): nothing is read past.
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from generator.analysis.command_table import interface_kind
from generator.verify.read import ROUTE
from generator.verify.safe import listing
from generator.verify.vrp import Line, Unreadable, read

PUBLIC = ""  # the public network instance (no vpn-instance)
Net = ipaddress.IPv4Network
Addr = ipaddress.IPv4Address


@dataclass(slots=True)
class Interface:
    name: str
    line: int
    vpn: str = PUBLIC
    addresses: list[ipaddress.IPv4Interface] = field(default_factory=list)
    access_vlan: int | None = None
    trunk: int | None = None  # Eth-Trunk it is a member of
    peer_link: bool = False
    ospf_p2p: bool = False
    relay_servers: list[Addr] = field(default_factory=list)
    relay_line: int = 0
    relay_selected: bool = False  # `dhcp select relay`
    service_manage: list[str] = field(default_factory=list)  # USG `service-manage X permit`
    isolate_group: int | None = None  # `port-isolate enable group N`
    shutdown: int = 0  # the line of its `shutdown` (0: up, the default; `undo shutdown` clears it)
    link_group: int | None = None  # USG `link-group N` (twin.linkgroup)


@dataclass(frozen=True, slots=True)
class Static:
    vpn: str
    network: Net
    next_hop: Addr
    preference: int
    line: int


@dataclass(slots=True)
class Bgp:
    asn: int
    line: int
    router_id: str = ""
    peers: list[tuple[Addr, int, int]] = field(default_factory=list)  # address, AS, line
    networks: list[Net] = field(default_factory=list)
    maximum_paths: int = 1
    maximum_line: int = 0  # of `maximum load-balancing` (0: not configured, the default 1)
    import_static: bool = False
    stand_in: list[Net] = field(default_factory=list)  # announced for a part left out (pod.py)


@dataclass(slots=True)
class Ospf:
    line: int
    router_id: str = ""
    maximum_paths: int = 1
    import_static: bool = False
    default_route: bool = False
    silent: list[str] = field(default_factory=list)
    networks: list[tuple[Net, str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class AclRule:
    action: str
    vpn: str | None  # None: any instance
    source: Net | None  # None: any source
    number: int = 0  # its rule ID
    line: int = 0


@dataclass(slots=True)
class Policy:
    name: str
    line: int
    source_zones: list[str] = field(default_factory=list)
    destination_zones: list[str] = field(default_factory=list)
    sources: list[Net] = field(default_factory=list)
    destinations: list[Net] = field(default_factory=list)
    # (IP protocol, destination port) of each `service` line; none: every service
    services: list[tuple[str, int | None]] = field(default_factory=list)
    action: str = "deny"
    nat: str = ""  # nat-policy: "easy-ip" or an address group's name


@dataclass(slots=True)
class Device:
    name: str
    path: str  # relative to the output folder
    interfaces: dict[str, Interface] = field(default_factory=dict)
    statics: list[Static] = field(default_factory=list)
    bgp: Bgp | None = None
    ospf: Ospf | None = None
    acls: dict[str, list[AclRule]] = field(default_factory=dict)
    service_acls: dict[str, tuple[str, int]] = field(default_factory=dict)  # ssh/snmp/vty
    platform: str = ""  # huawei-ce, huawei-ne, huawei-usg
    ssh_source: tuple[str, int] | None = None  # `ssh server-source -i X`: (X, line)
    snmp_source: tuple[str, int] | None = None  # `snmp-agent protocol source-interface X`
    snmp_vpn: str = PUBLIC
    zones: dict[str, list[str]] = field(default_factory=dict)
    policies: list[Policy] = field(default_factory=list)
    # USG `default action` (security policy view): "The default action of the default security
    # policy is deny" (USG CLI default_action_secpolicy.html)
    default_action: str = "deny"
    policy_line: int = 0  # of `security-policy`
    default_line: int = 0  # of its `default action` line (0: not typed, the factory default)
    nat: list[Policy] = field(default_factory=list)
    address_groups: dict[str, list[Addr]] = field(default_factory=dict)
    dhcp_enabled: bool = False
    # M-LAG `dual-active detection source ip S [vpn-instance V] peer P` (DFS group view): (line,
    # source, peer); its UDP port is the device's default (twin.mlag.DAD_PORT)
    dad: list[tuple[int, str, str]] = field(default_factory=list)
    lines: Counter[str] = field(default_factory=Counter)  # lines per twin disposition

    @property
    def vpns(self) -> list[str]:
        return sorted({i.vpn for i in self.interfaces.values()} | {s.vpn for s in self.statics})

    def host_subnets(self) -> list[Net]:
        """The subnets it announces by BGP that are its own Vlanifs' (a leaf's host subnets)."""
        if not self.bgp:
            return []
        own = {a.network for i in self.interfaces.values() if i.name.startswith("Vlanif")
               for a in i.addresses}  # fmt: skip
        return [n for n in self.bgp.networks if n in own]

    def where(self, line: int) -> str:
        return f"{self.path}:{line}"


def _net(address: str, mask: str) -> Net:
    """`10.0.0.0 20`, `10.0.0.0 255.255.240.0` or an ACL's wildcard `10.0.0.0 0.0.15.255`."""
    if "." in mask and mask.startswith("0."):
        wildcard = int(Addr(mask))
        mask = str(Addr(~wildcard & 0xFFFFFFFF))
    return ipaddress.ip_network(f"{address}/{mask}", strict=False)


_RELAY_SERVER = re.compile(r"dhcp relay .*?(\d+\.\d+\.\d+\.\d+)")


# Layer-2/Layer-3 mode of a CE Ethernet port or Eth-Trunk (CE6800 V300R023C00 portswitch.json,
# ParentView: the Ethernet and Eth-Trunk interface views): "By default, an Ethernet interface
# works in Layer 2 mode" [unconfirmed for CE9860 and CE16800, which no reference covers; the
# same page's ExtraInfo says Ethernet interfaces "of Layer 3 devices such as the Router" start in
# Layer 3 mode, so NE and USG interfaces are Layer 3]; an Eth-Trunk starts in Layer 3 mode (the
# configuration guide's "Example for Configuring an Eth-Trunk Interface to Work in Manual Mode"
# displays ` portswitch` under it, and a display leaves defaults out: the command table's
# `portswitch` entry). `ip address` and `ip binding
# vpn-instance` are commands of the Layer 3 views only (ip_address_(interface_view).json,
# ip_binding_vpn-instance.json: "100GE interface view", their examples run `undo portswitch`
# first), `port default vlan` of the Layer 2 views only (port_default_vlan.json: "Layer 2 100GE
# interface view", ...): in the other mode the device has no such command, so the twin refuses
# the line as the device would.
_LAYER3_ONLY = (("ip", "address"), ("ip", "binding"))
_LAYER2_ONLY = (("port", "default"),)


def _interface(line: Line, where: str, platform: str, vpns: set[str]) -> Interface:
    iface = Interface(line.words()[1], line.number)
    layer2 = platform == "huawei-ce" and interface_kind(iface.name) == "ethernet"
    for child in line.children:
        w = child.words()
        if w == ["portswitch"] or w == ["undo", "portswitch"]:
            layer2 = w[0] == "portswitch"
        elif tuple(w[:2]) in (_LAYER2_ONLY if not layer2 else _LAYER3_ONLY):
            mode = "Layer 2" if layer2 else "Layer 3"
            raise Unreadable(
                f"{where}:{child.number}: {child.text!r}: no command of {iface.name} in "
                f"{mode} mode (an Ethernet port starts in Layer 2 mode, an Eth-Trunk in Layer 3; "
                "`portswitch` and `undo portswitch` switch it: CE portswitch.json)"
            )
        if w[:3] == ["ip", "binding", "vpn-instance"]:
            if w[3] not in vpns:
                raise Unreadable(
                    f"{where}:{child.number}: {child.text!r}: no VPN instance {w[3]} is created "
                    'before it (`ip vpn-instance`: ip_binding_vpn-instance.json, "After '
                    'creating a VPN instance, you must associate ...")'
                )
            iface.vpn = w[3]
        elif w[:2] == ["ip", "address"]:
            iface.addresses.append(ipaddress.ip_interface(f"{w[2]}/{w[3]}"))
        elif w[:2] == ["port", "default"] and w[2] == "vlan":
            iface.access_vlan = int(w[3])
        elif w[0] == "eth-trunk":
            iface.trunk = int(w[1])
        elif w[0] == "peer-link":  # vocabulary: VRP keyword
            iface.peer_link = True
        elif w[:2] == ["ospf", "network-type"] and w[2] == "p2p":
            iface.ospf_p2p = True
        elif w[:2] == ["port-isolate", "enable"]:
            iface.isolate_group = int(w[3]) if len(w) > 3 else 1
        elif w[0] == "service-manage" and w[-1] == "permit":
            iface.service_manage.append(w[1])
        elif w == ["shutdown"] or w == ["undo", "shutdown"]:
            iface.shutdown = child.number if w[0] == "shutdown" else 0
        elif w[0] == "link-group":
            iface.link_group = int(w[1])
        elif w == ["dhcp", "select", "relay"]:
            iface.relay_selected = True
        elif (m := _RELAY_SERVER.match(child.text)) and "relay" in w:
            iface.relay_servers.append(Addr(m.group(1)))
            iface.relay_line = iface.relay_line or child.number
    return iface


def _bgp(line: Line) -> Bgp:
    bgp = Bgp(int(line.words()[1]), line.number)
    for child in line.children:
        w = child.words()
        if w[0] == "router-id":
            bgp.router_id = w[1]
        elif w[0] == "peer" and w[2] == "as-number":
            bgp.peers.append((Addr(w[1]), int(w[3]), child.number))
        elif w[0] == "ipv4-family":
            for af in child.children:
                a = af.words()
                if a[:2] == ["maximum", "load-balancing"]:
                    bgp.maximum_paths, bgp.maximum_line = int(a[-1]), af.number
                elif a[0] == "network":
                    bgp.networks.append(_net(a[1], a[2] if len(a) > 2 else "32"))
                elif a[:2] == ["import-route", "static"]:
                    bgp.import_static = True
    return bgp


def _ospf(line: Line) -> Ospf:
    w = line.words()
    ospf = Ospf(line.number, w[3] if len(w) > 3 and w[2] == "router-id" else "")
    for child in line.children:
        c = child.words()
        if c[:2] == ["maximum", "load-balancing"]:
            ospf.maximum_paths = int(c[2])
        elif c[:2] == ["import-route", "static"]:
            ospf.import_static = True
        elif c[0] == "default-route-advertise":
            ospf.default_route = True
        elif c[0] == "silent-interface":
            ospf.silent.append(c[1])
        elif c[0] == "area":
            for net in child.children:
                n = net.words()
                if n[0] == "network":
                    ospf.networks.append((_net(n[1], n[2]), c[1]))
    return ospf


def _acl(line: Line) -> list[AclRule]:
    """The rules in rule-number order, whatever order the text has: "All rules in an ACL are
    identified by rule IDs and arranged in ascending order of ID", and "A device stops matching
    packets against ACL rules once the packets match a rule" (CE6800 V300R023C00 configuration
    guide, IP Addresses and Services > ACL Configuration > Understanding ACL > ACL Matching
    Process, WheaterW/INTA-project nassim-main/corpus/hw/hw_CE6800_V300R023C00/config_corpus/
    Configuration/Configuration_Guide/IP_Addresses_and_Services_Configuration/ACL_Configuration/
    Understanding_ACL/ACL_Matching_Process.md)."""
    rules = []
    for child in line.children:
        w = child.words()
        if w[0] != "rule":
            continue
        action = w[2]
        vpn = w[w.index("vpn-instance") + 1] if "vpn-instance" in w else None
        at = w.index("source") + 1 if "source" in w else 0
        source = _net(w[at], w[at + 1]) if at and w[at] != "any" else None  # `source any`
        rules.append((int(w[1]), AclRule(action, vpn, source, number=int(w[1]), line=child.number)))
    return [rule for _, rule in sorted(rules, key=lambda r: r[0])]


# A predefined service of a USG security rule, as its IP protocol: `service ospf` as Huawei's
# firewall hot-standby example types it (policy_ospf_1/2, see the USG template) [unconfirmed:
# no USG page listing the predefined services was found]; OSPF is IP protocol 89 (USG CLI
# "firewall packet-filter basic-protocol enable", usg.zrnko.cz/resources/cli/firewall_packet_
# filter_basic_protocol_enable.html: "OSPF unicast packets (protocol number: 89)"). A name
# outside it is refused.
PREDEFINED_SERVICES = {"ospf": ("89", None)}


def _service(child: Line, where: str) -> tuple[str, int | None]:
    c = child.words()
    if c[1] == "protocol":
        return c[2], int(c[c.index("destination-port") + 1]) if "destination-port" in c else None
    if c[1] not in PREDEFINED_SERVICES:
        raise Unreadable(
            f"{where}:{child.number}: {child.text!r}: a predefined service the twin does not "
            f"know (it knows {', '.join(PREDEFINED_SERVICES)})"
        )
    return PREDEFINED_SERVICES[c[1]]


def _policies(line: Line, where: str) -> list[Policy]:
    """The rules in their order (a USG "preferentially executes security policies configured
    earlier": Huawei enterprise forum, "Security policy matching order on the USG6000 series",
    forum.huawei.com/enterprise/en/corpus-3119.html), each with every `service` line."""
    out = []
    for rule in line.children:
        w = rule.words()
        if w[:2] != ["rule", "name"]:
            continue
        p = Policy(w[2], rule.number)
        for child in rule.children:
            c = child.words()
            if c[0] == "source-zone":
                p.source_zones.append(c[1])
            elif c[0] == "destination-zone":
                p.destination_zones.append(c[1])
            elif c[0] in ("source-address", "destination-address") and c[1] != "address-set":
                net = _net(c[1], c[2])
                (p.sources if c[0] == "source-address" else p.destinations).append(net)
            elif c[0] == "service":
                p.services.append(_service(child, where))
            elif c[0] == "action":
                p.action = c[1]
                if c[1:3] == ["source-nat", "easy-ip"]:
                    p.nat = "easy-ip"
                elif c[1:3] == ["source-nat", "address-group"]:
                    p.nat = c[3]
        out.append(p)
    return out


def device(folder: Path, path: Path) -> Device:
    """One rendered configuration, read into a Device; Unreadable at a line the command table
    does not know."""
    counts: Counter[str] = Counter()
    kind, lines = read(folder, path, counts)
    dev = Device(path.stem, path.relative_to(folder).as_posix(), platform=kind, lines=counts)
    vpns: set[str] = set()
    splits: dict[str, int] = {}  # split port -> its number of sub-ports
    for line in lines:
        w = line.words()
        if w[0] == "interface":
            _exists(dev.where(line.number), w[1], splits)
            iface = _interface(line, dev.path, kind, vpns)
            dev.interfaces[iface.name] = iface
        elif w[:2] == ["ip", "vpn-instance"]:
            vpns.add(w[2])
        elif w[:2] == ["port", "split"]:
            splits[w[4]] = int(w[-1].split("*")[0])
        elif m := ROUTE.match(line.text):  # verify's reading of a static route
            vpn, net, mask, hop, pref = m.groups()
            route = Static(
                vpn=vpn or PUBLIC,
                network=_net(net, mask),
                next_hop=Addr(hop),
                preference=int(pref or 60),
                line=line.number,
            )
            dev.statics.append(route)
        elif w[0] == "bgp":
            dev.bgp = _bgp(line)
        elif w[0] == "ospf":
            dev.ospf = _ospf(line)
        elif w[0] == "acl":
            dev.acls[w[-1]] = _acl(line)
        elif w[:3] == ["ssh", "server", "acl"]:
            dev.service_acls["ssh"] = (w[3], line.number)
        elif w[:2] == ["snmp-agent", "acl"]:
            dev.service_acls["snmp"] = (w[2], line.number)
        elif w[:2] == ["ssh", "server-source"]:
            dev.ssh_source = (w[-1], line.number)
        elif w[:3] == ["snmp-agent", "protocol", "source-interface"]:
            dev.snmp_source = (w[3], line.number)
        elif w[:3] == ["snmp-agent", "protocol", "vpn-instance"]:
            dev.snmp_vpn = w[3]
        elif w[:2] == ["user-interface", "vty"]:
            for child in line.children:
                c = child.words()
                if c[0] == "acl" and c[-1] == "inbound":
                    dev.service_acls["vty"] = (c[1], child.number)
        elif w[:2] == ["firewall", "zone"]:
            zone = w[-1]
            dev.zones[zone] = [c.words()[2] for c in line.children if c.text.startswith("add ")]
        elif w[0] == "security-policy":
            dev.policies = _policies(line, dev.path)
            dev.policy_line = line.number
            for child in line.children:
                if child.words()[:2] == ["default", "action"]:
                    dev.default_action, dev.default_line = child.words()[2], child.number
        elif w[0] == "nat-policy":
            dev.nat = _policies(line, dev.path)
        elif w[:2] == ["nat", "address-group"]:
            group = dev.address_groups.setdefault(w[2], [])
            for child in line.children:
                c = child.words()
                if c[0] == "section":
                    first, last = int(Addr(c[-2])), int(Addr(c[-1]))
                    group += [Addr(a) for a in range(first, last + 1)]
        elif w[:2] == ["dhcp", "enable"]:
            dev.dhcp_enabled = True
        elif w[0] == "dfs-group":
            for child in line.children:
                c = child.words()
                if c[:2] == ["dual-active", "detection"]:
                    dev.dad.append((child.number, c[4], c[-1]))
    for rule in dev.nat:
        if rule.nat != "easy-ip" and not dev.address_groups.get(rule.nat):
            raise Unreadable(
                f"{dev.where(rule.line)}: NAT rule {rule.name} translates to address group "
                f"{rule.nat!r}, which has no `section` here: the twin cannot translate it"
            )
    return dev


def _exists(where: str, name: str, splits: dict[str, int]) -> None:
    """A sub-port (400GE1/0/1:2) exists only once its port is split, and only as many as the
    split type makes (CE6800 V300R023C00 port_split.json: "By default, an interface is not
    split"; "A 400GE interface supports four 100GE or two 200GE interfaces", numbered :1 to :4)."""
    parent, colon, sub = name.partition(":")
    if colon and not (sub.isdigit() and 1 <= int(sub) <= splits.get(parent, 0)):
        split = f"split into {splits[parent]}" if parent in splits else "not split"
        raise Unreadable(
            f"{where}: 'interface {name}': no such interface: {parent} is {split} before it "
            "(`port split dimension interface`: port_split.json)"
        )


def devices(folder: Path) -> dict[str, Device]:
    """Every rendered switch, router and firewall configuration of an output folder."""
    paths = listing(folder, "files/switches", ".cfg") + listing(folder, "files/border", ".cfg")
    return {p.stem: device(folder, p) for p in paths}
