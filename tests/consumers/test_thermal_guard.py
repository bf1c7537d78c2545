"""The thermal guard (roles/thermal_guard), installed by the real ansible-playbook from the pod-128
inventory into a fake root, then its script run against the npu-smi double: every chip that
`npu-smi info -m` lists is watched, both dies of an A3 NPU (npu-smi -c 0 and -c 1) and the one
chip of an A2 NPU, and only a chip above the blueprint's threshold gets the power cap."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from generator.structured_yaml import FastVariablesLoader
from tests.support.ansible_run import play_locally

pytestmark = pytest.mark.slow  # one real ansible-playbook run

ROOT = Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "inventories" / "pod-128"
FAKES = ROOT / "tests" / "fakes" / "bin"
ROLE = ROOT / "roles" / "thermal_guard"
PLAY = f"""
- name: Install the thermal guard as site.yml does
  hosts: npu-001
  gather_facts: false
  roles:
    - role: {ROLE}
"""
# Stand-in for util-linux logger(1) (`logger -t TAG MESSAGE`): records the message.
LOGGER = '#!/bin/sh\n[ "$1" = -t ] && shift 2\necho "$*" >> "$(dirname "$0")/logged"\n'


def _host(root: Path, *lines: str) -> Path:
    """A fake host with 8 NPUs as the npu-smi double keeps them (npu<i>.dies=2 on an A3)."""
    state = root / "var/lib/wanka-fake"
    state.mkdir(parents=True)
    base = [f"npu{i}.{k}" for i in range(8) for k in ("health=OK", "temp=45")]
    (state / "npu.conf").write_text("\n".join((*base, *lines)) + "\n")
    return root


def _caps(root: Path) -> list[str]:
    conf = (root / "var/lib/wanka-fake/npu.conf").read_text().splitlines()
    return [line for line in conf if "power_limit=" in line]


@pytest.fixture(scope="module")
def guard(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("thermal-guard")
    installed = tmp / "installed"
    for d in ("etc/systemd/system", "usr/local/sbin"):
        (installed / d).mkdir(parents=True)
    (tmp / "play.yml").write_text(PLAY)
    extra = {"thermal_guard_root": str(installed), "thermal_guard_npu_smi": str(FAKES / "npu-smi")}
    res = play_locally(
        INVENTORY,
        tmp / "play.yml",
        tmp,
        extra,
        {
            "PATH": f"{FAKES}:{Path(sys.executable).parent}:{os.environ['PATH']}",  # systemctl double
            "WANKA_FAKE_ROOT": str(installed),
        },
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    (bin_dir / "logger").write_text(LOGGER)
    (bin_dir / "logger").chmod(0o755)

    def run(host: Path) -> subprocess.CompletedProcess:
        (bin_dir / "logged").unlink(missing_ok=True)
        script = installed / "usr/local/sbin/wanka-thermal-guard"
        env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "WANKA_ROOT": str(host)}
        return subprocess.run([str(script)], env=env, capture_output=True, text=True, timeout=60)

    settings = yaml.load((INVENTORY / "group_vars/all.yml").read_text(), FastVariablesLoader)[
        "thermal_guard"
    ]
    return {"run": run, "tmp": tmp, "installed": installed, "settings": settings, "log": bin_dir}


def test_a_hot_second_die_of_an_a3_npu_is_capped(guard):
    """Atlas 900 A3 SuperPoD node: 8 NPUs of 2 dies. NPU 3's die 1 is hot; NPU 2's die 0 is at
    the threshold (not above it); everything else at 45 C."""
    limit, threshold = guard["settings"]["power_limit_w"], guard["settings"]["threshold_c"]
    dies = [f"npu{i}.dies=2" for i in range(8)]
    host = _host(
        guard["tmp"] / "a3",
        *dies,
        f"npu3.chip1.temp={threshold + 10}",
        f"npu2.chip0.temp={threshold}",
    )
    res = guard["run"](host)
    assert res.returncode == 0, res.stderr
    assert _caps(host) == [f"npu3.chip1.power_limit={limit}"]
    logged = (guard["log"] / "logged").read_text().splitlines()
    assert logged == [f"NPU 3 chip 1 at {threshold + 10} C: power capped at {limit} W"]


def test_a_hot_a2_npu_is_capped_on_its_only_chip(guard):
    limit, threshold = guard["settings"]["power_limit_w"], guard["settings"]["threshold_c"]
    host = _host(guard["tmp"] / "a2", f"npu6.temp={threshold + 5}")
    res = guard["run"](host)
    assert res.returncode == 0, res.stderr
    assert _caps(host) == [f"npu6.chip0.power_limit={limit}"]
    cool = _host(guard["tmp"] / "a2-cool")
    assert guard["run"](cool).returncode == 0 and _caps(cool) == []


def test_a_host_where_npu_smi_lists_no_chip_fails_the_run_instead_of_watching_nothing(guard):
    host = guard["tmp"] / "no-npu"
    (host / "var/lib/wanka-fake").mkdir(parents=True)
    (host / "var/lib/wanka-fake/npu.conf").write_text("driver=25.5.0\n")
    res = guard["run"](host)
    assert res.returncode == 1
    assert "npu-smi info -m lists no NPU chip" in (guard["log"] / "logged").read_text()
    calls = (guard["installed"] / "var/log/wanka-fake/calls.log").read_text()
    assert "systemctl start wanka-thermal-guard.timer" in calls  # the role started its timer
