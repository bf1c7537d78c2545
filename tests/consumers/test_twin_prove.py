"""wanka twin prove on cluster-1k (root, network namespaces, FRR: installed by .ci/run from
Debian): the sharded run's FIBs are the unsharded twin's, route for route."""

from __future__ import annotations

import json
import os
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
