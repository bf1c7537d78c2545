"""wanka twin prove on cluster-1k (root, network namespaces, FRR: installed by .ci/run from
Debian): the sharded run's FIBs are the unsharded twin's, route for route."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.twin import plan, run

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = ROOT / "inventories" / "cluster-1k"
WANKA = [sys.executable, "-m", "generator", "twin"]
ENV = {**os.environ, "WANKA_TWIN_INSTANCE": run.INSTANCE, "WANKA_TWIN_STATE": str(run.BASE)}
needs = run.missing()
pytestmark = [
    pytest.mark.minutes,
    pytest.mark.slow,
    pytest.mark.skipif(bool(needs), reason="the twin needs " + ", ".join(needs)),
]


def _prove(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*WANKA, "prove", str(CLUSTER), "--no-flows", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=1800, env=ENV)  # fmt: skip


def test_cluster_1k_in_shards_has_the_fibs_of_the_unsharded_twin(tmp_path):
    """Two runs: one shard (the whole twin) and three (the parameter plane cut at its eBGP
    sessions, leaves stood in for by speakers). A device running BGP has the same FIB in both,
    route for route. The OSPF planes are never cut (one unit, run alike in both): their FIBs hold
    the same destinations; which of more equal-cost paths than `maximum load-balancing` ospfd
    installs differs between two whole twins already (measured: biz-spine-001, 10.100.0.64/26,
    3 of 6 paths), so their next hops are not compared."""
    whole, cut = tmp_path / "whole.json", tmp_path / "sharded.json"
    one = _prove("--fibs", str(whole))
    assert one.returncode == 0, one.stdout + one.stderr
    assert "shards 1," in one.stdout
    three = _prove("--memory", "1500", "--fibs", str(cut))
    assert three.returncode == 0, three.stdout + three.stderr
    assert "shards 3," in three.stdout and "32 boundary speakers" in three.stdout
    assert "ok   devices inside several shards have one FIB: 4/4" in three.stdout  # the spines
    a, b = json.loads(whole.read_text()), json.loads(cut.read_text())
    assert a.keys() == b.keys() and len(a) == 147  # every device namespace, each once
    p = plan.plan(CLUSTER, {})
    bgp = {d for d, dev in p.devices.items() if dev.bgp}
    assert len(bgp) == 50
    differences = {ns: sorted(set(a[ns]) ^ set(b[ns])) for ns in bgp if a[ns] != b[ns]}
    assert differences == {}
    for ns in a.keys() - bgp:
        assert {r.split()[0] for r in a[ns]} == {r.split()[0] for r in b[ns]}, ns
    # not an empty match: a leaf holds every other leaf's subnet through its 16 spine uplinks
    learned = [r for r in a["par-leaf-0001"] if " proto bgp " in r and r.split()[0].endswith("/26")]
    assert len(learned) == 31 and all(r.count(" via ") == 16 for r in learned)
    assert run.namespaces() == []


def test_a_fault_in_one_shard_fails_naming_its_file_and_line(tmp_path):
    """cluster-1k with par-leaf-0030 (a leaf of the second shard of three) installing one path
    where the design gives 16: exit 1, the leaf's `maximum load-balancing` line named, in its
    shard; the other shards hold."""
    folder = tmp_path / "cluster-1k"
    shutil.copytree(CLUSTER, folder)
    path = folder / "files" / "switches" / "par-leaf-0030.cfg"
    lines = path.read_text().splitlines()
    at = lines.index("  maximum load-balancing 16")
    lines[at] = "  maximum load-balancing 1"
    path.write_text("\n".join(lines) + "\n")
    done = subprocess.run([*WANKA, "prove", str(folder), "--no-flows", "--memory", "1500"],
                          cwd=ROOT, capture_output=True, text=True, timeout=1800, env=ENV)  # fmt: skip
    assert done.returncode == 1, done.stdout + done.stderr
    failed = [line for line in done.stdout.splitlines() if line.startswith("FAIL")]
    assert failed == [
        "FAIL shard 2: leaf routes to every leaf subnet of the build, ECMP width of the design: "
        "279/310"
    ], done.stdout  # 10 leaves to the 31 others' subnets; par-leaf-0030's 31 routes: 1 path
    assert f"files/switches/par-leaf-0030.cfg:{at + 1}: par-leaf-0030: 1 next hops" in done.stdout
    assert "the design gives 16 (16 uplinks to spines" in done.stdout


def test_a_budget_too_small_for_what_cannot_be_cut_exits_2_before_anything_runs():
    done = _prove("--memory", "1000")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "4 routers that cannot be cut (par-spine-001 ... par-spine-004)" in done.stderr
    assert "over the 1,000 MiB budget (--memory)" in done.stderr
    assert run.namespaces() == []
