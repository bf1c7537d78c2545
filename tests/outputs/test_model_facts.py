"""Facts stated by more than one output agree, because the model states them once.

Each test is what a reviewer would check across two generated files: the routing protocol and
hosts.yml's bgp_asn, the switch configs' NTP/syslog servers and the inventory's, every switch's
management address in its config and as its ansible_host, the ip-plan's gateways on the device and
interface the config puts them, and the domain names the inventory, monitoring, scheduler and rank
table use."""

from __future__ import annotations

import ast
import csv
import io
import json
from pathlib import Path

import pytest
import yaml

from generator import parallel, pipeline
from generator.model import ip
from tests.support.examples import LARGE_EXAMPLES, ROOT, generated
from tests.support.output_readers import YAML, Outputs

POD = (ROOT / "blueprints" / "pod-128.yaml").read_text()


def _run(tmp: Path, name: str, text: str) -> pipeline.Result:
    path = tmp / f"{name}.yaml"
    path.write_text(text)
    return pipeline.run(path)


@pytest.fixture(scope="module")
def ospf(tmp_path_factory: pytest.TempPathFactory) -> pipeline.Result:
    text = POD.replace(
        "    pool: 10.64.0.0/18", "    pool: 10.64.0.0/18\n    routing: {protocol: ospf}"
    )
    return _run(tmp_path_factory.mktemp("ospf"), "ospf", text)


@pytest.fixture(scope="module")
def ops_only(tmp_path_factory: pytest.TempPathFactory) -> pipeline.Result:
    text = POD.replace("nodes: {controller: 1, monitoring: 1, bastion: 1}", "nodes: {ops: 2}")
    return _run(tmp_path_factory.mktemp("ops"), "ops", text)


def files(result: pipeline.Result) -> dict[str, bytes]:
    return {f.path: f.data for f in result.files}


def host_vars(result: pipeline.Result) -> dict[str, dict]:
    """Every inventory host's variables (hosts.yml, then host_vars/<host>.yml)."""
    return Outputs(files(result)).host_vars


def switch_configs(result: pipeline.Result) -> dict[str, dict]:
    return {
        Path(p).stem: yaml.load(data, Loader=YAML)
        for p, data in files(result).items()
        if p.startswith("files/switches/") and p.endswith(".yml")
    }


def test_ospf_parameter_plane_carries_no_bgp_asn_anywhere(ospf):
    result = ospf
    hv, configs = host_vars(result), switch_configs(result)
    par = [n for n, c in configs.items() if c["plane"] == "parameter"]
    assert par
    for name in par:
        assert configs[name]["routing"]["protocol"] == "ospf"
        assert "bgp_asn" not in hv[name], name
        assert "router bgp" not in files(result)[f"files/switches/{name}.cfg"].decode()
    # every switch that does carry an ASN in the inventory runs BGP with that ASN
    for name, c in configs.items():
        if "bgp_asn" in hv[name]:
            assert c["routing"]["protocol"] == "bgp" and c["routing"]["asn"] == hv[name]["bgp_asn"]


def test_services_are_the_same_in_switch_configs_and_inventory_with_ops_only_nodes(ops_only):
    result = ops_only
    all_vars = yaml.load(files(result)["group_vars/all.yml"], Loader=YAML)
    ops = sorted(
        ip(a.ip)
        for a in result.cluster.addresses
        if a.device.startswith("ops-") and a.plane == "inband"
    )
    assert all_vars["ntp_servers"] == ops and all_vars["syslog_servers"] == ops
    for name, c in switch_configs(result).items():
        assert [n["address"] for n in c["management"]["ntp"]] == all_vars["ntp_servers"], name
        assert c["management"]["syslog"] == all_vars["syslog_servers"], name


@pytest.mark.parametrize("name", ["pod-128.yaml", "legacy-100card.yaml"])
def test_every_switch_has_one_management_address_in_config_inventory_and_monitoring(name):
    result = generated(name)
    hv, configs = host_vars(result), switch_configs(result)
    snmp = json.loads(files(result)["files/monitoring/targets/snmp.json"])
    polled = {t["labels"]["switch"]: t["targets"][0] for t in snmp}
    switches = [d for d in result.cluster.devices if d.plane]
    assert any(d.plane == "oob" for d in switches)
    for d in switches:
        address = hv[d.name].get("ansible_host")
        assert address, f"{d.name} has no ansible_host"
        assert polled[d.name] == address, d.name
        if d.name in configs:
            mgmt = configs[d.name]["management"]
            assert mgmt["address"] == address, d.name
            iface = next(i for i in configs[d.name]["interfaces"] if i["name"] == mgmt["interface"])
            assert iface["address"] == address, d.name


@pytest.mark.parametrize("name", ["pod-128.yaml", "legacy-100card.yaml"])
def test_ip_plan_gateways_are_on_the_device_and_interface_the_config_says(name):
    result = generated(name)
    configs = switch_configs(result)
    devices = result.cluster.device_by_name
    rows = list(csv.DictReader(io.StringIO(files(result)["files/ip-plan.csv"].decode())))
    assert all(r["device"] in devices for r in rows), "ip-plan names a device that does not exist"
    gateways = [r for r in rows if r["device"] in configs and r["port"].startswith("Vlanif")]
    assert gateways
    for r in gateways:
        iface = {i["name"]: i for i in configs[r["device"]]["interfaces"]}
        assert r["port"] in iface, (r["device"], r["port"])
        assert iface[r["port"]]["address"] == r["address"], (r["device"], r["port"])
    # and every Vlanif a config carries is in the ip-plan on that device
    planned = {(r["device"], r["port"], r["address"]) for r in rows}
    for name_, c in configs.items():
        for i in c["interfaces"]:
            if i.get("mode") == "vlanif":
                assert (name_, i["name"], i["address"]) in planned


def test_supernode_and_pod_names_agree_across_inventory_monitoring_scheduler_rank_table():
    result = generated("supernode-768.yaml")
    out, hv = files(result), host_vars(result)
    npu = json.loads(out["files/monitoring/targets/npu-exporter.json"])
    labels = {t["labels"]["host"]: t["labels"] for t in npu}
    hyper = [d for d in yaml.load_all(out["files/scheduler/volcano/hypernodes.yaml"], YAML) if d]
    supernode_members = {
        d["metadata"]["name"]: {m["selector"]["exactMatch"]["name"] for m in d["spec"]["members"]}
        for d in hyper
        if d["spec"]["tierName"] == "supernode"
    }
    table = json.loads(out["files/hccl/rank_table.json"])
    host_of = {s.host_ip: s.name for s in result.cluster.npu_servers}
    pod_of = {
        host_of[int.from_bytes(bytes(map(int, m["server_id"].split("."))), "big")]: p[
            "super_pod_id"
        ]
        for p in table["super_pod_list"]
        for m in p["server_list"]
    }
    groups = Outputs(out).groups
    for s in result.cluster.npu_servers:
        name = hv[s.name]["supernode"]
        assert labels[s.name]["supernode"] == name
        assert s.name in supernode_members[name]
        assert s.name in groups[name.replace("-", "_")]
        assert pod_of[s.name] == str(s.super_pod_id)  # the hardware's Super Pod ID (facts)
        assert labels[s.name]["pod"] == hv[s.name].get("pod", labels[s.name]["pod"])


def test_rank_ids_of_the_rank_table_are_the_models():
    result = generated("pod-128.yaml")
    table = json.loads(files(result)["files/hccl/rank_table.json"])
    got = [int(d["rank_id"]) for s in table["server_list"] for d in s["device"]]
    want = [d.rank for s in result.cluster.npu_servers for d in s.devices]
    assert got == want == list(range(len(want)))


def test_legacy_shared_storage_is_a_plane_with_its_own_cables_and_addresses():
    """Storage nodes dual-homed to the business spines: STO- cables, every storage port addressed,
    and its gateway on the spine interface of the VLAN its cabled spine port is in."""
    result = generated("legacy-100card.yaml")
    out = files(result)
    rows = list(csv.DictReader(io.StringIO(out["files/cabling.csv"].decode())))
    storage = [r for r in rows if r["plane"] == "storage"]
    assert storage and all(r["cable_id"].startswith("STO-") for r in storage)
    plan = list(csv.DictReader(io.StringIO(out["files/ip-plan.csv"].decode())))
    addressed = {(r["device"], r["port"]): r for r in plan}
    configs = switch_configs(result)
    for r in storage:
        host, port, spine, spine_port = r["a_device"], r["a_port"], r["b_device"], r["b_port"]
        a = addressed[(host, port)]
        iface = {i["name"]: i for i in configs[spine]["interfaces"]}
        cabled = iface[spine_port]
        vlan = configs[spine]["port_profiles"][cabled["profile"]]["vlan"]
        assert iface[f"Vlanif{vlan}"]["address"] == a["gateway"]


@pytest.mark.parametrize(
    "module", ["switches", "inventory", "monitoring", "scheduler", "hccl", "hccn", "cabling"]
)
def test_emitter_reads_only_the_model(module):
    """Emitters format the model: no blueprint, no catalog, no other emitter (the helpers beside
    them in generator/artifacts, as switch_ports, are not emitters)."""
    source = (ROOT / "generator" / "artifacts" / f"{module}.py").read_text()
    assert "cluster.blueprint" not in source and "build_catalog" not in source
    imported = {
        node.module
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ImportFrom) and node.module
    }
    emitters = {f"generator.artifacts.{name}" for name in parallel.EMITTERS}
    assert not imported & emitters
    assert not {m for m in imported if m.startswith(("generator.catalog", "generator.expand"))}


# -- facts the model holds are computed nowhere else (issue #33 item 1) ------------------------------

GENERATOR = ROOT / "generator"
SWITCH_EMITTER = {
    GENERATOR / "artifacts" / "switch_ports.py",
    GENERATOR / "artifacts" / "switches.py",
}


def _readers() -> list[Path]:
    """Emitters, verify modules, the analysis and the CLI: everything after expand."""
    return [
        *(GENERATOR / "artifacts").glob("*.py"),
        *(GENERATOR / "verify").glob("*.py"),
        *(GENERATOR / "analysis").glob("*.py"),
        *(GENERATOR / "cli").glob("*.py"),
    ]


def _name(node: ast.AST) -> str:
    """`cluster`, `self.cluster`, `result.cluster`, an imported name -> the last name; ""
    for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.alias):
        return node.name
    return node.attr if isinstance(node, ast.Attribute) else ""


def _is_server(node: ast.AST) -> bool:
    """An NPU server as the emitters name it: `s`, `server`, `npu_servers[i]`."""
    if isinstance(node, ast.Subscript):
        return _name(node.value) == "npu_servers"
    return _name(node) in ("s", "server", "srv", "npu_server")


def model_fact_recomputations(path: Path) -> list[str]:
    """Where a module computes what the model holds: cards as `len(<server>.devices)`, cards
    per server as `npu_servers[0].npus`, the switch MTU constants, the emitter's PLATFORMS
    outside the switch emitter, and the blueprint through the cluster."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        where = f"{path.name}:{getattr(node, 'lineno', 0)}"
        if (
            isinstance(node, ast.Call)
            and _name(node.func) == "len"
            and node.args
            and isinstance(node.args[0], ast.Attribute)
            and node.args[0].attr == "devices"
            and _is_server(node.args[0].value)
        ):
            found.append(f"{where}: len(<server>.devices) counts dies, Cluster.cards/NpuServer")
        elif isinstance(node, ast.Attribute) and node.attr == "npus":
            value = node.value
            if isinstance(value, ast.Subscript) and _name(value.value) == "npu_servers":
                found.append(f"{where}: npu_servers[0].npus is Cluster.cards_per_server")
        elif (
            isinstance(node, ast.Attribute)
            and node.attr == "blueprint"
            and _name(node.value) == "cluster"
        ):
            found.append(f"{where}: cluster.blueprint (the model has no blueprint)")
        if _name(node) in ("IP_MTU", "JUMBO_FRAME"):
            found.append(f"{where}: switch MTU constant, read Cluster.switch_mtu_of")
        if _name(node) == "PLATFORMS" and path not in SWITCH_EMITTER:
            found.append(f"{where}: switch_ports.PLATFORMS outside the switch emitter")
    return found


def test_no_emitter_verify_module_analysis_or_cli_computes_a_fact_the_model_holds():
    found = [f for path in _readers() for f in model_fact_recomputations(path)]
    assert found == []


def test_the_recomputation_finder_finds_each_known_form(tmp_path):
    """The finder above is not blind: each form the review found is reported."""
    sample = tmp_path / "sample.py"
    sample.write_text(
        "cards = sum(len(s.devices) for s in cluster.npu_servers)\n"
        "npus = cluster.npu_servers[0].npus if cluster.npu_servers else 0\n"
        "preset = cluster.blueprint['hccl']\n"
        "mtu = IP_MTU\n"
        "from generator.artifacts.switch_ports import PLATFORMS\n"
        "ok = len(cluster.devices) + len(failure.devices)\n"
        "per = len(cluster.npu_servers[0].devices)\n"
    )
    found = model_fact_recomputations(sample)
    assert sorted(int(f.split(":")[1]) for f in found) == [1, 2, 3, 4, 5, 7]


# -- the switch MTU follows the NIC MTU, and a NIC MTU no switch carries is a located error ------


def _tiny_with_mtu(tmp: Path, mtu: int | None) -> pipeline.Result:
    from tests.support.examples import TINY

    lossless = f"networks:\n  parameter:\n    lossless: {{mtu: {mtu}}}\n" if mtu else ""
    return _run(tmp, f"mtu-{mtu}", TINY + lossless)


def _switch_and_nic_mtus(result: pipeline.Result) -> tuple[set[str], set[str], set[str]]:
    """Every `mtu` and `jumboframe enable` value on the parameter switches' configs, and every
    NIC MTU of the NPU servers' hccn.conf."""
    from generator.artifacts import hccn, switches

    parameter = {d.name for d in result.cluster.devices if d.plane == "parameter"}
    mtus, jumbos, nics = set(), set(), set()
    for f in switches.emit(result.cluster):
        if not f.path.startswith("files/switches/") or Path(f.path).stem not in parameter:
            continue
        for line in f.data.decode().splitlines() if f.path.endswith(".cfg") else ():
            if line.startswith(" mtu "):
                mtus.add(line.split()[1])
            elif line.startswith(" jumboframe enable "):
                jumbos.add(line.split()[2])
    for f in hccn.emit(result.cluster):
        if f.path.endswith(".conf"):
            nics |= {
                v
                for k, v in (x.split("=", 1) for x in f.data.decode().splitlines() if "=" in x)
                if k.startswith("mtu_")
            }
    return mtus, jumbos, nics


def _mtu_errors(result: pipeline.Result) -> list[str]:
    return [f.line() for f in result.findings if f.code == "switch-mtu" and f.severity == "error"]


def test_default_nic_mtu_keeps_the_switches_at_9000_and_9216(tmp_path):
    """RoCE's 4200-byte NIC MTU: the switches route 9000 and accept 9216-byte frames (the CE
    default jumbo frame), with no finding."""
    result = _tiny_with_mtu(tmp_path, None)
    assert _switch_and_nic_mtus(result) == ({"9000"}, {"9216"}, {"4200"})
    assert _mtu_errors(result) == []


def test_a_jumbo_nic_mtu_raises_the_switch_mtu_and_jumbo_frame_with_it(tmp_path):
    """A 9400-byte NIC MTU: every parameter switch routes 9400 and accepts 9400 + 22 (header,
    802.1Q tag, FCS), the hccn.conf sets 9400, and the design check is quiet."""
    result = _tiny_with_mtu(tmp_path, 9400)
    assert _switch_and_nic_mtus(result) == ({"9400"}, {"9422"}, {"9400"})
    assert _mtu_errors(result) == []


def test_a_nic_mtu_the_switches_cannot_carry_is_a_located_error(tmp_path):
    """9600 (the schema allows up to 9702): 9622-byte frames exceed the 9500 `jumboframe
    enable` takes, so the check fails at the blueprint line with the highest MTU that works."""
    result = _tiny_with_mtu(tmp_path, 9600)
    (error,) = _mtu_errors(result)
    assert "networks.parameter.lossless.mtu" in error and "9478 or less" in error
    (finding,) = [f for f in result.findings if f.code == "switch-mtu"]
    assert finding.where == ("networks", "parameter", "lossless", "mtu")


@pytest.mark.parametrize("name", sorted(LARGE_EXAMPLES))
def test_the_large_examples_count_the_same_cards_in_every_output(name):
    """The cross-output sweep runs the small examples; the 10,240-card one (slow) here."""
    from tests.support.cross_output_properties import card_counts_agree

    result = generated(name)
    assert card_counts_agree(Outputs({f.path: f.data for f in result.files}), result) == []
