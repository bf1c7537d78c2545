"""Ansible inventory: hosts.yml (groups by role, plane/layer, zone, rack, leaf, supernode) and
group_vars/ with what many hosts share.

Every host's own variables sit on one line (a YAML flow mapping) where the host is first listed,
so the 10k-card inventory is one fast-to-parse file whose git diff shows one line per changed
host. Roles find the generated files under `{{ inventory_dir }}/files/`.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Iterator, Mapping
from typing import Any

import yaml

from generator.artifacts import OutputFile
from generator.model import Cluster, ip

SWITCH_GROUP = {  # (plane, role) -> group
    ("parameter", "leaf"): "parameter_leaves",
    ("parameter", "spine"): "parameter_spines",
    ("parameter", "core"): "parameter_cores",
    ("storage", "leaf"): "storage_leaves",
    ("storage", "spine"): "storage_spines",
    ("storage", "core"): "storage_cores",
    ("business", "leaf"): "business_leaves",
    ("business", "spine"): "business_spines",
    ("inband", "access"): "inband_access",
    ("inband", "core"): "inband_cores",
    ("oob", "access"): "oob_access",
    ("oob", "core"): "oob_cores",
    ("border", "border-router"): "border_routers",
    ("border", "firewall"): "firewalls",
}
HOST_GROUP = {
    "npu-server": "npu_servers",
    "storage-node": "storage_nodes",
    "management-node": "management_nodes",
}


def group_name(text: str) -> str:
    """A valid Ansible group name: lower case, letters, digits and '_'."""
    return re.sub(r"[^a-z0-9_]", "_", text.lower())


def _cidr(addr: int, prefix: int) -> str:
    return f"{ip(addr)}/{prefix}"


def host_vars(cluster: Cluster) -> dict[str, dict[str, Any]]:
    """Per-host variables (only what differs between hosts)."""
    by_device: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for a in cluster.addresses:
        by_device[a.device][a.plane].append(a)
    servers = {s.name: s for s in cluster.npu_servers}
    lldp = {
        (x.a_device, x.a_port): (x.b_device, x.b_port)
        for x in cluster.links
        if x.plane == "parameter" and x.kind == "host"
    }
    bond_members: dict[str, list[str]] = defaultdict(list)
    for x in cluster.links:
        if x.plane == "business" and x.kind == "host":
            bond_members[x.a_device].append(x.a_port)
    out: dict[str, dict[str, Any]] = {}
    for d in cluster.devices:
        planes = by_device.get(d.name, {})
        v: dict[str, Any] = {}
        if d.plane:  # switches: the model's management address (MEth, or the oob loopback)
            if d.mgmt is not None:
                v["ansible_host"] = ip(d.mgmt.ip)
            v.update(rack=d.rack, rack_u=d.u, model=d.model)
            if d.asn:
                v["bgp_asn"] = d.asn
            if d.loopback:
                v["loopback"] = ip(d.loopback)
            out[d.name] = v
            continue
        inband = planes.get("inband")
        if d.mgmt is not None:
            v["ansible_host"] = ip(d.mgmt.ip)
        if inband:
            v["inband_address"] = _cidr(inband[0].ip, inband[0].prefix)
            v["inband_gateway"] = ip(inband[0].gateway)
        bmc = planes.get("oob")
        if bmc:
            v["bmc_address"] = _cidr(bmc[0].ip, bmc[0].prefix)
        v.update(rack=d.rack, rack_u=d.u, model=d.model)
        stor = planes.get("storage")
        if stor:
            v["storage_nics"] = [
                {"port": a.port, "address": _cidr(a.ip, a.prefix), "gateway": ip(a.gateway)}
                for a in stor
            ]
        biz = planes.get("business")
        if biz:
            a = biz[0]
            v["business_bond"] = {
                "name": a.port,
                "address": _cidr(a.ip, a.prefix),
                "gateway": ip(a.gateway),
                "members": sorted(bond_members[d.name]),
            }
        s = servers.get(d.name)
        if s:  # the domains as every output names them (monitoring, scheduler, failures)
            for kind in ("pod", "supernode"):
                domain = s.domain(kind)
                if domain is not None:
                    v[kind] = domain.name
            # expected LLDP neighbour of NPU i ("<switch> <port>"): all preflight needs per host;
            # addresses live in files/hccn/<host>.conf (kept small: 10k hosts load in seconds)
            v["npu_lldp"] = [" ".join(lldp[(d.name, x.port)]) for x in s.devices]
        out[d.name] = v
    return out


def groups(cluster: Cluster) -> dict[str, list[str]]:
    """Every group and its hosts (membership only), in a stable order."""
    g: dict[str, list[str]] = defaultdict(list)
    for d in cluster.devices:
        if d.plane:
            g[SWITCH_GROUP.get((d.plane, d.role), group_name(f"{d.plane}_{d.role}"))].append(d.name)
        else:
            g[HOST_GROUP[d.role]].append(d.name)
            if d.role == "management-node":
                g[group_name(d.name.rsplit("-", 1)[0])].append(d.name)
        g[group_name(f"rack_{d.rack}")].append(d.name)
    zone_of = {r.name: r.zone for r in cluster.racks}
    for d in cluster.devices:
        g[f"zone_{zone_of[d.rack]}"].append(d.name)
    for s in cluster.npu_servers:
        for leaf in s.leaves:
            g[group_name(f"leaf_{leaf}")].append(s.name)
        supernode = s.domain("supernode")
        if supernode is not None:
            g[group_name(supernode.name)].append(s.name)
    return g


PARENTS = {
    "switches": [*dict.fromkeys(SWITCH_GROUP.values())],
    "parameter_switches": ["parameter_leaves", "parameter_spines", "parameter_cores"],
    "storage_switches": ["storage_leaves", "storage_spines", "storage_cores"],
    "business_switches": ["business_leaves", "business_spines"],
    "management_switches": ["inband_access", "inband_cores", "oob_access", "oob_cores"],
    "border": ["border_routers", "firewalls"],
}


def hosts_yml(cluster: Cluster) -> str:
    members = groups(cluster)
    hv = host_vars(cluster)
    order = list(HOST_GROUP.values()) + list(SWITCH_GROUP.values())
    rest = sorted(set(members) - set(order))
    lines = [
        f"# Ansible inventory of {cluster.name}, generated by wanka; do not edit.",
        "# Check: ansible-inventory -i hosts.yml --graph",
        "all:",
        "  children:",
    ]
    listed: set[str] = set()
    for name in order + rest:
        hosts = members.get(name)
        if not hosts:
            continue
        lines += [f"    {name}:", "      hosts:"]
        for h in hosts:
            if h in listed:
                lines.append(f"        {h}:")
            else:
                listed.add(h)
                lines.append(f"        {h}: {json.dumps(hv[h], separators=(', ', ': '))}")
    for parent, children in PARENTS.items():
        present = [c for c in children if c in members]
        if present:
            lines += [f"    {parent}:", "      children:"] + [f"        {c}:" for c in present]
    return "\n".join(lines) + "\n"


def all_vars(cluster: Cluster) -> dict[str, Any]:
    hs, svc = cluster.host_settings, cluster.services
    classes = {
        plane: {
            "priority": c.priority,
            "dscp": c.dscp,
            "nic_tc": c.tc,
            "mtu": c.mtu,
            "pfc_bitmap": c.pfc_bitmap,
            "cnp_dscp": c.cnp_dscp,
        }
        for plane in ("parameter", "storage")
        if (c := cluster.lossless_of(plane)) is not None
    }
    out = {
        "wanka_cluster": cluster.name,
        "wanka_site": cluster.site,
        "wanka_files": "{{ inventory_dir }}/files",
        "software_versions": dict(hs.software_versions),
        "npu_per_server": cluster.npu_servers[0].npus if cluster.npu_servers else 0,
        "lossless": classes.get("parameter", {}),
        "hccl_env": dict(cluster.hccl_env),
        "storage_access": hs.storage_access,
        "storage_mode": cluster.settings.storage_mode,
        "dpc_filesystems": [dict(f) for f in hs.dpc_filesystems],
        "pools": {p.plane: f"{ip(p.network)}/{p.prefix}" for p in cluster.pools},
        "ntp_servers": [ip(a) for a in svc.ntp],
        "syslog_servers": [ip(a) for a in svc.syslog],
        "npu_temperature_max_c": hs.npu_temperature_max_c,
        "thermal_guard": dict(hs.thermal_guard),
    }
    if "storage" in classes:  # the storage NICs' RoCE class (roles/storage_nic_qos)
        out["storage_lossless"] = classes["storage"]
    return out


def switch_vars() -> dict[str, Any]:
    """How Ansible reaches the switches: the modules of roles/switch_config and switch_deploy run
    on the controller and open their own SSH session to `ansible_host` with netmiko, whose
    device type for CloudEngine VRP V200/V300 (two-stage commit) is `huawei_vrpv8`. The user is
    the local user every generated configuration creates; its password comes from Vault."""
    return {
        "ansible_connection": "local",
        "ansible_python_interpreter": "{{ ansible_playbook_python }}",
        "ansible_network_os": "huawei_vrpv8",
        "ansible_user": "{{ vault_switch_admin_user | default('admin') }}",
    }


def _yaml(data: Mapping[str, Any], title: str) -> bytes:
    body = yaml.safe_dump(dict(data), sort_keys=False, default_flow_style=False, width=1000)
    return f"# {title}, generated by wanka; do not edit.\n{body}".encode()


def emit(cluster: Cluster, analysis: object = None) -> Iterator[OutputFile]:
    yield OutputFile("hosts.yml", hosts_yml(cluster).encode())
    yield OutputFile(
        "group_vars/all.yml",
        _yaml(all_vars(cluster), f"Variables every host of {cluster.name} shares"),
    )
    yield OutputFile(
        "group_vars/switches.yml", _yaml(switch_vars(), "How Ansible reaches the switches")
    )
