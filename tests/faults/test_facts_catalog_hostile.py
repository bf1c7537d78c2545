"""Hostile NPU facts files and catalog overrides (#31 item 5): refused by `wanka generate` with
exit 2, located, and nothing written; size limits; and the facts of a 100,000-card A3 cluster
load. Each refusal's message is data: tests/errors/facts/ (an A3 blueprint of 4 nodes in 2
supernodes with its facts file beside it) and tests/errors/catalog/ (test_error_goldens.py).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from generator import cli
from generator.blueprint.facts import MAX_BYTES, load_npu_facts
from tests.support.examples import ROOT

A3_TINY = (ROOT / "blueprints" / "supernode-768.yaml").read_text()
for old, new in (
    ("servers: 96", "servers: 8"),
    ("supernode: {servers: 48}", "supernode: {servers: 4}"),
    ("count: 6}", "count: 3}"),
    ("controller: 3", "controller: 1"),
    ("name: supernode-768", "name: a3-tiny"),
):
    A3_TINY = A3_TINY.replace(old, new)


@pytest.fixture(scope="module")
def a3(tmp_path_factory) -> Path:
    """An A3 blueprint of 8 nodes in 2 supernodes of 4 (each test writes its facts file)."""
    bp = tmp_path_factory.mktemp("a3") / "a3-tiny.yaml"
    bp.write_text(A3_TINY)
    return bp


def refused(tmp_path: Path, capsys, bp: Path, facts: Path | None = None) -> str:
    """`wanka generate` exits 2 with every line located in `located` (the facts file, else the
    blueprint), no traceback and no output folder; returns stderr."""
    out = tmp_path / "out"
    args = ["generate", str(bp), "-o", str(out)] + (["--facts", str(facts)] if facts else [])
    code = cli.main(args)
    stdout, err = capsys.readouterr()
    assert code == 2, stdout + err
    assert "Traceback" not in err and "AssertionError" not in err
    located = facts or bp
    lines = [x for x in err.strip().splitlines() if not x.startswith(("warning:", "info:"))]
    assert lines and all(x.startswith(f"{located}:") for x in lines), err
    assert not out.exists()
    return err


ERRORS = ROOT / "tests" / "errors"
REFUSED = sorted((ERRORS / "facts").glob("*.yaml")) + sorted((ERRORS / "catalog").glob("*.yaml"))


@pytest.mark.parametrize("case", REFUSED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_refused_facts_and_catalogs_are_located_in_their_file_and_nothing_is_written(
    tmp_path, capsys, case, monkeypatch
):
    """What tests/errors/{facts,catalog} expect `wanka validate` to refuse, `wanka generate`
    refuses too: every line in the facts file (hccl.facts) or the blueprint, nothing written."""
    monkeypatch.chdir(tmp_path)
    facts = case.with_suffix(".yml")
    err = refused(tmp_path, capsys, case, facts if facts.is_file() else None)
    assert err.strip()


# --- facts size: limits for real clusters, a hostile size refused before it is read -----------

HOST = "  {name}:\n    devices:\n" + "".join(
    f"    - chip_id: {d % 2}\n      device_id: {d}\n      npu_id: {d // 2}\n"
    f"      sdid: {{sdid{d}}}\n      server_index: {{index}}\n      super_pod_id: {{pod}}\n"
    for d in range(16)
)


def a3_facts(nodes: int, per_pod: int = 48) -> str:
    """Facts of `nodes` A3 nodes in the role's layout, `per_pod` nodes per Super Pod, from a
    one-node template (SDIDs as npu_facts_fixture makes them)."""
    parts = ["hosts:\n"]
    for n in range(nodes):
        pod, index = divmod(n, per_pod)
        sdids = {f"sdid{d}": (index << 22) | (d << 16) | 0x8000 for d in range(16)}
        parts.append(HOST.format(name=f"npu-{n + 1:05d}", index=index, pod=pod, **sdids))
    return "".join(parts) + "kind: NpuFacts\n"


def test_a_200_mb_facts_file_is_refused_at_once(tmp_path, capsys, a3):
    bp = a3
    facts = tmp_path / "facts.yml"
    with open(facts, "wb") as f:
        f.truncate(200 * 2**20)  # sparse: nothing is written, the size is what counts
    start = time.process_time()  # CPU seconds: load on the machine stretches only wall time
    err = refused(tmp_path, capsys, bp, facts)
    assert time.process_time() - start < 5
    assert f"{facts}: (document): the file is too large: 209,715,200 bytes, the limit is" in err
    assert "the facts of a 100,000-card A3 cluster are 24 MB" in err


def test_a_large_facts_file_outside_the_role_layout_is_refused_at_the_line(tmp_path, capsys, a3):
    bp = a3
    text = a3_facts(2400)  # 4.6 MB: more than a blueprint may be, read only in the role's layout
    facts = tmp_path / "facts.yml"
    facts.write_text(text.replace("      sdid: 12943360\n", "      sdid: 1.2943360e+7\n", 1))
    line = text.splitlines().index("      sdid: 12943360") + 1
    err = refused(tmp_path, capsys, bp, facts)
    assert (
        f"{facts}:{line}:13: hosts.npu-00004.devices[5].sdid: `1.2943360e+7` is outside the "
        "layout roles/npu_facts writes"
    ) in err
    assert "write every id as a whole decimal number" in err
    facts.write_text(text.replace("hosts:\n", "hosts: {npu-x: {devices: []}}\nhost:\n", 1))
    err = refused(tmp_path, capsys, bp, facts)
    assert f"{facts}:1:1: (document): `hosts: {{npu-x: {{devices: []}}}}` is outside" in err


def test_many_values_in_a_small_hand_written_file_are_read_and_checked(tmp_path, capsys, a3):
    """600 nodes in flow style: more values than a blueprint may hold, fewer than a facts file
    outside the role's layout may (facts.MAX_VALUES); read, and refused for what they say."""
    bp = a3
    die = "{{device_id: {d}, npu_id: {n}, chip_id: {c}, sdid: {d}, super_pod_id: 0, server_index: {h}}}"
    hosts = (
        f"npu-{h:03d}: {{devices: ["
        + ", ".join(die.format(d=d, n=d // 2, c=d % 2, h=h) for d in range(16))
        + "]}"
        for h in range(600)
    )
    facts = tmp_path / "facts.yml"  # 600 nodes in flow style: 0.5 MB, 124,800 values
    facts.write_text("{kind: NpuFacts, hosts: {" + ", ".join(hosts) + "}}\n")
    err = refused(tmp_path, capsys, bp, facts)
    assert "more than" not in err
    assert f"{facts}:1:1430: hosts.npu-001.devices[0].sdid: SDID 0 " in err


@pytest.mark.slow
def test_the_facts_of_a_100000_card_a3_cluster_load(tmp_path):
    """12,500 A3 nodes x 16 dies: 24 MB, 1.2 million values, as roles/npu_facts writes them."""
    facts = tmp_path / "facts.yml"
    facts.write_text(a3_facts(12_500))
    size = facts.stat().st_size
    assert 20 * 2**20 < size < MAX_BYTES / 2
    start = time.process_time()
    loaded = load_npu_facts(facts)
    seconds = time.process_time() - start
    assert len(loaded.hosts) == 12_500 and seconds < 30, seconds
    last = loaded.hosts["npu-12500"]
    assert [d.device_id for d in last] == list(range(16))
    assert {(d.super_pod_id, d.server_index) for d in last} == {divmod(12_499, 48)}
    assert last[15].sdid == (12_499 % 48) << 22 | 15 << 16 | 0x8000
