"""Reading a rendered output folder into a networkx graph of interfaces, VLANs, VRFs and subnets.

Nodes: ("vrf", device, vrf), ("if", device, interface), ("vlan", device, id), ("net", cidr).
Edges come from interface addresses, VLAN membership, Eth-Trunk/bond membership and cables;
each keeps the file and line it came from.
"""

from __future__ import annotations

import csv
import functools
import io
import ipaddress
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import networkx as nx
import yaml

from generator.blueprint.readfile import ReadRefused, read_regular
from generator.verify.report import NotAnOutput

T = TypeVar("T")

# Safe reading. An output folder may be damaged or hostile: a FIFO or device where a file should
# be, bytes that are not UTF-8, YAML that does not parse or expands through aliases (wanka never
# writes anchors), values that are not addresses, CSV columns renamed. Every reader goes through
# `file_text`/`file_yaml`, and `located` turns what a reader raises on bad data into one `Damaged`
# error naming the file (and the line, where the reader numbers its lines `n`).
MAX_FILE_BYTES = 256 * 1024 * 1024


class Damaged(NotAnOutput):
    """A file in the folder cannot be read as wanka writes it; the message is located."""


class NotText(Damaged):
    """A file that is not UTF-8 text."""


def file_text(folder: Path, path: Path) -> str:
    """A regular file of at most MAX_FILE_BYTES as UTF-8; Damaged otherwise (never blocks)."""
    try:
        raw = read_regular(path, MAX_FILE_BYTES)
    except ReadRefused as refused:
        raise Damaged(f"{rel(folder, path)}: {refused.message}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise NotText(
            f"{rel(folder, path)}:{line}: byte 0x{raw[error.start]:02x} is not UTF-8"
        ) from None


def file_yaml(folder: Path, path: Path) -> Any:
    """A YAML file's data; Damaged for a syntax error, an alias, or nesting too deep."""
    return yaml_text(rel(folder, path), file_text(folder, path))


def yaml_text(where: str, text: str) -> Any:
    """YAML text's data (`where` names it in errors); Damaged for a syntax error, an alias
    (an alias bomb would make every walk over the data exponential), or nesting too deep."""
    loader = yaml.SafeLoader(text)  # pure Python: deep nesting raises instead of crashing libyaml
    try:
        node = loader.get_single_node()
        if node is not None and _has_alias(node):
            raise Damaged(f"{where}: uses YAML aliases, which wanka never writes")
        return None if node is None else loader.construct_document(node)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = f"{mark.line + 1}:{mark.column + 1}:" if mark else ""
        raise Damaged(f"{where}:{line} invalid YAML: {error.problem or error}") from None
    except (yaml.YAMLError, RecursionError) as error:
        raise Damaged(f"{where}: invalid YAML: {type(error).__name__}") from None
    finally:
        loader.dispose()


def _has_alias(root: yaml.Node) -> bool:
    """True when a node is reached twice (an alias), walking without recursion."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            return True
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            stack.extend(n for pair in node.value for n in pair)
    return False


_DATA_ERRORS = (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError)


def located(file: str = "") -> Callable[[Callable[..., T]], Callable[..., T]]:
    """A reader `reader(..., folder, [path], ...)` of `file` (default: its path argument) with
    bad data reported as Damaged at its file and line."""

    def wrap(reader: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(reader)
        def read(*args: Any, **kwargs: Any) -> T:
            try:
                return reader(*args, **kwargs)
            except Damaged:
                raise
            except _DATA_ERRORS as error:
                where = _where(reader, file, args, error.__traceback__)
                raise Damaged(where + _say(error)) from None

        return read

    return wrap


def _where(reader: Callable, file: str, args: tuple, tb: TracebackType | None) -> str:
    """`file:line: ` of the failing read, from the reader's own locals where it has them: `where`
    as a file name or (file, line), and the line number `n`; else the path argument."""
    paths = [a for a in args if isinstance(a, Path)]
    file = file or (rel(paths[0], paths[1]) if len(paths) > 1 else reader.__name__)
    line = None
    while tb is not None:
        if tb.tb_frame.f_code is reader.__code__:
            names = tb.tb_frame.f_locals
            where, n = names.get("where"), names.get("n")
            file, line = where if isinstance(where, tuple) else (where or file, n)
        tb = tb.tb_next
    return f"{file}:{line}: " if isinstance(line, int) else f"{file}: "


def _say(error: BaseException) -> str:
    if isinstance(error, KeyError):
        return f"missing {error.args[0]!r} (a column or key wanka writes); damaged or not ours"
    return f"cannot read it: {error}"


PLANES = ("parameter", "storage", "business", "inband", "oob")
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


def rel(folder: Path, path: Path) -> str:
    return path.relative_to(folder).as_posix()


class Graph:
    def __init__(self) -> None:
        self.g = nx.Graph()

    def edge(self, a: tuple, b: tuple, where: tuple[str, int]) -> None:
        if not self.g.has_edge(a, b):
            self.g.add_edge(a, b, where=where)


def network(address: str, prefix: int | str) -> ipaddress.IPv4Network:
    return ipaddress.ip_interface(f"{address}/{prefix}").network


@located("group_vars/all.yml")
def pools(folder: Path) -> dict[str, ipaddress.IPv4Network]:
    data = file_yaml(folder, folder / "group_vars" / "all.yml") or {}
    return {p: ipaddress.ip_network(data["pools"][p]) for p in PLANES if p in data.get("pools", {})}


@located("hosts.yml")
def hosts(folder: Path) -> tuple[dict[str, dict], dict[str, set[str]]]:
    """host -> vars, group -> hosts (recursively), from hosts.yml."""
    data = file_yaml(folder, folder / "hosts.yml") or {}
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
    for n, line in enumerate(file_text(folder, folder / "hosts.yml").splitlines(), 1):
        m = re.match(r"\s+([A-Za-z0-9_.-]+):\s*\{", line)
        if m:
            lines.setdefault(m.group(1), n)
    return lines


@located()
def switch(g: Graph, folder: Path, path: Path) -> tuple[dict[str, str], Access]:
    """Add one switch config to the graph; returns physical port -> logical interface and how
    the switch restricts management access."""
    where = rel(folder, path)
    device = path.stem
    text = file_text(folder, path)
    lines = text.splitlines()
    fold: dict[str, str] = {}
    vlans: set[int] = set()
    iface: str | None = None
    vrf = DEFAULT_VRF
    all_vlan_ifaces: list[tuple[str, int]] = []
    access = Access(where, device)
    acls, uses = access.acls, access.uses
    acl: str | None = None
    in_vty = False
    for n, line in enumerate(lines, 1):
        s = line.strip()
        if m := re.match(r"vlan batch (.+)", s):
            vlans |= _vlan_list(m.group(1))
        if not line.startswith(" "):
            iface, acl, in_vty = None, None, False
            if m := re.match(r"interface (\S+)", line):
                iface, vrf = m.group(1), DEFAULT_VRF
                if v := re.fullmatch(r"Vlanif(\d+)", iface):
                    g.edge(("if", device, iface), ("vlan", device, int(v.group(1))), (where, n))
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
                access.snmp = True
            elif line.startswith("telnet server enable"):
                access.telnet.append(n)
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
            net = network(m.group(1), prefix)
            g.edge(node, ("net", str(net)), (where, n))
            g.edge(node, ("vrf", device, vrf), (where, n))
        elif m := re.match(r"eth-trunk (\d+)", s):
            fold[iface] = f"Eth-Trunk{m.group(1)}"
            g.edge(node, ("if", device, f"Eth-Trunk{m.group(1)}"), (where, n))
        elif m := re.match(
            r"port (?:default|hybrid (?:untagged|tagged)|trunk (?:allow-pass|pvid)) vlan (.+)", s
        ):
            for v in _vlan_list(m.group(1)):
                g.edge(node, ("vlan", device, v), (where, n))
        elif s.startswith("port vlan exclude") or s == "port trunk allow-pass vlan all":
            all_vlan_ifaces.append((iface, n))
    for name, n in all_vlan_ifaces:  # a peer-link carries every VLAN but the excluded ones
        for v in sorted(vlans):
            g.edge(("if", device, name), ("vlan", device, v), (where, n))
    return fold, access


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
        g.edge(node, ("net", str(network(address, mask))), (where, n))
        if ("gateway", i) in values:
            gw, gn = values[("gateway", i)]
            gateway(g, node, address, mask, gw, (where, gn))


def gateway(g: Graph, node: tuple, address: str, prefix, gw: str, where) -> None:
    """A gateway outside the interface's own subnet is a route into wherever it points."""
    if ipaddress.ip_address(gw) not in network(address, prefix):
        g.edge(node, ("net", f"{gw}/32"), where)


@located()
def host_interfaces(g: Graph, folder: Path, hostvars: dict[str, dict]) -> dict[str, str]:
    """Host interfaces from hosts.yml; returns (host, port) -> logical interface (bonds)."""
    fold: dict[str, str] = {}
    lines = _host_line(folder)
    for host, hv in sorted(hostvars.items()):
        where = ("hosts.yml", lines.get(host, 1))
        if addr := hv.get("inband_address"):
            node = ("if", host, "mgmt0")
            ip, _, prefix = addr.partition("/")
            g.edge(node, ("net", str(network(ip, prefix or 32))), where)
            if gw := hv.get("inband_gateway"):
                gateway(g, node, ip, prefix or 32, gw, where)
        if addr := hv.get("bmc_address"):
            ip, _, prefix = str(addr).partition("/")
            g.edge(("if", host, "bmc"), ("net", str(network(ip, prefix or 32))), where)
        for nic in hv.get("storage_nics") or []:
            node = ("if", host, nic["port"])
            ip, _, prefix = nic["address"].partition("/")
            g.edge(node, ("net", str(network(ip, prefix or 32))), where)
            if nic.get("gateway"):
                gateway(g, node, ip, prefix or 32, nic["gateway"], where)
        if bond := hv.get("business_bond"):
            node = ("if", host, bond["name"])
            ip, _, prefix = bond["address"].partition("/")
            g.edge(node, ("net", str(network(ip, prefix or 32))), where)
            if bond.get("gateway"):
                gateway(g, node, ip, prefix or 32, bond["gateway"], where)
            for member in bond.get("members") or []:
                fold[f"{host}\0{member}"] = bond["name"]
                g.edge(("if", host, member), node, where)
    return fold


@located()
def cabling(g: Graph, folder: Path, fold: dict[str, str]) -> None:
    path = folder / "files" / "cabling.csv"
    where = rel(folder, path)
    with io.StringIO(file_text(folder, path), newline="") as fh:
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
            g.edge(a, b, (where, n))
