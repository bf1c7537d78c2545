"""The npu_acceptance role, run for real: ansible-playbook playbooks/acceptance.yml against the
generated pod-128 inventory with a local connection and the test doubles of mpirun and HCCL Test
(tests/fakes, named as such; the HCCL Test double prints the documented table layout)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.slow  # real ansible-playbook runs

ROOT = Path(__file__).resolve().parents[1]
INVENTORY = ROOT / "inventories" / "pod-128"
FAKES = ROOT / "tests" / "fakes"


def _tool(name: str) -> str:
    return shutil.which(name) or str(Path(sys.executable).parent / name)


@pytest.fixture(scope="module")
def acceptance(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("acceptance")
    overrides = tmp / "test-doubles.yml"
    overrides.write_text(
        yaml.safe_dump(
            {
                "all": {
                    "vars": {
                        "ansible_connection": "local",
                        "ansible_python_interpreter": sys.executable,
                        "npu_acceptance_hccl_test_dir": str(FAKES / "hccl_test"),
                        "npu_acceptance_mpirun": str(FAKES / "bin" / "mpirun"),
                        "npu_acceptance_workdir": str(tmp / "work"),
                        "npu_acceptance_textfile_dir": str(tmp),
                        "npu_acceptance_report": str(tmp / "acceptance.md"),
                    }
                }
            }
        )
    )

    def play(degraded: str = "") -> tuple[subprocess.CompletedProcess, str, str]:
        fabric = tmp / "fabric.conf"
        fabric.write_text(degraded)
        env = {
            **os.environ,
            "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
            "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
            "ANSIBLE_HOME": str(tmp / "ansible-home"),
            "ANSIBLE_LOCAL_TEMP": str(tmp / "ansible-tmp"),
            "ANSIBLE_CACHE_PLUGIN_CONNECTION": str(tmp / "facts"),
            "ANSIBLE_NOCOLOR": "1",
            "WANKA_FAKE_FABRIC": str(fabric),
        }
        res = subprocess.run(
            [_tool("ansible-playbook"), "-i", str(INVENTORY / "hosts.yml"), "-i", str(overrides),
             "playbooks/acceptance.yml"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        report = (tmp / "acceptance.md").read_text() if (tmp / "acceptance.md").exists() else ""
        prom = (tmp / "wanka_acceptance.prom").read_text()
        return res, report, prom

    healthy = play()
    # npu-006 sits on par-leaf-0002 (4 servers a leaf); its NPU links run at half speed
    degraded = play("npu-006 0.5\n")
    return {"healthy": healthy, "degraded": degraded, "tmp": tmp}


def test_healthy_fake_cluster_passes_every_scope(acceptance):
    res, report, prom = acceptance["healthy"]
    assert res.returncode == 0, res.stdout[-3000:]
    assert "30 runs, 0 below expectation" in report
    assert "- none" in report
    assert 'wanka_acceptance_passed{scope="cluster",op="all_reduce",unit="cluster"} 1' in prom
    promtool = shutil.which("promtool")
    if promtool:
        (acceptance["tmp"] / "check.prom").write_text(prom)
        check = subprocess.run(
            [promtool, "check", "metrics"], input=prom, capture_output=True, text=True
        )
        assert check.returncode == 0, check.stdout + check.stderr


def test_degraded_link_fails_naming_its_leaf_and_the_shortfall(acceptance):
    res, report, prom = acceptance["degraded"]
    assert res.returncode != 0
    # 23 GB/s busbw x 0.5 = 11.5 GB/s against 0.8 x 25 = 20 GB/s: 42.5% short
    want = "leaf par-leaf-0002: all_reduce busbw 11.5 GB/s, expected 20 GB/s (42.5% short)"
    assert want in res.stdout
    assert want in report
    named = [line for line in report.splitlines() if line.startswith("- ")]
    assert all("par-leaf-0002" in line for line in named), named  # no other leaf or server blamed
    assert 'wanka_acceptance_passed{scope="leaf",op="all_reduce",unit="par-leaf-0001"} 1' in prom
    assert 'wanka_acceptance_passed{scope="leaf",op="all_reduce",unit="par-leaf-0002"} 0' in prom
    assert 'wanka_acceptance_passed{scope="server",op="all_reduce",unit="npu-006"} 1' in prom
