"""roles/npu_nic's module run directly (as Ansible runs it) against the hccn_tool test double,
which accepts only the real tool's syntax: every key of a host's hccn.conf is applied with the
documented command or refused by name, and the NPUs of a host are set concurrently."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
MODULE = ROOT / "plugins" / "modules" / "wanka_hccn.py"
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
    assert {f"dcqcn_en_enable_{i}=1" for i in range(8)} <= _conf(tmp_path)
    assert {f"dcqcn_cnp_dscp_{i}=48" for i in range(8)} <= _conf(tmp_path)
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
        # the real tool's answers (hicann/driver hccn_tool/cmd.c): exit 3 for an unknown
        # command, 4 for a wrong count of parameters
        assert res.returncode in (3, 4), (bad, res.returncode, res.stderr)
        assert "Get invalid major cmd." in res.stderr or "count of input parameters" in res.stderr
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "hccn.conf").touch()
    for good in (["-ip", "-s", "address", "10.0.0.2", "netmask", "255.255.255.0"],
                 ["-send_arp", "-s", "enable", "1"]):  # fmt: skip
        ok = subprocess.run([str(HCCN_TOOL), "-i", "0", *good], env=env, capture_output=True)
        assert ok.returncode == 0, (good, ok.stderr)


def test_every_generated_script_runs_to_its_last_line_on_npus_that_start_with_nothing(tmp_path):
    """Review 2 finding 1: `-dcqcn -s enable 1` stopped every files/hccn/*.sh after NPU 0. Each
    example's first script, run under `set -eu` against the double on a host with no
    /etc/hccn.conf and NPUs never set, ends with rc 0 and every NPU holds the file's keys."""
    for folder in sorted((ROOT / "inventories").iterdir()):
        scripts = sorted((folder / "files" / "hccn").glob("*.sh"))
        if not scripts:
            continue
        root = tmp_path / folder.name
        root.mkdir()
        env = {"WANKA_ROOT": str(root), "PATH": "/usr/bin:/bin", "HCCN_TOOL": str(HCCN_TOOL),
               "HCCN_CONF": str(root / "etc" / "hccn.conf")}  # fmt: skip
        (root / "etc").mkdir()
        done = subprocess.run(["sh", str(scripts[0])], env=env, capture_output=True, text=True)
        assert done.returncode == 0, (scripts[0], done.stderr)
        want = scripts[0].with_suffix(".conf").read_text().splitlines()
        assert set(want) <= _conf_at(root), scripts[0]


def _conf_at(root: Path) -> set[str]:
    return set((root / "etc" / "hccn.conf").read_text().splitlines())


EXAMPLES = sorted(p.name for p in (ROOT / "blueprints").glob("*.yaml"))


@pytest.mark.parametrize("example", EXAMPLES)
def test_the_first_and_last_script_of_every_example_run_to_their_end(example, tmp_path):
    """Issue #29's Done-when: every example's scripts (first and last host: the same template,
    other addresses) run to their last line against the hccn_tool double on a host whose NPUs
    start with nothing and no /etc/hccn.conf. An A3 node's ports are all of RoH type, whose MTU
    cap (4192, hccn_tool/tool.h TOOL_ROH_MAX_MTU_SIZE) a5a7f7e's 4200 passed."""
    from tests.support.examples import generated

    result = generated(example)
    out = {f.path: f.data for f in result.files}
    scripts = sorted(p for p in out if p.startswith("files/hccn/") and p.endswith(".sh"))
    a3 = result.cluster.npu_servers[0].dies_per_npu == 2  # an A3 node: 2 dies per NPU
    for path in dict.fromkeys((scripts[0], scripts[-1])):
        root = tmp_path / Path(path).stem
        state = root / "var" / "lib" / "wanka-fake"
        state.mkdir(parents=True)
        if a3:
            npus = [f"npu{n}.{k}" for n in range(8) for k in ("health=OK", "dies=2", "link=UP")]
            roh = [f"npu{n}.chip{c}.mac_type=roh" for n in range(8) for c in (0, 1)]
            (state / "npu.conf").write_text("\n".join(["product=a3-superpod", *npus, *roh]) + "\n")
        (root / "etc").mkdir()
        script = root / "run.sh"
        script.write_bytes(out[path])
        env = {"WANKA_ROOT": str(root), "PATH": "/usr/bin:/bin", "HCCN_TOOL": str(HCCN_TOOL),
               "HCCN_CONF": str(root / "etc" / "hccn.conf")}  # fmt: skip
        done = subprocess.run(["sh", str(script)], env=env, capture_output=True, text=True)
        assert done.returncode == 0, (path, done.stdout + done.stderr)
        want = out[path.replace(".sh", ".conf")].decode().splitlines()
        assert set(want) <= _conf_at(root), path


def test_an_ascend_910_server_gets_only_the_settings_a_public_source_shows(tmp_path):
    """Review 3 finding 8: -prio_tc, -send_arp and -dcqcn come from the 910B driver source only.
    The Atlas 800 model 9000's files hold the catalog's npu_nic.commands (MindCluster Ascend
    Deployer's hccn variables), the module sets no DCQCN there, and the script still runs to its
    end against the double."""
    from tests.support.examples import generated

    result = generated("legacy-100card.yaml")
    out = {f.path: f.data.decode() for f in result.files}
    script, conf = out["files/hccn/npu-0001.sh"], out["files/hccn/npu-0001.conf"]
    for gone in ("-prio_tc", "-send_arp", "-dcqcn"):
        assert gone not in script, gone
    for gone in ("prio_tc_", "send_arp_status_", "dcqcn_"):
        assert gone not in conf, gone
    for kept in ("-ip -s", "-gateway -s", "-netdetect -s", "-mtu -s", "-pfc -s", "-dscp_to_tc -s"):
        assert script.count(kept) == 8, kept
    info = [f.message for f in result.findings if f.code == "npu-nic"]
    assert any("atlas-800-9000" in m and "-prio_tc, -send_arp, -dcqcn are left" in m for m in info)
    pod = {f.path: f.data.decode() for f in generated("pod-128.yaml").files}
    assert "-dcqcn -s enable 1 alg_mode 0" in pod["files/hccn/npu-001.sh"]  # 910B: unchanged
    applied = _module(tmp_path, conf, cnp_dscp=-1)  # the role passes -1 for a file without dcqcn_
    assert not applied.get("failed"), applied
    assert not any(line.startswith("dcqcn_") for line in _conf(tmp_path))
