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
from generator.verify.safe import Damaged, file_text, file_yaml, located, rel

PLANES = ("parameter", "storage", "business", "inband", "oob", "border", "provider")
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
    return {p: ipaddress.ip_network(data["pools"][p]) for p in PLANES if p in data.get("pools", {})}


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
_SSH_ACL = re.compile(r"ssh server acl (\S+)")
_SNMP_ACL = re.compile(r"snmp-agent acl (\S+)")
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
    device restricts management access. Routes, peers, zones and policies go to `routing`."""
    where = rel(folder, path)
    device = path.stem
    text = file_text(folder, path)
    lines = text.splitlines()
    fold: dict[str, str] = {}
    vlans: set[int] = set()
    iface: str | None = None
    vrf = DEFAULT_VRF
    all_vlan_ifaces: list[tuple[str, int]] = []
    members = 0  # (interface, VLAN) edges
    access = Access(where, device)
    acls, uses = access.acls, access.uses
    acl: str | None = None
    block = ""
    zone = ""
    rule: dict | None = None
    rules = routing.rules.setdefault(device, []) if gateway else []
    into = rules  # the policy being read: security-policy (rules) or nat-policy
    for n, raw in enumerate(lines, 1):
        if len(raw) > vrp.MAX_LINE:
            raise Damaged(f"{where}:{n}: {len(raw):,} characters; {vrp.TOO_LONG}")
        if not raw[:1].isspace():
            parts = vrp.words(raw)[0] if raw != "#" else ("#",)
            line = " ".join(parts)
            if rule is not None:
                into.append(rule_of(rule))
                rule = None
            iface, acl, block = None, None, ""
            if line == "#" or not line:
                continue
            if m := _INTERFACE.match(line):
                iface, vrf = m.group(1), DEFAULT_VRF
                if v := _VLANIF.fullmatch(iface):
                    g.edge(("if", device, iface), ("vlan", device, int(v.group(1))), (where, n))
            elif m := _VLAN_BATCH.match(line):
                vlans |= _vlan_list(m.group(1))
            elif m := ROUTE.match(line):
                net = ipaddress.ip_network(f"{m.group(2)}/{_prefix(m.group(3))}", strict=False)
                hop = ip_int(m.group(4))
                pref = int(m.group(5) or 60)
                routing.routes.append(
                    StaticRoute(device, m.group(1) or DEFAULT_VRF, net, hop, pref, (where, n))
                )
            elif m := _ACL.match(line):
                acl = m.group(1)
                acls.setdefault(acl, [])
            elif line.startswith("user-interface vty"):
                block = "vty"
                access.vty.append((n, False))
            elif line.startswith(("bgp ", "ospf ")):
                block = "routing"
            elif m := _ZONE.match(line):
                block, zone = "zone", m.group(1)
            elif line.startswith("security-policy"):
                block, into = "policy", rules
            elif line.startswith("nat-policy"):
                block = "policy"
                into = routing.nat.setdefault(device, []) if gateway else []
            elif m := _SSH_ACL.match(line):
                uses["ssh server acl"].append(n)
                acls.setdefault("@ssh", []).append((n, m.group(1)))
            elif m := _SNMP_ACL.match(line):
                uses["snmp-agent acl"].append(n)
                acls.setdefault("@snmp", []).append((n, m.group(1)))
            elif line.startswith("snmp-agent"):
                access.snmp = True
            if parts[0] in vrp.BREACHES:
                _breach(access, parts, n)
            continue
        view = "acl" if acl is not None else block or ("interface" if iface else None)
        parts, known = vrp.words(raw, view)
        if not known and raw.lstrip()[:1] in vrp.BREACH_INITIALS:
            # a system-view command indented under another view: flagged as if the switch ran
            # it there [unconfirmed: whether the CE falls back to the system view for it]
            _breach(access, vrp.words(raw)[0], n)
        s = " ".join(parts)
        if acl is not None:
            if s.startswith("rule "):
                acls[acl].append((n, s))
            continue
        if block == "vty":
            if m := _VTY_ACL.match(s):
                uses["vty acl"].append(n)
                access.vty[-1] = (access.vty[-1][0], True)
                acls.setdefault("@vty", []).append((n, m.group(1)))
            continue
        if block == "routing":
            if m := _BGP_PEER.match(s):
                routing.peers.append((device, m.group(1), n, (where, n)))
            elif s.startswith(("default-route-advertise", "import-route static")):
                routing.advertises.add(device)
            continue
        if block == "zone":
            if m := _ZONE_MEMBER.match(s):
                routing.zones[(device, m.group(1))] = zone
            continue
        if block == "policy":
            if m := _POLICY_RULE.match(s):
                if rule is not None:
                    into.append(rule_of(rule))
                rule = {"name": m.group(1), "where": (where, n), "src": [], "dst": [], "svc": []}
            elif rule is not None:
                policy_line(rule, s)
            continue
        if iface is None:
            continue
        if s == "dhcp select relay":
            routing.relays.add((device, iface))
        if not s.startswith(("ip ", "eth-trunk ", "port ")):
            continue
        node = ("if", device, iface)
        if m := _VRF_BINDING.match(s):
            vrf = m.group(1)
        elif m := _IP_ADDRESS.match(s):
            prefix = _prefix(m.group(2))
            g.edge(node, ("net", network(m.group(1), prefix)), (where, n))
            routing.addresses[ip_int(m.group(1))] = (device, iface, prefix)
            if not gateway:
                g.edge(node, ("vrf", device, vrf), (where, n))
        elif m := _ETH_TRUNK.match(s):
            fold[iface] = f"Eth-Trunk{m.group(1)}"
            g.edge(node, ("if", device, f"Eth-Trunk{m.group(1)}"), (where, n))
        elif m := _PORT_VLAN.match(s):
            for v in _vlan_list(m.group(1)):
                g.edge(node, ("vlan", device, v), (where, n))
                members += 1
        elif s.startswith("port vlan exclude") or s == "port trunk allow-pass vlan all":
            all_vlan_ifaces.append((iface, n))
        if members + len(all_vlan_ifaces) * len(vlans) > MAX_MEMBERS:
            raise ValueError(f"more than {MAX_MEMBERS:,} VLAN memberships in one device")
    if rule is not None:
        into.append(rule_of(rule))
    if all_vlan_ifaces and members + len(all_vlan_ifaces) * len(vlans) > MAX_MEMBERS:
        n = all_vlan_ifaces[0][1]
        raise ValueError(f"more than {MAX_MEMBERS:,} VLAN memberships in one device")
    for name, n in all_vlan_ifaces:  # a peer-link carries every VLAN but the excluded ones
        for v in sorted(vlans):
            g.edge(("if", device, name), ("vlan", device, v), (where, n))
    return fold, access


def _breach(access: Access, parts: tuple[str, ...], n: int) -> None:
    if vrp.telnet_on(parts):
        access.telnet.append(n)
    elif vrp.clear_snmp(parts):
        access.clear_snmp.append(n)


def _vlan_list(text: str) -> set[int]:
    out: set[int] = set()
    words = text.split()
    i = 0
    while i < len(words):
        if not words[i].isdigit():
            i += 1
            continue
        low = high = int(words[i])
        if i + 2 < len(words) and words[i + 1] == "to" and words[i + 2].isdigit():
            high = int(words[i + 2])
            i += 2
        if not 1 <= low <= high <= 4094:  # a VLAN ID is 1-4094 (IEEE 802.1Q: 0, 4095 reserved)
            raise ValueError(f"VLAN {low} to {high} is not within 1-4094")
        out |= set(range(low, high + 1))
        i += 1
    return out


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
            gateway(g, node, address, mask, gw, (where, gn))


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


@located()
def cabling(g: Graph, folder: Path, fold: dict[str, str], limit: int | None = None) -> Cabling:
    path = folder / "files" / "cabling.csv"
    where = rel(folder, path)
    out = Cabling()
    with io.StringIO(file_text(folder, path, limit), newline="") as fh:
        rows = csv.reader(fh)
        header = next(rows, [])
        columns = [(header.index(f"{s}_device"), header.index(f"{s}_port")) for s in "ab"]
        for n, row in enumerate(rows, 2):
            ends = []
            for di, pi in columns:
                dev, port = row[di], row[pi]
                first = out.ports.setdefault((dev, port), n)
                if first != n:
                    out.twice.append((dev, port, n, first))
                out.devices.setdefault(dev, n)
                ends.append(("if", dev, fold.get(f"{dev}\0{port}", port)))
            g.edge(ends[0], ends[1], (where, n))
            out.rows.append((ends[0][1], ends[1][1], n))
    return out
