"""The twin on redundancy that must work when one part fails (issue #41 item 2): M-LAG dual-active
detection across the out-of-band access switch (plan level: no root needed)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.twin import drills, linkgroup, mlag, plan
from tests.support.examples import render_example


@pytest.fixture(scope="module")
def pod(tmp_path_factory) -> Path:
    return render_example(tmp_path_factory, "redundancy")


def _isolate(folder: Path, switch: str, far: str) -> None:
    """Put the port of `switch` cabled to `far` into isolation group 1 (the design before #41)."""
    cfg = folder / "files" / "switches" / f"{switch}.cfg"
    text = cfg.read_text()
    text, n = re.subn(
        rf"( description to {far} MEth0/0/0\n portswitch\n port link-type access\n"
        r" port default vlan \d+\n)",
        r"\1 port-isolate enable group 1\n",
        text,
    )
    assert n == 1, far
    cfg.write_text(text)


def test_dual_active_detection_crosses_the_access_switch_unisolated(pod, tmp_path):
    p = plan.plan(pod, {})
    dads = mlag.ends(p)
    assert {(d.device, d.source, d.peer) for d in dads} == {
        ("biz-leaf-0001", "10.102.0.23", "10.102.0.26"),
        ("biz-leaf-0002", "10.102.0.26", "10.102.0.23"),
    }
    assert mlag.blocked(p) == []
    # both MEth ends on oob-access-0001, the BMCs beside them isolated
    oob = p.devices["oob-access-0001"]
    assert sum(i.isolate_group == 1 for i in oob.interfaces.values()) == 16


def test_isolated_detection_ends_are_named_with_their_lines(pod, tmp_path):
    """The review's finding 2 rebuilt on today's output: both MEth ports isolated again."""
    import shutil

    broken = tmp_path / "pod-128"
    shutil.copytree(pod, broken)
    _isolate(broken, "oob-access-0001", "biz-leaf-0001")
    assert mlag.blocked(plan.plan(broken, {})) == []  # one end isolated: the other still reaches it
    _isolate(broken, "oob-access-0001", "biz-leaf-0002")
    found = mlag.blocked(plan.plan(broken, {}))
    assert [(f.file, f.line) for f in found] == [
        ("files/switches/biz-leaf-0001.cfg", 29),
        ("files/switches/biz-leaf-0002.cfg", 29),
    ]
    assert [f.text() for f in found] == [
        "files/switches/biz-leaf-0001.cfg:29: dual-active detection 10.102.0.23 -> 10.102.0.26 "
        "crosses oob-access-0001, which isolates both ends in port isolation group 1",
        "files/switches/biz-leaf-0002.cfg:29: dual-active detection 10.102.0.26 -> 10.102.0.23 "
        "crosses oob-access-0001, which isolates both ends in port isolation group 1",
    ]


def test_the_firewalls_link_groups_and_the_core_link_drill_are_planned(pod):
    """Each firewall's eight border ports are one link-group as the twin reads the config, and the
    drills cut one core-to-firewall cable at its core end (the firewall must notice it)."""
    p = plan.plan(pod, {})
    found = linkgroup.groups(p)
    assert sorted(found) == ["fw-01 link-group 1", "fw-02 link-group 1"]
    for group, members in found.items():
        assert len(members) == 8 and {ns for ns, _ in members} == {plan.ns_name(group[:5])}
    cuts = {what: (ends, kind) for what, ends, kind in drills._targets(p)}
    what = next(w for w in cuts if w.startswith("core-to-firewall link"))
    ends, kind = cuts[what]
    assert what.startswith("core-to-firewall link inb-core-001-fw-01 cable BRD-")
    assert kind == "link" and ends == [(plan.ns_name("inb-core-001"), ends[0][1])]
