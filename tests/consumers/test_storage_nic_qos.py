"""roles/storage_nic_qos, run for real (ansible-playbook, local connection) on npu-001 of a freshly
generated pod-128 inventory: the mlnx_qos test double (tests/fakes/bin/mlnx_qos) and a fake root
holding what the kernel shows for an mlx5_core port: /sys/class/net/<if>/device/driver, the
MLNX_OFED ecn/roce_{np,rp}/enable/<prio> files ("%d\\n", en_ecn.c), the port's RDMA device
(/sys/class/infiniband/<dev>/ports/1/gid_attrs/ndevs/0, as ibdev2netdev reads it) and its rdma_cm
configfs group (default_roce_tos, "%u\\n", cma_configfs.c). The group is seeded as present: mkdir
of a configfs group (which makes the kernel add ports/<n>/) is not something a plain directory
can show."""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from generator.catalog import shipped_data
from generator.structured_yaml import VariablesLoader
from tests.support.ansible_run import ansible_env, recap, tool
from tests.support.fake_hosts import seed_storage_nic_sysfs

pytestmark = pytest.mark.slow  # real ansible-playbook runs

ROOT = Path(__file__).resolve().parents[2]
FAKES = ROOT / "tests" / "fakes" / "bin"
HOST = "npu-001"
PLAY = f"- hosts: {HOST}\n  gather_facts: false\n  roles: [storage_nic_qos]\n"


def _other_nic(blueprint: dict) -> dict:
    """The blueprint with its servers a catalog model whose storage NIC is an Intel E810 (ice)."""
    model = {k: v for k, v in shipped_data()["servers"]["atlas-800t-a2"].items() if k != "npu_nic"}
    model["storage_nic"] = {"model": "E810", "driver": "ice", "source": "a test's other NIC"}
    blueprint["catalog"] = {"servers": {"other-nic-server": model}}
    blueprint["compute"]["server"] = "other-nic-server"
    return blueprint


def _generate(tmp: Path, name: str, edit=lambda bp: bp) -> Path:
    blueprint = tmp / f"{name}.yaml"
    data = yaml.safe_load((ROOT / "blueprints/pod-128.yaml").read_text())
    blueprint.write_text(yaml.safe_dump(edit(data)))
    out = tmp / name
    res = subprocess.run(
        [sys.executable, "-m", "generator", "generate", str(blueprint), "-o", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr[-2000:]
    return out


@pytest.fixture(scope="module")
def inventories(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("inventories")
    return {
        "pod-128": _generate(tmp, "pod-128"),
        "other-nic": _generate(tmp, "other", _other_nic),
    }


def _vars(inventory: Path) -> dict:
    def read(path: str) -> dict:  # `!unsafe` values as Ansible reads them (structured_yaml)
        return yaml.load((inventory / path).read_text(), VariablesLoader)

    return {**read("group_vars/all.yml"), **read(f"host_vars/{HOST}.yml")}


def _tree(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def _play(tmp: Path, inventory: Path, root: Path, *extra: str) -> subprocess.CompletedProcess:
    (tmp / "play.yml").write_text(PLAY)
    env = ansible_env(tmp)
    return subprocess.run(
        [
            tool("ansible-playbook"),
            *("-i", str(inventory / "hosts.yml"), "-c", "local"),
            *("-e", f"ansible_python_interpreter={sys.executable}"),
            *("-e", f"wanka_root={root}", "-e", f"storage_nic_qos_tool={FAKES / 'mlnx_qos'}"),
            *extra,
            str(tmp / "play.yml"),
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _state(root: Path, port: str, index: int, prio: int) -> dict[str, str]:
    net = root / "sys/class/net" / port / "ecn"
    tos = root / f"sys/kernel/config/rdma_cm/mlx5_{index}/ports/1/default_roce_tos"
    return {
        "tos": tos.read_text(),
        "np": (net / f"roce_np/enable/{prio}").read_text(),
        "rp": (net / f"roce_rp/enable/{prio}").read_text(),
        "qos": (root / f"var/lib/wanka-fake/mlnx_qos.{port}").read_text(),
    }


def test_first_run_sets_tos_ecn_and_qos_a_second_changes_nothing(inventories, tmp_path):
    inv = inventories["pod-128"]
    v = _vars(inv)
    cls, ports = v["storage_lossless"], [n["port"] for n in v["storage_nics"]]
    assert v["storage_nic_driver"] == "mlx5_core"  # the catalog's storage_nic, via the model
    assert cls["tos"] == 4 * cls["dscp"]  # TOS byte: DSCP in the upper six bits
    root = tmp_path / "root"
    seed_storage_nic_sysfs(root, ports)
    first = _play(tmp_path, inv, root)
    assert first.returncode == 0, first.stdout[-3000:]
    assert recap(first)[HOST][1] == 1  # one task, changed
    for i, port in enumerate(ports):
        s = _state(root, port, i, cls["priority"])
        assert s["tos"] == f"{cls['tos']}\n" and s["np"] == "1\n" and s["rp"] == "1\n"
        assert "trust=dscp" in s["qos"] and f"pfc={cls['pfc_bitmap']}" in s["qos"]
        assert f"map.{cls['dscp']}={cls['priority']}" in s["qos"]
        others = [p for p in range(8) if p != cls["priority"]]
        for kind in ("np", "rp"):  # ECN on the lossless priority only
            enable = root / "sys/class/net" / port / f"ecn/roce_{kind}/enable"
            assert all((enable / str(p)).read_text() == "0\n" for p in others)
    before = _tree(root)
    second = _play(tmp_path, inv, root)
    assert second.returncode == 0, second.stdout[-3000:]
    assert recap(second)[HOST][1] == 0
    assert _tree(root) == before


def test_a_wrong_value_is_corrected_and_check_mode_only_reports_it(inventories, tmp_path):
    inv = inventories["pod-128"]
    v = _vars(inv)
    cls, ports = v["storage_lossless"], [n["port"] for n in v["storage_nics"]]
    root = tmp_path / "root"
    seed_storage_nic_sysfs(root, ports)
    assert _play(tmp_path, inv, root).returncode == 0
    tos = root / "sys/kernel/config/rdma_cm/mlx5_1/ports/1/default_roce_tos"
    rp = root / f"sys/class/net/{ports[0]}/ecn/roce_rp/enable/{cls['priority']}"
    tos.write_text("0\n")  # rdma_cm's default after a reload, and ECN turned off by hand
    rp.write_text("0\n")
    edited = _tree(root)
    check = _play(tmp_path, inv, root, "--check")
    assert check.returncode == 0 and recap(check)[HOST][1] == 1
    assert _tree(root) == edited
    fixed = _play(tmp_path, inv, root, "-v")
    assert fixed.returncode == 0, fixed.stdout[-3000:]
    assert recap(fixed)[HOST][1] == 1
    assert tos.read_text() == f"{cls['tos']}\n" and rp.read_text() == "1\n"
    reset = dict(re.findall(r"\(item=(\w+)\) => .*?\"set\": (\[[^]]*\])", fixed.stdout))
    assert reset == {ports[0]: '["ecn_rp"]', ports[1]: '["roce_tos"]'}  # each port: what was wrong


def _refused(res: subprocess.CompletedProcess, root: Path, before: dict[str, str]) -> str:
    assert res.returncode != 0 and recap(res)[HOST][2] == 1
    assert _tree(root) == before  # nothing touched, mlnx_qos not even read
    return res.stdout


def test_another_nic_is_refused_not_misconfigured(inventories, tmp_path):
    other = inventories["other-nic"]
    v = _vars(other)
    ports = [n["port"] for n in v["storage_nics"]]
    assert v["storage_nic_driver"] == "ice"  # the blueprint's catalog override, via the model
    root = tmp_path / "root"
    seed_storage_nic_sysfs(root, ports, driver="ice")
    before = _tree(root)
    out = _refused(_play(tmp_path, other, root), root, before)
    assert "storage NIC driver 'ice'" in out and "only mlx5_core" in out


def test_a_port_whose_driver_is_not_the_catalogs_is_refused(inventories, tmp_path):
    inv = inventories["pod-128"]
    ports = [n["port"] for n in _vars(inv)["storage_nics"]]
    root = tmp_path / "root"
    seed_storage_nic_sysfs(
        root, ports, driver="bnxt_en"
    )  # the catalog says mlx5_core, the host has another NIC
    before = _tree(root)
    out = _refused(_play(tmp_path, inv, root), root, before)
    assert "the port's driver is 'bnxt_en'" in out and "correct the catalog" in out
    missing = _play(tmp_path, inv, root, "-e", '{"storage_nic_driver": ""}')
    assert "none in the catalog" in _refused(missing, root, before)
