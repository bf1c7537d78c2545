"""wanka twin prove on cluster-1k (root, network namespaces, FRR: installed by .ci/run from
Debian): the sharded run's FIBs are the unsharded twin's, route for route; a budget too small
for what cannot be cut is refused before anything runs. (pod-128 in shards: test_twin_prove_pod.)"""

from __future__ import annotations

import json

from generator.twin import plan, run
from tests.support.twin import CLUSTER, REAL, prove

pytestmark = REAL


def test_cluster_1k_in_shards_has_the_fibs_of_the_unsharded_twin(tmp_path):
    """Two runs: one shard (the whole twin) and three (the parameter plane cut at its eBGP
    sessions, leaves stood in for by speakers). A device running BGP has the same FIB in both,
    route for route. The OSPF planes are never cut (one unit, run alike in both): their FIBs hold
    the same destinations; which of more equal-cost paths than `maximum load-balancing` ospfd
    installs differs between two whole twins already (measured: biz-spine-001, 10.100.0.64/26,
    3 of 6 paths), so their next hops are not compared."""
    whole, cut = tmp_path / "whole.json", tmp_path / "sharded.json"
    one = prove("--no-drills", "--fibs", str(whole))
    assert one.returncode == 0, one.stdout + one.stderr
    assert "shards 1," in one.stdout
    three = prove("--memory", "1500", "--no-drills", "--fibs", str(cut))
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


def test_a_budget_too_small_for_what_cannot_be_cut_exits_2_before_anything_runs():
    done = prove("--memory", "1000")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "4 routers that cannot be cut (par-spine-001 ... par-spine-004)" in done.stderr
    assert "over the 1,000 MiB budget (--memory)" in done.stderr
    assert run.namespaces() == []
