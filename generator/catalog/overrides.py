"""Checks of a blueprint's `catalog:` entries, each merged over the shipped model of its name
(generator.catalog.merged_data), before any model is built from them.

Run once the entry's port name patterns expand (generator.blueprint.semantic.catalog_problems
checks those first: a pattern like `{n:999999999d}` must never be formatted). Every problem is at
the YAML path of the value to change, under `catalog.switches.<model>` or
`catalog.servers.<model>`; a value the override does not write is located at the override.

Switches: each port named once over all groups (a group written twice names every port twice),
and the management port not one of the data ports (it is the out-of-band interface, MEth0/0/0
on CE switches: `mgmt_port` in switches.yaml).

Servers: every port name is a Linux interface name, since the host's NICs carry them (ansible
facts, netplan/nmcli, hccn files): at most 15 characters (IFNAMSIZ is 16 with the closing NUL,
man 7 netdevice `char ifr_name[IFNAMSIZ]`, include/uapi/linux/if.h), not empty, not `.` or `..`,
no `/`, `:` or whitespace (the kernel's dev_valid_name, net/core/dev.c, refuses them with
EINVAL); each name used by one port only; an NPU server has npu, business and inband ports
(`NPU_SERVER_ROLES`) and one parameter-plane port per NPU die
(`ports.npu.count` = `npus` x `dies_per_npu`: HCCL gives each device one rank and one device_ip,
rank_table_config_a3.md); and an override of a shipped model's `ports`, which
replaces the whole mapping, keeps every port role the shipped model has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from generator.catalog import port_names, shipped_data
from generator.errors import Problem, YamlPath
from generator.vocab import HostPort, Role

IFNAMSIZ = 16  # include/uapi/linux/if.h; a name is at most IFNAMSIZ - 1 characters
# The port roles every NPU server of a cluster is cabled by (generator.expand.devices
# host_endpoints): without them a plane has no server ports and the expansion cannot wire it.
NPU_SERVER_ROLES = {
    HostPort.NPU: "the parameter plane, one port per NPU die",
    HostPort.BUSINESS: "the business plane (networks.business) bonds them",
    HostPort.INBAND: "the in-band address is HCCL_IF_IP and the rank table's host_ip",
}
_NIC_HINT = (
    "a Linux interface name has 1 to 15 characters, none of them '/', ':' or a space, and is "
    "not '.' or '..' (kernel dev_valid_name, net/core/dev.c; man 7 netdevice); e.g. npu{n}"
)


def switch_problems(name: str, entry: Mapping[str, Any]) -> list[Problem]:
    """The management port is not a data port (port names twice: semantic.catalog_problems)."""
    path: YamlPath = ("catalog", "switches", name)
    mgmt = entry.get("mgmt_port", "MEth0/0/0")
    for index, group in enumerate(entry["ports"]):
        if mgmt in port_names(group):
            return [
                Problem(
                    (*path, "mgmt_port"),
                    f"the management port {mgmt} is also a data port (ports[{index}])",
                    "mgmt_port is the out-of-band interface (MEth0/0/0 on CE switches), not a "
                    "panel port: name that interface, or leave it out of ports",
                )
            ]
    return []


def server_problems(name: str, entry: Mapping[str, Any]) -> list[Problem]:
    """Port names, the NPU port count, and roles a partial ports override would drop."""
    path: YamlPath = ("catalog", "servers", name)
    problems = _dropped_roles(name, entry)
    owner: dict[str, str] = {}
    for role, ports in entry["ports"].items():
        where = (*path, "ports", role, "name")
        names = [ports.get("name", role + "{n}").format(n=n) for n in range(ports["count"])]
        bad = next(((n, why) for n in names if (why := nic_name_problem(n))), None)
        if bad:
            problems.append(
                Problem(where, f"{bad[0]!r} is not a Linux interface name: {bad[1]}", _NIC_HINT)
            )
            continue
        twice = next((n for n in names if n in owner), None)
        if twice is None:
            twice = next((n for n in names if names.count(n) > 1), None)
        if twice is not None:
            other = owner.get(twice, role)
            problems.append(
                Problem(
                    where,
                    f"port {twice} is named twice ({other} and {role} ports)",
                    "give each port its own name: put {n} in the pattern, and a different "
                    "prefix per role (npu{n}, stor{n}, biz{n})",
                )
            )
        owner.update((n, role) for n in names)
    return problems + _count_problems(path, entry)


def nic_name_problem(nic: str) -> str:
    """Why Linux refuses `nic` as an interface name (dev_valid_name), or ''."""
    if not nic:
        return "it is empty"
    if len(nic.encode()) >= IFNAMSIZ:
        return f"{len(nic.encode())} characters, at most {IFNAMSIZ - 1}"
    if nic in (".", ".."):
        return "'.' and '..' are refused"
    bad = next((c for c in nic if c in "/:" or c.isspace()), None)
    return f"it holds {bad!r}" if bad else ""


def _count_problems(path: YamlPath, entry: Mapping[str, Any]) -> list[Problem]:
    npus, dies = entry.get("npus", 0), entry.get("dies_per_npu", 1)
    if entry["kind"] != Role.NPU_SERVER:  # other kinds' npus are never read
        return []
    lacking = [role for role in NPU_SERVER_ROLES if role not in entry["ports"]]
    npu = entry["ports"].get("npu")
    if lacking:
        return [
            Problem(
                (*path, "ports"),
                f"an npu-server needs {', '.join(lacking)} ports: "
                + "; ".join(NPU_SERVER_ROLES[r] for r in lacking),
                f"add ports.{lacking[0]} (count, speed, name), as the shipped npu-servers have",
            )
        ]
    if npus and npu["count"] != npus * dies:  # npus 0: semantic.py says so
        return [
            Problem(
                (*path, "ports", "npu", "count"),
                f"{npu['count']} NPU ports, but npus {npus} x dies_per_npu {dies} = "
                f"{npus * dies} devices, each with one parameter-plane port",
                f"set ports.npu.count to {npus * dies}, or npus and dies_per_npu to what the "
                "server holds",
            )
        ]
    return []


def _dropped_roles(name: str, entry: Mapping[str, Any]) -> list[Problem]:
    shipped = shipped_data()["servers"].get(name)
    if shipped is None:
        return []
    dropped = _missing(shipped["ports"], entry["ports"])
    if not dropped:
        return []
    return [
        Problem(
            ("catalog", "servers", name, "ports"),
            f"this ports override leaves out {', '.join(dropped)} of the shipped {name}: "
            "an override replaces the whole ports mapping",
            f"list every role ({', '.join(shipped['ports'])}); `wanka catalog {name}` shows "
            "the shipped ones to copy",
        )
    ]


def _missing(shipped: Mapping[str, Any], given: Mapping[str, Any]) -> Sequence[str]:
    return [role for role in shipped if role not in given]
