"""wanka twin prove on pod-128 cut in three shards (root, network namespaces, FRR): faults in two
shards are named by file:line, the drills (every spine down, one uplink per leaf class) hold, and
--since re-proves only the shards a changed output touches. A file of its own, so that pytest-xdist
runs it beside the cluster-1k proof (test_twin_prove) instead of after it."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.support.twin import POD, REAL, prove

pytestmark = REAL
SHARDS = ["--memory", "400"]  # pod-128 in three: parameter, management and business, storage


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


def test_faults_in_two_shards_fail_naming_their_file_and_line(tmp_path):
    """pod-128 in three shards, a leaf's `maximum load-balancing` line lowered in the parameter
    shard and a spine port shut down in the storage shard: exit 1, each named by file:line in its
    shard; the management shard holds."""
    folder, named = _faulty(tmp_path, leaf=True, spine=True)
    done = prove(*SHARDS, "--no-drills", folder=folder)
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
    done = prove(*SHARDS, folder=POD)
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
    again = prove(*SHARDS, "--no-drills", "--since", str(POD), folder=folder)
    assert again.returncode == 1, again.stdout + again.stderr
    assert "1 of 3 shards proved again, the others carried" in again.stdout
    assert "shard 3: touched since" in again.stderr and "shard 1, pass 1" not in again.stderr
    assert "ok   shard 1: untouched, carried from the recorded proof: 1/1" in again.stdout
    assert "ok   shard 2: untouched, carried from the recorded proof: 1/1" in again.stdout
    assert named[0] in again.stdout, again.stdout
    unknown = prove(*SHARDS, "--since", str(tmp_path), folder=folder)
    assert (
        unknown.returncode == 2 and "no green `wanka twin prove` of this folder" in unknown.stderr
    )
