"""A rack-power finding names the blueprint setting that removes it, and is located there (issue
#41 item 5): the network racks of every zone take zones.training.network_rack.power_kw, compute
racks zones.training.rack.power_kw (or cooling_kw when that is lower), storage racks
zones.storage.rack.power_kw. Before, the lookup missed and every rack was sent to
zones.<its zone>.rack.power_kw: a network rack in the training zone to the compute racks' budget,
one in the storage zone to the storage racks' budget, one in the management zone to a key the
schema does not have.

The warning and error texts as a user sees them are goldens: tests/errors/checks/
network-rack-headroom and compute-rack-cooling-with-its-leaf."""

from __future__ import annotations

import functools
from pathlib import Path

import pytest

from generator import pipeline
from generator.analysis.checks import power_and_cooling
from generator.expand.racks import MANAGEMENT_RACK_KW, rack_budget
from generator.records import replace
from generator.vocab import RackKind, Zone
from tests.support.examples import ROOT, expanded

CHECKS = ROOT / "tests" / "errors" / "checks"
NETWORK_BUDGET = ("zones", "training", "network_rack", "power_kw")


def _setting(spec, path):
    """The value of a blueprint setting, the schema default where the blueprint leaves it out."""
    return functools.reduce(getattr, path, spec)


def _rack_power(findings):
    return [f for f in findings if f.code == "rack-power" and f.severity != "info"]


@pytest.mark.parametrize("name", ["pod-128.yaml", "cluster-1k.yaml", "legacy-100card.yaml"])
def test_the_named_setting_is_the_one_that_budgets_the_rack(name):
    """In the examples, the setting each rack's findings name holds that rack's budget, for every
    (zone, kind) that occurs, network racks in all three zones included."""
    result = expanded(name)
    seen = set()
    for rack in result.cluster.racks:
        seen.add((rack.zone, rack.kind))
        where = rack_budget(rack)
        if rack.kind == RackKind.MANAGEMENT:
            assert where == ("zones", "management", "model")
            assert rack.power_kw == MANAGEMENT_RACK_KW
            continue
        limit = min(rack.power_kw, rack.cooling_kw)
        assert _setting(result.spec, where) == limit, (rack.name, where)
    assert {(Zone.TRAINING, RackKind.NETWORK), (Zone.MANAGEMENT, RackKind.NETWORK)} <= seen
    assert {(Zone.TRAINING, RackKind.COMPUTE), (Zone.STORAGE, RackKind.STORAGE)} <= seen


def _run(tmp_path: Path, case: str, old: str, new: str):
    text = (CHECKS / f"{case}.yaml").read_text(encoding="utf-8")
    assert old in text
    bp = tmp_path / f"{case}.yaml"
    bp.write_text(text.replace(old, new), encoding="utf-8")
    return pipeline.run(bp, emit=False)


def test_a_tight_network_rack_is_sent_to_the_network_rack_budget_and_raising_it_clears(tmp_path):
    same = "network_rack: {power_kw: 6.5}"
    (warning,) = _rack_power(_run(tmp_path, "network-rack-headroom", same, same).findings)
    assert warning.severity == "warning" and warning.where == NETWORK_BUDGET
    assert "raise zones.training.network_rack.power_kw" in warning.message
    assert "zones.training.rack.power_kw" not in warning.message
    raised = _run(tmp_path, "network-rack-headroom", same, "network_rack: {power_kw: 7}")
    assert _rack_power(raised.findings) == []


def test_a_network_rack_over_its_budget_is_located_at_the_network_rack_budget():
    """The expansion never fills a network rack past its budget (it opens another, or refuses a
    switch larger than an empty rack: tests/errors/expand/network-rack-too-small), so the check
    is given one: pod-128's network rack in the storage zone, drawing 31 kW of its 30."""
    cluster = expanded("pod-128.yaml").cluster
    over = next(r for r in cluster.racks if r.zone == Zone.STORAGE and r.kind == RackKind.NETWORK)
    racks = tuple(replace(r, load_kw=31.0) if r is over else r for r in cluster.racks)
    (error,) = _rack_power(power_and_cooling(replace(cluster, racks=racks)))
    assert error.severity == "error" and error.where == NETWORK_BUDGET
    assert f"rack {over.name} (network) draws 31.0 kW, over its 30 kW power budget" in error.message
    assert "raise zones.training.network_rack.power_kw to at least 31" in error.message


def test_a_compute_rack_over_its_cooling_names_the_cooling_and_either_remedy_clears(tmp_path):
    bad = "rack: {servers: 4, power_kw: 30, cooling_kw: 23}"
    errors = _rack_power(_run(tmp_path, "compute-rack-cooling-with-its-leaf", bad, bad).findings)
    assert len(errors) == 4 and {e.severity for e in errors} == {"error"}
    assert {e.where for e in errors} == {("zones", "training", "rack", "cooling_kw")}
    assert "raise zones.training.rack.cooling_kw to at least 25" in errors[0].message
    for fixed in (
        "rack: {servers: 4, power_kw: 30, cooling_kw: 25}",
        "rack: {servers: 3, power_kw: 30, cooling_kw: 23}",
    ):
        run = _run(tmp_path, "compute-rack-cooling-with-its-leaf", bad, fixed)
        assert [f for f in _rack_power(run.findings) if f.severity == "error"] == [], fixed


@pytest.mark.parametrize(
    ("zone", "kind", "where", "says"),
    [
        (Zone.TRAINING, RackKind.COMPUTE, ("zones", "training", "rack", "power_kw"),
         "raise zones.training.rack.power_kw, or lower zones.training.rack.servers"),
        (Zone.TRAINING, RackKind.NETWORK, NETWORK_BUDGET,
         "raise zones.training.network_rack.power_kw)"),
        (Zone.STORAGE, RackKind.STORAGE, ("zones", "storage", "rack", "power_kw"),
         "raise zones.storage.rack.power_kw, or lower zones.storage.rack.nodes"),
        (Zone.MANAGEMENT, RackKind.NETWORK, NETWORK_BUDGET,
         "raise zones.training.network_rack.power_kw)"),
        (Zone.MANAGEMENT, RackKind.MANAGEMENT, ("zones", "management", "model"),
         "management racks take 16 nodes on a 15 kW budget, no blueprint setting"),
    ],
)  # fmt: skip
def test_a_tight_rack_of_each_zone_and_kind_names_its_setting(zone, kind, where, says):
    """pod-128 with one rack of the (zone, kind) loaded to 95% of its budget."""
    cluster = expanded("pod-128.yaml").cluster
    tight = next(r for r in cluster.racks if r.zone == zone and r.kind == kind)
    load = 0.95 * min(tight.power_kw, tight.cooling_kw)
    racks = tuple(replace(r, load_kw=load) if r is tight else r for r in cluster.racks)
    (warning,) = _rack_power(power_and_cooling(replace(cluster, racks=racks)))
    assert warning.severity == "warning" and warning.where == where
    assert f"1 {kind} rack has less than 10% power headroom: {tight.name}" in warning.message
    assert says in warning.message
