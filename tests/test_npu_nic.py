"""roles/npu_nic's module run directly (as Ansible runs it) against the hccn_tool test double,
which accepts only the real tool's syntax: every key of a host's hccn.conf is applied with the
documented command or refused by name, and the NPUs of a host are set concurrently."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODULE = ROOT / "roles" / "npu_nic" / "library" / "wanka_hccn.py"
HCCN_TOOL = ROOT / "tests" / "fakes" / "bin" / "hccn_tool"


def _module(tmp: Path, desired: str, **extra) -> dict:
    args = tmp / "args.json"
    params = {"desired": desired, "hccn_tool": str(HCCN_TOOL), "root": str(tmp / "host"), **extra}
    args.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": params}))
    res = subprocess.run([sys.executable, str(MODULE), str(args)], capture_output=True, text=True)
    return json.loads(res.stdout)


def _conf(tmp: Path) -> set[str]:
    path = tmp / "host" / "etc" / "hccn.conf"
    return set(path.read_text().splitlines()) if path.exists() else set()


def test_every_key_of_a_generated_file_is_applied_on_every_npu(tmp_path):
    conf = (ROOT / "inventories" / "pod-128" / "files" / "hccn" / "npu-001.conf").read_text()
    assert "send_arp_status_0=1" in conf
    out = _module(tmp_path, conf, cnp_dscp=48)
    assert not out.get("failed"), out
    want = {line for line in conf.splitlines() if line and not line.startswith("#")}
    assert want <= _conf(tmp_path)  # hccn_tool records each successful -s in hccn.conf
    assert {f"dcqcn_{i}=1" for i in range(8)} | {f"cnp_dscp_{i}=48" for i in range(8)} <= _conf(
        tmp_path
    )
    again = _module(tmp_path, conf, cnp_dscp=48)
    assert again["changed"] is False, again


def test_a_key_it_cannot_apply_is_refused_by_name_and_nothing_is_set(tmp_path):
    out = _module(tmp_path, "address_0=10.0.0.2\nnetmask_0=255.255.255.0\narp_flood_0=1\nmtu\n")
    assert out["failed"] and "arp_flood_0" in out["msg"] and "mtu" in out["msg"]
    assert _conf(tmp_path) == set()


def test_the_hccn_tool_double_rejects_syntax_the_real_tool_does_not_accept(tmp_path):
    env = {"WANKA_ROOT": str(tmp_path), "PATH": "/usr/bin:/bin"}
    for bad in (
        ["-i", "0", "-send_arp_status", "-s", "1"],
        ["-i", "0", "-send_arp", "-s", "enable"],
        ["-i", "0", "-mtu", "-s", "4200"],
        ["-i", "0", "-ip", "-s", "address", "10.0.0.1"],
    ):
        res = subprocess.run([str(HCCN_TOOL), *bad], capture_output=True, text=True, env=env)
        assert res.returncode == 2 and "invalid command" in res.stderr, bad
    ok = subprocess.run(
        [str(HCCN_TOOL), "-i", "0", "-send_arp", "-s", "enable", "1"], env=env, capture_output=True
    )
    assert ok.returncode == 0
