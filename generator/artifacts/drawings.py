"""The design review's fabric drawings: each plane's fabric aggregated per pod and tier (Mermaid
for README.md, SVG for report.html), the oob plane as a tree from its cores and the border plane
with every cabled link and provider hand-off of the model; rack elevations and the floor plan are
in rack_drawings. tests/consumers/test_drawings.py checks in Chromium that no label covers a box.
Geometry is computed here; the SVG markup lives in templates/docs/*.svg.j2 (autoescaped). A helper
of the docs emitter, not an emitter itself.
"""

from __future__ import annotations

import re
import textwrap
from collections import Counter, defaultdict
from dataclasses import dataclass

from markupsafe import Markup

from generator import render
from generator.model import Cluster, Device, ip
from generator.vocab import LinkKind, Plane, Role

HOSTS = frozenset(r for r in Role if r.is_host)  # node roles are also managed, provider
LEVEL = {
    Role.NPU_SERVER: 0,
    Role.STORAGE_NODE: 0,
    Role.MANAGEMENT_NODE: 0,
    Role.LEAF: 1,
    Role.ACCESS: 1,
    Role.SPINE: 2,
    Role.CORE: 3,
    Role.FIREWALL: 4,
    Role.BORDER_ROUTER: 5,
}
COLOURS = {
    "npu-server": "#4e79a7",
    "storage-node": "#59a14f",
    "management-node": "#9c755f",
    "leaf": "#f28e2b",
    "access": "#edc948",
    "spine": "#e15759",
    "core": "#b07aa1",
    "border-router": "#76b7b2",
    "firewall": "#ff9da7",
    "managed": "#d4d4d4",
}
WRAP = 30  # characters per line in a drawing's box
SMALL_PLANE = 12  # planes with at most this many switches are drawn switch by switch


# --- fabric graph, aggregated -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Node:
    id: str
    label: str
    level: int
    role: str


@dataclass(frozen=True, slots=True)
class Edge:
    a: str
    b: str
    links: int
    gbps: int
    speed: int  # Gbit/s of every link, 0 when they differ
    note: str = ""  # what a line that is no cabled link says instead (a provider hand-off)

    @property
    def label(self) -> str:
        """What the edge carries, e.g. "4 x 400G" (links of one speed) or "3 links, 700G"."""
        if self.note:
            return self.note
        if self.speed:
            return f"{self.links:,} x {_gbps(self.speed)}" if self.links > 1 else _gbps(self.speed)
        return f"{self.links:,} links, {_gbps(self.gbps)}"


def _ident(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", text)


Graph = tuple[list[Node], list[Edge]]
POOLED = {Plane.OOB: "core"}  # the root of a tree plane: its switches drawn as one box


def graphs(cluster: Cluster) -> dict[str, Graph]:
    """plane_graph of every plane that has links, the links split by plane in one pass."""
    links: dict[str, list] = defaultdict(list)
    for x in cluster.links:
        links[x.plane].append(x)
    return {p: plane_graph(cluster, p, links[p]) for p in Plane if links.get(p)}


def _sides(links: list) -> dict[str, str]:
    """The two ends of each M-LAG peer-link, A (first by name) and B: an aggregated tier is
    drawn as its A and B halves, so that its peer-links are a line between the two."""
    side = {}
    for x in links:
        if x.kind == LinkKind.PEER_LINK:
            first, second = sorted((x.a_device, x.b_device))
            side[first], side[second] = "A", "B"
    return side


def plane_graph(cluster: Cluster, plane: str, links: list | None = None) -> Graph:
    """Switches of a plane and the hosts on it: one node per switch when the plane is small,
    else one node per (role, pod) group (split into M-LAG sides A and B where its switches are
    peers); one node per host role per leaf group. On the oob plane, which reaches every
    device, everything an access switch (group) manages is one node and the cores are one box,
    so it is a tree. Switches of other planes a link reaches (the firewalls' cores and spines)
    are nodes of their own under it, and the border routers' provider hand-offs
    (Cluster.uplinks) nodes above them."""
    by_name = cluster.device_by_name
    if links is None:
        links = [x for x in cluster.links if x.plane == plane]
    switches = [d for d in cluster.devices if d.plane == plane]
    small = len(switches) <= SMALL_PLANE
    side = {} if small else _sides(links)
    groups: dict[str, tuple[str, str, int, str]] = {}

    def group(d: Device) -> tuple[str, str, int, str]:
        g = groups.get(d.name)
        if g is None:
            g = groups[d.name] = _group(d)
        return g

    def _group(d: Device) -> tuple[str, str, int, str]:
        level = LEVEL.get(d.role, 1)
        if POOLED.get(plane) == d.role:
            return (d.role, d.role, level, d.role)
        if small:
            return (d.name, f"{d.name}<br/>{d.model}", level, d.role)
        pod = f"pod {d.pod + 1} " if d.pod is not None else ""
        s = side.get(d.name, "")
        return (
            f"{d.role}{-1 if d.pod is None else d.pod}{s}",  # the node id: "-1" without a pod
            pod + d.role + (f"<br/>M-LAG side {s}" if s else ""),
            level,
            d.role,
        )

    members: dict[str, set[str]] = defaultdict(set)
    meta: dict[str, tuple[str, int, str]] = {}
    models: dict[str, set[str]] = defaultdict(set)

    def outside(d: Device, level: int) -> str:
        """The node of a switch of another plane: by name on a small plane, else per role."""
        key = f"{d.plane}:{d.name if small else d.role}"
        name = f"{d.name}<br/>{d.plane} {d.role}" if small else f"{d.plane} {d.role}"
        meta.setdefault(key, (name, level, d.role))
        models[key].add(d.model)
        members[key].add(d.name)
        return key

    managed: dict[str, dict[str, str]] = defaultdict(dict)  # oob: node -> device -> what
    edges: dict[tuple[str, str], list] = {}
    for d in switches:
        key, label, level, role = group(d)
        members[key].add(d.name)
        models[key].add(d.model)
        meta[key] = (label, level, role)
    for link in links:
        a, b = by_name[link.a_device], by_name[link.b_device]
        if b.plane != plane and a.plane == plane:  # the end on this plane is the upper one
            a, b = b, a
        if b.plane == plane:
            kb, _, level_b, _ = group(b)
        else:  # hosts on another plane's switches (legacy storage on the business leaves)
            kb, level_b = outside(b, LEVEL.get(b.role, 1)), LEVEL.get(b.role, 1)
        if plane == Plane.OOB and a.plane != plane:
            ka = f"managed@{kb}"
            meta.setdefault(ka, ("managed", 0, "managed"))
            managed[ka][a.name] = a.role if a.is_host else f"{a.plane} switch"
        elif a.is_host:  # one node for the hosts of both sides of an M-LAG pair
            ka = f"{a.role}@{kb.rstrip('AB')}"
            meta.setdefault(ka, (a.role, LEVEL.get(a.role, 0), a.role))
            models[ka].add(a.model)
        elif a.plane != plane:  # another plane's switch, one tier under the switch it reaches
            ka = outside(a, level_b - 1)
        else:
            ka = group(a)[0]
        members[ka].add(a.name)
        e = edges.setdefault((ka, kb), [0, 0, set(), ""])
        e[0] += 1
        e[1] += link.speed
        e[2].add(link.speed)
    if plane == Plane.BORDER:
        for u in cluster.uplinks:
            key = f"provider@{u.device}"
            meta[key] = (
                f"provider<br/>gateway {ip(u.gateway)}",
                LEVEL[Role.BORDER_ROUTER] + 1,
                "provider",  # vocabulary: drawing node kind
            )
            edges[(group(by_name[u.device])[0], key)] = [1, 0, {0}, f"hand-off {u.port}"]
    nodes = []
    for key in sorted(meta, key=lambda k: (-meta[k][1], k)):
        label, level, role = meta[key]
        n = len(members[key])
        model = ", ".join(sorted(models[key]))
        if role == "managed":
            kinds = Counter(managed[key].values())
            what = ", ".join(
                f"{c:,} x {k}" for k, c in sorted(kinds.items(), key=lambda x: (-x[1], x[0]))
            )
            label = "<br/>".join([f"{n:,} devices managed", *textwrap.wrap(what, WRAP)])
        elif small and POOLED.get(plane) == role:
            label = "<br/>".join([*sorted(members[key]), model])
        elif role != "provider" and (not small or role in HOSTS):  # vocabulary: drawing node
            label = f"{n:,} x {label}<br/>{model}"
        nodes.append(Node(_ident(f"{plane}_{key}"), label, level, role))
    out_edges = [
        Edge(
            a=_ident(f"{plane}_{a}"),
            b=_ident(f"{plane}_{b}"),
            links=n,
            gbps=gb,
            speed=min(s) if len(s) == 1 else 0,
            note=note,
        )
        for (a, b), (n, gb, s, note) in sorted(edges.items())
    ]
    return nodes, out_edges


def _gbps(g: int) -> str:
    return f"{g / 1000:,.1f}T" if g >= 10000 else f"{g:,}G"


def mermaid(cluster: Cluster, plane: str, graph: Graph | None = None) -> str:
    """The plane's graph as a Mermaid flowchart (templates/docs/fabric.mmd.j2)."""
    nodes, edges = graph or plane_graph(cluster, plane)
    level = {n.id: n.level for n in nodes}
    text = render.render(
        "docs/fabric.mmd.j2",
        nodes=[
            {"id": n.id, "label": n.label.replace('"', "'"), "host": n.role in HOSTS} for n in nodes
        ],
        edges=[
            {"a": e.a, "b": e.b, "title": e.label, "peer": level[e.a] == level[e.b]} for e in edges
        ],
    )
    return text.rstrip("\n")


# --- SVG (report.html) ------------------------------------------------------------------------


BOX_W, PITCH, PER_ROW, GAP = 156, 166, 8, 90  # 8 boxes a row: 1,328 px fit a 1,400 px window
GROUPED = re.compile(r"[\d,]+ x ")  # a box of several switches: "27 x leaf"
PEER_DROP = 12  # px under a row: the bracket between M-LAG peers and its label
LABEL_EM = 5.8  # px per character of a 9 px label (the widest digits), to keep labels apart


def _covers(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def fabric_svg(cluster: Cluster, plane: str, graph: Graph | None = None) -> str:
    """Tiers top down, a tier with more than PER_ROW boxes wrapped onto several rows; every
    line labelled with what it carries (links x speed), stacked so labels do not overlap."""
    nodes, edges = graph or plane_graph(cluster, plane)
    if not nodes:
        return _svg("docs/fabric.svg.j2", plane=plane, nodes=[], edges=[], labels=[])
    levels = sorted({n.level for n in nodes}, reverse=True)
    near: dict[str, list[str]] = defaultdict(list)
    for e in edges:
        near[e.a].append(e.b)
        near[e.b].append(e.a)
    width = max(PITCH * min(PER_ROW, max(Counter(n.level for n in nodes).values())), 480)
    lines_of = {n.id: n.label.split("<br/>") for n in nodes}
    # a box whose lines down all carry the same says so once, inside the box
    level = {n.id: n.level for n in nodes}
    role = {n.id: n.role for n in nodes}
    down: dict[tuple[str, str], list[str]] = defaultdict(list)
    for e in edges:
        if level[e.a] != level[e.b]:
            upper, lower = (e.a, e.b) if level[e.a] > level[e.b] else (e.b, e.a)
            down[(upper, e.label)].append(lower)
    fans = set()
    for (upper, label), lower in sorted(down.items()):
        if len(lower) > 1 and sum(1 for k in down if k[0] == upper) == 1:
            fans.add((upper, label))
            kinds = {role[x] for x in lower}
            kind = kinds.pop() if len(kinds) == 1 else ""
            group = " group" if any(GROUPED.match(lines_of[x][0]) for x in lower) else ""
            below = f"each {kind}{group}" if kind else f"each{group} below"
            lines_of[upper] = [*lines_of[upper], f"{label} to {below}"]
    pos: dict[str, tuple[float, float, float]] = {}  # centre x, top y, box height
    bottom: dict[str, float] = {}  # the bottom of the box's row
    y = 10.0
    for lv in levels:
        tier = [n for n in nodes if n.level == lv]
        # under the boxes they connect to (mean x of the placed neighbours), to keep lines short
        placed = {n.id: [pos[m][0] for m in near[n.id] if m in pos] for n in tier}
        tier.sort(key=lambda n: sum(placed[n.id]) / len(placed[n.id]) if placed[n.id] else 1e9)
        for row in (tier[i : i + PER_ROW] for i in range(0, len(tier), PER_ROW)):
            tall = max(12 + 12 * len(lines_of[n.id]) for n in row)
            for j, n in enumerate(row):
                h = 12 + 12 * len(lines_of[n.id])
                pos[n.id] = ((j + 0.5) * width / len(row), y + (tall - h) / 2, h)
                bottom[n.id] = y + tall
            y += tall + GAP
    height = y - GAP + 10
    top = max((e.gbps for e in edges), default=1)
    # a label goes where it covers no box and no placed label: boxes and labels as x0, y0, x1, y1
    spots = [(x - BOX_W / 2, y0, x + BOX_W / 2, y0 + h) for x, y0, h in pos.values()]
    labels: list[dict] = []
    lines = []
    for e in edges:
        upper, lower = sorted((e.a, e.b), key=lambda i: (pos[i][1], i))
        (x1, y1, h1), (x2, y2, _) = pos[upper], pos[lower]
        line = dict(
            a=e.a,
            b=e.b,
            links=e.links,
            d="",
            w=f"{1 + 5 * e.gbps / top:.1f}",
            title=f"{e.label}: {e.links:,} links, {_gbps(e.gbps)} in all" if e.gbps else e.label,
        )
        if bottom[e.a] == bottom[e.b]:  # peers of one row: a bracket under the row, label on it
            y1 = y2 = bottom[e.a] + PEER_DROP
            line["d"] = f"M{x1:.0f} {y1 - PEER_DROP:.0f}V{y1:.0f}H{x2:.0f}V{y1 - PEER_DROP:.0f}"
            tries: tuple[float, ...] = (0.5,)
        else:  # the upper box's bottom to the lower box's top
            y1 += h1
            line.update(x1=f"{x1:.0f}", y1=f"{y1:.0f}", x2=f"{x2:.0f}", y2=f"{y2:.0f}")
            tries = (0.3, 0.5, 0.7, 0.2, 0.4, 0.6, 0.8, 0.1, 0.9, 0.15, 0.85)
        lines.append(line)
        if (upper, e.label) in fans:
            continue
        half = (LABEL_EM * len(e.label) + 6) / 2
        for t in tries:  # the first place that covers no box and no label
            lx, ly = x1 + t * (x2 - x1), y1 + t * (y2 - y1)
            spot = (lx - half, ly - 6, lx + half, ly + 6)
            if not any(_covers(spot, s) for s in spots):
                break
        spots.append(spot)
        labels.append(dict(x=f"{lx:.0f}", y=f"{ly + 3:.0f}", text=e.label))
    boxes = []
    for n in nodes:
        x, y0, h = pos[n.id]
        label = lines_of[n.id]
        fanned = any(k[0] == n.id for k in fans)
        boxes.append(
            dict(
                x=f"{x - BOX_W / 2:.0f}",
                y=f"{y0:.0f}",
                h=f"{h:.0f}",
                id=n.id,
                tx=f"{x:.0f}",
                fill=COLOURS.get(n.role, "#bab0ac"),
                lines=[
                    (
                        f"{y0 + 16 + 12 * i:.0f}",
                        text,
                        "bw in" if fanned and i == len(label) - 1 else "sm" if i else "",
                    )
                    for i, text in enumerate(label)
                ],
            )
        )
    return _svg(
        "docs/fabric.svg.j2",
        plane=plane,
        width=f"{width:.0f}",
        height=f"{height:.0f}",
        box_w=BOX_W,
        edges=lines,
        labels=labels,
        nodes=boxes,
    )


def _svg(template: str, **data: object) -> Markup:
    """An SVG drawing rendered (escaped) from its template, to inline in report.html."""
    return Markup(render.render(template, **data).rstrip("\n"))
