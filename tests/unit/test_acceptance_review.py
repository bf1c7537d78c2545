"""The design review's expected HCCL bandwidth per acceptance scope (docs/README.md and
docs/report.html, issue #43) against what `wanka predict --write` writes for the same rendered
folder: one figure from one code (generator/hccl_cost.py), read back from the three files."""

from __future__ import annotations

import html
import re
from pathlib import Path

import pytest
import yaml

from generator import cli, hccl_cost
from generator.predict import _job, _plan, fabric, hccl
from tests.support.examples import render_example

COLUMNS = ("scope", "test", "ranks", "units", "tiers", "ceiling", "free", "predicted", "mark")


@pytest.fixture(scope="module", params=["pod-128", "cluster-1k", "legacy-100card"])
def folder(request, tmp_path_factory) -> Path:
    return render_example(tmp_path_factory, f"review-{request.param}", request.param)


def _readme(folder: Path) -> dict[str, dict[str, str]]:
    text = (folder / "docs" / "README.md").read_text()
    section = text.split("## Acceptance: expected HCCL bandwidth per scope", 1)[1]
    section = section.split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("| ")][1:]
    rows = [dict(zip(COLUMNS, line.strip("| ").split(" | "), strict=True)) for line in lines]
    return {r["scope"]: r for r in rows}


def _report(folder: Path) -> dict[str, dict[str, str]]:
    page = (folder / "docs" / "report.html").read_text()
    section = page.split('<section id="acceptance">', 1)[1].split("</section>", 1)[0]
    out = {}
    for scope, row in re.findall(r'<tr data-scope="([^"]+)">(.*?)</tr>', section):
        cells = dict(re.findall(r'<td class="(free|predicted|mark)">([^<]*)</td>', row))
        out[html.unescape(scope)] = {k: html.unescape(v) for k, v in cells.items()}
    return out


def test_the_review_shows_what_wanka_predict_writes_for_each_scope(folder, capsys):
    """Per scope: the review's collision-free busbw is expected.yml's `collision_free` for the
    scope as built; where the traffic turns at one switch (server, leaf) the review's p5 / p50 /
    p95 and pass mark are expected.yml's too, whatever the seeds (no ECMP choice there); across
    spines the review names `wanka predict`, whose hashed figures are below the collision-free
    one (the hash only loses). report.html shows the same cells as README.md."""
    argv = ["predict", str(folder), "--write", "--no-failures", "--seeds", "4"]
    assert cli.main(argv) == 0
    capsys.readouterr()
    written = folder.parent / f"{folder.name}.site" / "acceptance" / "expected.yml"
    expected = yaml.safe_load(written.read_text())
    predicted = expected["scopes"]
    review, report = _readme(folder), _report(folder)
    plan = _plan(folder)
    assert list(review) == [s["name"] for s in plan["scopes"]] == list(report)
    judged = [s for s in plan["scopes"] if s["bound_gbytes_s"]]
    assert judged and len(judged) == len(predicted)
    hashed = 0
    for scope in judged:
        name, row = scope["name"], predicted[scope["name"]]["as built"]
        mine = review[name]
        assert mine["free"] == f"{row['collision_free']:g}", name
        p5, p50, p95 = row["busbw"]
        if scope["tiers"] in ("HCCS", "leaf"):
            assert mine["predicted"] == f"{p5:g} / {p50:g} / {p95:g}", name
            assert p5 == p50 == p95 == row["collision_free"], name
            assert mine["mark"] == f"{row['threshold']:g}", name
        else:
            hashed += 1
            assert mine["predicted"] == "`wanka predict` (ECMP hash)", name
            assert p95 < row["collision_free"], name
        assert report[name] == {
            "free": mine["free"],
            "predicted": mine["predicted"].replace("`", ""),
            "mark": mine["mark"].replace("`", ""),
        }
    # a scope across spines in each example but the one-leaf legacy design
    assert bool(hashed) == (folder.name != "legacy-100card")
    # the same limits, and an upper bound said in both where the catalog has no HCCS figure
    text = (folder / "docs" / "README.md").read_text()
    assert all(limit in text for limit in expected["limits"])
    assert (hccl_cost.NO_HCCS in expected["limits"]) == (folder.name == "legacy-100card")


def test_the_collision_free_figure_is_the_flow_model_with_every_flow_spread(folder):
    """hccl_cost.collision_free (generate's closed form) equals the flow model of the rendered
    files with every flow split evenly over all its equal paths (hccl.collective spread=True,
    the fluid NSLB ideal) for every scope's first unit: on these 1:1 fabrics the per-NIC bound
    is the only limit, so the closed form is the flow model's plateau, not a second model."""
    fab = fabric.load(folder)
    plan = _plan(folder)
    leaves = plan["leaves"]
    hccs = next(s["bound_gbytes_s"] for s in plan["scopes"] if s["kind"] == "server")
    size = plan["judged_at_bytes"]
    router = hccl.flows.Router(fab)
    for scope in plan["scopes"]:
        if not scope["bound_gbytes_s"]:
            continue  # measured, not judged: neither generate nor predict gives a figure
        units = scope["units"]
        if isinstance(units, list):
            servers = [s for leaf in units[0]["leaves"] for s in leaves[leaf]]
        else:
            servers = [next(iter(leaves.values()))[0]]
        job = _job(fab, servers)
        spread = hccl.collective(
            fab, job, size, op=scope["op"], hccs=hccs, spread=True, router=router
        )
        flow_model = round(
            float(hccl_cost.busbw(size, spread.seconds[0], job.ranks, scope["op"])), 2
        )
        closed = hccl_cost.collision_free(
            len(job.servers),
            job.per_server,
            size,
            op=scope["op"],
            hccs=hccs,
            nic_gbytes_s=scope["bound_gbytes_s"],
            mtu=fab.mtu,
        )
        assert closed == flow_model, scope["name"]
