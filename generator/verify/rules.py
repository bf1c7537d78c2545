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
from collections import deque

from generator.verify import read, safe
from generator.verify.report import Problem, Report
from generator.verify.vrp import CLEAR, KNOWN_DEFAULTS, SECRET, VAULT, masked
from generator.vocab import Plane

GATEWAY_PLANES = frozenset({Plane.BUSINESS, Plane.INBAND, Plane.OOB, Plane.BORDER})
HOST_GROUPS = ("npu_servers", "storage_nodes", "management_nodes")
REFERENCE = re.compile(r"\{\{ vault_[a-z0-9_]+ \}\}|\$\{[A-Z0-9_]+\}")  # vault or environment
# a YAML key that holds a secret, and its value (block or flow style, quoted or not)
SECRET_ITEM = re.compile(
    r"""["']?([\w-]*(?:password|passwd|secret|community|_key))["']?\s*[:=]\s*("[^"]*"|'[^']*'|\$\{\w+\}|\{\{[^}]*\}\}|[^,}\n]*)"""
)
NFS = re.compile(
    r"(?i)(\bmount\b[^\n]*\bnfs4?\b|\bfstype\W*\s*[:=]\s*\W*nfs4?\b|\btype\W*\s*[:=]\s*\W*nfs4?\b"
    r"|/etc/exports\b|\bexportfs\b|\bnfs-(?:server|kernel-server|utils)\b"
    r"|^\s*\S+:/\S*\s+\S+\s+nfs4?\b|^\s*/\S+\s+\S+\((?:rw|ro)\b)"
)


def _net(text: str) -> tuple[int, int]:
    """A ("net", ...) node's subnet as (network, prefix length)."""
    address, _, plen = text.partition("/")
    return read.ip_int(address), int(plen)


def _planes(pools: dict[str, ipaddress.IPv4Network]):
    """(network, prefix length) -> the plane whose pool holds it, as a fast function."""
    ranges = [
        (int(p.network_address), int(p.broadcast_address), p.prefixlen, n) for n, p in pools.items()
    ]

    def plane(address: int, plen: int) -> str | None:
        for lo, hi, pool_len, name in ranges:
            if plen >= pool_len and lo <= address <= hi:
                return name
        return None

    return plane


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
    for n in access.clear_snmp:
        report.problems.append(Problem(rel, n, "SNMP v1/v2c (community in clear): use SNMPv3"))
    for n, has_acl in access.vty:
        if not has_acl:
            report.problems.append(Problem(rel, n, f"{device}: VTY lines without an inbound ACL"))
    mgmt = [pools[p] for p in Plane if p.is_management and p in pools]
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


def isolation(
    g: read.Graph, pools: dict, firewalls: set[str], report: Report, shared: bool = False
) -> list[set]:
    """Two planes in one connected component is a breach. With `shared` (storage_mode: shared,
    the legacy design) the storage plane is part of the business plane by design. Returns the
    connected components (the routing domains the flow proof walks between)."""
    plane_of = {}
    nets: dict[tuple[int, int], tuple] = {}
    planes = _planes(pools)
    for node in list(g.nodes):
        if node[0] == "net":
            address, plen = _net(node[1])
            nets[(address, plen)] = node
            plane = planes(address, plen) or "outside every pool"
            plane = Plane.BORDER if plane == Plane.PROVIDER else plane  # the routers' hand-off
            plane_of[node] = Plane.BUSINESS if shared and plane == Plane.STORAGE else plane
    for (address, plen), node in list(nets.items()):  # a host address in a served subnet
        if plen == 32:
            for length in range(31, 7, -1):
                outer = nets.get((address & (0xFFFFFFFF << (32 - length) & 0xFFFFFFFF), length))
                if outer is not None:
                    g.edge(node, outer, next(iter(g.adj[node].values())))
                    break
    components = g.components()
    for component in components:
        by_plane: dict[str, list[tuple]] = {}
        for node in sorted(n for n in component if n in plane_of):
            by_plane.setdefault(plane_of[node], []).append(node)
        fw_ports = sorted(n for n in component if n[0] == "if" and n[1] in firewalls)
        allowed = ", ".join(sorted(GATEWAY_PLANES))
        for plane in sorted(set(by_plane) - GATEWAY_PLANES) if fw_ports else ():
            path = g.shortest_path(fw_ports[0], by_plane[plane][0])
            reason = f"firewall {fw_ports[0][1]} faces the {plane} plane (only {allowed})"
            report.problems.append(
                _path_problem(g=g, path=path, plane_of=plane_of, reason=reason, component=component)
            )
        planes = sorted(by_plane)
        for other in planes[1:]:
            first = planes[0]
            # walk from the plane with more subnets here into the one with fewer (the intruder)
            home, intruder = (
                (first, other) if len(by_plane[first]) >= len(by_plane[other]) else (other, first)
            )
            path = g.shortest_path(by_plane[home][0], by_plane[intruder][0])
            reason = f"the {first} and {other} planes reach one another"
            report.problems.append(
                _path_problem(g=g, path=path, plane_of=plane_of, reason=reason, component=component)
            )

    return components


def _labels(g: read.Graph, component, plane_of: dict, home: str | None) -> dict:
    """Each node of the component labelled with the plane of its nearest subnet (ties go to the
    home plane): where the labels change along a path is where it crosses."""
    sources = sorted((n for n in component if n in plane_of), key=lambda n: plane_of[n] != home)
    label = {n: plane_of[n] for n in sources}
    queue = deque(sources)
    while queue:
        node = queue.popleft()
        for nb in g.adj[node]:
            if nb not in label:
                label[nb] = label[node]
                queue.append(nb)
    return label


def _path_problem(g: read.Graph, path: list, plane_of: dict, reason: str, component=()) -> Problem:
    """Name the file and line of the step where the path crosses from one plane into the other
    (a cabling row for a re-cabling, an address or gateway line for a misaddressed port)."""
    steps = []
    for a, b in itertools.pairwise(path):
        file, line = g.adj[a][b]
        steps.append(f"{_name(a)} -> {_name(b)}  ({file}:{line})")
    home = plane_of.get(path[0])
    label = _labels(g, component, plane_of, home) if component else {}
    culprit = None
    for a, b in itertools.pairwise(path):
        if label.get(a) is not None and label.get(a) != label.get(b):
            culprit = g.adj[a][b]
            break
    file, line = culprit or g.adj[path[0]][path[1]]
    return Problem(file, line, reason, tuple(steps))


def routing(r: read.Routing, pools: dict, g: read.Graph, report: Report) -> None:
    """Static routes and BGP peers stay in their plane: a next hop or a peer on another plane's
    address, or a route into another plane from a plane no firewall faces, is a breach."""
    fw_planes: dict[tuple, set[str]] = {}
    planes = _planes(pools)
    ranges = [
        (int(pool.network_address), int(pool.broadcast_address), plane)
        for plane, pool in pools.items()
    ]

    def plane_at(device: str, vrf: str) -> set[str]:
        node = ("vrf", device, vrf)
        if node not in g:
            return set()
        if node not in fw_planes:
            found = set()
            for nb in g.adj[node]:
                for net in g.adj[nb]:
                    if net[0] == "net":
                        p = planes(*_net(net[1]))
                        if p:
                            found.add(p)
            fw_planes[node] = found
        return fw_planes[node]

    for route in r.routes:
        own = plane_at(route.device, route.vrf)
        hop = next((p for lo, hi, p in ranges if lo <= route.next_hop <= hi), None)
        if own and hop and hop not in own:
            report.problems.append(
                Problem(
                    *route.where,
                    f"static route into another plane: {route.network} via "
                    f"{ipaddress.ip_address(route.next_hop)} ({hop} plane) on the "
                    f"{'/'.join(sorted(own))} plane",
                )
            )
            continue
        net = route.network
        dest = planes(int(net.network_address), net.prefixlen) if net.prefixlen else None
        if (
            own
            and not own & GATEWAY_PLANES
            and (route.network.prefixlen == 0 or (dest and dest not in own))
        ):
            report.problems.append(
                Problem(
                    *route.where,
                    f"static route into another plane: {route.network} on the "
                    f"{'/'.join(sorted(own))} plane, which no firewall faces",
                )
            )
    for device, peer, _, where in r.peers:
        own = plane_at(device, read.DEFAULT_VRF)
        try:
            plane = planes(read.ip_int(peer), 32)
        except ValueError:
            continue
        if own and plane and plane not in own:
            report.problems.append(
                Problem(
                    *where, f"BGP peer {peer} is on the {plane} plane, not {'/'.join(sorted(own))}"
                )
            )


def border_cabling(
    cabled: read.Cabling, border: set[str], g: read.Graph, pools: dict, report: Report, shared=False
) -> None:
    """Routers and firewalls are cabled only to one another and to switches of the planes they
    face (business, in-band, out-of-band): a border device on a data plane is a way in."""
    planes: dict[str, set[str]] = {}
    for a, b, line in cabled.rows:
        for dev, other in ((a, b), (b, a)):
            if dev not in border or other in border:
                continue
            if other not in planes:
                planes[other] = _device_planes(g, other, pools)
            bad = planes[other] - GATEWAY_PLANES - ({Plane.STORAGE} if shared else set())
            if bad:
                report.problems.append(
                    Problem(
                        "files/cabling.csv",
                        line,
                        f"{dev} (border) is cabled to {other} on the {'/'.join(sorted(bad))} plane",
                    )
                )


def _device_planes(g: read.Graph, device: str, pools: dict) -> set[str]:
    out = set()
    node = ("vrf", device, read.DEFAULT_VRF)
    for nb in g.adj.get(node, ()):
        for net in g.adj[nb]:
            if net[0] == "net" and (p := _planes(pools)(*_net(net[1]))):
                out.add(p)
    return out


def completeness(
    cabled: read.Cabling, configured: set[str], hosts: set[str], report: Report
) -> None:
    """Every cabled device but the hosts has a configuration; no port is cabled twice."""
    for device, line in sorted(cabled.devices.items(), key=lambda x: x[1]):
        if device not in configured and device not in hosts:
            report.problems.append(
                Problem(
                    "files/cabling.csv",
                    line,
                    f"{device} is cabled but has no configuration "
                    f"(files/switches/{device}.cfg or files/border/{device}.cfg)",
                )
            )
    for device, port, line, first in cabled.twice:
        report.problems.append(
            Problem(
                "files/cabling.csv",
                line,
                f"{device} {port} is cabled twice (first on line {first})",
            )
        )


def settings(folder, data: dict, report: Report) -> None:
    """NFS only in the legacy shared-storage design (whose design checks warn about it)."""
    if data.get("storage_access") == "nfs" and data.get("storage_mode") != "shared":
        text = safe.file_text(folder, folder / "group_vars" / "all.yml")
        line = next(
            (n for n, s in enumerate(text.splitlines(), 1) if s.startswith("storage_access:")), 1
        )
        report.problems.append(
            Problem(
                "group_vars/all.yml",
                line,
                "storage_access: nfs on a dedicated storage plane (DPC only; NFS is the "
                "legacy shared design)",
            )
        )


SCANNED = (".cfg", ".yml", ".yaml", ".sh")
# lines worth a closer look hold one of these words (exact case); the checks below decide
SUSPECT_CFG = ("password", "cipher", "simple", "plain", "community", *KNOWN_DEFAULTS)
SUSPECT_YAML = (
    *("passw", "Passw", "PASSW", "secret", "Secret", "SECRET", "community", "Community"),
    *("_key", "_KEY", "mount", "export", "(rw", "(ro"),
    *("nfs", "nfS", "nFs", "nFS", "Nfs", "NfS", "NFs", "NFS"),
)


def secrets(folder, path, report: Report) -> None:
    """Clear secrets in device configs (CLI forms) and in YAML (secret-named keys); NFS mounts
    or exports in YAML. Free text (descriptions, site names, docs) is not scanned: a word like
    `password` in a site name is not a secret."""
    if path.suffix not in SCANNED:
        return
    try:
        text = safe.file_text(folder, path)
    except safe.NotText:
        return
    rel = read.rel(folder, path)
    secrets_in(rel, text, report)
    templates_in(rel, text, report)


def secrets_in(rel: str, text: str, report: Report) -> None:
    config = rel.endswith(".cfg")
    for n, line in _suspect_lines(text, SUSPECT_CFG if config else SUSPECT_YAML):
        if config:
            s = line.strip()
            if s.startswith(("description ", "sysname ", "ssh server cipher", "header ")):
                continue
            found = [v for v in SECRET.findall(s) if not VAULT.fullmatch(v)]
            if found or CLEAR.search(s) or any(d in s for d in KNOWN_DEFAULTS):
                report.problems.append(Problem(rel, n, f"secret in clear: {masked(s)!r}"))
            continue
        if NFS.search(line):
            report.problems.append(Problem(rel, n, f"NFS mount or export: {line.strip()!r}"))
        for key, value in SECRET_ITEM.findall(line):
            value = value.split(" #")[0].strip().strip("\"'")
            if value and value not in ("null", "~") and not REFERENCE.fullmatch(value):
                report.problems.append(Problem(rel, n, f"{key} in clear"))


TEMPLATE = ("{{", "{%", "{#")  # what starts Jinja2 (an expression, a statement, a comment)
TEMPLATED = ("ansible_python_interpreter:", "ansible_user:", "wanka_files:", "wanka_site_dir:")


def templates_in(rel: str, text: str, report: Report) -> None:
    """Template syntax Ansible would run: in a device configuration anything but a Vault
    placeholder (roles ztp_server/switch_deploy fill only those, plugins/filter/wanka_vault.py);
    in an Ansible variable file (host_vars/, group_vars/) a value not tagged `!unsafe` other
    than the generator's own expressions (generator/artifacts/inventory.py, Template)."""
    variables = rel.startswith(("host_vars/", "group_vars/"))
    if not (rel.endswith(".cfg") or variables):
        return
    for n, line in _suspect_lines(text, TEMPLATE):
        if variables:
            value = line.partition(": ")[2]
            inert = value.startswith("!unsafe ") or line.lstrip().startswith("- !unsafe ")
            if inert or (rel.startswith("group_vars/") and line.startswith(TEMPLATED)):
                continue
        elif not any(t in VAULT.sub("", line) for t in TEMPLATE):
            continue
        report.problems.append(
            Problem(rel, n, f"template syntax Ansible would evaluate: `{line.strip()[:120]}`")
        )


def _suspect_lines(text: str, words: tuple[str, ...]):
    """(line number, line) of each line holding one of `words`, in order: str.find per word
    (C speed) instead of a regular expression over ~50 MB of output at 10,240 cards."""
    starts: set[int] = set()
    for word in words:
        i = text.find(word)
        while i >= 0:
            starts.add(text.rfind("\n", 0, i) + 1)
            end = text.find("\n", i)
            i = text.find(word, end) if end >= 0 else -1
    n, pos = 1, 0
    for start in sorted(starts):
        n += text.count("\n", pos, start)
        pos = start
        end = text.find("\n", start)
        yield n, text[start : end if end >= 0 else len(text)]
