"""Properties that hold one generated file against another, each returning the problems it finds
(an empty list when it holds). tests/outputs/test_cross_outputs.py runs them over generated
clusters."""

from __future__ import annotations

import ipaddress
import re
from collections import defaultdict
from collections.abc import Callable, Iterable

import yaml

from tests.support.examples import ROOT
from tests.support.output_readers import YAML, Outputs

Problems = list[str]
KINDS = ("leaf", "pod", "supernode", "rack", "cdu")


def _first(problems: Iterable[str], limit: int = 8) -> Problems:
    out = list(problems)
    return out[:limit] + ([f"... and {len(out) - limit} more"] if len(out) > limit else [])


# -- addresses ---------------------------------------------------------------------------------------


def _gateways(o: Outputs) -> set[str]:
    return {r["gateway"] for r in o.ip_plan if r["gateway"]}


def _configured_on_host(o: Outputs, row: dict[str, str]) -> bool:
    """Is the IP-plan row's address set on the host and port it names (host files, hosts.yml)?"""
    device, port, address = row["device"], row["port"], row["address"]
    cidr = f"{address}/{row['prefix']}"
    values = o.host_vars.get(device, {})
    if m := re.fullmatch(r"npu(\d+)", port):
        conf = o.hccn(device)
        i = m[1]
        mask = str(ipaddress.IPv4Network(f"0.0.0.0/{row['prefix']}").netmask)
        return conf.get(f"address_{i}") == address and conf.get(f"netmask_{i}") == mask
    if values.get("inband_address") == cidr and port.startswith("mgmt"):
        return True
    if port == "bmc":
        return values.get("bmc_address") == cidr
    for nic in values.get("storage_nics") or ():
        if nic["port"] == port and nic["address"] == cidr:
            return True
    bond = values.get("business_bond") or {}
    if bond.get("name") == port and bond.get("address") == cidr:
        return True
    return values.get("ansible_host") == address and device not in o.configs


def _configured(o: Outputs, row: dict[str, str]) -> bool:
    if row["device"] in o.configs:
        cidr = f"{row['address']}/{row['prefix']}"
        return cidr in o.interface_addresses.get((row["device"], row["port"]), ())
    return _configured_on_host(o, row)


def addresses_are_configured_where_the_ip_plan_says(o: Outputs, _result) -> Problems:
    """Every address of the IP plan that is not a gateway is set on the device and interface
    the plan names: in its switch configuration, or in the host's files."""
    gateways = _gateways(o)
    return _first(
        f"{r['address']}/{r['prefix']} of {r['device']} {r['port']} is not configured there"
        for r in o.ip_plan
        if r["address"] not in gateways and not _configured(o, r)
    )


def gateway_rows_name_one_cabled_device(o: Outputs, _result) -> Problems:
    """The device the IP plan names for a gateway is a device of the cabling plan."""
    gateways = _gateways(o)
    return _first(
        f"gateway {r['address']} is owned by {r['device']!r}, which is not in cabling.csv"
        for r in o.ip_plan
        if r["address"] in gateways and r["device"] not in o.cabled_devices
    )


def gateways_are_configured_where_the_ip_plan_says(o: Outputs, _result) -> Problems:
    """Every gateway a host row lists is a row of the plan, and that row's device (a cabled
    switch) carries it on the interface the plan names."""
    rows_of = defaultdict(list)
    for r in o.ip_plan:
        rows_of[r["address"]].append(r)
    problems = []
    for gateway in sorted(_gateways(o)):
        owners = [r for r in rows_of.get(gateway, ()) if r["device"] in o.cabled_devices]
        if not rows_of.get(gateway):
            problems.append(f"gateway {gateway} has no row of its own in ip-plan.csv")
        for r in owners:
            if not _configured(o, r):
                have = sorted(
                    i
                    for (d, i), a in o.interface_addresses.items()
                    if d == r["device"]
                    for x in a
                    if x.split("/")[0] == gateway
                )
                problems.append(
                    f"gateway {gateway}: ip-plan.csv puts it on {r['device']} {r['port']}, "
                    f"the configuration on {have or 'no interface'}"
                )
    return _first(problems)


# -- names ----------------------------------------------------------------------------------------


def _named_devices(o: Outputs) -> dict[str, set[str]]:
    """Device names each output states (output -> names), other than the IP plan."""
    named: dict[str, set[str]] = defaultdict(set)
    for name, text in o.configs.items():
        named["files/switches/"].add(name)
        for line in text.splitlines():
            if m := re.match(r" (?:description to|peer \S+ description) (\S+)", line):
                named[f"files/switches/{name}.cfg"].add(m[1])
    named["hosts.yml"] = set(o.host_vars)
    for values in o.host_vars.values():
        named["hosts.yml npu_lldp"] |= {x.split()[0] for x in values.get("npu_lldp") or ()}
    for target in o.targets("npu-exporter"):
        named["npu-exporter targets"] |= {target["labels"]["host"]}
    for target in o.targets("snmp"):
        named["snmp targets"] |= {target["labels"]["switch"]}
    named["node-labels.yaml"] = set(o.node_labels)
    for hn in o.hypernodes:
        for m in hn["spec"]["members"]:
            if m["type"] == "Node":
                named["hypernodes.yaml"].add(m["selector"]["exactMatch"]["name"])
    for path in (
        "files/scheduler/slurm/topology.conf",
        "files/scheduler/slurm/topology-block.conf",
    ):
        for key in ("SwitchName", "BlockName"):
            for hosts in o.slurm(path, key).values():
                named[path] |= set(hosts)
    for tor in o.mindcluster["server_list"]:  # ToRs and servers by address
        owner = o.owner_of_address.get(tor["tor_ip"], (f"no device has {tor['tor_ip']}",))[0]
        named["basic-tor-node-cm tor_ip"].add(owner)
        for server in tor["server"]:
            ip = server["server_ip"]
            named["basic-tor-node-cm server_ip"].add(o.host_of_inband.get(ip, f"no host has {ip}"))
    for server in o.rank_table["server_list"]:
        ip = server["server_id"]
        named["rank_table.json server_id"].add(o.host_of_inband.get(ip, f"no host has {ip}"))
    for r in o.failure_rows:
        if not r["class"].startswith(("rack", "CDU")) and not r["class"].endswith("cable"):
            named["failure-domains.csv"].add(r["worst"])
    for where, _ in o.failure_job_domains:
        if m := re.fullmatch(r"one server \((\S+)\)", where):
            named["failure-domains.md"].add(m[1])
    return named


def devices_named_in_outputs_are_cabled(o: Outputs, _result) -> Problems:
    """Every device a configuration, the inventory, the scheduler files, the monitoring targets
    or a failure report names is a device of cabling.csv, spelled the same."""
    return _first(
        f"{where} names {name!r}, which cabling.csv does not have"
        for where, names in sorted(_named_devices(o).items())
        for name in sorted(names - o.cabled_devices)
    )


def ip_plan_devices_are_cabled(o: Outputs, _result) -> Problems:
    """Every device of the IP plan is a device of cabling.csv."""
    return _first(
        f"ip-plan.csv names {d!r}, which cabling.csv does not have"
        for d in sorted({r["device"] for r in o.ip_plan} - o.cabled_devices)
    )


def failure_units_exist(o: Outputs, _result) -> Problems:
    """Cables and racks the failure report names are in the cabling plan."""
    problems = []
    for r in o.failure_rows:
        if r["class"].endswith("cable") and r["worst"] not in o.cable_ids:
            problems.append(f"failure-domains.csv: cable {r['worst']} is not in cabling.csv")
        if r["class"].startswith("rack") and r["worst"] not in o.racks:
            problems.append(f"failure-domains.csv: rack {r['worst']} is not in cabling.csv")
    return _first(problems)


def bom_counts_the_cabled_devices(o: Outputs, _result) -> Problems:
    """bom.csv counts, per model, as many devices as the cabling plan holds."""
    from tests.support.output_readers import csv_rows

    cabled_models = defaultdict(int)
    for name in o.cabled_devices:
        cabled_models[o.host_vars.get(name, {}).get("model", "?")] += 1
    bom: dict[str, int] = defaultdict(int)
    for r in csv_rows(o.files["files/bom.csv"]):
        if r["category"] == "device":
            bom[r["item"]] += int(r["quantity"])
    return _first(
        f"bom.csv counts {bom.get(m, 0)} x {m}, cabling.csv has {n}"
        for m, n in sorted(cabled_models.items())
        if bom.get(m, 0) != n
    )


# -- failure and scheduling domains ---------------------------------------------------------------

TIER_KIND = {"leaf": "leaf", "supernode": "supernode", "spine": "pod"}


def _hypernode_domains(o: Outputs) -> dict[str, dict[str, str]]:
    """kind -> server -> name of the HyperNode of that tier holding it (through lower tiers)."""
    parent: dict[tuple[str, str], str] = {}
    tier_name: dict[str, str] = {}
    for hn in o.hypernodes:
        name = hn["metadata"]["name"]
        tier_name[name] = hn["spec"].get("tierName", "")
        for m in hn["spec"]["members"]:
            parent[(m["type"], m["selector"]["exactMatch"]["name"])] = name
    out: dict[str, dict[str, str]] = defaultdict(dict)
    for server in o.npu_servers:
        node = parent.get(("Node", server))
        while node:
            if kind := TIER_KIND.get(tier_name[node]):
                out[kind][server] = node
            node = parent.get(("HyperNode", node))
    return out


def _slurm_domains(o: Outputs) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = defaultdict(dict)
    conf = "files/scheduler/slurm/topology.conf"
    for switch, hosts in o.slurm(conf, "SwitchName").items():
        for h in hosts:
            out["leaf"][h] = switch
    upper: dict[str, str] = {}
    if conf in o.files:
        import hostlist

        for line in o.text(conf).splitlines():
            fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
            if "SwitchName" in fields and "Switches" in fields:
                for child in hostlist.expand_hostlist(fields["Switches"]):
                    upper[child] = fields["SwitchName"]
    for h, leaf in list(out["leaf"].items()):
        if leaf in upper:
            out["pod"][h] = upper[leaf]
    block = o.slurm("files/scheduler/slurm/topology-block.conf", "BlockName")
    for name, hosts in block.items():
        for h in hosts:
            out["supernode"][h] = name
    return out


def domain_names(o: Outputs) -> dict[str, dict[str, dict[str, str]]]:
    """kind -> output -> server -> the NAME that output gives the server's domain."""
    out: dict[str, dict[str, dict[str, str]]] = {k: defaultdict(dict) for k in KINDS}
    for t in o.targets("npu-exporter"):
        labels = t["labels"]
        for kind in KINDS:
            if labels.get(kind):
                out[kind]["npu-exporter targets"][labels["host"]] = labels[kind]
    for kind, by_server in _hypernode_domains(o).items():
        out[kind]["hypernodes.yaml"] = by_server
    for kind, by_server in _slurm_domains(o).items():
        out[kind]["slurm topology"] = by_server
    for server in o.npu_servers:
        rack = o.host_vars[server].get("rack")
        if isinstance(rack, str):
            out["rack"]["hosts.yml"][server] = rack
    return {k: {src: dict(v) for src, v in by.items() if v} for k, by in out.items()}


def domain_numbers(o: Outputs) -> dict[str, dict[str, dict[str, int]]]:
    """kind -> output -> server -> the NUMBER that output gives the server's domain."""
    out: dict[str, dict[str, dict[str, int]]] = {k: defaultdict(dict) for k in KINDS}
    for server in o.npu_servers:
        for kind in ("pod", "supernode"):
            value = o.host_vars[server].get(kind)
            if isinstance(value, int) and not (kind == "supernode" and value < 0):
                out[kind]["hosts.yml"][server] = value
    for server, labels in o.node_labels.items():
        if "huawei.com/topotree.superpodid" in labels:
            out["supernode"]["node-labels.yaml"][server] = int(
                labels["huawei.com/topotree.superpodid"]
            )
        if "huawei.com/topotree.rackid" in labels:
            out["rack"]["node-labels.yaml"][server] = int(labels["huawei.com/topotree.rackid"])
    for pod in o.rank_table.get("super_pod_list", ()):
        for s in pod["server_list"]:
            host = o.host_of_inband.get(s["server_id"], s["server_id"])
            out["supernode"]["rank_table.json"][host] = int(pod["super_pod_id"])
    for tor in o.mindcluster["server_list"]:
        for s in tor["server"]:
            host = o.host_of_inband.get(s["server_ip"], s["server_ip"])
            out["leaf"]["basic-tor-node-cm tor_id"][host] = int(tor["tor_id"])
    return {k: {src: dict(v) for src, v in by.items() if v} for k, by in out.items()}


def _partition(by_server: dict[str, object], servers: list[str]) -> set[frozenset[str]]:
    groups: dict[object, set[str]] = defaultdict(set)
    for s in servers:
        groups[by_server.get(s)].add(s)
    return {frozenset(g) for g in groups.values()}


def _inventory_groups(o: Outputs) -> dict[str, dict[str, frozenset[str]]]:
    """kind -> server -> the inventory groups of that kind holding it (leaf_*, rack_*, supernode_*)."""
    out: dict[str, dict[str, frozenset[str]]] = defaultdict(dict)
    prefixes = {"leaf": "leaf_", "rack": "rack_", "supernode": "supernode_"}
    for kind, prefix in prefixes.items():
        holding: dict[str, set[str]] = defaultdict(set)
        for group, hosts in o.groups.items():
            if group.startswith(prefix):
                for h in hosts:
                    holding[h].add(group)
        if holding:
            out[kind] = {s: frozenset(holding.get(s, ())) for s in o.npu_servers}
    return out


def domains_group_servers_alike(o: Outputs, _result) -> Problems:
    """Every output that places servers in leaves, pods, supernodes, racks or CDUs groups the
    servers the same way (whatever it calls the groups)."""
    servers = o.npu_servers
    problems = []
    names, numbers, groups = domain_names(o), domain_numbers(o), _inventory_groups(o)
    for kind in KINDS:
        views = {**names[kind], **{f"{k} (number)": v for k, v in numbers[kind].items()}}
        if kind in groups:
            views["hosts.yml groups"] = groups[kind]
        parts = {src: _partition(v, servers) for src, v in views.items()}
        for src, v in views.items():
            missing = [s for s in servers if s not in v]
            if missing:
                problems.append(f"{kind}: {src} places no domain for {missing[:3]}")
        if len({frozenset(p) for p in parts.values()}) > 1:
            sizes = {src: sorted(len(g) for g in p)[:6] for src, p in parts.items()}
            problems.append(f"{kind}: outputs group the servers differently: {sizes}")
    return _first(problems)


def _tokens(label: str) -> set[str]:
    return set(re.split(r"[\s(),]+", label)) - {""}


def domain_names_are_spelled_alike(o: Outputs, _result) -> Problems:
    """Each server's leaf, pod, supernode, rack and CDU has ONE name: every output that names
    it (monitoring labels, HyperNodes, Slurm, MindCluster's ToR, the inventory, the failure
    reports) spells it the same; numeric ids (rank table, node labels, inventory) are equal."""
    problems = []
    names, numbers = domain_names(o), domain_numbers(o)
    for kind in KINDS:
        for src_kind, views in (("name", names[kind]), ("number", numbers[kind])):
            for server in o.npu_servers:
                seen = {src: v[server] for src, v in views.items() if server in v}
                if len(set(seen.values())) > 1:
                    problems.append(f"{kind} {src_kind} of {server}: {seen}")
                    break
    all_names = {k: {n for v in names[k].values() for n in v.values()} for k in KINDS}
    for where, _servers in o.failure_job_domains:
        word = where.split()[0]
        kind = {"leaf": "leaf", "rail": "leaf", "pod": "pod", "supernode": "supernode"}.get(word)
        if kind and not (_tokens(where) & all_names[kind]):
            problems.append(
                f"failure-domains.md calls a {kind} {where!r}; other outputs call them "
                f"{sorted(all_names[kind])[:3]}"
            )
    for r in o.failure_rows:
        kind = (
            "rack"
            if r["class"].startswith("rack (compute)")
            else "cdu"
            if r["class"] == "CDU"
            else ""
        )
        if kind and all_names[kind] and r["worst"] not in all_names[kind]:
            problems.append(
                f"failure-domains.csv calls a {kind} {r['worst']!r}; other outputs call them "
                f"{sorted(all_names[kind])[:3]}"
            )
    return _first(problems)


# -- Ansible -------------------------------------------------------------------------------------------


def _plays(path) -> list[dict]:
    """Plays of a playbook with imported playbooks followed (site.yml -> playbooks/*.yml)."""
    out = []
    for play in yaml.load(path.read_text(), Loader=YAML) or ():
        imported = play.get("ansible.builtin.import_playbook") or play.get("import_playbook")
        if imported:
            out += _plays(path.parent / imported)
        elif "hosts" in play:
            out.append(play)
    return out


def resolve_pattern(pattern: str, groups: dict[str, set[str]]) -> set[str]:
    """Ansible host pattern (a:b union, :&b intersection, :!b exclusion) over inventory groups."""
    selected: set[str] = set()
    for i, part in enumerate(re.split(r"[:,]", pattern)):
        name = part.lstrip("&!")
        hosts = groups.get(name, {name} if name in groups.get("all", ()) else set())
        if part.startswith("!"):
            selected -= hosts
        elif part.startswith("&"):
            selected &= hosts
        else:
            selected = hosts | selected if i else set(hosts)
    return selected


PLAYBOOKS = sorted([ROOT / "site.yml", *(ROOT / "playbooks").glob("*.yml")])


def playbook_targets_have_a_reachable_ansible_host(o: Outputs, _result) -> Problems:
    """Every host a play of site.yml or playbooks/*.yml targets has an `ansible_host` inside the
    in-band or out-of-band management pool."""
    pools = o.group_vars.get("pools", {})
    mgmt = [ipaddress.IPv4Network(pools[p]) for p in ("inband", "oob") if p in pools]
    problems = []
    for book in PLAYBOOKS:
        for play in _plays(book):
            for host in sorted(resolve_pattern(play["hosts"], o.groups)):
                address = o.host_vars.get(host, {}).get("ansible_host")
                if address is None:
                    problems.append(
                        f"{book.name} ({play['hosts']}) targets {host}: no ansible_host"
                    )
                elif not any(ipaddress.IPv4Address(address) in net for net in mgmt):
                    problems.append(f"{book.name}: {host} ansible_host {address} outside {mgmt}")
    return _first(sorted(set(problems)))


def switches_are_reachable_provisioned_and_rolled_out_once(o: Outputs, _result) -> Problems:
    """Every CloudEngine switch (files/switches/; the border routers and firewalls of
    files/border/ are provisioned by hand) has a saved-format startup configuration (day 2
    deploys from it), is built either from the console (docs/bring-up.md step 1) or by ZTP (in
    the ZTP list with the management address the inventory reaches it on and a gateway to lease
    through), never both, and is in exactly one batch of the day-2 rolling order."""
    ztp = {s["name"]: s for s in yaml.load(o.text("files/ztp/switches.yml"), YAML)["switches"]}
    console = set(
        re.findall(r"^\| (\S+) \|.*\| files/switches/\1\.cfg \|", o.text("docs/bring-up.md"), re.M)
    )
    order = yaml.load(o.text("files/switch-rollout.yml"), YAML)["switch_rollout_order"]
    problems = []
    switches = sorted(n for n in o.configs if f"files/switches/{n}.cfg" in o.files)
    for name in switches:
        if f"files/ztp/configs/{name}.cfg" not in o.files:
            problems.append(f"{name}: no startup configuration")
        address = o.host_vars.get(name, {}).get("ansible_host")
        if (name in console) == (name in ztp):
            problems.append(
                f"{name}: console-built {name in console}, in the ZTP list {name in ztp}"
            )
        elif name in ztp and (ztp[name]["address"] != address or not ztp[name]["gateway"]):
            problems.append(
                f"{name}: ansible_host {address}, ZTP {ztp[name]['address']} via "
                f"{ztp[name]['gateway'] or 'no gateway'}"
            )
        if order.count(name) != 1:
            problems.append(f"{name}: {order.count(name)} times in the rolling order")
    if len(order) != len(switches):
        problems.append(f"rolling order has {len(order)} switches, configs {len(switches)}")
    return _first(problems)


# -- routing and services ------------------------------------------------------------------------------


def _parameter_switches(o: Outputs) -> list[str]:
    return sorted(o.groups.get("parameter_switches", ()))


def ospf_inventory_has_no_bgp_asn(o: Outputs, result) -> Problems:
    """With `routing: ospf`, no parameter-plane switch carries a bgp_asn in the inventory."""
    if _protocol(result) != "ospf":
        return []
    return _first(
        f"hosts.yml: {name} has bgp_asn {o.host_vars[name]['bgp_asn']} under OSPF"
        for name in _parameter_switches(o)
        if "bgp_asn" in o.host_vars.get(name, {})
    )


def ospf_configs_have_no_bgp_block(o: Outputs, result) -> Problems:
    """With `routing: ospf`, no parameter-plane switch configuration has a `bgp` block, and
    every one has an `ospf` process."""
    if _protocol(result) != "ospf":
        return []
    problems = []
    for name in _parameter_switches(o):
        if name not in o.configs:
            continue
        if o.config_lines(name, "bgp "):
            problems.append(f"files/switches/{name}.cfg has a bgp block under OSPF")
        if not o.config_lines(name, "ospf "):
            problems.append(f"files/switches/{name}.cfg has no ospf process")
    return _first(problems)


def _protocol(result) -> str:
    networks = result.blueprint["networks"]["parameter"]
    return networks.get("routing", {}).get("protocol", "bgp")


def services_agree_between_inventory_and_switches(o: Outputs, _result) -> Problems:
    """The NTP and syslog servers of group_vars/all.yml are the ones every switch uses."""
    ntp = set(o.group_vars.get("ntp_servers") or ())
    syslog = set(o.group_vars.get("syslog_servers") or ())
    problems = []
    for name in sorted(o.configs):
        sw_ntp = {  # CloudEngine `ntp unicast-server`, NetEngine/USG `ntp-service unicast-server`
            line.split()[2]
            for prefix in ("ntp unicast-server ", "ntp-service unicast-server ")
            for line in o.config_lines(name, prefix)
        }
        sw_log = {
            line.split()[2]
            for line in o.config_lines(name, "info-center loghost ")
            if re.match(r"info-center loghost \d", line)
        }
        if sw_ntp != ntp:
            problems.append(f"NTP: inventory {sorted(ntp)}, {name} {sorted(sw_ntp)}")
        if sw_log != syslog:
            problems.append(f"syslog: inventory {sorted(syslog)}, {name} {sorted(sw_log)}")
    return _first(problems)


# -- ranks -----------------------------------------------------------------------------------------------


def rank_ids_agree(o: Outputs, result) -> Problems:
    """The rank of every NPU is the same in files/hccl/rank_table.json, in generator.analysis.placement
    (a job of the whole cluster) and in generator.analysis.changes (`wanka diff`), and the rank table's device address is
    the one the host's hccn.conf sets."""
    from generator.analysis import changes, placement

    table = {}
    for server in o.rank_table["server_list"]:
        host = o.host_of_inband.get(server["server_id"], server["server_id"])
        conf = o.hccn(host) if f"files/hccn/{host}.conf" in o.files else {}
        for dev in server["device"]:
            table[(host, int(dev["device_id"]))] = int(dev["rank_id"])
            if conf.get(f"address_{dev['device_id']}") != dev["device_ip"]:
                return [
                    f"rank table: {host} device {dev['device_id']} {dev['device_ip']}, "
                    f"hccn.conf {conf.get('address_' + dev['device_id'])}"
                ]
    chosen = placement.select_servers(result.cluster).servers
    placed = {
        (s.name, d): i * len(s.devices) + d
        for i, s in enumerate(chosen)
        for d in range(len(s.devices))
    }
    counted = changes._ranks(result.cluster)
    problems = []
    for key in sorted(table.keys() | placed.keys() | counted.keys()):
        seen = (table.get(key), placed.get(key), counted.get(key))
        if len(set(seen)) > 1:
            problems.append(f"{key}: rank table {seen[0]}, placement {seen[1]}, diff {seen[2]}")
    return _first(problems)


def device_counts_agree_between_labels_and_rank_table(o: Outputs, result) -> Problems:
    """The scheduler's accelerator-type label counts a node's devices (`module-910b-8`,
    `module-a3-16[-super-pod]`: A3 counts dies); the rank table lists as many devices (ranks) for
    that node, and as many device addresses in its hccn.conf."""
    import re

    problems = []
    for server in o.rank_table["server_list"]:
        host = o.host_of_inband.get(server["server_id"], server["server_id"])
        kind = o.node_labels.get(host, {}).get("accelerator-type", "")
        m = re.fullmatch(r"module-(?:910b|a3)-(\d+)(?:-super-pod)?", kind)
        if m is None:
            continue  # the legacy 910 label ("module") names no count
        conf = o.hccn(host)
        addresses = sum(1 for k in conf if k.startswith("address_"))
        if not int(m[1]) == len(server["device"]) == addresses:
            problems.append(
                f"{host}: label {kind}, rank table {len(server['device'])} devices, "
                f"hccn.conf {addresses} addresses"
            )
    return _first(problems)


# -- cards, dies and ranks ------------------------------------------------------------------------


def _count(text: str) -> int:
    return int(text.replace(",", ""))


def card_counts(o: Outputs, result) -> dict[str, int]:
    """The NPU cards each output states or implies: the design review's headline, the failure
    report's "N cards in M NPU servers", the inventory's npu_per_server times its NPU servers,
    the scheduler's nodes times the cards their accelerator-type label counts (module-910b-N: N
    cards; module-a3-N: N dies), the rank table's ranks over the dies of a card, and the BOM's
    NPU servers times npu_per_server. The dies of a card are the one model number used."""
    import csv
    import io
    import re

    dies = result.cluster.npu_servers[0].dies_per_npu if result.cluster.npu_servers else 1
    per_server = int(o.group_vars.get("npu_per_server", 0))
    out: dict[str, int] = {}
    if m := re.search(r"^\| NPU cards \| ([\d,]+) \|$", o.text("docs/README.md"), re.M):
        out["docs/README.md"] = _count(m[1])
    if m := re.search(
        r"([\d,]+) cards in ([\d,]+) NPU servers", o.text("files/failure-domains.md")
    ):
        out["files/failure-domains.md"] = _count(m[1])
    out["inventory npu_per_server x npu_servers"] = per_server * len(o.npu_servers)
    labelled = 0
    for labels in o.node_labels.values():
        m = re.fullmatch(
            r"module-(910b|a3)-(\d+)(?:-super-pod)?", labels.get("accelerator-type", "")
        )
        if m is None:  # the legacy 910 label ("module") names no count: the inventory's
            labelled += per_server
        else:
            labelled += int(m[2]) // (dies if m[1] == "a3" else 1)
    out["kubernetes node-labels"] = labelled
    slurm = o.slurm("files/scheduler/slurm/topology.conf", "SwitchName")
    if slurm:
        out["slurm topology.conf nodes x npu_per_server"] = per_server * len(
            {n for nodes in slurm.values() for n in nodes}
        )
    if "files/hccl/rank_table.json" in o.files:
        ranks = sum(len(s["device"]) for s in o.rank_table["server_list"])
        out["rank table ranks / dies per card"] = ranks // dies
    bom = csv.DictReader(io.StringIO(o.text("files/bom.csv")))
    servers = sum(_count(r["quantity"]) for r in bom if r["detail"] == "npu-server")
    out["bom npu-server quantity x npu_per_server"] = servers * per_server
    return out


def card_counts_agree(o: Outputs, result) -> Problems:
    """Every output counts the same NPU cards (an A3 card of two dies once, not twice)."""
    counts = card_counts(o, result)
    if len(set(counts.values())) <= 1:
        return []
    return [", ".join(f"{where}: {n:,}" for where, n in counts.items())]


# -- MTU ------------------------------------------------------------------------------------------


def _ints_after(o: Outputs, switch: str, prefix: str) -> set[int]:
    return {int(line[len(prefix) :].split()[0]) for line in o.config_lines(switch, prefix)}


def switches_carry_the_nic_mtu(o: Outputs, _result) -> Problems:
    """Every parameter leaf an NPU server is cabled to routes the server's NIC MTU (hccn.conf
    mtu_N; the leaf's `mtu` on routed ports and Vlanifs) and accepts the frame that carries it
    with its 14-byte header, 802.1Q tag and FCS (`jumboframe enable`, frame length with header
    and FCS: CE V300R023C00 command reference, jumboframe enable)."""
    leaves: dict[str, set[str]] = defaultdict(set)
    for r in o.cabling:
        if r["plane"] == "parameter" and r["b_device"] in o.configs:
            leaves[r["a_device"]].add(r["b_device"])
    problems = []
    for host in o.npu_servers:
        if f"files/hccn/{host}.conf" not in o.files:
            continue
        nic = max((int(v) for k, v in o.hccn(host).items() if k.startswith("mtu_")), default=0)
        for leaf in sorted(leaves.get(host, ())):
            ip_mtu = min(_ints_after(o, leaf, " mtu "), default=0)
            frame = min(_ints_after(o, leaf, " jumboframe enable "), default=9216)
            if ip_mtu < nic or frame < nic + 22:
                problems.append(f"{host} NIC MTU {nic}: {leaf} mtu {ip_mtu}, jumboframe {frame}")
    return _first(problems)


PROPERTIES: dict[str, Callable[[Outputs, object], Problems]] = {
    f.__name__: f
    for f in (
        switches_are_reachable_provisioned_and_rolled_out_once,
        addresses_are_configured_where_the_ip_plan_says,
        gateway_rows_name_one_cabled_device,
        gateways_are_configured_where_the_ip_plan_says,
        devices_named_in_outputs_are_cabled,
        ip_plan_devices_are_cabled,
        failure_units_exist,
        bom_counts_the_cabled_devices,
        domains_group_servers_alike,
        domain_names_are_spelled_alike,
        playbook_targets_have_a_reachable_ansible_host,
        ospf_inventory_has_no_bgp_asn,
        ospf_configs_have_no_bgp_block,
        services_agree_between_inventory_and_switches,
        rank_ids_agree,
        device_counts_agree_between_labels_and_rank_table,
        card_counts_agree,
        switches_carry_the_nic_mtu,
    )
}
