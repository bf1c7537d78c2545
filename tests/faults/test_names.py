"""One namespace of names (issue #31 item 4): a hostname pattern or a management role that
collides with another device or group, or gives a name a consumer cannot read, is a located
exit-2 refusal of `wanka generate` that names both owners and the key to change, with nothing
written; every accepted variant parses with the real `ansible-inventory --list`, each device
once, as a host and never as a group."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from generator import cli
from tests.support.ansible_warnings import ansible_warnings
from tests.support.examples import TINY

pytestmark = pytest.mark.skipif(not shutil.which("ansible-inventory"), reason="ansible-core")


def _blueprint(tmp_path: Path, hostname: str | None = None, roles: str = "controller: 1") -> Path:
    text = TINY.replace("{controller: 1}", f"{{{roles}}}")
    if hostname is not None:
        text = text.replace("  cards: 16\n", f'  cards: 16\n  hostname: "{hostname}"\n')
    path = tmp_path / "bp.yaml"
    path.write_text(text)
    return path


def _refused(tmp_path: Path, capsys, blueprint: Path) -> list[str]:
    out = tmp_path / "out"
    code = cli.main(["generate", str(blueprint), "-o", str(out), "-q"])
    err = capsys.readouterr().err
    assert code == 2, err
    errors = [x for x in err.splitlines() if not x.startswith(("warning:", "info:"))]
    errors = [x for x in errors if ": warning: " not in x and ": info: " not in x]
    assert errors and all(x.startswith(f"{blueprint}:") for x in errors), err
    assert "Traceback" not in err and not out.exists()
    return errors


@pytest.mark.parametrize(
    "hostname, name, other",
    [
        ("stor-{index:03d}", "stor-001", "storage node stor-001"),
        ("controller-{index:02d}", "controller-01", "management node controller-01"),
        ("oob-access-{index:04d}", "oob-access-0001", "oob access oob-access-0001"),
        ("rtr-{index:02d}", "rtr-01", "border border-router rtr-01"),
    ],
)
def test_a_hostname_pattern_colliding_with_another_device_is_refused(
    tmp_path, capsys, hostname, name, other
):
    [line] = _refused(tmp_path, capsys, _blueprint(tmp_path, hostname))
    assert f"'{name}' is both " in line and f"NPU server {name}" in line and other in line
    # the key to change is the blueprint's own one of the two (a switch is named by wanka)
    key = "zones.management.nodes.controller" if "management" in other else "compute.hostname"
    assert f": {key}: " in line and f"(change {key} so its names are its own)" in line


@pytest.mark.parametrize(
    "role, group, other",
    [
        ("storage-nodes", "storage_nodes", "wanka's group storage_nodes"),
        ("ungrouped", "ungrouped", "Ansible's implicit group ungrouped"),
        ("zone-training", "zone_training", "the group of zone training"),
        ("border", "border", "wanka's group border"),
    ],
)
def test_a_management_role_named_like_a_generated_group_is_refused(
    tmp_path, capsys, role, group, other
):
    lines = _refused(tmp_path, capsys, _blueprint(tmp_path, roles=f"controller: 1, {role}: 1"))
    key = f"zones.management.nodes.{role}"
    [line] = [x for x in lines if f": {key}: '{group}' is both " in x]
    assert other in line and f"management role {role} (group {group})" in line
    assert f"(change {key} so its names are its own)" in line


@pytest.mark.parametrize(
    "hostname, role, name, other",
    [
        (None, "rtr", "rtr-01", "border border-router rtr-01"),
        (None, "fw", "fw-01", "border firewall fw-01"),
        ("gpu-{index:02d}", "gpu", "gpu-01", "NPU server gpu-01"),
    ],
)
def test_a_management_role_whose_nodes_are_named_like_a_device_is_refused(
    tmp_path, capsys, hostname, role, name, other
):
    blueprint = _blueprint(tmp_path, hostname, roles=f"controller: 1, {role}: 2")
    [line] = _refused(tmp_path, capsys, blueprint)
    key = f"zones.management.nodes.{role}"
    assert f": {key}: '{name}' is both " in line and other in line
    assert f"management node {name} ({key})" in line


@pytest.mark.parametrize("hostname", ["{index:02d}-npu", "{index}x", "0npu-{index}", "{index:04d}"])
def test_a_pattern_giving_a_leading_digit_is_refused(tmp_path, capsys, hostname):
    [line] = _refused(tmp_path, capsys, _blueprint(tmp_path, hostname))
    assert ":7:3: compute.hostname: NPU server " in line
    assert "starts with a letter" in line and line.endswith('(e.g. "npu-{index:04d}")')


@pytest.mark.parametrize(
    "hostname, roles",
    [
        ("gpu{index:03d}", "controller: 1"),
        ("a{index}", "controller: 1, login: 2"),
        ("npu-{index:04d}", "controller: 1, ansible-ctl: 1, storage-ops: 1"),
        ("fwd-{index:02d}", "controller: 1, rack-tools: 1"),
    ],
)
def test_accepted_names_parse_with_ansible_inventory(tmp_path, capsys, hostname, roles):
    out = tmp_path / "out"
    code = cli.main(["generate", str(_blueprint(tmp_path, hostname, roles)), "-o", str(out), "-q"])
    assert code == 0, capsys.readouterr().err
    devices = sorted(p.stem for p in (out / "host_vars").glob("*.yml"))
    run = subprocess.run(
        ["ansible-inventory", "-i", str(out / "hosts.yml"), "--list"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert run.returncode == 0 and not ansible_warnings(run.stderr), run.stderr
    listed = json.loads(run.stdout)
    assert sorted(listed["_meta"]["hostvars"]) == devices
    assert not set(listed) & set(devices)  # no device is also a group
