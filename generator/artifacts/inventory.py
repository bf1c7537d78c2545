"""Ansible inventory: hosts.yml (groups by role, plane/layer, zone, rack, leaf, supernode;
members only, as host ranges where names run on), host_vars/<host>.yml with each host's own
variables, group_vars/ with what many hosts share.

Host variables live in their own files, not inline in hosts.yml: `ansible-inventory --graph`
reads them from host_vars/ about ten times faster (issue #18). Each top-level key of a host file is one line (a JSON value, which YAML reads the
same), or one line per list item, so a git diff shows what changed; every value holding a string is
tagged `!unsafe`, so Ansible never templates what came from the blueprint, facts or catalog, and
only the generator's own expressions (structured_yaml.Template) are templated. Roles find the
generated files under `{{ inventory_dir }}/files/`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from generator.analysis import Analysis
from generator.artifacts import OutputFile, emitter
from generator.model import Cluster, ip
from generator.names import HOST_GROUP, PARENTS, SWITCH_GROUP, groups
from generator.structured_yaml import Template, variables_file
from generator.vocab import DomainKind, LinkKind, Plane


def _cidr(addr: int, prefix: int) -> str:
    return f"{ip(addr)}/{prefix}"


def host_vars(cluster: Cluster) -> dict[str, dict[str, Any]]:
    """Per-host variables (only what differs between hosts)."""
    by_device: dict[str, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for a in cluster.addresses:
        by_device[a.device][a.plane].append(a)
    servers = {s.name: s for s in cluster.npu_servers}
    parameter, business, host = Plane.PARAMETER, Plane.BUSINESS, LinkKind.HOST  # read once
    lldp = {
        (x.a_device, x.a_port): (x.b_device, x.b_port)
        for x in cluster.links
        if x.plane == parameter and x.kind == host
    }
    bond_members: dict[str, list[str]] = defaultdict(list)
    for x in cluster.links:
        if x.plane == business and x.kind == host:
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
            if d.licences:  # what roles/switch_config names when the feature does not run
                v["licences"] = [lic.name for lic in d.licences]
            out[d.name] = v
            continue
        inband = planes.get(Plane.INBAND)
        if d.mgmt is not None:
            v["ansible_host"] = ip(d.mgmt.ip)
        if inband:
            v["inband_address"] = _cidr(inband[0].ip, inband[0].prefix)
            v["inband_gateway"] = ip(inband[0].gateway)
            if d.mgmt is not None and d.mgmt.routes:
                v["inband_routes"] = [_cidr(net, prefix) for net, prefix in d.mgmt.routes]
        bmc = planes.get(Plane.OOB)
        if bmc:
            v["bmc_address"] = _cidr(bmc[0].ip, bmc[0].prefix)
        v.update(rack=d.rack, rack_u=d.u, model=d.model)
        stor = planes.get(Plane.STORAGE)
        if stor:
            v["storage_nics"] = [
                {"port": a.port, "address": _cidr(a.ip, a.prefix), "gateway": ip(a.gateway)}
                for a in stor
            ]
            nic = cluster.storage_nic_of(d.model)
            if nic is not None:  # what roles/storage_nic_qos checks the ports' driver against
                v["storage_nic_driver"] = nic.driver
        biz = planes.get(Plane.BUSINESS)
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
            for kind in (DomainKind.POD, DomainKind.SUPERNODE):
                domain = s.domain(kind)
                if domain is not None:
                    v[kind] = domain.name
            # expected LLDP neighbour of NPU i ("<switch> <port>"): all preflight needs per host;
            # addresses live in files/hccn/<host>.conf (kept small: 10k hosts load in seconds)
            v["npu_lldp"] = [" ".join(lldp[(d.name, x.port)]) for x in s.devices]
        out[d.name] = v
    return out


RANGE = re.compile(r"^(.*?)(\d+)$")


def host_patterns(hosts: list[str]) -> list[str]:
    """Hosts as Ansible host patterns, in order: a run of three or more consecutive numbers of
    one width becomes a range (`npu-[0001:1280]`, expanded by the YAML inventory plugin, zero
    padding kept), everything else stays as named."""
    out: list[str] = []
    run: list[tuple[str, str]] = []  # (prefix, digits) of the current run

    def flush() -> None:
        if len(run) > 2:
            out.append(f"{run[0][0]}[{run[0][1]}:{run[-1][1]}]")
        else:
            out.extend(p + d for p, d in run)
        run.clear()

    for h in hosts:
        m = RANGE.match(h)
        if m and run:
            prefix, digits = m.groups()
            last_prefix, last = run[-1]
            if (prefix, len(digits), int(digits)) == (last_prefix, len(last), int(last) + 1):
                run.append((prefix, digits))
                continue
        flush()
        if m:
            run.append((m.group(1), m.group(2)))
        else:
            out.append(h)
    flush()
    return out


def hosts_yml(cluster: Cluster, rolling: Sequence[str]) -> str:
    """Groups and their members only: every host's variables live in host_vars/<host>.yml. The
    groups plays target (by role, by switch layer) list their hosts in the rolling order."""
    members = groups(cluster)
    order = list(HOST_GROUP.values()) + list(SWITCH_GROUP.values())
    rest = sorted(set(members) - set(order))
    position = {name: i for i, name in enumerate(rolling)}
    lines = [
        f"# Ansible inventory of {cluster.name}, generated by wanka; do not edit: site variables",
        "# belong in the overlay beside this folder (README, Ansible). Host variables: host_vars/.",
        "# Groups by role and switch layer list their hosts in the rolling order: with `serial: N`",
        "# a batch holds one host per leaf group, rack or M-LAG pair while N allows.",
        "# Check: ansible-inventory -i hosts.yml --graph",
        "all:",
        "  children:",
    ]
    for name in order:
        if hosts := members.get(name):
            lines += [f"    {name}:", "      hosts:"]
            lines += [f"        {h}:" for h in sorted(hosts, key=position.__getitem__)]
    for name in rest:
        if hosts := members.get(name):
            lines += [f"    {name}:", "      hosts:"]
            lines += [f"        {h}:" for h in host_patterns(hosts)]
    for parent, children in PARENTS.items():
        present = [c for c in children if c in members]
        if present:
            lines += [f"    {parent}:", "      children:"] + [f"        {c}:" for c in present]
    return "\n".join(lines) + "\n"


def host_file(host: str, values: Mapping[str, Any]) -> bytes:
    """host_vars/<host>.yml: one line per key, or per item of a non-empty list, every value
    holding a string tagged `!unsafe` (structured_yaml.variables_file)."""
    return variables_file(f"Variables of {host}", values)


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
            "tos": c.tos,
            "ecn": c.ecn,
        }
        for plane in (Plane.PARAMETER, Plane.STORAGE)
        if (c := cluster.lossless_of(plane)) is not None
    }
    out = {
        "wanka_cluster": cluster.name,
        "wanka_site": cluster.site,
        "wanka_files": Template("{{ inventory_dir }}/files"),
        # Where roles keep what they write at run time (acceptance report, switch backups, NPU
        # facts) and read what the site collects (display version captures): the site overlay
        # <folder>.site/ beside this folder (README, output.py), never this folder, which generate
        # replaces. The implicit localhost has no inventory_dir: it takes the first host's.
        "wanka_site_dir": Template(
            "{{ inventory_dir | default(hostvars[groups.all[0]].inventory_dir, true) }}.site"
        ),
        "software_versions": dict(hs.software_versions),
        "npu_per_server": cluster.cards_per_server,
        "lossless": classes.get(Plane.PARAMETER, {}),
        "hccl_env": dict(cluster.hccl_env),
        "storage_access": hs.storage_access,
        "storage_mode": cluster.settings.networks.storage.mode,
        "dpc_filesystems": [dict(f) for f in hs.dpc_filesystems],
        "pools": {p.plane: f"{ip(p.network)}/{p.prefix}" for p in cluster.pools},
        "ntp_servers": [ip(a) for a in svc.ntp],
        "syslog_servers": [ip(a) for a in svc.syslog],
        "npu_temperature_max_c": hs.npu_temperature_max_c,
        "thermal_guard": dict(hs.thermal_guard),
    }
    if Plane.STORAGE in classes:  # the storage NICs' RoCE class (roles/storage_nic_qos)
        out["storage_lossless"] = classes[Plane.STORAGE]
    return out


def switch_vars() -> dict[str, Any]:
    """How Ansible reaches the switches: the modules of roles/switch_config and switch_deploy run
    on the controller and open their own SSH session to `ansible_host` with netmiko, whose
    device type for CloudEngine VRP V200/V300 (two-stage commit) is `huawei_vrpv8`. The user is
    the local user every generated configuration creates; its password comes from Vault."""
    return {
        "ansible_connection": "local",
        "ansible_python_interpreter": Template("{{ ansible_playbook_python }}"),
        "ansible_network_os": "huawei_vrpv8",
        "ansible_user": Template("{{ vault_switch_admin_user | default('admin') }}"),
    }


@emitter(analysis=True, late=True)
def emit(cluster: Cluster, analysis: Analysis) -> Iterator[OutputFile]:
    yield OutputFile("hosts.yml", hosts_yml(cluster, analysis.rolling.order).encode())
    for host, values in sorted(host_vars(cluster).items()):
        yield OutputFile(f"host_vars/{host}.yml", host_file(host, values))
    yield OutputFile(
        "group_vars/all.yml",
        variables_file(f"Variables every host of {cluster.name} shares", all_vars(cluster)),
    )
    yield OutputFile(
        "group_vars/switches.yml",
        variables_file("How Ansible reaches the switches", switch_vars()),
    )
