"""docs/README.md, docs/report.html, files/bom.csv and files/ip-plan.csv.

report.html is opened in a real headless Chromium (no console errors, every section and drawing
present, a screenshot saved); the Mermaid blocks of README.md are parsed by Mermaid itself under
node (tests/node, installed by .ci/run). In CI (CI=true) a missing browser or parser fails."""

from __future__ import annotations

import csv
import html
import io
import json
import re
import shutil
import subprocess
import time
from collections import Counter
from pathlib import Path

import markupsafe
import pytest
import yaml

from generator.artifacts import docs
from generator.model import ip
from tests.support.consumer_tools import CHROMIUM_FLAGS, chromium, missing
from tests.support.examples import EXAMPLES, ROOT, emitted, expanded, generated

NODE_DIR = ROOT / "tests" / "node"
SECTIONS = (
    "summary",
    "fabric",
    "racks",
    "floor",
    "findings",
    "failures",
    "acceptance",
    "bom",
    "cabling",
    "ips",
)
README_HEADINGS = (
    "## Headline figures",
    "### Switches per plane and layer",
    "### Cables and optics",
    "### Power and cooling per zone",
    "## Fabrics",
    "## Oversubscription per tier",
    "## IP plan",
    "## Racks",
    "## Bill of materials",
    "## Design-check findings",
    "## Failure domains",
)


def _file(result, path: str) -> bytes:
    return next(f.data for f in result.files if f.path == path)


def _texts(svg: str, cls: str) -> list[str]:
    return [
        html.unescape(t) for t in re.findall(rf'<text [^>]*class="{cls}"[^>]*>([^<]*)</text>', svg)
    ]


def _check_layout(dom: str, result) -> None:
    """What the review page must show, read from the DOM Chromium laid out at 1,400 px."""
    root = re.search(r"<html[^>]*>", dom).group(0)
    # the page's own script measured the layout: nothing wider than the window, no section spills
    assert 'data-fits="1"' in root and 'data-spills=""' in root, root
    cluster = result.cluster
    # rack elevations: every drawn rack names each of its devices on its block
    in_rack: dict[str, set[str]] = {}
    for d in cluster.devices:
        in_rack.setdefault(d.rack, set()).add(d.name)
    drawn = re.findall(r'<svg class="elevation".*?</svg>', dom, re.S)
    assert drawn
    for svg in drawn:
        rack = _texts(svg, "rn")[0]
        assert in_rack[rack] <= set(_texts(svg, 'dv[^"]*')), rack
    if len(cluster.racks) <= 64:
        assert len(drawn) == len(cluster.racks)
    # fabric edges carry their bandwidth as text: the parameter spine-leaf links, counted here
    # from the model, appear as "<links> x <speed>": for the whole tier, per pod, or per
    # leaf-spine pair ("... to each leaf") when switches are drawn one by one
    svg = re.search(r'<svg class="fabric" data-plane="parameter".*?</svg>', dom, re.S).group(0)
    labels = _texts(svg, 'bw[^"]*')
    assert labels and len(labels) <= svg.count("<line ")
    by = cluster.device_by_name
    up = [
        x
        for x in cluster.links
        if x.plane == "parameter"
        and {by[x.a_device].role, by[x.b_device].role} == {"leaf", "spine"}
    ]
    (speed,) = {x.speed for x in up}
    pods = Counter(by[x.b_device].pod for x in up)  # the spine's pod, None on two tiers
    pairs = Counter(frozenset((x.a_device, x.b_device)) for x in up)
    expected = {f"{len(up):,} x {speed}G", *(f"{n:,} x {speed}G" for n in pods.values())}
    expected |= {f"{n:,} x {speed}G to each leaf" for n in pairs.values()}
    assert expected & set(labels), (expected, labels)
    # warnings and errors, and the growth status, come before the summary tables
    top = dom.index('<section id="attention"')
    assert top < dom.index('<section id="summary"')
    for f in result.findings:
        if f.severity in ("warning", "error"):
            # Chromium's DOM dump escapes only &, < and >
            assert (
                html.escape(f.message, quote=False) in dom[top : dom.index('<section id="summary"')]
            )


# One example in the fast suite, in one browser start (DOM and screenshot together); the other
# examples run with the slow ones.
@pytest.mark.parametrize(
    "name",
    [n if n == "cluster-1k.yaml" else pytest.param(n, marks=pytest.mark.slow) for n in EXAMPLES],
)
def test_report_opens_in_chromium(name, tmp_path):
    browser = chromium()
    page = tmp_path / "report.html"
    page.write_bytes(_file(generated(name), "docs/report.html"))
    url = page.as_uri()
    shot = tmp_path / "report.png"
    start = time.perf_counter()
    run = subprocess.run(
        [
            browser,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1400,2000",
            f"--screenshot={shot}",
            "--dump-dom",
            url,
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    seconds = time.perf_counter() - start
    dom = run.stdout
    assert run.returncode == 0, run.stderr[-2000:]
    console = [line for line in run.stderr.splitlines() if "CONSOLE" in line or "Uncaught" in line]
    assert not console, console
    assert 'data-ready="1"' in dom, "the page script did not finish"
    assert not re.search(r"<html[^>]*data-errors", dom), dom[:500]
    for section in SECTIONS:
        assert f'<section id="{section}"' in dom, section
    result = generated(name)
    planes = {x.plane for x in result.cluster.links}
    for plane in planes:
        assert f'class="fabric" data-plane="{plane}"' in dom, plane
    assert dom.count('class="floor"') == 1
    # the tables rendered their first page from the inline JSON
    assert re.search(r"of [\d,]+ rows", dom)
    cables = f"{len(result.cluster.links):,} rows"
    assert cables in dom
    _check_layout(dom, result)
    assert shot.stat().st_size > 10_000
    print(f"{name}: report.html {page.stat().st_size:,} bytes, browser {seconds:.2f} s")


def test_warnings_and_growth_lead_the_review(tmp_path):
    """Warnings and errors open the page, before the summary; with a growth plan its status is
    there too, and beyond the plan the devices that move are listed by name."""
    from generator import pipeline

    text = (ROOT / "blueprints" / "pod-128.yaml").read_text()
    bp = yaml.safe_load(text)
    bp["compute"]["cards"], bp["growth"] = 256, {"cards": 128}
    path = tmp_path / "beyond.yaml"
    path.write_text(yaml.safe_dump(bp, sort_keys=False))
    result = pipeline.run(path, emit=False)
    page = next(
        f.data for f in docs.emit(result.cluster, result.analysis) if f.path.endswith(".html")
    )
    page = page.decode()
    top, summary = page.index('<section id="attention"'), page.index('<section id="summary"')
    head = page[top:summary]
    assert result.cluster.growth.beyond and result.cluster.growth.moved
    assert "Beyond the plan" in head and "sev-warning" in head
    for moved in result.cluster.growth.moved:
        assert f"<code>{html.escape(moved)}</code>" in head
    warnings = [f for f in result.analysis.findings if f.severity in ("warning", "error")]
    assert any(f.code == "growth" for f in warnings)
    for f in warnings:
        assert str(markupsafe.escape(f.message)) in head

    legacy = _file(generated("legacy-100card.yaml"), "docs/report.html").decode()
    head = legacy[legacy.index('<section id="attention"') : legacy.index('<section id="summary"')]
    assert "Growth plan" not in head  # no plan, no status
    shown = [f for f in generated("legacy-100card.yaml").findings if f.severity == "warning"]
    assert shown and all(str(markupsafe.escape(f.message)) in head for f in shown)


def _node() -> str:
    node = shutil.which("node")
    if not node or not (NODE_DIR / "node_modules" / "mermaid").is_dir():
        missing("node with tests/node installed (npm ci --prefix tests/node)")
    return node


BROKEN = "```mermaid\nflowchart TB\n  a[[[ -->\n```\n"


@pytest.fixture(scope="module")
def mermaid_results(tmp_path_factory) -> dict[str, list[dict]]:
    """Mermaid's parser run ONCE over every example's README and one broken diagram
    (one node process: loading mermaid costs more than parsing): file stem -> block results."""
    node = _node()
    folder = tmp_path_factory.mktemp("mermaid")
    files = [folder / "broken.md"]
    files[0].write_text(BROKEN)
    for name in EXAMPLES:
        files.append(folder / f"{Path(name).stem}.md")
        files[-1].write_bytes(_file(generated(name), "docs/README.md"))
    run = subprocess.run(
        [node, str(NODE_DIR / "parse-mermaid.mjs"), *map(str, files)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode in (0, 1), run.stderr
    results: dict[str, list[dict]] = {}
    for line in run.stdout.splitlines():
        row = json.loads(line)
        results.setdefault(Path(row["file"]).stem, []).append(row)
    return results


@pytest.mark.slow  # one node process loading Mermaid: seconds before the first parse
@pytest.mark.parametrize("name", EXAMPLES)
def test_readme_mermaid_parses(name, mermaid_results):
    text = _file(generated(name), "docs/README.md").decode()
    for heading in README_HEADINGS:
        assert f"\n{heading}\n" in text, heading
    blocks = text.count("```mermaid")
    assert blocks == len({x.plane for x in generated(name).cluster.links})
    rows = mermaid_results[Path(name).stem]
    assert len(rows) == blocks and all(r["ok"] for r in rows), rows


@pytest.mark.slow
def test_parser_rejects_a_broken_diagram(mermaid_results):
    assert [r["ok"] for r in mermaid_results["broken"]] == [False]


def test_findings_and_failure_domains_are_the_pipelines(example):
    text = _file(example, "docs/README.md").decode()
    for f in example.findings:
        assert f.message.replace("|", "\\|") in text
    domains = _file(example, "files/failure-domains.md").decode()
    one_failure = domains.split("## One failure", 1)[1].split("\n## ", 1)[0]
    assert one_failure.strip() in text


def test_large_fabrics_are_aggregated():
    text = emitted("wanka-10k.yaml", docs.emit)["docs/README.md"].decode()
    for block in re.findall(r"```mermaid\n(.*?)```", text, re.S):
        assert block.count("\n") < 60, "one node per pod and tier, not one per switch"


def test_ip_plan_has_every_address_once_and_sorted(example):
    rows = list(csv.DictReader(io.StringIO(_file(example, "files/ip-plan.csv").decode())))
    keys = [(r["device"], r["port"], r["plane"]) for r in rows]
    assert len(keys) == len(set(keys))
    listed = {(r["device"], r["port"]): r["address"] for r in rows}
    for a in example.cluster.addresses:
        assert listed[(a.device, a.port)] == ip(a.ip)
    numbers = [tuple(int(x) for x in r["address"].split(".")) for r in rows]
    assert numbers == sorted(numbers)


def test_bom_counts_match_the_model(example):
    rows = list(csv.DictReader(io.StringIO(_file(example, "files/bom.csv").decode())))
    devices = sum(int(r["quantity"]) for r in rows if r["category"] == "device")
    assert devices == len(example.cluster.devices)
    cables = sum(int(r["quantity"]) for r in rows if r["category"] in ("cable", "breakout cable"))
    # a structured run is its patch cords (cable ids) and its trunk; a breakout is one cable
    assert cables == len({x.cable_id for x in example.cluster.links}) + len(example.cluster.trunks)
    racks = sum(int(r["quantity"]) for r in rows if r["category"] == "rack")
    assert racks == len(example.cluster.racks)


def test_docs_are_deterministic():
    from generator.analysis import analyse
    from generator.artifacts import bom, docs

    cluster = generated("pod-128.yaml").cluster
    first = [
        f.data
        for f in (*docs.emit(cluster, analyse(cluster)), *bom.emit(cluster, analyse(cluster)))
    ]
    second = [
        f.data
        for f in (*docs.emit(cluster, analyse(cluster)), *bom.emit(cluster, analyse(cluster)))
    ]
    assert first == second


def test_autoescape_is_on_for_html_and_svg_templates_only():
    from generator import render

    escaped = render.environment().autoescape
    assert escaped("docs/report.html.j2") and escaped("docs/fabric.svg.j2")
    assert not escaped("docs/README.md.j2")
    assert not escaped("switches/huawei-ce/main.j2")


def test_free_text_in_the_blueprint_is_escaped_in_report_html(tmp_path):
    """metadata.site is free text shown in the report: markup in it stays text (the browser
    check that it does not run is test_free_text_does_not_run_in_the_browser, slow)."""
    from generator import pipeline

    site = "<script>alert(1)</script><script>document.title='pwned'</script>"  # 64 at most
    text = (ROOT / "blueprints" / "pod-128.yaml").read_text()
    assert "  site: lab-1\n" in text
    bp = tmp_path / "hostile.yaml"
    bp.write_text(text.replace("  site: lab-1\n", f'  site: "{site}"\n'))
    result = pipeline.run(bp, emit=False)
    files = {f.path: f.data.decode() for f in docs.emit(result.cluster, result.analysis)}
    page = files["docs/report.html"]
    assert "<script>alert(1)</script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert f"`{site}`" in files["docs/README.md"]  # Markdown is not HTML-escaped


@pytest.mark.slow
def test_free_text_does_not_run_in_the_browser(tmp_path):
    """A script in metadata.site does not run when the page opens."""
    from generator import pipeline

    site = "<script>alert(1)</script><script>document.title='pwned'</script>"
    text = (ROOT / "blueprints" / "pod-128.yaml").read_text()
    bp = tmp_path / "hostile.yaml"
    bp.write_text(text.replace("  site: lab-1\n", f'  site: "{site}"\n'))
    result = pipeline.run(bp, emit=False)
    page = tmp_path / "report.html"
    page.write_bytes(
        next(f.data for f in docs.emit(result.cluster, result.analysis) if f.path.endswith(".html"))
    )

    browser = chromium()
    run = subprocess.run(
        [
            browser,
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--dump-dom",
            page.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert 'data-ready="1"' in run.stdout
    assert "<title>pwned</title>" not in run.stdout  # the second script did not run
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in run.stdout


def test_the_design_review_lists_each_acceptance_scope_with_the_plan_s_ceiling():
    """The review's acceptance table is the plan's (one scope a row, the same ceiling and
    collision-free figure), and it says where the hashed figures per scope and failure come
    from: `wanka predict`, whose `--write` gives the role its pass marks
    (tests/unit/test_acceptance_review.py holds the figures against the prediction's)."""
    files = emitted("pod-128.yaml", docs.emit)
    text = files["docs/README.md"].decode()
    section = text.split("## Acceptance: expected HCCL bandwidth per scope", 1)[1]
    section = section.split("\n## ", 1)[0]
    assert "`wanka predict" in section and "expected.yml`" in section
    rows = [line.split(" | ") for line in section.splitlines() if line.startswith("| ")][1:]
    from generator.artifacts import acceptance

    plan = yaml.safe_load(emitted("pod-128.yaml", acceptance.emit)["files/acceptance/plan.yml"])
    want = [[s["name"], f"{s['expected_busbw_gbytes_s']:g}"] for s in plan["scopes"]]
    assert [[r[0].lstrip("| "), r[5]] for r in rows] == want
    result = expanded("pod-128.yaml")
    free = [f"{s.collision_free:g}" for s in result.cluster.acceptance.scopes]
    assert [r[6] for r in rows] == free
    page = files["docs/report.html"].decode()
    for scope in result.cluster.acceptance.scopes:
        assert f'<tr data-scope="{scope.name}">' in page
        assert html.escape(result.cluster.acceptance.command(scope)) in page
