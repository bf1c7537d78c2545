"""First review finding 19: the Atlas 800 model 9000 (Ascend 910) gets Huawei's 4-subnet rule.
MindCluster Ascend Deployer deployer_0025: 4 subnets per node, NPU0 and NPU4 in one (1/5, 2/6,
3/7 likewise); ascend-deployer deployer_000023: the same NPU position of every server in the same
subnet. The rendered hccn.conf files, rank table, cabling plan and leaf configs of the legacy
example are read as a user would; its scripts run against the hccn_tool double."""

from __future__ import annotations

import csv
import io
import ipaddress
import json
import subprocess
from collections import defaultdict
from pathlib import Path

import pytest

from tests.support.examples import expanded, generated

ROOT = Path(__file__).resolve().parents[2]
HCCN_TOOL = ROOT / "tests" / "fakes" / "bin" / "hccn_tool"


def _files(name: str) -> dict[str, bytes]:
    return {f.path: f.data for f in generated(name).files}


def _conf(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines())


def test_legacy_910_has_4_subnets_per_server_npu_i_with_i_plus_4_same_position_everywhere():
    files = _files("legacy-100card.yaml")
    confs = {
        Path(p).stem: _conf(data.decode())
        for p, data in files.items()
        if p.startswith("files/hccn/") and p.endswith(".conf")
    }
    ranks = json.loads(files["files/hccl/rank_table.json"])
    rank_ips = sorted([d["device_ip"] for d in s["device"]] for s in ranks["server_list"])
    conf_ips = []
    cables = csv.DictReader(io.StringIO(files["files/cabling.csv"].decode()))
    leaf_of = {(r["a_device"], r["a_port"]): r["b_device"] for r in cables}
    by_position = defaultdict(set)
    assert len(confs) == 16
    for host, conf in confs.items():
        nets = {
            n: ipaddress.IPv4Interface(f"{conf[f'address_{n}']}/{conf[f'netmask_{n}']}")
            for n in range(8)
        }
        assert len({i.network for i in nets.values()}) == 4, host
        for n in range(4):
            assert nets[n].network == nets[n + 4].network, (host, n)
        for n, iface in nets.items():
            by_position[n % 4].add(iface.network)
            gateway = conf[f"gateway_{n}"]
            assert ipaddress.IPv4Address(gateway) in iface.network
            leaf = leaf_of[(host, f"npu{n}")]  # the gateway is on the leaf the NPU is cabled to
            cfg = files[f"files/switches/{leaf}.cfg"].decode()
            assert f" ip address {gateway} {iface.network.prefixlen}\n" in cfg, (host, n, leaf)
        conf_ips.append([str(nets[n].ip) for n in range(8)])
    assert rank_ips == sorted(conf_ips)  # device i's rank-table device_ip is its hccn address
    assert {p: len(nets) for p, nets in by_position.items()} == {0: 1, 1: 1, 2: 1, 3: 1}


def test_a2_single_rail_keeps_all_8_npus_of_a_server_in_one_subnet():
    for s in expanded("pod-128.yaml").cluster.npu_servers:
        nets = {ipaddress.IPv4Interface((d.ip, d.prefix)).network for d in s.devices}
        assert len(nets) == 1 and len({d.leaf for d in s.devices}) == 1, s.name


def test_the_multi_rail_warning_names_the_legacy_leaves_and_subnets():
    (msg,) = [f.message for f in expanded("legacy-100card.yaml").findings if f.code == "multi-rail"]
    assert "cabled to 4 different leaves" in msg and "land in 4 subnets" in msg


@pytest.mark.slow  # every legacy script on the double: ~5 s
def test_every_legacy_script_runs_to_its_last_line_on_the_hccn_tool_double(tmp_path):
    """NPU i and i+4 get addresses of one subnet: hccn_tool compares a new address with NPUs 0-3
    only, or 4-7 only (hicann/driver hccn_tool/tool_ops.c is_total_dev_ipaddr_conflict), and
    refuses only an equal one. Each of the 16 scripts, on a host with nothing set, ends with rc 0
    and the host's hccn.conf then holds every key of the generated file."""
    files = _files("legacy-100card.yaml")
    scripts = sorted(p for p in files if p.startswith("files/hccn/") and p.endswith(".sh"))
    assert len(scripts) == 16
    for path in scripts:
        root = tmp_path / Path(path).stem
        (root / "etc").mkdir(parents=True)
        script = root / "hccn.sh"
        script.write_bytes(files[path])
        env = {"WANKA_ROOT": str(root), "PATH": "/usr/bin:/bin", "HCCN_TOOL": str(HCCN_TOOL),
               "HCCN_CONF": str(root / "etc" / "hccn.conf")}  # fmt: skip
        done = subprocess.run(["sh", str(script)], env=env, capture_output=True, text=True)
        assert done.returncode == 0, (path, done.stdout + done.stderr)
        want = set(files[path.replace(".sh", ".conf")].decode().splitlines())
        assert want <= set((root / "etc" / "hccn.conf").read_text().splitlines()), path
