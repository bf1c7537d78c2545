"""Reading the inventory of an output folder: groups from hosts.yml (host ranges expanded), each
host's variables from host_vars/, and the host interfaces they put into the verify graph."""

from __future__ import annotations

import re
from pathlib import Path

from generator.verify import safe
from generator.verify.read import Graph, gateway, network
from generator.verify.safe import file_text, file_yaml, located, rel, yaml_text

Lines = dict[str, tuple[str, dict[str, int]]]  # host -> (host_vars file, key -> line)
HOST_RANGE = re.compile(r"^(.*)\[(\d+):(\d+)\](.*)$")


def expand_hosts(pattern: str) -> list[str]:
    """The hosts of an inventory host line: `npu-[0001:0016]` is npu-0001 .. npu-0016 (Ansible's
    numeric host range: bounds inclusive, a leading zero keeps the width), else one host."""
    m = HOST_RANGE.match(pattern)
    if not m:
        return [pattern]
    head, first, last, tail = m.groups()
    width = len(first) if first.startswith("0") else 0
    return [f"{head}{n:0{width}d}{tail}" for n in range(int(first), int(last) + 1)]


def var_files(folder: Path, host: str, names: set[str]) -> list[Path]:
    """host_vars/<host>.yml (or .yaml, or a folder of them, as Ansible reads host_vars/);
    `names`: the entries of host_vars/."""
    if host in names and not safe.is_file(folder, f"host_vars/{host}"):
        return [p for p in safe.walk(folder, f"host_vars/{host}") if p.suffix in (".yml", ".yaml")]
    return [folder / "host_vars" / n for n in (host + ".yml", host + ".yaml") if n in names]


@located("hosts.yml")
def hosts(folder: Path) -> tuple[dict[str, dict], dict[str, set[str]], Lines]:
    """host -> vars (hosts.yml, then host_vars/<host>.yml over them), group -> hosts
    (recursively, through children defined anywhere), from hosts.yml; and where each host's
    variables are set (its host_vars file and the line of each top-level key)."""
    data = file_yaml(folder, folder / "hosts.yml") or {}
    hostvars: dict[str, dict] = {}
    lines: Lines = {}
    direct: dict[str, set[str]] = {}
    children: dict[str, set[str]] = {}

    def walk(name: str, group: dict) -> None:
        group = group if isinstance(group, dict) else {}
        for line, hv in (group.get("hosts") or {}).items():
            for host in expand_hosts(str(line)):
                hostvars.setdefault(host, {}).update(hv or {})
                direct.setdefault(name, set()).add(host)
        for child, sub in (group.get("children") or {}).items():
            children.setdefault(name, set()).add(child)
            walk(child, sub or {})

    for name, group in data.items():
        walk(name, group or {})
    names = {p.name for p in safe.listing(folder, "host_vars", folders=True)}
    for host, values in hostvars.items():
        for path in var_files(folder, host, names):  # each a fast (libyaml) load: 2k hosts in < 1 s
            text = file_text(folder, path)
            values.update(_mapping(folder, path, text))
            if host not in lines:  # the first file of a host_vars folder locates its keys
                keys = {
                    k.split(":", 1)[0]: n
                    for n, k in enumerate(text.splitlines(), 1)
                    if k[:1].isalpha()
                }
                lines[host] = (rel(folder, path), keys)
    groups: dict[str, set[str]] = {}

    def resolve(name: str, seen: frozenset = frozenset()) -> set[str]:
        if name not in groups:
            members = set(direct.get(name, ()))
            for child in children.get(name, ()):
                if child not in seen:
                    members |= resolve(child, seen | {name})
            groups[name] = members
        return groups[name]

    for name in set(direct) | set(children):
        resolve(name)
    return hostvars, groups, lines


@located()
def _mapping(folder: Path, path: Path, text: str) -> dict:
    data = yaml_text(rel(folder, path), text) or {}
    if not isinstance(data, dict):
        raise TypeError("host variables are not a mapping")
    return data


@located()
def host_interfaces(g: Graph, hostvars: dict[str, dict], lines: Lines) -> dict[str, str]:
    """Host interfaces from the host variables; returns (host, port) -> logical interface (bonds)."""
    fold: dict[str, str] = {}
    for host, hv in sorted(hostvars.items()):
        path, keys = lines.get(host, ("hosts.yml", {}))
        where = (path, keys.get("inband_address", 1))
        if addr := hv.get("inband_address"):
            node = ("if", host, "mgmt0")
            ip, _, prefix = addr.partition("/")
            g.edge(node, ("net", (network(ip, prefix or 32))), where)
            if gw := hv.get("inband_gateway"):
                gateway(g=g, node=node, address=ip, prefix=prefix or 32, gw=gw, where=where)
        if addr := hv.get("bmc_address"):
            where = (path, keys.get("bmc_address", 1))
            ip, _, prefix = str(addr).partition("/")
            g.edge(("if", host, "bmc"), ("net", (network(ip, prefix or 32))), where)
        where = (path, keys.get("storage_nics", 1))
        for nic in hv.get("storage_nics") or []:
            node = ("if", host, nic["port"])
            ip, _, prefix = nic["address"].partition("/")
            g.edge(node, ("net", (network(ip, prefix or 32))), where)
            if nic.get("gateway"):
                gateway(
                    g=g, node=node, address=ip, prefix=prefix or 32, gw=nic["gateway"], where=where
                )
        if bond := hv.get("business_bond"):
            where = (path, keys.get("business_bond", 1))
            node = ("if", host, bond["name"])
            ip, _, prefix = bond["address"].partition("/")
            g.edge(node, ("net", (network(ip, prefix or 32))), where)
            if bond.get("gateway"):
                gateway(
                    g=g, node=node, address=ip, prefix=prefix or 32, gw=bond["gateway"], where=where
                )
            for member in bond.get("members") or []:
                fold[f"{host}\0{member}"] = bond["name"]
                g.edge(("if", host, member), node, where)
    return fold
