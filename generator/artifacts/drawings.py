"""The design review's drawings: each plane's fabric aggregated per pod and tier (Mermaid for
README.md, SVG for report.html), rack elevations and the floor plan. Geometry is computed here;
the SVG markup lives in templates/docs/*.svg.j2 (autoescaped). A helper of the docs emitter, not
an emitter itself.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass

from markupsafe import Markup

from generator import render
from generator.model import PLANES, Cluster, Device

HOST_ROLES = ("npu-server", "storage-node", "management-node")
LEVEL = {
    "npu-server": 0,
    "storage-node": 0,
    "management-node": 0,
    "leaf": 1,
    "access": 1,
    "spine": 2,
    "core": 3,
    "firewall": 4,
    "border-router": 5,
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
}
SMALL_PLANE = 12  # planes with at most this many switches are drawn switch by switch


def rack_loads(cluster: Cluster) -> dict[str, float]:
    load: dict[str, float] = defaultdict(float)
    for d in cluster.devices:
        load[d.rack] += d.power_w / 1000
    return load


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


def _ident(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", text)


Graph = tuple[list[Node], list[Edge]]


def graphs(cluster: Cluster) -> dict[str, Graph]:
    """plane_graph of every plane that has links, the links split by plane in one pass."""
    links: dict[str, list] = defaultdict(list)
    for x in cluster.links:
        links[x.plane].append(x)
    return {p: plane_graph(cluster, p, links[p]) for p in PLANES if links.get(p)}


def plane_graph(cluster: Cluster, plane: str, links: list | None = None) -> Graph:
    """Switches of a plane and the hosts on it: one node per switch when the plane is small,
    else one node per (role, pod) group; one node per host role per leaf group."""
    by_name = cluster.device_by_name
    if links is None:
        links = [x for x in cluster.links if x.plane == plane]
    switches = [d for d in cluster.devices if d.plane == plane]
    small = len(switches) <= SMALL_PLANE
    groups: dict[str, tuple[str, str, int, str]] = {}

    def group(d: Device) -> tuple[str, str, int, str]:
        g = groups.get(d.name)
        if g is None:
            g = groups[d.name] = _group(d)
        return g

    def _group(d: Device) -> tuple[str, str, int, str]:
        if small:
            return (d.name, f"{d.name}<br/>{d.model}", LEVEL.get(d.role, 1), d.role)
        pod = f"pod {d.pod + 1} " if d.pod >= 0 else ""
        return (f"{d.role}{d.pod}", f"{pod}{d.role}", LEVEL.get(d.role, 1), d.role)

    members: dict[str, set[str]] = defaultdict(set)
    meta: dict[str, tuple[str, int, str]] = {}
    models: dict[str, set[str]] = defaultdict(set)
    edges: dict[tuple[str, str], list[int]] = {}
    for d in switches:
        key, label, level, role = group(d)
        members[key].add(d.name)
        models[key].add(d.model)
        meta[key] = (label, level, role)
    for link in links:
        a, b = by_name[link.a_device], by_name[link.b_device]
        gb = group(b) if b.plane == plane else None
        if gb is None:
            continue
        if a.role in HOST_ROLES or a.plane != plane:
            ka = f"{a.role}@{gb[0]}"
            meta.setdefault(ka, (a.role, LEVEL.get(a.role, 0), a.role))
            models[ka].add(a.model)
        else:
            ka = group(a)[0]
        members[ka].add(a.name)
        e = edges.setdefault((ka, gb[0]), [0, 0])
        e[0] += 1
        e[1] += link.speed
    nodes = []
    for key in sorted(meta, key=lambda k: (-meta[k][1], k)):
        label, level, role = meta[key]
        n = len(members[key])
        model = ", ".join(sorted(models[key]))
        if not small or role in HOST_ROLES:
            label = f"{n:,} x {label}<br/>{model}"
        nodes.append(Node(_ident(f"{plane}_{key}"), label, level, role))
    out_edges = [
        Edge(_ident(f"{plane}_{a}"), _ident(f"{plane}_{b}"), n, gb)
        for (a, b), (n, gb) in sorted(edges.items())
    ]
    return nodes, out_edges


def _gbps(g: int) -> str:
    return f"{g / 1000:,.1f}T" if g >= 10000 else f"{g:,}G"


def mermaid(cluster: Cluster, plane: str, graph: Graph | None = None) -> str:
    """The plane's graph as a Mermaid flowchart (templates/docs/fabric.mmd.j2)."""
    nodes, edges = graph or plane_graph(cluster, plane)
    text = render.render(
        "docs/fabric.mmd.j2",
        nodes=[
            {"id": n.id, "label": n.label.replace('"', "'"), "host": n.role in HOST_ROLES}
            for n in nodes
        ],
        edges=[{"a": e.a, "b": e.b, "title": f"{e.links:,} x, {_gbps(e.gbps)}"} for e in edges],
    )
    return text.rstrip("\n")


# --- SVG (report.html) ------------------------------------------------------------------------


def fabric_svg(cluster: Cluster, plane: str, graph: Graph | None = None) -> str:
    nodes, edges = graph or plane_graph(cluster, plane)
    if not nodes:
        return _svg("docs/fabric.svg.j2", plane=plane, nodes=[], edges=[])
    levels = sorted({n.level for n in nodes}, reverse=True)
    rows = {lv: [n for n in nodes if n.level == lv] for lv in levels}
    width = max(160 * max(len(r) for r in rows.values()), 480)
    pos: dict[str, tuple[float, float]] = {}
    for i, lv in enumerate(levels):
        row = rows[lv]
        for j, n in enumerate(row):
            pos[n.id] = ((j + 0.5) * width / len(row), 40 + i * 110)
    top = max((e.gbps for e in edges), default=1)
    lines = []
    for e in edges:
        (x1, y1), (x2, y2) = pos[e.a], pos[e.b]
        lines.append(
            dict(
                x1=f"{x1:.0f}",
                y1=f"{y1:.0f}",
                x2=f"{x2:.0f}",
                y2=f"{y2:.0f}",
                w=f"{1 + 5 * e.gbps / top:.1f}",
                title=f"{e.links:,} links, {_gbps(e.gbps)}",
            )
        )
    boxes = []
    for n in nodes:
        x, y = pos[n.id]
        label = n.label.split("<br/>")
        boxes.append(
            dict(
                x=f"{x - 74:.0f}",
                y=f"{y - 20:.0f}",
                tx=f"{x:.0f}",
                ty1=f"{y - 4:.0f}",
                ty2=f"{y + 12:.0f}",
                fill=COLOURS.get(n.role, "#bab0ac"),
                line1=label[0],
                line2=" ".join(label[1:]),
            )
        )
    return _svg(
        "docs/fabric.svg.j2",
        plane=plane,
        width=f"{width:.0f}",
        height=40 + len(levels) * 110,
        edges=lines,
        nodes=boxes,
    )


def _svg(template: str, **data: object) -> Markup:
    """An SVG drawing rendered (escaped) from its template, to inline in report.html."""
    return Markup(render.render(template, **data).rstrip("\n"))


U_PX = 3
RACK_W = 34


def elevation_svgs(cluster: Cluster) -> list[tuple[str, Markup]]:
    """(title, svg) per (zone, row): every rack, a rect per device, a power bar under each."""
    load = rack_loads(cluster)
    in_rack: dict[str, list[Device]] = defaultdict(list)
    for d in cluster.devices:
        in_rack[d.rack].append(d)
    rows: dict[tuple[str, int], list] = defaultdict(list)
    for r in cluster.racks:
        rows[(r.zone, r.row)].append(r)
    out = []
    for (zone, row), racks in sorted(rows.items()):
        racks.sort(key=lambda r: r.position)
        tall = max(r.height_u for r in racks) * U_PX
        base = 4 + tall
        drawn = []
        for i, r in enumerate(racks):
            x = 6 + i * (RACK_W + 6)
            share = load[r.name] / r.power_kw if r.power_kw else 0
            devices = [
                dict(
                    name=d.name,
                    u=d.u,
                    model=d.model,
                    y=base - (d.u - 1 + d.height_u) * U_PX,
                    h=d.height_u * U_PX - 0.5,
                    fill=COLOURS.get(d.role, "#bab0ac"),
                )
                for d in in_rack[r.name]
            ]
            drawn.append(
                dict(
                    name=r.name,
                    x=x,
                    top=base - r.height_u * U_PX,
                    h=r.height_u * U_PX,
                    bar_y=base + 4,
                    label_y=base + 20,
                    pct_y=base + 32,
                    bar_w=f"{RACK_W * min(share, 1):.1f}",
                    colour="#e15759" if share > 1 else "#f28e2b" if share > 0.9 else "#59a14f",
                    load=f"{load[r.name]:.1f}",
                    budget=f"{r.power_kw:g}",
                    cx=f"{x + RACK_W / 2:.0f}",
                    short=r.name.split("-")[-1],
                    pct=f"{100 * share:.0f}",
                    devices=devices,
                )
            )
        svg = _svg(
            "docs/elevation.svg.j2",
            width=len(racks) * (RACK_W + 6) + 6,
            height=tall + 44,
            rack_w=RACK_W,
            racks=drawn,
        )
        out.append((f"{zone} row {row}: {len(racks)} racks", svg))
    return out


ZONE_COLOURS = {"training": "#4e79a7", "storage": "#59a14f", "management": "#9c755f"}


def floor_svg(cluster: Cluster) -> Markup:
    if not cluster.racks:
        return _svg("docs/floor.svg.j2", racks=[], cdus=[])
    scale = 24
    xs = [r.x_m for r in cluster.racks]
    ys = [r.y_m for r in cluster.racks]
    x0, y0 = min(xs) - 1, min(ys) - 1
    by_name = cluster.rack_by_name
    cdus = []
    for c in cluster.cdus:
        cx = [by_name[r].x_m for r in c.racks]
        cy = [by_name[r].y_m for r in c.racks]
        x, y = (min(cx) - x0 - 0.35) * scale, (min(cy) - y0 - 0.45) * scale
        w, h = (max(cx) - min(cx) + 0.7) * scale, (max(cy) - min(cy) + 1.4) * scale
        cdus.append(
            dict(
                x=f"{x:.0f}",
                y=f"{y:.0f}",
                w=f"{w:.0f}",
                h=f"{h:.0f}",
                tx=f"{x + 2:.0f}",
                ty=f"{y + h - 3:.0f}",
                name=c.name,
                load=f"{c.load_kw:,.0f}",
                capacity=f"{c.capacity_kw:,.0f}",
            )
        )
    racks = [
        dict(
            x=f"{(r.x_m - x0 - 0.25) * scale:.0f}",
            y=f"{(r.y_m - y0 - 0.35) * scale:.0f}",
            w=f"{0.5 * scale:.0f}",
            h=f"{0.7 * scale:.0f}",
            fill=ZONE_COLOURS.get(r.zone, "#bab0ac"),
            name=r.name,
            kind=r.kind,
            cooling=r.cooling,
            cdu=r.cdu,
        )
        for r in cluster.racks
    ]
    return _svg(
        "docs/floor.svg.j2",
        width=f"{(max(xs) - x0 + 2) * scale:.0f}",
        height=f"{(max(ys) - y0 + 2) * scale:.0f}",
        cdus=cdus,
        racks=racks,
    )
