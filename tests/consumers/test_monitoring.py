"""files/monitoring/: promtool accepts the Prometheus config, the file_sd targets and the rules of
every example, and the alerts carry the place in the fabric (promtool test rules)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from generator.artifacts import monitoring
from tests.support.examples import EXAMPLES, ROOT, emitted, expanded, generated


def promtool() -> str:
    path = shutil.which("promtool")
    if path:
        return path
    if os.environ.get("CI") == "true":
        pytest.fail("promtool is missing; CI installs it (Debian package prometheus, see .ci/run)")
    pytest.skip("promtool not installed (apt-get install prometheus)")


def _write(name: str, folder: Path) -> Path:
    for path, data in emitted(name, monitoring.emit).items():
        if path.startswith("files/monitoring/"):
            p = folder / path
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
    return folder / "files" / "monitoring"


def _run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize("name", EXAMPLES)
def test_promtool_accepts_config_targets_and_rules(name, tmp_path):
    tool = promtool()
    folder = _write(name, tmp_path)
    res = _run(tool, "check", "config", "prometheus.yml", cwd=folder)  # also reads targets/*.json
    assert res.returncode == 0, res.stdout + res.stderr
    res = _run(tool, "check", "rules", "rules/wanka.rules.yml", cwd=folder)
    assert res.returncode == 0, res.stdout + res.stderr


UNIT_TEST = """
rule_files: [rules/wanka.rules.yml]
evaluation_interval: 30s
tests:
  - interval: 30s
    input_series:
      - series: 'npu_chip_info_temperature{{job="npu-exporter",id="3",{where}}}'
        values: '90x20'
      - series: 'npu_chip_info_hbm_ecc_double_bit_error_cnt{{job="npu-exporter",id="5",{where}}}'
        values: '0 0 1x10'
{links}
    alert_rule_test:
      - eval_time: 5m
        alertname: NpuTemperatureCritical
        exp_alerts:
          - exp_labels: {{severity: critical, job: npu-exporter, id: "3", {labels}}}
            exp_annotations:
              summary: "NPU 3 on {host} (rack {rack}, leaf {leaf}, {pod}, {cdu}) at 90 °C"
              description: "{critical}"
      - eval_time: 5m
        alertname: NpuHbmEccErrors
        exp_alerts:
          - exp_labels: {{severity: critical, job: npu-exporter, id: "5", {labels}}}
            exp_annotations:
              summary: "HBM ECC errors on NPU 5 of {host} (rack {rack}, leaf {leaf}, {pod}, {cdu})"
              description: "{ecc}"
      - eval_time: 5m
        alertname: LeafSuspected
        exp_alerts:
          - exp_labels: {{severity: critical, leaf: {leaf}, pod: {pod}}}
            exp_annotations:
              summary: "4 NPU ports down under leaf {leaf} ({pod})"
              description: "{leaf_why}"
"""


def test_alerts_say_where_in_the_fabric_they_fire(tmp_path):
    """A promtool unit test on the generated rules with the labels of a real target."""
    tool = promtool()
    folder = _write("wanka-10k.yaml", tmp_path)
    targets = json.loads((folder / "targets" / "npu-exporter.json").read_text())
    labels = targets[0]["labels"]
    assert labels == {
        "host": "npu-0001",
        "zone": "training",
        "rack": "T01-01",
        "leaf": "par-leaf-0001",
        "pod": "par-pod01",
        "cdu": "CDU-01",
    }
    where = ",".join(f'{k}="{v}"' for k, v in labels.items())
    links = "\n".join(
        f'      - series: \'npu_chip_info_link_status{{job="npu-exporter",id="{i}",{where}}}\'\n'
        "        values: '0x20'"
        for i in range(4)
    )
    rules = {r["alert"]: r for g in monitoring.rules()["groups"] for r in g["rules"]}
    (folder / "unit.yml").write_text(
        UNIT_TEST.format(
            where=where,
            links=links,
            labels=", ".join(f"{k}: {v}" for k, v in labels.items()),
            critical=rules["NpuTemperatureCritical"]["annotations"]["description"],
            ecc=rules["NpuHbmEccErrors"]["annotations"]["description"],
            leaf_why=rules["LeafSuspected"]["annotations"]["description"],
            **labels,
        )
    )
    res = _run(tool, "test", "rules", "unit.yml", cwd=folder)
    assert res.returncode == 0, res.stdout + res.stderr


def test_every_npu_server_and_switch_is_a_target_with_its_place():
    c = expanded("wanka-10k.yaml").cluster
    files = emitted("wanka-10k.yaml", monitoring.emit)
    npu = json.loads(files["files/monitoring/targets/npu-exporter.json"])
    snmp = json.loads(files["files/monitoring/targets/snmp.json"])
    assert len(npu) == len(c.npu_servers) == 1280
    inband = {a.device: a.ip for a in c.addresses if a.plane == "inband"}
    from generator.model import ip

    first = npu[0]
    assert first["targets"] == [f"{ip(inband['npu-0001'])}:8082"]  # npu-exporter's default port
    assert {t["labels"]["pod"] for t in npu} == {f"par-pod{p:02d}" for p in range(1, 6)}
    switches = [d for d in c.devices if d.is_switch]
    assert len(snmp) == len(switches)
    by_name = {t["labels"]["switch"]: t for t in snmp}
    leaf = by_name["par-leaf-0001"]["labels"]
    assert leaf["pod"] == "par-pod01" and leaf["role"] == "leaf" and leaf["rack"]
    assert "pod" not in by_name["par-core-01-01"]["labels"]
    mgmt = {a.device: a.ip for a in c.addresses if a.plane == "oob"}
    assert by_name["par-leaf-0001"]["targets"] == [ip(mgmt["par-leaf-0001"])]

    sn = generated("supernode-768.yaml")
    labels = json.loads(
        next(f.data for f in sn.files if f.path == "files/monitoring/targets/npu-exporter.json")
    )
    assert {t["labels"]["supernode"] for t in labels} == {"supernode-000", "supernode-001"}


def test_prometheus_config_scrapes_npu_exporter_and_snmp_exporter():
    files = {f.path: f.data for f in generated("pod-128.yaml").files}
    config = yaml.safe_load(files["files/monitoring/prometheus.yml"])
    jobs = {j["job_name"]: j for j in config["scrape_configs"]}
    assert jobs["npu-exporter"]["file_sd_configs"] == [{"files": ["targets/npu-exporter.json"]}]
    snmp = jobs["snmp"]
    assert snmp["metrics_path"] == "/snmp" and snmp["params"]["module"] == ["if_mib"]
    assert snmp["relabel_configs"][-1] == {
        "target_label": "__address__",
        "replacement": "127.0.0.1:9116",
    }
    assert config["rule_files"] == ["rules/wanka.rules.yml"]
    assert config["global"]["external_labels"]["cluster"] == "pod-128"


def test_rules_use_the_seed_thresholds_and_the_exporters_metric_names():
    exprs = {r["alert"]: r["expr"] for g in monitoring.rules()["groups"] for r in g["rules"]}
    assert exprs["NpuTemperatureHigh"] == "npu_chip_info_temperature > 75"
    assert exprs["NpuTemperatureCritical"] == "npu_chip_info_temperature >= 85"
    assert "npu_chip_info_hbm_ecc_double_bit_error_cnt > 0" in exprs["NpuHbmEccErrors"]
    assert "npu_chip_link_up_num" in exprs["NpuLinkFlapping"]
    assert "npu_chip_mac_rx_pfc_pkt_num" in exprs["NpuPfcPauseStorm"]
    assert "npu_chip_optical_rx_power_" in exprs["NpuOpticalRxPowerLow"]
    assert "ifOperStatus" in exprs["SwitchPortFlapping"]
    assert exprs["LeafSuspected"].startswith("count by (leaf, rail_group, pod)")
    assert exprs["CduSuspected"].startswith("count by (cdu)")


@pytest.mark.parametrize("example", ["pod-128", "legacy-100card"])
def test_every_npu_target_leaf_label_names_a_device(example):
    """A `leaf` label is a switch that exists (issue #32: the multi-rail example labelled every
    target par-leaf-0001-0008); a multi-rail server's group of leaves is its `rail_group`."""
    folder = ROOT / "inventories" / example
    targets = json.loads((folder / "files/monitoring/targets/npu-exporter.json").read_text())
    switches = {p.stem for p in (folder / "files" / "switches").glob("*.cfg")}
    leaves = {t["labels"]["leaf"] for t in targets if "leaf" in t["labels"]}
    assert leaves <= switches
    assert all("leaf" in t["labels"] or "rail_group" in t["labels"] for t in targets)
