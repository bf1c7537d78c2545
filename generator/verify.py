"""Prove isolation and hygiene from the *rendered* output folder, not from the model.

`verify(folder)` reads what `wanka generate` wrote (switch configs, hosts.yml host variables,
files/hccn/*.conf, files/cabling.csv, group_vars/all.yml pools) and builds a networkx graph:

- ("vrf", device, vrf): one L3 routing domain of a switch (the default one is "_public_");
- ("if", device, interface): one logical interface (Eth-Trunk members fold into their trunk,
  bond members into their bond); each host interface is its own domain: a host does not route
  between its planes (no forwarding setting is rendered) unless a gateway in its files points
  into another plane;
- ("vlan", device, id): a switch's broadcast domain;
- ("net", cidr): a subnet, labelled with the plane whose pool holds it.

Edges come from interface addresses, VLAN membership, Eth-Trunk/bond membership and cables;
each keeps the file and line it came from. Firewalls are the only gateways: their interfaces are
never joined to one another, and each may only face the business, in-band or out-of-band plane
(or a device without a rendered config, such as a WAN router). Two planes in one connected
component is a breach, reported with the path between them.

Also: every switch restricts SSH/STelnet, SNMP and the VTY lines with an ACL that only permits
the management pools (in-band and out-of-band); no secret is in clear in any file; nothing
mounts or exports NFS.
"""

from __future__ import annotations

import csv
import ipaddress
import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path

import networkx as nx
import yaml

from generator.output import MARKER

PLANES = ("parameter", "storage", "business", "inband", "oob")
MANAGEMENT = ("inband", "oob")
GATEWAY_PLANES = frozenset({"business", "inband", "oob"})
DEFAULT_VRF = "_public_"

VAULT = re.compile(r"\{\{ vault_[a-z0-9_]+ \}\}")
SECRET = re.compile(
    r"\b(?:password|cipher)\s+(?!irreversible-cipher\b|cipher\b)(\{\{ [^}]* \}\}|\S+)"
)
SECRET_KEY = re.compile(r"password|secret|_key$|^key$|community")
KNOWN_DEFAULTS = ("Admin@123", "Huawei@123", "Changeme_123", "Huawei12#$", "admin123")
NFS = re.compile(
    r"(?i)(\bmount\b[^\n]*\bnfs4?\b|\bfstype\W*\s*[:=]\s*\W*nfs4?\b|\btype\W*\s*[:=]\s*\W*nfs4?\b"
    r"|/etc/exports\b|\bexportfs\b|\bnfs-(?:server|kernel-server|utils)\b"
    r"|^\s*\S+:/\S*\s+\S+\s+nfs4?\b|^\s*/\S+\s+\S+\((?:rw|ro)\b)"
)


class NotAnOutput(Exception):
    """The folder is not a wanka output folder."""


@dataclass(frozen=True, slots=True)
class Problem:
    file: str
    line: int
    reason: str
    path: tuple[str, ...] = ()

    def render(self) -> str:
        text = f"{self.file}:{self.line}: {self.reason}"
        return text + "".join(f"\n    {step}" for step in self.path)


@dataclass(slots=True)
class Report:
    problems: list[Problem] = field(default_factory=list)
    switches: int = 0
    hosts: int = 0
    nodes: int = 0
    edges: int = 0

    def __bool__(self) -> bool:
        return not self.problems


def _rel(folder: Path, path: Path) -> str:
    return path.relative_to(folder).as_posix()


class _Graph:
    def __init__(self) -> None:
        self.g = nx.Graph()

    def edge(self, a: tuple, b: tuple, where: tuple[str, int]) -> None:
        if not self.g.has_edge(a, b):
            self.g.add_edge(a, b, where=where)


def _net(address: str, prefix: int | str) -> ipaddress.IPv4Network:
    return ipaddress.ip_interface(f"{address}/{prefix}").network


def _plane(net: ipaddress.IPv4Network, pools: dict[str, ipaddress.IPv4Network]) -> str | None:
    for plane, pool in pools.items():
        if net.subnet_of(pool):
            return plane
    return None


def _name(node: tuple) -> str:
    if node[0] == "net":
        return f"subnet {node[1]}"
    if node[0] == "vrf":
        return f"{node[1]} routing domain {node[2]}"
    if node[0] == "vlan":
        return f"{node[1]} vlan {node[2]}"
    return f"{node[1]} {node[2]}"


# ---------------------------------------------------------------------------------------------
# reading


def _pools(folder: Path) -> dict[str, ipaddress.IPv4Network]:
    data = yaml.safe_load((folder / "group_vars" / "all.yml").read_text(encoding="utf-8")) or {}
    return {p: ipaddress.ip_network(data["pools"][p]) for p in PLANES if p in data.get("pools", {})}


def _hosts(folder: Path) -> tuple[dict[str, dict], dict[str, set[str]]]:
    """host -> vars, group -> hosts (recursively), from hosts.yml."""
    data = yaml.safe_load((folder / "hosts.yml").read_text(encoding="utf-8")) or {}
    hostvars: dict[str, dict] = {}
    groups: dict[str, set[str]] = {}

    def walk(name: str, group: dict) -> set[str]:
        members = set()
        for host, hv in (group.get("hosts") or {}).items():
            hostvars.setdefault(host, {}).update(hv or {})
            members.add(host)
        for child, sub in (group.get("children") or {}).items():
            members |= walk(child, sub or {})
        groups.setdefault(name, set()).update(members)
        return members

    for name, group in data.items():
        walk(name, group or {})
    return hostvars, groups


def _host_line(folder: Path) -> dict[str, int]:
    lines: dict[str, int] = {}
    for n, line in enumerate((folder / "hosts.yml").read_text(encoding="utf-8").splitlines(), 1):
        m = re.match(r"\s+([A-Za-z0-9_.-]+):\s*\{", line)
        if m:
            lines.setdefault(m.group(1), n)
    return lines


_WILDCARD_ALL = "255.255.255.255"


def _parse_switch(
    g: _Graph, folder: Path, path: Path, report: Report, pools: dict
) -> dict[str, str]:
    """Add one switch config to the graph; returns physical port -> logical interface."""
    rel = _rel(folder, path)
    device = path.stem
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    fold: dict[str, str] = {}
    vlans: set[int] = set()
    iface: str | None = None
    vrf = DEFAULT_VRF
    all_vlan_ifaces: list[tuple[str, int]] = []
    acls: dict[str, list[tuple[int, str]]] = {}
    acl: str | None = None
    uses: dict[str, list[int]] = {"ssh server acl": [], "snmp-agent acl": [], "vty acl": []}
    in_vty = False
    snmp = False
    for n, line in enumerate(lines, 1):
        s = line.strip()
        if m := re.match(r"vlan batch (.+)", s):
            vlans |= _vlan_list(m.group(1))
        if not line.startswith(" "):
            iface, acl, in_vty = None, None, False
            if m := re.match(r"interface (\S+)", line):
                iface, vrf = m.group(1), DEFAULT_VRF
                if v := re.fullmatch(r"Vlanif(\d+)", iface):
                    g.edge(("if", device, iface), ("vlan", device, int(v.group(1))), (rel, n))
            elif m := re.match(r"acl (?:number |name )?(\S+)", line):
                acl = m.group(1)
                acls.setdefault(acl, [])
            elif line.startswith("user-interface vty"):
                in_vty = True
            elif m := re.match(r"ssh server acl (\S+)", line):
                uses["ssh server acl"].append(n)
                acls.setdefault("@ssh", []).append((n, m.group(1)))
            elif m := re.match(r"snmp-agent acl (\S+)", line):
                uses["snmp-agent acl"].append(n)
                acls.setdefault("@snmp", []).append((n, m.group(1)))
            elif line.startswith("snmp-agent"):
                snmp = True
            elif re.match(r"telnet server enable", line):
                report.problems.append(Problem(rel, n, "telnet server enabled (clear-text access)"))
            continue
        if acl is not None and s.startswith("rule "):
            acls[acl].append((n, s))
            continue
        if in_vty and (m := re.match(r"acl (\S+) inbound", s)):
            uses["vty acl"].append(n)
            acls.setdefault("@vty", []).append((n, m.group(1)))
            continue
        if iface is None:
            continue
        node = ("if", device, iface)
        if m := re.match(r"ip binding vpn-instance (\S+)", s):
            vrf = m.group(1)
        elif m := re.match(r"ip address (\S+) (\S+)(?: sub)?$", s):
            prefix = m.group(2)
            if "." in prefix:
                prefix = str(ipaddress.ip_network(f"0.0.0.0/{prefix}").prefixlen)
            net = _net(m.group(1), prefix)
            g.edge(node, ("net", str(net)), (rel, n))
            g.edge(node, ("vrf", device, vrf), (rel, n))
        elif m := re.match(r"eth-trunk (\d+)", s):
            fold[iface] = f"Eth-Trunk{m.group(1)}"
            g.edge(node, ("if", device, f"Eth-Trunk{m.group(1)}"), (rel, n))
        elif m := re.match(
            r"port (?:default|hybrid (?:untagged|tagged)|trunk (?:allow-pass|pvid)) vlan (.+)", s
        ):
            for v in _vlan_list(m.group(1)):
                g.edge(node, ("vlan", device, v), (rel, n))
        elif s.startswith("port vlan exclude") or s == "port trunk allow-pass vlan all":
            all_vlan_ifaces.append((iface, n))
    for name, n in all_vlan_ifaces:  # a peer-link carries every VLAN but the excluded ones
        for v in sorted(vlans):
            g.edge(("if", device, name), ("vlan", device, v), (rel, n))
    _check_acls(rel, device, acls, uses, snmp, pools, report)
    return fold


def _vlan_list(text: str) -> set[int]:
    out: set[int] = set()
    words = text.split()
    i = 0
    while i < len(words):
        if not words[i].isdigit():
            i += 1
            continue
        if i + 2 < len(words) and words[i + 1] == "to" and words[i + 2].isdigit():
            out |= set(range(int(words[i]), int(words[i + 2]) + 1))
            i += 3
        else:
            out.add(int(words[i]))
            i += 1
    return out


def _check_acls(rel, device, acls, uses, snmp, pools, report: Report) -> None:
    mgmt = [pools[p] for p in MANAGEMENT if p in pools]
    for what in ("ssh server acl", "vty acl") + (("snmp-agent acl",) if snmp else ()):
        if not uses[what]:
            report.problems.append(
                Problem(rel, 1, f"{device}: no `{what}`; management access is not restricted")
            )
    for ref in ("@ssh", "@snmp", "@vty"):
        for n, number in acls.get(ref, []):
            rules = acls.get(number)
            if not rules:
                report.problems.append(Problem(rel, n, f"ACL {number} is referenced but empty"))
                continue
            for rn, rule in rules:
                if " permit" not in f" {rule}":
                    continue
                m = re.search(r"\bsource (\S+)(?: (\S+))?", rule)
                if not m or m.group(1) == "any":
                    report.problems.append(
                        Problem(rel, rn, f"ACL {number} permits any source: {rule!r}")
                    )
                    continue
                wildcard = m.group(2) or "0"
                try:
                    if wildcard == "0":
                        wildcard = "0.0.0.0"
                    host = int(ipaddress.ip_address(m.group(1)))
                    wild = int(ipaddress.ip_address(wildcard))
                    lo = ipaddress.ip_address(host & ~wild & 0xFFFFFFFF)
                    hi = ipaddress.ip_address(host | wild)
                except ValueError:
                    report.problems.append(Problem(rel, rn, f"ACL {number}: unreadable {rule!r}"))
                    continue
                if not any(lo in pool and hi in pool for pool in mgmt):
                    report.problems.append(
                        Problem(
                            rel,
                            rn,
                            f"ACL {number} permits {m.group(1)} {wildcard}, outside the "
                            f"management pools ({', '.join(map(str, mgmt))}): {rule!r}",
                        )
                    )


def _parse_hccn(g: _Graph, folder: Path, path: Path) -> None:
    rel = _rel(folder, path)
    host = path.stem
    values: dict[tuple[str, int], tuple[str, int]] = {}
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        m = re.fullmatch(r"(address|netmask|gateway)_(\d+)=(\S+)", line.strip())
        if m:
            values[(m.group(1), int(m.group(2)))] = (m.group(3), n)
    for (key, i), (address, n) in sorted(values.items()):
        if key != "address":
            continue
        mask = values.get(("netmask", i), ("255.255.255.255", n))[0]
        node = ("if", host, f"npu{i}")
        g.edge(node, ("net", str(_net(address, mask))), (rel, n))
        if ("gateway", i) in values:
            gw, gn = values[("gateway", i)]
            _gateway(g, node, address, mask, gw, (rel, gn))


def _gateway(g: _Graph, node: tuple, address: str, prefix, gw: str, where) -> None:
    """A gateway outside the interface's own subnet is a route into wherever it points."""
    if ipaddress.ip_address(gw) not in _net(address, prefix):
        g.edge(node, ("net", f"{gw}/32"), where)


def _parse_hosts(g: _Graph, folder: Path, hostvars: dict[str, dict]) -> dict[str, str]:
    """Host interfaces from hosts.yml; returns (host, port) -> logical interface (bonds)."""
    fold: dict[str, str] = {}
    lines = _host_line(folder)
    for host, hv in sorted(hostvars.items()):
        where = ("hosts.yml", lines.get(host, 1))
        if addr := hv.get("inband_address"):
            node = ("if", host, "mgmt0")
            ip, _, prefix = addr.partition("/")
            g.edge(node, ("net", str(_net(ip, prefix or 32))), where)
            if gw := hv.get("inband_gateway"):
                _gateway(g, node, ip, prefix or 32, gw, where)
        if addr := hv.get("bmc_address"):
            ip, _, prefix = str(addr).partition("/")
            g.edge(("if", host, "bmc"), ("net", str(_net(ip, prefix or 32))), where)
        for nic in hv.get("storage_nics") or []:
            node = ("if", host, nic["port"])
            ip, _, prefix = nic["address"].partition("/")
            g.edge(node, ("net", str(_net(ip, prefix or 32))), where)
            if nic.get("gateway"):
                _gateway(g, node, ip, prefix or 32, nic["gateway"], where)
        if bond := hv.get("business_bond"):
            node = ("if", host, bond["name"])
            ip, _, prefix = bond["address"].partition("/")
            g.edge(node, ("net", str(_net(ip, prefix or 32))), where)
            if bond.get("gateway"):
                _gateway(g, node, ip, prefix or 32, bond["gateway"], where)
            for member in bond.get("members") or []:
                fold[f"{host}\0{member}"] = bond["name"]
                g.edge(("if", host, member), node, where)
    return fold


def _parse_cabling(g: _Graph, folder: Path, fold: dict[str, str]) -> None:
    path = folder / "files" / "cabling.csv"
    rel = _rel(folder, path)
    with path.open(encoding="utf-8", newline="") as fh:
        for n, row in enumerate(csv.DictReader(fh), 2):
            a = (
                "if",
                row["a_device"],
                fold.get(f"{row['a_device']}\0{row['a_port']}", row["a_port"]),
            )
            b = (
                "if",
                row["b_device"],
                fold.get(f"{row['b_device']}\0{row['b_port']}", row["b_port"]),
            )
            g.edge(a, b, (rel, n))


# ---------------------------------------------------------------------------------------------
# checks


def _isolation(g: nx.Graph, pools: dict, firewalls: set[str], report: Report) -> None:
    plane_of = {}
    nets = {}
    for node in list(g.nodes):
        if node[0] == "net":
            net = ipaddress.ip_network(node[1])
            nets[net] = node
            plane_of[node] = _plane(net, pools) or "outside every pool"
    for net, node in nets.items():  # a host address or gateway lies in a subnet a switch serves
        if net.prefixlen == 32:
            for length in range(31, 7, -1):
                outer = nets.get(net.supernet(new_prefix=length))
                if outer is not None:
                    where = next(iter(g.edges(node, data="where")))[2]
                    g.add_edge(node, outer, where=where)
                    break
    for component in nx.connected_components(g):
        by_plane: dict[str, list[tuple]] = {}
        for node in sorted(n for n in component if n in plane_of):
            by_plane.setdefault(plane_of[node], []).append(node)
        fw_ports = sorted(n for n in component if n[0] == "if" and n[1] in firewalls)
        allowed = ", ".join(sorted(GATEWAY_PLANES))
        for plane in sorted(set(by_plane) - GATEWAY_PLANES) if fw_ports else ():
            path = nx.shortest_path(g, fw_ports[0], by_plane[plane][0])
            reason = f"firewall {fw_ports[0][1]} faces the {plane} plane (only {allowed})"
            report.problems.append(_path_problem(g, path, plane_of, reason))
        planes = sorted(by_plane)
        for other in planes[1:]:
            first = planes[0]
            # walk from the plane with more subnets here into the one with fewer (the intruder)
            home, intruder = (
                (first, other) if len(by_plane[first]) >= len(by_plane[other]) else (other, first)
            )
            path = nx.shortest_path(g, by_plane[home][0], by_plane[intruder][0])
            reason = f"the {first} and {other} planes reach one another"
            report.problems.append(_path_problem(g, path, plane_of, reason))


def _path_problem(g: nx.Graph, path: list, plane_of: dict, reason: str) -> Problem:
    """Name the file and line of the step where the path first enters the last plane."""
    steps = []
    for a, b in itertools.pairwise(path):
        file, line = g.edges[a, b]["where"]
        steps.append(f"{_name(a)} -> {_name(b)}  ({file}:{line})")
    target = plane_of.get(path[-1])
    culprit = None
    for i, node in enumerate(path):
        if i and plane_of.get(node) == target:
            for a, b in reversed(list(itertools.pairwise(path[: i + 1]))):
                where = g.edges[a, b]["where"]
                if where[0] != "files/cabling.csv" or culprit is None:
                    culprit = where
                if where[0] != "files/cabling.csv":
                    break
            break
    file, line = culprit or g.edges[path[0], path[1]]["where"]
    return Problem(file, line, reason, tuple(steps))


def _secrets(folder: Path, rel: str, text: str, report: Report) -> None:
    for n, line in enumerate(text.splitlines(), 1):
        for default in KNOWN_DEFAULTS:
            if default in line:
                report.problems.append(Problem(rel, n, "a well-known default secret in clear"))
        if line.startswith("ssh server cipher"):
            continue
        for value in SECRET.findall(line):
            if not VAULT.fullmatch(value):
                report.problems.append(Problem(rel, n, f"secret in clear: {line.strip()!r}"))
        if NFS.search(line):
            report.problems.append(Problem(rel, n, f"NFS mount or export: {line.strip()!r}"))
    if rel.startswith("files/switches/") and rel.endswith(".yml"):
        for key, value in _secret_values(yaml.safe_load(text)):
            if not (isinstance(value, str) and VAULT.fullmatch(value)):
                report.problems.append(Problem(rel, 1, f"{key} in clear"))


def _secret_values(data, key=""):
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _secret_values(v, str(k))
    elif isinstance(data, list):
        for v in data:
            yield from _secret_values(v, key)
    elif SECRET_KEY.search(key):
        yield key, data


# ---------------------------------------------------------------------------------------------


def verify(folder: Path) -> Report:
    """Every check over one output folder. Raises NotAnOutput for a folder wanka did not write."""
    folder = Path(folder)
    needed = (MARKER, "hosts.yml", "group_vars/all.yml", "files/cabling.csv")
    if not folder.is_dir() or not all((folder / p).is_file() for p in needed):
        raise NotAnOutput(f"{folder} is not a wanka output folder (needs {', '.join(needed)})")
    report = Report()
    pools = _pools(folder)
    hostvars, groups = _hosts(folder)
    firewalls = groups.get("firewalls", set())
    g = _Graph()
    fold: dict[str, str] = {}
    for path in sorted((folder / "files" / "switches").glob("*.cfg")):
        report.switches += 1
        for port, logical in _parse_switch(g, folder, path, report, pools).items():
            fold[f"{path.stem}\0{port}"] = logical
    for path in sorted((folder / "files" / "hccn").glob("*.conf")):
        _parse_hccn(g, folder, path)
    fold |= _parse_hosts(g, folder, hostvars)
    report.hosts = len(hostvars)
    _parse_cabling(g, folder, fold)
    _isolation(g.g, pools, firewalls, report)
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        _secrets(folder, _rel(folder, path), text, report)
    report.nodes, report.edges = g.g.number_of_nodes(), g.g.number_of_edges()
    return report
