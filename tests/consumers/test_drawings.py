"""The design review's drawings read: checked in the geometry a real headless Chromium lays out.

report.html of every example is opened at 1,400 px with a script appended that asks the browser
for the box (getBoundingClientRect) of every <text> and <rect> of every SVG on the page (fabric
per plane, rack elevations, floor plan) and writes them into the DOM, which --dump-dom returns.
A label must not cover another label or a box it does not belong to (its own box is the rect of
its <g>, which must hold it whole); outlines (fill none: the rack frame, a CDU) are crossed by no
text. The border and oob drawings are checked against the model's links: one line per border
device pair carrying that pair's links (and one per provider hand-off), and oob a tree."""

from __future__ import annotations

import html
import json
import re
import subprocess
from collections import Counter

import pytest

from generator.artifacts import docs
from generator.model import ip
from tests.support.consumer_tools import CHROMIUM_FLAGS, chromium
from tests.support.examples import EXAMPLES, emitted, expanded

MEASURE = """<script>
(function () {
  var out = [];
  document.querySelectorAll("svg").forEach(function (svg) {
    var groups = new Map(), items = [];
    svg.querySelectorAll("text, rect").forEach(function (el) {
      var r = el.getBoundingClientRect(), g = el.parentNode, gid = -1;
      if (g.tagName.toLowerCase() === "g") {
        if (!groups.has(g)) groups.set(g, groups.size);
        gid = groups.get(g);
      }
      var outline = el.getAttribute("fill") === "none" || el.classList.contains("rk");
      items.push([el.tagName.toLowerCase(), el.textContent, r.left, r.top, r.right, r.bottom,
                  gid, outline]);
    });
    out.push({svg: (svg.getAttribute("class") || "") + " " + (svg.dataset.plane || ""),
              items: items});
  });
  var pre = document.createElement("pre");
  pre.id = "drawing-boxes";
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>"""
SLACK = 0.5  # px: boxes that touch within anti-aliasing do not overlap


def _overlap(a: list, b: list) -> bool:
    return min(a[4], b[4]) - max(a[2], b[2]) > SLACK and min(a[5], b[5]) - max(a[3], b[3]) > SLACK


def _inside(a: list, b: list) -> bool:
    """a's box lies within b's."""
    return (
        a[2] >= b[2] - SLACK
        and a[4] <= b[4] + SLACK
        and a[3] >= b[3] - SLACK
        and a[5] <= b[5] + SLACK
    )


def _collisions(svg: dict) -> list[str]:
    """Every text that covers another text, a box of another group, or its own box's edge."""
    texts = [i for i in svg["items"] if i[0] == "text" and i[1].strip()]
    rects = [i for i in svg["items"] if i[0] == "rect"]
    bad = []
    for n, t in enumerate(texts):
        bad += [f"{t[1]!r} over text {u[1]!r}" for u in texts[n + 1 :] if _overlap(t, u)]
        for r in rects:
            if r[7]:  # an outline: the text is inside it or clear of it, not across its edge
                if _overlap(t, r) and not _inside(t, r):
                    bad.append(f"{t[1]!r} across an outline")
            elif r[6] == t[6] != -1:
                if not _inside(t, r):
                    bad.append(f"{t[1]!r} spills out of its own box")
            elif _overlap(t, r):
                bad.append(f"{t[1]!r} over a box at {r[2]:.0f},{r[3]:.0f}")
    return bad


def _measure(page: str, tmp_path) -> list[dict]:
    """The boxes Chromium laid out for every SVG of the page, at 1,400 px."""
    assert page.count("</body>") == 1
    path = tmp_path / "page.html"
    path.write_text(page.replace("</body>", MEASURE + "</body>"))
    run = subprocess.run(
        [
            chromium(),
            *CHROMIUM_FLAGS,
            f"--user-data-dir={tmp_path / 'profile'}",
            "--window-size=1400,2000",
            "--dump-dom",
            path.as_uri(),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    found = re.search(r'<pre id="drawing-boxes">(.*?)</pre>', run.stdout, re.S)
    assert found, "the measuring script did not run"
    return json.loads(html.unescape(found.group(1)))


@pytest.mark.parametrize("name", EXAMPLES)
def test_no_label_covers_another_label_or_a_box_in_chromium(name, tmp_path):
    svgs = _measure(emitted(name, docs.emit)["docs/report.html"].decode(), tmp_path)
    kinds = Counter(s["svg"].split()[0] for s in svgs)
    planes = {x.plane for x in expanded(name).cluster.links}
    assert kinds["fabric"] == len(planes) and kinds["elevation"] and kinds["floor"] == 1, kinds
    # the browser laid the boxes out: every drawing has texts of a real size
    assert all(i[4] > i[2] for s in svgs for i in s["items"] if i[0] == "text" and i[1].strip())
    problems = {s["svg"]: c for s in svgs if (c := _collisions(s))}
    assert not problems, problems


BAD = """<!doctype html><html><body><svg class="fabric" width="400" height="200">
<g><rect x="0" y="0" width="100" height="30" fill="#ccc"/><text x="5" y="20">own box</text></g>
<g><rect x="0" y="50" width="40" height="30" fill="#ccc"/><text x="5" y="70">spills out</text></g>
<text x="150" y="20">a label</text><text x="160" y="22">another</text>
<text x="30" y="125">over a box</text><rect x="50" y="110" width="60" height="30" fill="#999"/>
<rect x="200" y="100" width="100" height="50" fill="none"/><text x="270" y="130">across</text>
</svg></body></html>"""


def test_the_check_finds_each_kind_of_overlap_in_chromium(tmp_path):
    """A drawing with one of each fault: the measured boxes report exactly those four."""
    (svg,) = _measure(BAD, tmp_path)
    assert sorted(c.split(" at ")[0] for c in _collisions(svg)) == sorted(
        [
            "'spills out' spills out of its own box",
            "'a label' over text 'another'",
            "'over a box' over a box",
            "'across' across an outline",
        ]
    )


def _svg(name: str, plane: str) -> str:
    page = emitted(name, docs.emit)["docs/report.html"].decode()
    return re.search(rf'<svg class="fabric" data-plane="{plane}".*?</svg>', page, re.S).group(0)


def _boxes(svg: str) -> dict[str, tuple[float, list[str]]]:
    """node id -> (top y, its lines of text)."""
    return {
        node: (float(y), [html.unescape(t) for t in re.findall(r">([^<]*)</text>", body)])
        for node, y, body in re.findall(
            r'<g data-node="([^"]+)"><rect x="[^"]*" y="([^"]+)"(.*?)</g>', svg
        )
    }


def _lines(svg: str) -> list[tuple[str, str, int]]:
    return [
        (a, b, int(n))
        for a, b, n in re.findall(r'data-a="([^"]+)" data-b="([^"]+)" data-links="(\d+)"', svg)
    ]


@pytest.mark.parametrize("name", EXAMPLES)
def test_border_drawing_has_a_line_per_border_link_and_hand_off(name):
    """Every cabled link of the border plane (router-firewall, firewall to the planes' cores and
    spines, any HA link) joins the two devices' boxes, and each provider hand-off its router's."""
    cluster = expanded(name).cluster
    svg = _svg(name, "border")
    box_of = {lines[0]: node for node, (_, lines) in _boxes(svg).items()}
    expected = Counter(
        frozenset((box_of[x.a_device], box_of[x.b_device]))
        for x in cluster.links
        if x.plane == "border"
    )
    providers = {
        lines[1]: node for node, (_, lines) in _boxes(svg).items() if lines[0] == "provider"
    }
    for u in cluster.uplinks:
        expected[frozenset((box_of[u.device], providers[f"gateway {ip(u.gateway)}"]))] += 1
    drawn: Counter[frozenset] = Counter()
    for a, b, n in _lines(svg):
        drawn[frozenset((a, b))] += n
    assert drawn == expected
    assert sum(1 for x in cluster.links if x.plane == "border") >= 12  # firewalls reach 3 planes


@pytest.mark.parametrize("name", EXAMPLES)
def test_oob_drawing_is_a_tree_from_its_cores(name):
    """One root box (the cores) on top; every other box has exactly one line, to a box above it;
    the managed boxes together count every device the oob plane manages once."""
    cluster = expanded(name).cluster
    svg = _svg(name, "oob")
    boxes, lines = _boxes(svg), _lines(svg)
    parents: Counter[str] = Counter()
    for a, b, _ in lines:
        child = a if boxes[a][0] > boxes[b][0] else b
        parents[child] += 1
    (root,) = set(boxes) - set(parents)
    assert min(y for y, _ in boxes.values()) == boxes[root][0]
    assert "core" in " ".join(boxes[root][1])
    assert all(n == 1 for n in parents.values()) and len(lines) == len(boxes) - 1
    by = cluster.device_by_name
    managed = {
        x.a_device for x in cluster.links if x.plane == "oob" and by[x.a_device].plane != "oob"
    }
    counts = [
        int(lines[0].split()[0].replace(",", ""))
        for _, lines in boxes.values()
        if lines[0].endswith("devices managed")
    ]
    assert sum(counts) == len(managed)


@pytest.mark.parametrize("name", EXAMPLES)
def test_mermaid_peer_links_join_two_nodes(name):
    """No Mermaid edge is a self-loop; the M-LAG peer-links of a plane are arrowless edges
    between two nodes, carrying every peer-link of the model."""
    cluster = expanded(name).cluster
    readme = emitted(name, docs.emit)["docs/README.md"].decode()
    blocks = dict(re.findall(r"### (\w+)\n\n```mermaid\n(.*?)```", readme, re.S))
    for plane, block in blocks.items():
        edges = re.findall(r"^  (\w+) (-->|---)\|\"([^\"]*)\"\| (\w+)$", block, re.M)
        assert all(a != b for a, _, _, b in edges), plane
        peer = sum(
            int(m.group(1).replace(",", "")) if (m := re.match(r"([\d,]+) x ", t)) else 1
            for _, arrow, t, _ in edges
            if arrow == "---"
        )
        assert peer == sum(1 for x in cluster.links if x.plane == plane and x.kind == "peer-link")
    assert "business" in blocks
