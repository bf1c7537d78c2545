"""generator/analysis/redundancy.py: the rules for redundancy that works when one part fails."""

from __future__ import annotations

import pytest

from generator.analysis.redundancy import dad_path, firewall_paths
from generator.artifacts import switches
from generator.model import Cluster
from generator.vocab import LinkKind, Plane
from tests.support.examples import expanded

EXAMPLES = ("pod-128.yaml", "wanka-10k.yaml", "supernode-768.yaml", "legacy-100card.yaml")


def _pairs(cluster: Cluster) -> set[tuple[str, str]]:
    return {tuple(sorted((d.name, d.mlag_peer))) for d in cluster.devices if d.mlag_peer}


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_mlag_pair_detects_dual_active_outside_port_isolation(name):
    """Review 3 finding 2: both MEth ports of every pair were in one isolation group (pod-128
    2/2, wanka-10k 54/54). Now no DAD end is isolated and the design check finds nothing."""
    cluster = expanded(name).cluster
    assert _pairs(cluster), name
    mgmt = {lk.a_device: lk for lk in cluster.links if lk.kind == LinkKind.MGMT}
    for a, b in _pairs(cluster):
        assert not cluster.isolated(mgmt[a]) and not cluster.isolated(mgmt[b]), (a, b)
    assert [f for f in expanded(name).findings if f.code == "mlag-dad"] == []


def test_bmc_ports_stay_isolated_from_each_other():
    """Every host BMC port on an out-of-band access switch is isolated, and only those."""
    cluster = expanded("pod-128.yaml").cluster
    oob = [lk for lk in cluster.links if lk.kind == LinkKind.MGMT and lk.plane == Plane.OOB]
    bmcs = {lk.a_device for lk in oob if lk.a_port == "bmc"}
    assert len(bmcs) == 22
    assert {lk.a_device for lk in oob if cluster.isolated(lk)} == bmcs
    files = {f.path: f.data for f in switches.emit(cluster)}
    text = files["files/switches/oob-access-0001.cfg"].decode()
    blocks = text.split("\ninterface ")
    isolated = [b.splitlines()[0] for b in blocks if "port-isolate enable group 1" in b]
    described = [b for b in blocks if "port-isolate enable group 1" in b]
    assert len(isolated) == 16 and all(" bmc" in b for b in described)
    assert not any("MEth0/0/0" in b and "port-isolate" in b for b in blocks)


def test_the_old_rule_isolating_every_management_port_is_refused(monkeypatch):
    """The rule stated: with every out-of-band management port isolated (the design before the
    fix), each pair's detection path is blocked and the check names the pair and the ports."""
    monkeypatch.setattr(
        Cluster, "isolated", lambda self, lk: lk.kind == LinkKind.MGMT and lk.plane == Plane.OOB
    )
    big = expanded("wanka-10k.yaml").cluster
    assert len(list(dad_path(big))) == len(_pairs(big)) == 27  # the review's 54/54 ends
    cluster = expanded("pod-128.yaml").cluster
    found = list(dad_path(cluster))
    assert len(found) == len(_pairs(cluster)) == 1  # the review's 2/2 ends
    assert all(f.severity == "error" and "isolates" in f.message for f in found)
    assert any("biz-leaf-0001/biz-leaf-0002" in f.message for f in found)
    assert found[0].where == ("networks", "business", "leaf", "mlag")


def test_each_firewall_of_a_pair_binds_its_border_links_into_one_link_group():
    """Review 3 finding 4: one core-to-fw-01 link down floated that core alone to fw-02. Every
    border interface of both firewalls is in link-group 1 now, and the check finds nothing."""
    from generator.artifacts import border

    result = expanded("pod-128.yaml")
    cluster = result.cluster
    firewalls = [d for d in cluster.devices if d.role == "firewall"]
    assert [cluster.link_group(d) for d in firewalls] == [1, 1]
    assert [f for f in result.findings if f.code == "firewall-symmetry"] == []
    files = {f.path: f.data.decode() for f in border.emit(cluster)}
    for fw in firewalls:
        blocks = files[f"files/border/{fw.name}.cfg"].split("\ninterface ")[1:]
        grouped = [b.splitlines()[0] for b in blocks if "\n link-group 1\n" in b]
        links = [lk for lk in cluster.links if lk.plane == "border" and fw.name in
                 (lk.a_device, lk.b_device)]  # fmt: skip
        assert len(grouped) == len(links) == 8, fw.name
    assert "link-group" not in files["files/border/rtr-01.cfg"]


def test_floating_routes_without_a_link_group_are_refused(monkeypatch):
    """The rule stated: the design before the fix (no link-group) is an error naming the
    devices that float link by link."""
    cluster = expanded("pod-128.yaml").cluster
    monkeypatch.setattr(Cluster, "link_group", lambda self, dev: 0)
    found = list(firewall_paths(cluster))
    assert len(found) == 1 and found[0].severity == "error"
    assert "fw-01, fw-02 keep their other links up" in found[0].message
    assert "biz-spine-001" in found[0].message and "Stateful Inspection" in found[0].message
    assert found[0].where == ("zones", "border", "firewall", "pair")


def test_a_single_firewall_has_no_link_group_and_no_finding(tmp_path):
    from generator import pipeline
    from tests.support.examples import ROOT

    text = (ROOT / "blueprints" / "pod-128.yaml").read_text()
    text = text.replace("  border:\n", "  border:\n    firewall: {pair: false}\n", 1)
    (tmp_path / "one.yaml").write_text(text)
    result = pipeline.run(tmp_path / "one.yaml", emit=False)
    fw = [d for d in result.cluster.devices if d.role == "firewall"]
    assert len(fw) == 1 and result.cluster.link_group(fw[0]) == 0
    assert not [f for f in result.findings if f.code == "firewall-symmetry"]


def test_failure_domains_say_what_one_firewall_link_costs():
    from tests.support.examples import generated

    files = {f.path: f.data.decode() for f in generated("pod-128.yaml").files}
    row = next(
        r for r in files["files/failure-domains.md"].splitlines() if r.startswith("| firewall")
    )
    assert "its pair partner carries the traffic" in row
    assert "one of its border links down sets the others down too (link-group)" in row
    assert "both directions of every flow move to the partner together" in row
    assert "USG link-group" in files["docs/README.md"]
