"""Atlas A3 supernodes as they are: 16 dies per node, each one device and one rank; the two dies
of one NPU in different subnets; the 1.2 rank table's SDIDs and Super Pod IDs only from facts
collected on the hardware (roles/npu_facts); without them no table, and the output says so."""

from __future__ import annotations

import functools
import ipaddress
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from generator import cli, pipeline
from generator.artifacts import hccl, scheduler
from generator.blueprint.facts import load_npu_facts
from generator.errors import BlueprintError
from tests.support.examples import FACTS, ROOT, generated
from tests.support.output_readers import YAML

BLUEPRINT = ROOT / "blueprints" / "supernode-768.yaml"
FIXTURE = FACTS["supernode-768.yaml"]
FAKES = ROOT / "tests" / "fakes" / "bin"


def with_facts() -> pipeline.Result:
    return generated("supernode-768.yaml")  # with the fixture (tests/support/examples.py FACTS)


@functools.cache
def without_facts() -> pipeline.Result:
    """The example run without facts; its files are the rank table emitter's (what generate
    writes at those paths: emitters are pure), the only ones the test below reads."""
    result = pipeline.run(BLUEPRINT, emit=False)
    result.files = list(hccl.emit(result.cluster, result.analysis))
    return result


def _files(result) -> dict[str, bytes]:
    return {f.path: f.data for f in result.files}


def test_rank_table_from_collected_facts_has_16_ranks_per_node_and_the_fixtures_sdids():
    files = _files(with_facts())
    table = json.loads(files["files/hccl/rank_table.json"])
    assert hccl.rank_table_problems(table) == []
    facts = yaml.load(FIXTURE.read_text(), Loader=YAML)["hosts"]
    by_ip = {hccl.ip(s.host_ip): s.name for s in with_facts().cluster.npu_servers}
    assert table["version"] == "1.2" and len(table["server_list"]) == 96
    assert sum(len(s["device"]) for s in table["server_list"]) == 1536
    for server in table["server_list"]:
        host = by_ip[server["server_id"]]
        assert [d["device_id"] for d in server["device"]] == [str(i) for i in range(16)]
        want = {str(d["device_id"]): str(d["sdid"]) for d in facts[host]["devices"]}
        assert {d["device_id"]: d["super_device_id"] for d in server["device"]} == want
    pods = {p["super_pod_id"]: p for p in table["super_pod_list"]}
    assert set(pods) == {"7", "8"}  # the fixture's Super Pod IDs, not the supernode index
    for pod_id, pod in pods.items():
        for member in pod["server_list"]:
            host = by_ip[member["server_id"]]
            assert {str(d["super_pod_id"]) for d in facts[host]["devices"]} == {pod_id}


def test_two_dies_of_one_npu_are_in_different_subnets():
    files = _files(with_facts())
    for s in with_facts().cluster.npu_servers[:4]:
        conf = dict(
            line.split("=", 1)
            for line in files[f"files/hccn/{s.name}.conf"].decode().splitlines()
            if "=" in line and not line.startswith("#")
        )
        for npu in range(8):
            nets = {
                ipaddress.ip_interface(f"{conf[f'address_{k}']}/{conf[f'netmask_{k}']}").network
                for k in (2 * npu, 2 * npu + 1)
            }
            assert len(nets) == 2, (s.name, npu, nets)
            for k in (2 * npu, 2 * npu + 1):  # each die's gateway is in its own subnet
                assert (
                    ipaddress.ip_address(conf[f"gateway_{k}"])
                    in ipaddress.ip_interface(
                        f"{conf[f'address_{k}']}/{conf[f'netmask_{k}']}"
                    ).network
                )


def test_scheduler_labels_and_rank_table_agree_on_dies_per_node():
    result = with_facts()
    table = json.loads(_files(result)["files/hccl/rank_table.json"])
    per_node = {len(s["device"]) for s in table["server_list"]}
    labels = {
        scheduler.accelerator_type(s, s.supernode is not None) for s in result.cluster.npu_servers
    }
    assert per_node == {16} and labels == {"module-a3-16-super-pod"}


def test_without_facts_no_rank_table_and_the_output_says_what_is_missing():
    result = without_facts()
    files = _files(result)
    assert "files/hccl/rank_table.json" not in files
    text = files[hccl.MISSING].decode()
    assert "96 A3 servers have no collected NPU facts" in text
    assert "npu-smi info -t spod-info" in text and "--facts" in text
    # said, not a warning: before delivery there is no hardware to read facts from, so a design
    # under `--strict` still passes; the deployment refuses without them (roles/hccl_env)
    said = [f for f in result.findings if f.code == "npu-facts"]
    assert len(said) == 1 and said[0].severity == "info"


def test_ranktable_command_refuses_without_facts_and_writes_with_them(tmp_path, capsys):
    assert cli.main(["ranktable", str(BLUEPRINT), "--servers", "48"]) == 2
    assert "no collected NPU facts" in capsys.readouterr().err
    out = tmp_path / "job.json"
    args = ["ranktable", str(BLUEPRINT), "--servers", "48", "--facts", str(FIXTURE)]
    assert cli.main([*args, "-o", str(out)]) == 0
    table = json.loads(out.read_text())
    assert hccl.rank_table_problems(table) == [] and len(table["server_list"]) == 48


def test_facts_that_contradict_the_model_are_refused_in_the_facts_file(tmp_path):
    data = yaml.load(FIXTURE.read_text(), Loader=YAML)
    data["hosts"]["npu-001"]["devices"] = data["hosts"]["npu-001"]["devices"][:8]
    bad = tmp_path / "facts.yml"
    bad.write_text(yaml.dump(data, Dumper=getattr(yaml, "CSafeDumper", yaml.SafeDumper)))
    with pytest.raises(BlueprintError) as err:
        pipeline.run(BLUEPRINT, emit=False, facts=bad)
    text = err.value.render()
    assert text.startswith(str(bad)) and "hosts.npu-001.devices" in text
    bad.write_text("kind: NpuFacts\nhosts: {npu-001: {devices: [{device_id: x}]}}\n")
    with pytest.raises(BlueprintError) as err:
        load_npu_facts(bad)
    assert str(bad) in err.value.render()


@pytest.mark.slow
def test_npu_facts_role_collects_what_npu_smi_reports(tmp_path):
    """roles/npu_facts against the npu-smi test double on two hosts: the file it writes is what
    the generator reads, with the SDIDs the double reports."""
    roots = tmp_path / "roots"
    for h, (pod, base) in {"npu-001": (7, 100), "npu-002": (7, 200)}.items():
        state = roots / h / "var/lib/wanka-fake"
        state.mkdir(parents=True)
        lines = [f"super_pod_id={pod}", "super_pod_size=384", "server_index=0"]
        for n in range(8):
            lines += [f"npu{n}.health=OK", f"npu{n}.dies=2"]
            lines += [f"npu{n}.chip{c}.sdid={base + 2 * n + c}" for c in (0, 1)]
        (state / "npu.conf").write_text("\n".join(lines) + "\n")
    inventory = tmp_path / "hosts.yml"
    inventory.write_text(
        yaml.safe_dump(
            {
                "npu_servers": {"hosts": {"npu-001": {}, "npu-002": {}}},
                "all": {
                    "vars": {
                        "ansible_connection": "local",
                        "ansible_python_interpreter": sys.executable,
                        "wanka_root": str(roots) + "/{{ inventory_hostname }}",
                        "wanka_cluster": "t",
                        "npu_facts_npu_smi": str(FAKES / "npu-smi"),
                        "npu_facts_file": str(tmp_path / "facts.yml"),
                    }
                },
            }
        )
    )
    playbook = shutil.which("ansible-playbook") or str(
        Path(sys.executable).parent / "ansible-playbook"
    )
    env = {**os.environ, "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1"}
    res = subprocess.run(
        [playbook, "-i", str(inventory), str(ROOT / "playbooks" / "npu_facts.yml")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    facts = load_npu_facts(tmp_path / "facts.yml")
    assert set(facts.hosts) == {"npu-001", "npu-002"}
    dies = facts.hosts["npu-002"]
    assert [d.device_id for d in dies] == list(range(16))
    assert [d.sdid for d in dies] == [200 + k for k in range(16)]
    assert {d.super_pod_id for d in dies} == {7} and dies[3].npu_id == 1 and dies[3].chip_id == 1
