"""wanka twin prove (root, network namespaces, FRR: installed by .ci/run from Debian): on
cluster-1k the sharded run's FIBs are the unsharded twin's, route for route; on pod-128 cut in
three shards, faults in two shards are named by file:line, the drills (every spine down, one
uplink per leaf class) hold, and --since re-proves only the shards a changed output touches."""

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
POD = ROOT / "inventories" / "pod-128"
SHARDS = ["--memory", "400"]  # pod-128 in three: parameter, management and business, storage
WANKA = [sys.executable, "-m", "generator", "twin"]
ENV = {**os.environ, "WANKA_TWIN_INSTANCE": run.INSTANCE, "WANKA_TWIN_STATE": str(run.BASE)}
needs = run.missing()
pytestmark = [
    pytest.mark.minutes,
    pytest.mark.slow,
    pytest.mark.skipif(bool(needs), reason="the twin needs " + ", ".join(needs)),
]


def _prove(*args: str, folder: Path = CLUSTER) -> subprocess.CompletedProcess:
    return subprocess.run([*WANKA, "prove", str(folder), "--no-flows", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=1800, env=ENV)  # fmt: skip


def _faulty(tmp_path: Path, *, leaf: bool, spine: bool) -> tuple[Path, list[str]]:
    """A copy of pod-128 with par-leaf-0002 installing one path where the design gives 16
    (parameter shard) and/or sto-spine-002's first 400GE port shut down (storage shard); the
    file:line of each fault."""
    folder = tmp_path / "pod-128"
    shutil.copytree(POD, folder)
    named = []
    if leaf:
        path = folder / "files" / "switches" / "par-leaf-0002.cfg"
        lines = path.read_text().splitlines()
        at = lines.index("  maximum load-balancing 16")
        lines[at] = "  maximum load-balancing 1"
        path.write_text("\n".join(lines) + "\n")
        named.append(f"files/switches/par-leaf-0002.cfg:{at + 1}: par-leaf-0002: 1 next hops")
    if spine:
        path = folder / "files" / "switches" / "sto-spine-002.cfg"
        lines = path.read_text().splitlines()
        port = next(k for k, line in enumerate(lines) if line.startswith("interface 400GE"))
        at = lines.index(" undo shutdown", port)
        lines[at] = " shutdown"
        path.write_text("\n".join(lines) + "\n")
        named.append(
            f"files/switches/sto-spine-002.cfg:{at + 1}: {lines[port].split()[1]} is shut down"
        )
    return folder, named


def test_cluster_1k_in_shards_has_the_fibs_of_the_unsharded_twin(tmp_path):
    """Two runs: one shard (the whole twin) and three (the parameter plane cut at its eBGP
    sessions, leaves stood in for by speakers). A device running BGP has the same FIB in both,
    route for route. The OSPF planes are never cut (one unit, run alike in both): their FIBs hold
    the same destinations; which of more equal-cost paths than `maximum load-balancing` ospfd
    installs differs between two whole twins already (measured: biz-spine-001, 10.100.0.64/26,
    3 of 6 paths), so their next hops are not compared."""
    whole, cut = tmp_path / "whole.json", tmp_path / "sharded.json"
    one = _prove("--no-drills", "--fibs", str(whole))
    assert one.returncode == 0, one.stdout + one.stderr
    assert "shards 1," in one.stdout
    three = _prove("--memory", "1500", "--no-drills", "--fibs", str(cut))
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


def test_faults_in_two_shards_fail_naming_their_file_and_line(tmp_path):
    """pod-128 in three shards, a leaf's `maximum load-balancing` line lowered in the parameter
    shard and a spine port shut down in the storage shard: exit 1, each named by file:line in its
    shard; the management shard holds."""
    folder, named = _faulty(tmp_path, leaf=True, spine=True)
    done = _prove(*SHARDS, "--no-drills", folder=folder)
    assert done.returncode == 1, done.stdout + done.stderr
    failed = {line.split(":")[0] for line in done.stdout.splitlines() if line.startswith("FAIL")}
    assert failed == {"FAIL shard 1", "FAIL shard 3"}, done.stdout
    assert (
        "FAIL shard 1: leaf routes to every leaf subnet of the build, ECMP width of the design: "
        "9/12" in done.stdout
    )  # 4 leaves to the 3 others' subnets; par-leaf-0002's 3 routes: 1 path
    assert "FAIL shard 3: BGP sessions Established" in done.stdout
    for where in named:
        assert where in done.stdout, done.stdout
    assert "the design gives 16 (16 uplinks to spines" in done.stdout


def test_drills_hold_and_since_proves_again_only_the_touched_shard(tmp_path):
    """pod-128 in three shards with the drills: every spine of the parameter and the storage
    plane down in turn, and one uplink of each leaf class, each with the FIBs' widths the design
    gives after it. Then a copy with a storage spine port shut down, `--since` that proof: the
    storage shard alone runs again (exit 1, the port's file:line), the other two are carried."""
    done = _prove(*SHARDS, folder=POD)
    assert done.returncode == 0, done.stdout + done.stderr
    drills = [line for line in done.stdout.splitlines() if ": drill: " in line]
    spines = [f"par-spine-00{k}" for k in range(1, 5)] + [f"sto-spine-00{k}" for k in range(1, 5)]
    for spine in spines:
        assert any(line.startswith("ok") and f"drill: spine {spine} down: 1/1" in line
                   for line in drills), done.stdout  # fmt: skip
    uplinks = [line for line in drills if "drill: uplink of a leaf of " in line]
    assert len(uplinks) == 2 and all(line.startswith("ok") for line in uplinks), done.stdout
    assert "recorded for --since" in done.stderr
    folder, named = _faulty(tmp_path, leaf=False, spine=True)
    again = _prove(*SHARDS, "--no-drills", "--since", str(POD), folder=folder)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "1 of 3 shards proved again, the others carried" in again.stdout
    assert "shard 3: touched since" in again.stderr and "shard 1, pass 1" not in again.stderr
    assert "ok   shard 1: untouched, carried from the recorded proof: 1/1" in again.stdout
    assert "ok   shard 2: untouched, carried from the recorded proof: 1/1" in again.stdout
    assert named[0] in again.stdout, again.stdout
    unknown = _prove(*SHARDS, "--since", str(tmp_path), folder=folder)
    assert (
        unknown.returncode == 2 and "no green `wanka twin prove` of this folder" in unknown.stderr
    )


def test_a_budget_too_small_for_what_cannot_be_cut_exits_2_before_anything_runs():
    done = _prove("--memory", "1000")
    assert done.returncode == 2, done.stdout + done.stderr
    assert "4 routers that cannot be cut (par-spine-001 ... par-spine-004)" in done.stderr
    assert "over the 1,000 MiB budget (--memory)" in done.stderr
    assert run.namespaces() == []
