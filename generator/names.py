"""One namespace of names (issue #31 item 4): every device and every inventory group of a
cluster, where they come from, and the check that they are unique and usable everywhere.

The inventory's groups are derived here (generator/artifacts/inventory.py writes them), so the
check sees exactly the names hosts.yml will hold. A device and a group share Ansible's one
namespace of names: a host named like a group, or two sources of one group, silently merge
(a management node lands in a switch group, host_vars files overwrite each other).

What each consumer accepts, and so what a name must be:
- Device names are DNS labels that start with a letter: Kubernetes node names are RFC 1123 DNS
  subdomains (a label is one); Slurm reads `,` `[` `]` in a node list as hostlist syntax
  (`tux[0-5,12]`, slurm_hostlist_create(3)), which a label cannot hold; the CE `sysname` takes
  1 to 246 characters (sysname (System view), CE6800 V300R023C00 command reference), more than
  a label's 63; and Ansible's YAML inventory reads a host key of digits only as an integer, and
  a host range with nothing before the digits (`[01:16]`) as a YAML list, so the first character
  is a letter (RFC 952's rule for host names).
- Group names are valid Ansible group names: ansible-core refuses (or rewrites, under
  TRANSFORM_INVALID_GROUP_CHARS) a name matching `^[\\d\\W]|[^\\w]` (ansible/constants.py
  INVALID_VARIABLE_NAMES, used by ansible/inventory/group.py to_safe_group_name).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping

from generator.errors import Problem, YamlPath, format_path
from generator.model import Cluster
from generator.vocab import DomainKind, Plane, Role

SWITCH_GROUP = {  # (plane, role) -> group
    (Plane.PARAMETER, Role.LEAF): "parameter_leaves",
    (Plane.PARAMETER, Role.SPINE): "parameter_spines",
    (Plane.PARAMETER, Role.CORE): "parameter_cores",
    (Plane.STORAGE, Role.LEAF): "storage_leaves",
    (Plane.STORAGE, Role.SPINE): "storage_spines",
    (Plane.STORAGE, Role.CORE): "storage_cores",
    (Plane.BUSINESS, Role.LEAF): "business_leaves",
    (Plane.BUSINESS, Role.SPINE): "business_spines",
    (Plane.INBAND, Role.ACCESS): "inband_access",
    (Plane.INBAND, Role.CORE): "inband_cores",
    (Plane.OOB, Role.ACCESS): "oob_access",
    (Plane.OOB, Role.CORE): "oob_cores",
    (Plane.BORDER, Role.BORDER_ROUTER): "border_routers",
    (Plane.BORDER, Role.FIREWALL): "firewalls",
}
HOST_GROUP = {
    Role.NPU_SERVER: "npu_servers",
    Role.STORAGE_NODE: "storage_nodes",
    Role.MANAGEMENT_NODE: "management_nodes",
}
PARENTS = {
    "switches": [*dict.fromkeys(SWITCH_GROUP.values())],
    "parameter_switches": ["parameter_leaves", "parameter_spines", "parameter_cores"],
    "storage_switches": ["storage_leaves", "storage_spines", "storage_cores"],
    "business_switches": ["business_leaves", "business_spines"],
    "management_switches": ["inband_access", "inband_cores", "oob_access", "oob_cores"],
    "border": ["border_routers", "firewalls"],
}
ANSIBLE_GROUPS = ("all", "ungrouped")  # every inventory has them (Ansible's implicit groups)
DEVICE_NAME = re.compile(r"[a-z]([a-z0-9-]{0,61}[a-z0-9])?")
GROUP_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")  # not ^[\d\W]|[^\w]
_HOSTNAME: YamlPath = ("compute", "hostname")
_ROLES: YamlPath = ("zones", "management", "nodes")


def group_name(text: str) -> str:
    """A valid Ansible group name: lower case, letters, digits and '_'."""
    return re.sub(r"[^a-z0-9_]", "_", text.lower())


def role_of(management_node: str) -> str:
    """The management role a node is named after (`controller-01` -> `controller`)."""
    return management_node.rsplit("-", 1)[0]


def groups(cluster: Cluster) -> dict[str, list[str]]:
    """Every group and its hosts (membership only), in a stable order."""
    return {name: hosts for name, (hosts, _) in _sourced_groups(cluster).items()}


def _sourced_groups(cluster: Cluster) -> dict[str, tuple[list[str], set[tuple[str, YamlPath]]]]:
    """Every group: its hosts, and where its name came from (owner words, blueprint key)."""
    g: dict[str, tuple[list[str], set]] = defaultdict(lambda: ([], set()))

    def add(group: str, host: str, owner: str, key: YamlPath = ()) -> None:
        g[group][0].append(host)
        g[group][1].add((owner, key))

    for d in cluster.devices:
        if d.plane:
            fixed = SWITCH_GROUP.get((d.plane, d.role))
            add(fixed or group_name(f"{d.plane}_{d.role}"), d.name, "a switch group of wanka's")
        else:
            add(HOST_GROUP[d.role], d.name, "a host group of wanka's")
            if d.role == Role.MANAGEMENT_NODE:
                role = role_of(d.name)
                add(group_name(role), d.name, f"management role {role}", (*_ROLES, role))
        add(group_name(f"rack_{d.rack}"), d.name, f"the group of rack {d.rack}")
    zone_of = {r.name: r.zone for r in cluster.racks}
    for d in cluster.devices:
        add(f"zone_{zone_of[d.rack]}", d.name, f"the group of zone {zone_of[d.rack]}")
    for s in cluster.npu_servers:
        for leaf in s.leaves:
            add(group_name(f"leaf_{leaf}"), s.name, f"the group of leaf {leaf}")
        supernode = s.domain(DomainKind.SUPERNODE)
        if supernode is not None:
            add(group_name(supernode.name), s.name, f"the group of supernode {supernode.name}")
    return g


def _device_owner(name: str, role: str, plane: str) -> tuple[str, YamlPath]:
    if role == Role.NPU_SERVER:
        return f"NPU server {name} (compute.hostname)", _HOSTNAME
    if role == Role.MANAGEMENT_NODE:
        key = (*_ROLES, role_of(name))
        return f"management node {name} ({format_path(key)})", key
    if role == Role.STORAGE_NODE:
        return f"storage node {name} (named by wanka)", ()
    return f"{plane} {role} {name} (named by wanka)", ()


def _named(cluster: Cluster) -> Iterator[tuple[bool, str, str, YamlPath]]:
    """Every name of the namespace once per owner: (is a device, name, owner, blueprint key)."""
    for d in cluster.devices:
        yield (True, d.name, *_device_owner(d.name, d.role, d.plane))
    fixed = [*ANSIBLE_GROUPS, *PARENTS, *SWITCH_GROUP.values(), *HOST_GROUP.values()]
    for name in dict.fromkeys(fixed):
        words = "Ansible's implicit group" if name in ANSIBLE_GROUPS else "wanka's group"
        yield False, name, f"{words} {name}", ()
    for name, (_, sources) in sorted(_sourced_groups(cluster).items()):
        for owner, key in sorted(sources):
            if not owner.startswith(("a switch group", "a host group")):  # the fixed ones
                yield False, name, f"{owner} (group {name})", key


def name_problems(cluster: Cluster) -> list[Problem]:
    """Every device name a host name every consumer reads, every group name a valid Ansible
    group name, and no name given twice across devices and groups; each problem at the
    blueprint key to change (once per key), naming both owners of a collision."""
    return _problems(_named(cluster))


def host_name_problems(hosts: Mapping[str, Iterable[str]]) -> list[Problem]:
    """The same check on the hosts alone ({role: names}), as soon as they are named: expand
    keys its records by name, so two hosts of one name would end in a KeyError before the
    cluster exists."""
    return _problems(
        (True, n, *_device_owner(n, role, "")) for role, ns in hosts.items() for n in ns
    )


def _problems(named: Iterable[tuple[bool, str, str, YamlPath]]) -> list[Problem]:
    problems: list[Problem] = []
    first: dict[str, tuple[bool, str, YamlPath]] = {}
    reported: set[YamlPath] = set()

    def report(key: YamlPath, message: str, hint: str) -> None:
        if key not in reported or not key:
            reported.add(key)
            problems.append(Problem(key, message, hint))

    for device, name, owner, key in named:
        if device and not DEVICE_NAME.fullmatch(name):
            report(
                key,
                f"{owner} is not a host name every consumer reads: a host name starts with a "
                "letter, then lower-case letters, digits and '-' (not last), at most 63 "
                "characters (Ansible inventory, Kubernetes node, Slurm node, switch sysname)",
                'e.g. "npu-{index:04d}"' if key == _HOSTNAME else "start it with a letter",
            )
        elif not device and not GROUP_NAME.fullmatch(name):
            report(
                key,
                f"{owner} is not a valid Ansible group name (letters, digits and '_', not "
                "starting with a digit)",
                "start the name with a letter",
            )
        if name in first:
            was_device, other, other_key = first[name]
            if device or was_device or other != owner:
                where = key or other_key
                report(
                    where,
                    f"{name!r} is both {other} and {owner}: Ansible has one namespace for hosts "
                    "and groups, so one would overwrite or join the other",
                    f"change {format_path(where)} so its names are its own"
                    if where
                    else "rename one of them",
                )
            continue
        first[name] = (device, owner, key)
    return problems
