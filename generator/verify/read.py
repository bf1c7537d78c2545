"""Reading a rendered output folder into a graph of interfaces, VLANs, VRFs and subnets.

Nodes: ("vrf", device, vrf), ("if", device, interface), ("vlan", device, id), ("net", cidr).
Edges come from interface addresses, VLAN membership, Eth-Trunk/bond membership and cables;
each keeps the file and line it came from.
"""

from __future__ import annotations

import csv
import io
import ipaddress
import re
import socket
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

from generator.verify import vrp
from generator.verify.policy import Rule, policy_line, rule_of
from generator.verify.safe import file_text, file_yaml, located, rel
from generator.vocab import Plane

DEFAULT_VRF = "_public_"


@dataclass(slots=True)
class Access:
    """How one switch restricts management access, as read from its config."""

    rel: str
    device: str
    acls: dict[str, list[tuple[int, str]]] = field(default_factory=dict)
    uses: dict[str, list[int]] = field(
        default_factory=lambda: {"ssh server acl": [], "snmp-agent acl": [], "vty acl": []}
    )
    snmp: bool = False
    telnet: list[int] = field(default_factory=list)
    vty: list[tuple[int, bool]] = field(default_factory=list)  # (line, has an inbound ACL)
    clear_snmp: list[int] = field(default_factory=list)  # SNMP v1/v2c communities


@dataclass(frozen=True, slots=True)
class StaticRoute:
    device: str
    vrf: str
    network: ipaddress.IPv4Network
    next_hop: int
    preference: int
    where: tuple[str, int]


@dataclass(slots=True)
class Routing:
    """What the configs say about routing: static routes, who advertises them, BGP peers, and
    the firewalls' interfaces, zones and policies."""

    routes: list[StaticRoute] = field(default_factory=list)
    advertises: set[str] = field(default_factory=set)  # devices importing static routes
    peers: list[tuple[str, str, int, tuple[str, int]]] = field(default_factory=list)
    addresses: dict[int, tuple[str, str, int]] = field(default_factory=dict)  # ip -> dev, if, plen
    zones: dict[tuple[str, str], str] = field(default_factory=dict)  # (fw, interface) -> zone
    rules: dict[str, list[Rule]] = field(default_factory=dict)  # firewall -> rules in order
    nat: dict[str, list[Rule]] = field(default_factory=dict)  # firewall -> nat-policy rules
    relays: set[tuple[str, str]] = field(default_factory=set)  # (device, interface) relaying DHCP

    def extend(self, later: Routing) -> None:
        """Add what configs read after this one's say (dictionaries: the later one wins)."""
        self.routes += later.routes
        self.advertises |= later.advertises
        self.peers += later.peers
        self.addresses |= later.addresses
        self.zones |= later.zones
        self.relays |= later.relays
        for device, rules in later.rules.items():
            self.rules.setdefault(device, []).extend(rules)
        for device, rules in later.nat.items():
            self.nat.setdefault(device, []).extend(rules)


class Graph:
    """Undirected graph as a dict of dicts: adj[a][b] is the (file, line) an edge was first read
    from. Not networkx: verify adds ~120,000 edges at 10,240 cards and needs only components and
    shortest paths, and a plain dict builds them in a third of networkx's time (measured)."""

    def __init__(self) -> None:
        self.adj: dict[tuple, dict[tuple, tuple[str, int]]] = {}

    def edge(self, a: tuple, b: tuple, where: tuple[str, int]) -> None:
        near = self.adj.get(a)
        if near is None:
            near = self.adj[a] = {}
        elif b in near:
            return
        near[b] = where
        self.adj.setdefault(b, {})[a] = where

    def __contains__(self, node: tuple) -> bool:
        return node in self.adj

    @property
    def nodes(self):
        return self.adj.keys()

    def number_of_edges(self) -> int:
        return sum(len(near) + (node in near) for node, near in self.adj.items()) // 2

    def components(self) -> list[set[tuple]]:
        """Connected components, in the order their first node was added."""
        seen: set[tuple] = set()
        out = []
        for start in self.adj:
            if start in seen:
                continue
            component = {start}
            queue = deque([start])
            while queue:
                for nb in self.adj[queue.popleft()]:
                    if nb not in component:
                        component.add(nb)
                        queue.append(nb)
            seen |= component
            out.append(component)
        return out

    def shortest_path(self, a: tuple, b: tuple) -> list[tuple]:
        """A path with the fewest edges from a to b (breadth-first); b must be reachable."""
        parent: dict[tuple, tuple | None] = {a: None}
        queue = deque([a])
        while b not in parent:
            node = queue.popleft()
            for nb in self.adj[node]:
                if nb not in parent:
                    parent[nb] = node
                    queue.append(nb)
        path = [b]
        while (step := parent[path[-1]]) is not None:
            path.append(step)
        return path[::-1]


def ip_int(text: str) -> int:
    """Dotted quad -> integer, without ipaddress's per-call cost (verify reads ~10^5 of them).
    inet_pton takes exactly four decimal parts of 0-255 (POSIX inet_pton, AF_INET)."""
    try:
        return int.from_bytes(socket.inet_pton(socket.AF_INET, text), "big")
    except (OSError, TypeError, ValueError):
        raise ValueError(f"not an IPv4 address: {text!r}") from None


def _mask(prefix: int) -> int:
    return 0xFFFFFFFF << (32 - prefix) & 0xFFFFFFFF


def _prefix(text: str | int) -> int:
    if isinstance(text, int):
        return text
    if "." in text:
        host = ~ip_int(text) & 0xFFFFFFFF
        if host & (host + 1):  # the host bits of a netmask are one run of ones at the end
            raise ValueError(f"not a netmask: {text!r}")
        return 32 - host.bit_length()
    value = int(text)
    if not 0 <= value <= 32:
        raise ValueError(f"not a prefix length: {text!r}")
    return value


def network(address: str, prefix: int | str) -> str:
    """The subnet `address/prefix` lies in, spelled as the graph's ("net", ...) nodes are."""
    plen = _prefix(prefix)
    n = ip_int(address) & _mask(plen)
    return f"{n >> 24}.{n >> 16 & 255}.{n >> 8 & 255}.{n & 255}/{plen}"


@located("group_vars/all.yml")
def settings(folder: Path) -> dict:
    """group_vars/all.yml: the pools, storage mode and access the output was built with."""
    return file_yaml(folder, folder / "group_vars" / "all.yml") or {}


@located("group_vars/all.yml")
def pools(folder: Path, data: dict | None = None) -> dict[str, ipaddress.IPv4Network]:
    data = settings(folder) if data is None else data
    return {p: ipaddress.ip_network(data["pools"][p]) for p in Plane if p in data.get("pools", {})}


ROUTE = re.compile(
    r"ip route-static (?:vpn-instance (\S+) )?(\S+) (\S+) (\d+\.\d+\.\d+\.\d+)(?: preference (\d+))?"
)


# (interface, VLAN) memberships one device may declare: 50 on the largest of wanka-10k; above
# this, a hostile config of `port trunk allow-pass vlan 1 to 4094` lines would fill the memory
MAX_MEMBERS = 65_536
_INTERFACE = re.compile(r"interface (\S+)")
_VLANIF = re.compile(r"Vlanif(\d+)")
_VLAN_BATCH = re.compile(r"vlan batch (.+)")
_ACL = re.compile(r"acl (?:number |name )?(\S+)")
_ZONE = re.compile(r"firewall zone (?:name )?(\S+)")
_SERVICE_ACL = re.compile(r"(ssh server|snmp-agent) acl (\S+)")
_VTY_ACL = re.compile(r"acl (\S+) inbound")
_BGP_PEER = re.compile(r"peer (\S+) as-number")
_ZONE_MEMBER = re.compile(r"add interface (\S+)")
_POLICY_RULE = re.compile(r"rule name (\S+)")
_VRF_BINDING = re.compile(r"ip binding vpn-instance (\S+)")
_IP_ADDRESS = re.compile(r"ip address (\S+) (\S+)(?: sub)?$")
_ETH_TRUNK = re.compile(r"eth-trunk (\d+)")
_PORT_VLAN = re.compile(
    r"port (?:default|hybrid (?:untagged|tagged)|trunk (?:allow-pass|pvid)) vlan (.+)"
)


@located()
def switch(
    g: Graph, folder: Path, path: Path, routing: Routing, gateway: bool = False
) -> tuple[dict[str, str], Access]:
    """Add one device config (switch, router, or with `gateway` a firewall, whose interfaces
    are never joined) to the graph; returns physical port -> logical interface and how the
    device restricts management access. Routes, peers, zones and policies go to `routing`.
    Unreadable at a line that is no form of the command table (vrp.tree)."""
    device = _Device(g=g, where=rel(folder, path), name=path.stem, routing=routing, gateway=gateway)
    for line in vrp.read(folder, path)[1]:
        device.read(line)
    return device.done()


class _Device:
    """One device config being read, top-level line by top-level line (vrp.tree)."""

    def __init__(self, g: Graph, where: str, name: str, routing: Routing, gateway: bool) -> None:
        self.g, self.where, self.name, self.out, self.gateway = g, where, name, routing, gateway
        self.access = Access(where, name)
        self.fold: dict[str, str] = {}
        self.vlans: set[int] = set()
        self.all_vlans: list[tuple[str, int]] = []  # (interface, line) carrying every VLAN
        self.members = 0  # (interface, VLAN) edges
        self.rules = routing.rules.setdefault(name, []) if gateway else []
        self.vrf = DEFAULT_VRF  # of the interface being read
        self.rule: dict | None = None  # the policy rule being read

    def read(self, line: vrp.Line) -> None:
        """A top-level command and the lines under it (at any depth, in file order), read in
        the view it opens."""
        view, subject = self.command(line.text, line.number)
        if line.text.startswith(BREACHES):
            _breach(self.access, tuple(line.words()), line.number)
        if view:
            handle = getattr(self, view)  # a view's lines: its method
            for child in line.descendants():
                handle(subject, child.text, child.number)
        if self.rule is not None:
            subject.append(rule_of(self.rule))
            self.rule = None

    def command(self, line: str, n: int) -> tuple[str | None, object]:
        """A system-view command: what it adds, the view it opens and that view's subject."""
        access = self.access
        if m := _INTERFACE.match(line):
            iface, self.vrf = m.group(1), DEFAULT_VRF
            if v := _VLANIF.fullmatch(iface):
                vlan = ("vlan", self.name, int(v.group(1)))
                self.g.edge(("if", self.name, iface), vlan, (self.where, n))
            return "interface", iface
        if m := _VLAN_BATCH.match(line):
            self.vlans |= vrp.vlan_list(m.group(1))
        elif m := ROUTE.match(line):
            net = ipaddress.ip_network(f"{m.group(2)}/{_prefix(m.group(3))}", strict=False)
            vrf, hop, pref = m.group(1) or DEFAULT_VRF, ip_int(m.group(4)), int(m.group(5) or 60)
            self.out.routes.append(
                StaticRoute(
                    device=self.name,
                    vrf=vrf,
                    network=net,
                    next_hop=hop,
                    preference=pref,
                    where=(self.where, n),
                )
            )
        elif m := _ACL.match(line):
            access.acls.setdefault(m.group(1), [])
            return "acl", m.group(1)
        elif line.startswith("user-interface vty"):
            access.vty.append((n, False))
            return "vty", None
        elif line.startswith(("bgp ", "ospf ")):
            return "routing", None
        elif m := _ZONE.match(line):
            return "zone", m.group(1)
        elif line.startswith("security-policy"):
            return "policy", self.rules
        elif line.startswith("nat-policy"):
            return "policy", self.out.nat.setdefault(self.name, []) if self.gateway else []
        elif m := _SERVICE_ACL.match(line):  # the ACL of the SSH or SNMP server
            access.uses[f"{m.group(1)} acl"].append(n)
            ref = "@ssh" if m.group(1) == "ssh server" else "@snmp"
            access.acls.setdefault(ref, []).append((n, m.group(2)))
        elif line.startswith("snmp-agent"):
            access.snmp = True
        return None, None

    def acl(self, acl: str, s: str, n: int) -> None:
        if s.startswith("rule "):
            self.access.acls[acl].append((n, s))

    def vty(self, _: None, s: str, n: int) -> None:
        if m := _VTY_ACL.match(s):
            access = self.access
            access.uses["vty acl"].append(n)
            access.vty[-1] = (access.vty[-1][0], True)
            access.acls.setdefault("@vty", []).append((n, m.group(1)))

    def routing(self, _: None, s: str, n: int) -> None:
        if m := _BGP_PEER.match(s):
            self.out.peers.append((self.name, m.group(1), n, (self.where, n)))
        elif s.startswith(("default-route-advertise", "import-route static")):
            self.out.advertises.add(self.name)

    def zone(self, zone: str, s: str, n: int) -> None:
        if m := _ZONE_MEMBER.match(s):
            self.out.zones[(self.name, m.group(1))] = zone

    def policy(self, into: list[Rule], s: str, n: int) -> None:
        if m := _POLICY_RULE.match(s):
            if self.rule is not None:
                into.append(rule_of(self.rule))
            self.rule = {
                "name": m.group(1),
                "where": (self.where, n),
                "src": [],
                "dst": [],
                "svc": [],
            }
        elif self.rule is not None:
            policy_line(self.rule, s)

    def interface(self, iface: str, s: str, n: int) -> None:
        if s == "dhcp select relay":
            self.out.relays.add((self.name, iface))
        if not s.startswith(("ip ", "eth-trunk ", "port ")):
            return
        g, node, where = self.g, ("if", self.name, iface), (self.where, n)
        if m := _VRF_BINDING.match(s):
            self.vrf = m.group(1)
        elif m := _IP_ADDRESS.match(s):
            prefix = _prefix(m.group(2))
            g.edge(node, ("net", network(m.group(1), prefix)), where)
            self.out.addresses[ip_int(m.group(1))] = (self.name, iface, prefix)
            if not self.gateway:
                g.edge(node, ("vrf", self.name, self.vrf), where)
        elif m := _ETH_TRUNK.match(s):
            self.fold[iface] = trunk = f"Eth-Trunk{m.group(1)}"
            g.edge(node, ("if", self.name, trunk), where)
        elif m := _PORT_VLAN.match(s):
            for v in vrp.vlan_list(m.group(1)):
                g.edge(node, ("vlan", self.name, v), where)
                self.members += 1
        elif s.startswith("port vlan exclude") or s == "port trunk allow-pass vlan all":
            self.all_vlans.append((iface, n))
        self.bounded()

    def bounded(self) -> None:
        if self.members + len(self.all_vlans) * len(self.vlans) > MAX_MEMBERS:
            raise ValueError(f"more than {MAX_MEMBERS:,} VLAN memberships in one device")

    def done(self) -> tuple[dict[str, str], Access]:
        self.bounded()
        for name, n in self.all_vlans:  # a peer-link carries every VLAN but the excluded ones
            for v in sorted(self.vlans):
                self.g.edge(("if", self.name, name), ("vlan", self.name, v), (self.where, n))
        return self.fold, self.access


# the first words of the lines _breach judges (vrp.telnet_on, vrp.clear_snmp)
BREACHES = ("telnet ", "undo telnet ", "snmp-agent ")


def _breach(access: Access, parts: tuple[str, ...], n: int) -> None:
    if vrp.telnet_on(parts):
        access.telnet.append(n)
    elif vrp.clear_snmp(parts):
        access.clear_snmp.append(n)


@located()
def hccn(g: Graph, folder: Path, path: Path) -> None:
    where = rel(folder, path)
    host = path.stem
    values: dict[tuple[str, int], tuple[str, int]] = {}
    for n, line in enumerate(file_text(folder, path).splitlines(), 1):
        m = re.fullmatch(r"(address|netmask|gateway)_(\d+)=(\S+)", line.strip())
        if m:
            values[(m.group(1), int(m.group(2)))] = (m.group(3), n)
    for (key, i), (address, n) in sorted(values.items()):
        if key != "address":
            continue
        mask = values.get(("netmask", i), ("255.255.255.255", n))[0]
        node = ("if", host, f"npu{i}")
        g.edge(node, ("net", (network(address, mask))), (where, n))
        if ("gateway", i) in values:
            gw, gn = values[("gateway", i)]
            gateway(g=g, node=node, address=address, prefix=mask, gw=gw, where=(where, gn))


def gateway(g: Graph, node: tuple, address: str, prefix, gw: str, where) -> None:
    """A gateway outside the interface's own subnet is a route into wherever it points."""
    plen = _prefix(prefix)
    if ip_int(gw) & _mask(plen) != ip_int(address) & _mask(plen):
        g.edge(node, ("net", f"{gw}/32"), where)


@dataclass(slots=True)
class Cabling:
    """What files/cabling.csv says: the line each cabled port and device first appears on, and
    the rows that cable a port already cabled."""

    ports: dict[tuple[str, str], int] = field(default_factory=dict)
    devices: dict[str, int] = field(default_factory=dict)
    twice: list[tuple[str, str, int, int]] = field(default_factory=list)  # dev, port, line, first
    rows: list[tuple[str, str, int]] = field(default_factory=list)  # a device, b device, line
    lanes: list[tuple[str, str, str, int]] = field(default_factory=list)  # verify/physical.py
    kept: list[tuple[str, ...]] = field(default_factory=list)  # the `keep` columns of each row


@located()
def cabling(g: Graph, folder: Path, fold: dict[str, str], limit=None, keep=()) -> Cabling:
    """Every cable an edge of `g`; `keep`: columns each row also keeps (predict: plane, speed)."""
    path = folder / "files" / "cabling.csv"
    where = rel(folder, path)
    out = Cabling()
    with io.StringIO(file_text(folder, path, limit), newline="") as fh:
        rows = csv.reader(fh)
        header = next(rows, [])
        columns = [(header.index(f"{s}_device"), header.index(f"{s}_port")) for s in "ab"]
        unit = [header.index(c) for c in ("trunk_id", "cable_id") if c in header]
        extra = [header.index(name) for name in keep]
        for n, row in enumerate(rows, 2):
            out.kept += [tuple(row[i] for i in extra)] if extra else []
            ends = []
            for di, pi in columns:
                dev, port = row[di], row[pi]
                if ":" in port:  # a lane: device, port, its trunk_id or else cable_id, line
                    got = (row[i] for i in unit if i < len(row) and row[i])
                    out.lanes.append((dev, port, next(got, ""), n))
                first = out.ports.setdefault((dev, port), n)
                if first != n:
                    out.twice.append((dev, port, n, first))
                out.devices.setdefault(dev, n)
                ends.append(("if", dev, fold.get(f"{dev}\0{port}", port)))
            g.edge(ends[0], ends[1], (where, n))
            out.rows.append((ends[0][1], ends[1][1], n))
    return out
