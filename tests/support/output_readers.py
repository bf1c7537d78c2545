"""Readers of a generated output folder (path -> bytes), as a reviewer reads it: the IP plan, the
cabling plan, switch configurations, the Ansible inventory, host files, the rank table, the
monitoring targets, the scheduler topology and the failure reports. No generator code is used to
interpret them, so a test built on these compares what the files say, not what the model says."""

from __future__ import annotations

import csv
import io
import ipaddress
import json
import re
from collections import defaultdict
from functools import cached_property
from pathlib import Path

import hostlist
import yaml

from generator.structured_yaml import FastVariablesLoader

YAML = FastVariablesLoader  # libyaml where present; reads `!unsafe` as Ansible does
SWITCH_CFG = re.compile(r"files/(?:switches|border)/(?P<name>[^/]+)\.cfg")


def csv_rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode())))


ANSIBLE_RANGE = re.compile(r"(?P<head>.*)\[(?P<first>\d+):(?P<last>\d+)\](?P<tail>.*)")


def ansible_hosts(line: str) -> list[str]:
    """The hosts an inventory host key names: `npu-[0001:0003]` is npu-0001, npu-0002, npu-0003
    (Ansible's numeric range; a leading zero in the first bound keeps the width)."""
    m = ANSIBLE_RANGE.fullmatch(line)
    if not m:
        return [line]
    first = m["first"]
    width = len(first) if first.startswith("0") else 0
    numbers = range(int(first), int(m["last"]) + 1)
    return [f"{m['head']}{n:0{width}d}{m['tail']}" for n in numbers]


def inventory_vars(folder: Path) -> dict[str, dict]:
    """host -> variables of the inventory in `folder` (hosts.yml and host_vars/)."""
    files = {"hosts.yml": (folder / "hosts.yml").read_bytes()}
    files |= {f"host_vars/{p.name}": p.read_bytes() for p in (folder / "host_vars").glob("*.yml")}
    return Outputs(files).host_vars


def ansible_group_name(name: str) -> str:
    """What a name becomes in an Ansible group name (only letters, digits and '_')."""
    return re.sub(r"[^a-z0-9_]", "_", name.lower())


class Outputs:
    """One generated folder, parsed on demand."""

    def __init__(self, files: dict[str, bytes]) -> None:
        self.files = files
        self._hccn: dict[str, dict[str, str]] = {}

    def text(self, path: str) -> str:
        return self.files[path].decode()

    # -- plans ---------------------------------------------------------------------------------
    @cached_property
    def ip_plan(self) -> list[dict[str, str]]:
        return csv_rows(self.files["files/ip-plan.csv"])

    @cached_property
    def cabling(self) -> list[dict[str, str]]:
        return csv_rows(self.files["files/cabling.csv"])

    @cached_property
    def cabled_devices(self) -> set[str]:
        return {r[k] for r in self.cabling for k in ("a_device", "b_device")}

    @cached_property
    def cable_ids(self) -> set[str]:
        return {r["cable_id"] for r in self.cabling}

    @cached_property
    def racks(self) -> set[str]:
        return {r[k] for r in self.cabling for k in ("a_rack", "b_rack")}

    # -- switch configurations -------------------------------------------------------------------
    @cached_property
    def configs(self) -> dict[str, str]:
        return {
            m["name"]: data.decode()
            for path, data in self.files.items()
            if (m := SWITCH_CFG.fullmatch(path))
        }

    @cached_property
    def interface_addresses(self) -> dict[tuple[str, str], set[str]]:
        """(switch, interface) -> 'address/prefix' set from `interface X` ... `ip address A P`."""
        out: dict[tuple[str, str], set[str]] = defaultdict(set)
        for name, text in self.configs.items():
            interface = None
            for line in text.splitlines():
                if line.startswith("interface "):
                    interface = line.split(None, 1)[1].strip()
                elif not line.startswith(" "):
                    interface = None
                elif interface and line.startswith(" ip address "):
                    parts = line.split()
                    if len(parts) >= 4:
                        net = ipaddress.IPv4Interface(f"{parts[2]}/{parts[3]}")
                        out[(name, interface)].add(f"{net.ip}/{net.network.prefixlen}")
        return out

    def config_lines(self, name: str, prefix: str) -> list[str]:
        return [line for line in self.configs[name].splitlines() if line.startswith(prefix)]

    # -- inventory --------------------------------------------------------------------------------
    @cached_property
    def inventory(self) -> dict:
        return yaml.load(self.files["hosts.yml"], Loader=YAML)

    @cached_property
    def group_vars(self) -> dict:
        return yaml.load(self.files["group_vars/all.yml"], Loader=YAML) or {}

    @cached_property
    def groups(self) -> dict[str, set[str]]:
        """Every group with the hosts it holds, children resolved; 'all' included."""
        direct: dict[str, set[str]] = defaultdict(set)
        children: dict[str, set[str]] = defaultdict(set)

        def walk(name: str, node: dict | None) -> None:
            node = node or {}
            for line in node.get("hosts") or {}:
                direct[name] |= set(ansible_hosts(line))
            for child, sub in (node.get("children") or {}).items():
                children[name].add(child)
                walk(child, sub)

        walk("all", self.inventory["all"])

        def members(name: str, seen: frozenset = frozenset()) -> set[str]:
            out = set(direct[name])
            for child in children[name] - seen:
                out |= members(child, seen | {name})
            return out

        return {name: members(name) for name in set(direct) | set(children)}

    @cached_property
    def host_vars(self) -> dict[str, dict]:
        """Every inventory host's variables: any set in hosts.yml, then host_vars/<host>.yml."""
        out: dict[str, dict] = defaultdict(dict)

        def walk(node: dict | None) -> None:
            node = node or {}
            for line, values in (node.get("hosts") or {}).items():
                for host in ansible_hosts(line):
                    out[host].update(values or {})
            for sub in (node.get("children") or {}).values():
                walk(sub)

        walk(self.inventory["all"])
        for host, values in out.items():
            if (data := self.files.get(f"host_vars/{host}.yml")) is not None:
                values.update(yaml.load(data, Loader=YAML) or {})
        return dict(out)

    @cached_property
    def npu_servers(self) -> list[str]:
        return sorted(self.groups.get("npu_servers", ()))

    # -- host files --------------------------------------------------------------------------------
    def hccn(self, host: str) -> dict[str, str]:
        """/etc/hccn.conf of a host as key -> value (address_0=..., netmask_0=...)."""
        if host not in self._hccn:  # read once: the IP plan has a row per NPU port
            text = self.text(f"files/hccn/{host}.conf")
            self._hccn[host] = dict(line.split("=", 1) for line in text.splitlines() if "=" in line)
        return self._hccn[host]

    @cached_property
    def rank_table(self) -> dict:
        return json.loads(self.files["files/hccl/rank_table.json"])

    # -- monitoring, scheduler, failure reports -----------------------------------------------------
    def targets(self, job: str) -> list[dict]:
        return json.loads(self.files[f"files/monitoring/targets/{job}.json"])

    @cached_property
    def hypernodes(self) -> list[dict]:
        path = "files/scheduler/volcano/hypernodes.yaml"
        if path not in self.files:
            return []
        return [d for d in yaml.load_all(self.files[path], Loader=YAML) if d]

    @cached_property
    def node_labels(self) -> dict[str, dict[str, str]]:
        path = "files/scheduler/kubernetes/node-labels.yaml"
        docs = [d for d in yaml.load_all(self.files[path], Loader=YAML) if d]
        return {d["metadata"]["name"]: d["metadata"].get("labels", {}) for d in docs}

    def slurm(self, path: str, keyword: str) -> dict[str, list[str]]:
        """`<keyword>=NAME Nodes=LIST` lines of a Slurm topology file: name -> hosts."""
        out = {}
        if path not in self.files:
            return out
        for line in self.text(path).splitlines():
            fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
            if keyword in fields and "Nodes" in fields:
                out[fields[keyword]] = hostlist.expand_hostlist(fields["Nodes"])
        return out

    @cached_property
    def mindcluster(self) -> dict:
        doc = yaml.load(self.files["files/scheduler/mindcluster/basic-tor-node-cm.yaml"], YAML)
        return json.loads(doc["data"]["tor_info"])

    @cached_property
    def failure_rows(self) -> list[dict[str, str]]:
        return csv_rows(self.files["files/failure-domains.csv"])

    @cached_property
    def failure_job_domains(self) -> list[tuple[str, int]]:
        """(where, servers) of the 'job placed on' table in failure-domains.md."""
        out = []
        in_table = False
        for line in self.text("files/failure-domains.md").splitlines():
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if line.startswith("| job placed on"):
                in_table = True
            elif in_table and line.startswith("|") and not set(cells[0]) <= {"-"}:
                out.append((cells[0], int(cells[2].replace(",", ""))))
            elif in_table and not line.startswith("|"):
                in_table = False
        return out

    # -- addresses ------------------------------------------------------------------------------------
    @cached_property
    def owner_of_address(self) -> dict[str, tuple[str, str]]:
        """address -> (device, port) from the IP plan."""
        return {r["address"]: (r["device"], r["port"]) for r in self.ip_plan}

    @cached_property
    def host_of_inband(self) -> dict[str, str]:
        """In-band address -> host name (rank tables and MindCluster name servers by it)."""
        out = {}
        for host, values in self.host_vars.items():
            if "inband_address" in values:
                out[values["inband_address"].split("/")[0]] = host
        return out
