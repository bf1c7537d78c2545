"""Design checks: the legacy design warns with the seeds' reasons, the recommended ones do not."""

from __future__ import annotations

import pytest

from tests.support.examples import expanded


def _codes(name: str, severity: str) -> set[str]:
    return {f.code for f in expanded(name).findings if f.severity == severity}


def test_legacy_design_generates_but_warns_with_the_seeds_reasons():
    warnings = {
        f.code: f.message
        for f in expanded("legacy-100card.yaml").findings
        if f.severity == "warning"
    }
    assert "maintenance cost" in warnings["multi-rail"]
    assert "exposed" in warnings["shared-storage-plane"]
    assert "NFS" in warnings["nfs-access"] and "DPC" in warnings["nfs-access"]
    assert _codes("legacy-100card.yaml", "error") == set()


def test_recommended_examples_have_no_errors_and_no_legacy_warnings():
    for name in ("pod-128.yaml", "cluster-1k.yaml", "wanka-10k.yaml"):
        assert _codes(name, "error") == set(), name
        assert not _codes(name, "warning") & {
            "multi-rail",
            "shared-storage-plane",
            "nfs-access",
            "business-spof",
        }


def test_every_run_reports_oversubscription_pools_power_and_ports():
    codes = {f.code for f in expanded("wanka-10k.yaml").findings}
    assert {"oversubscription", "pool-usage", "rack-power", "ports-left", "cdu-capacity"} <= codes
    lines = [f.message for f in expanded("wanka-10k.yaml").findings if f.code == "oversubscription"]
    assert any("parameter plane leaf: 6400G down / 6400G up (1:1), 3 tiers" in m for m in lines)


def test_single_points_of_failure_on_the_business_plane_warn(tmp_path):
    from generator import pipeline
    from tests.support.examples import ROOT

    text = (
        (ROOT / "blueprints" / "pod-128.yaml")
        .read_text()
        .replace("  border:\n", "  border:\n    firewall: {pair: false}\n", 1)
    )
    text = text.replace("  business:\n    pool:", "  business:\n    leaf: {mlag: false}\n    pool:")
    bp = tmp_path / "spof.yaml"
    bp.write_text(text)
    messages = [
        f.message for f in pipeline.run(bp, emit=False).findings if f.code == "business-spof"
    ]
    assert any("not M-LAG" in m for m in messages) and any(
        "single border firewall" in m for m in messages
    )


@pytest.mark.parametrize("emitters", ["this process", "forked workers"])
def test_every_roce_plane_needs_a_lossless_class(tmp_path, monkeypatch, emitters):
    """The storage plane carries DPC over RoCE: its switches get the lossless class by default, and
    a blueprint that turns PFC off there (or on the parameter plane) fails the design check. The
    model emitters' files, made beside the analysis in forked workers, are dropped too."""
    import yaml

    from generator import parallel, pipeline
    from tests.support.examples import ROOT

    if emitters == "forked workers":
        monkeypatch.setattr(parallel, "PARALLEL_FROM_LINKS", 0)

    cluster = expanded("pod-128.yaml").cluster
    assert cluster.roce_planes == ("parameter", "storage")
    assert {c.plane for c in cluster.lossless} == {"parameter", "storage"}
    bp = yaml.safe_load((ROOT / "blueprints" / "pod-128.yaml").read_text())
    for plane in ("storage", "parameter"):
        variant = yaml.safe_load(yaml.safe_dump(bp))
        variant["networks"][plane]["lossless"] = {"pfc": False}
        path = tmp_path / f"{plane}.yaml"
        path.write_text(yaml.safe_dump(variant))
        result = pipeline.run(path)
        errors = [f for f in result.findings if f.severity == "error" and f.code == "lossless"]
        assert len(errors) == 1 and f"the {plane} plane carries RoCE" in errors[0].message
        assert errors[0].where == ("networks", plane, "lossless")
        assert result.files == [], "nothing is emitted when a design check fails"


def test_a_split_port_on_two_cables_is_a_design_error():
    """generator.analysis.physical: a cage holds one module, so the lanes of one split port on
    two cables stop the run; the examples state the rule held (info)."""
    from generator.analysis.physical import split_ports
    from generator.records import replace

    cluster = expanded("pod-128.yaml").cluster
    [held] = split_ports(cluster)
    assert (held.severity, held.code) == ("info", "split-ports")
    assert "each on one cable" in held.message
    k = next(i for i, x in enumerate(cluster.links) if x.b_port.endswith(":2"))
    leg = cluster.links[k]
    links = (*cluster.links[:k], replace(leg, cable_id="PAR-999999"), *cluster.links[k + 1 :])
    [found] = split_ports(replace(cluster, links=links))
    assert (found.severity, found.code) == ("error", "split-ports")
    parent = leg.b_port.partition(":")[0]
    assert f"{leg.b_device} {parent} ({leg.cable_id}, PAR-999999)" in found.message
