"""What `wanka twin prove` decides from the plans alone (no root, nothing runs): which shards
a changed output touches (--since), which drills each shard runs, and that a folder's marker is
read by its start only (a 102,400-card build's lists 6,000+ files)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from generator.output import MARKER, MARKER_TEXT
from generator.twin import plan, prove_drills, prove_since, routing, shard
from generator.twin.plan import ns_name

ROOT = Path(__file__).resolve().parents[2]
POD = ROOT / "inventories" / "pod-128"
BUDGET = 400  # pod-128 in three shards: parameter, management and business, storage


def _plan(folder: Path) -> plan.Plan:
    p = plan.plan(folder, {}, bounded=False)
    routing.apply(p)
    return p


@pytest.fixture(scope="module")
def pod():
    p = _plan(POD)
    return p, shard.layout(p, BUDGET)


def _shard_of(lay, device: str) -> int:
    return next(s.number for s in lay.shards if ns_name(device) in s.interior)


def test_a_port_shut_on_a_storage_spine_touches_the_storage_shard_alone(pod, tmp_path):
    p, lay = pod
    record = {"namespaces": prove_since.namespace_digests(p)}
    assert prove_since.touched(p, lay, record, now=prove_since.namespace_digests(p)) == {}
    copy = tmp_path / "pod-128"
    shutil.copytree(POD, copy)
    cfg = copy / "files" / "switches" / "sto-spine-002.cfg"
    lines = cfg.read_text().splitlines()
    port = next(k for k, line in enumerate(lines) if line.startswith("interface 400GE"))
    lines[lines.index(" undo shutdown", port)] = " shutdown"  # its first 400GE port
    cfg.write_text("\n".join(lines) + "\n")
    q = _plan(copy)
    lay2 = shard.layout(q, BUDGET)
    touched = prove_since.touched(q, lay2, record, now=prove_since.namespace_digests(q))
    assert touched == {_shard_of(lay2, "sto-spine-002"): [ns_name("sto-spine-002")]}


def test_cabling_line_numbers_alone_touch_nothing(pod):
    """A grown output renumbers cabling.csv's rows: the digests leave line numbers out."""
    p, lay = pod
    record = {"namespaces": prove_since.namespace_digests(p)}
    p.links[:] = [plan.Link(k.a, k.b, k.cable, k.plane, k.line + 7) for k in p.links]
    assert prove_since.touched(p, lay, record, now=prove_since.namespace_digests(p)) == {}


def test_each_shard_drills_its_spines_and_one_uplink_per_leaf_class(pod):
    p, lay = pod
    par = next(s for s in lay.shards if ns_name("par-spine-001") in s.interior)
    q = shard.subplan(p, lay, par, {})
    assert prove_drills.spines(q, par.interior) == [f"par-spine-00{k}" for k in range(1, 5)]
    classes = prove_drills.leaf_classes(q, par.interior)
    assert classes == {"parameter_leaves, ce9860-4c-ei, 16 uplinks": "par-leaf-0001"}
    mgmt = next(s for s in lay.shards if ns_name("fw-01") in s.interior)
    q = shard.subplan(p, lay, mgmt, {})
    assert prove_drills.spines(q, mgmt.interior) == []  # the business plane runs OSPF
    assert prove_drills.leaf_classes(q, mgmt.interior) == {}


def test_a_marker_is_read_by_its_start(tmp_path):
    """The marker lists every file written; at 102,400 cards it is 2.1 MB, over the 1 MiB a
    whole read took: the twin reads only its start."""
    folder = tmp_path / "pod-128"
    shutil.copytree(POD, folder)
    marker = folder / MARKER
    marker.write_text(marker.read_text() + "x" * (2 << 20))
    plan.wanka_output(folder)  # no Refused
    marker.write_bytes(b"not " + MARKER_TEXT)
    with pytest.raises(plan.Refused, match="not a wanka output folder"):
        plan.wanka_output(folder)


def test_a_failing_shard_keeps_its_frr_logs_and_conf_not_its_sockets(tmp_path, monkeypatch):
    """`--logs DIR`: what a user reads after a shard failed (the boundary speakers' bgpd logs,
    which go with the shard otherwise), without the sockets copytree cannot copy."""
    import socket

    from generator.twin import prove, run

    state = tmp_path / "state"
    d = state / "frr" / "core-01"
    d.mkdir(parents=True)
    (d / "bgpd.log").write_text("%ADJCHANGE: neighbor 10.0.0.1 Down\n")
    (d / "frr.conf").write_text("router bgp 65000\n")
    (d / "bgpd.pid").write_text("1\n")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(d / "bgpd.vty"))
    monkeypatch.setattr(run, "STATE", state)
    prove._keep_logs(tmp_path / "kept" / "shard-1-pass-2")
    kept = tmp_path / "kept" / "shard-1-pass-2" / "core-01"
    assert sorted(f.name for f in kept.iterdir()) == ["bgpd.log", "frr.conf"]
    assert "Down" in (kept / "bgpd.log").read_text()
    sock.close()
