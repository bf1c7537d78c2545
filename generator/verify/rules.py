"""Judging the graph and the files: plane isolation, management access, secrets, NFS.

Firewalls are the only gateways: their interfaces are never joined to one another, and each may
only face the business, in-band or out-of-band plane (or a device without a rendered config, such
as a WAN router). Two planes in one connected component is a breach, reported with the path
between them. Every switch restricts SSH/STelnet, SNMP and the VTY lines with an ACL that only
permits the management pools; no secret is in clear in any file; nothing mounts or exports NFS.
"""

from __future__ import annotations

import ipaddress
import itertools
import re

import networkx as nx

from generator.verify import read
from generator.verify.report import Problem, Report

MANAGEMENT = ("inband", "oob")
GATEWAY_PLANES = frozenset({"business", "inband", "oob"})
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


def check_access(access: read.Access, pools: dict, report: Report) -> None:
    """No telnet; SSH, the VTY lines and SNMP restricted to the management pools."""
    rel, device, acls, uses = access.rel, access.device, access.acls, access.uses
    for n in access.telnet:
        report.problems.append(Problem(rel, n, "telnet server enabled (clear-text access)"))
    mgmt = [pools[p] for p in MANAGEMENT if p in pools]
    for what in ("ssh server acl", "vty acl") + (("snmp-agent acl",) if access.snmp else ()):
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


def isolation(g: nx.Graph, pools: dict, firewalls: set[str], report: Report) -> None:
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


def secrets(rel: str, text: str, report: Report) -> None:
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
        for key, value in _secret_values(read.yaml_text(rel, text)):
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
