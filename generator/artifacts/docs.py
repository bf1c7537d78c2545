"""docs/README.md and docs/report.html: the design review a pull-request reviewer reads.

README.md is Markdown for a git web UI (tables, Mermaid diagrams aggregated per pod and tier).
report.html is one self-contained page: inline SVG fabric drawings, rack elevations and floor
plan, and cabling / IP tables rendered by a little inline JS from one JSON array each (built with
json.dumps once, so the 30k-cable example stays O(size) and small).

The findings, the failure-domain review and the bill of materials come from the Analysis the
pipeline computed once (generator.analysis); this module only formats them.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from markupsafe import Markup

from generator import render
from generator.analysis import Analysis
from generator.analysis.checks import bandwidth
from generator.analysis.failure_text import columns, markdown, rows
from generator.analysis.materials import OPTICAL
from generator.artifacts import OutputFile
from generator.model import PLANES, Cluster, Device, ip

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


# --- shared figures ---------------------------------------------------------------------------


def _table(head: list[str], body: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in body]
    return lines


def switch_counts(cluster: Cluster) -> list[list[str]]:
    counts = Counter(
        (d.plane, d.role, d.model) for d in cluster.devices if d.role not in HOST_ROLES
    )
    order = {p: i for i, p in enumerate(PLANES)}
    keys = sorted(counts, key=lambda k: (order.get(k[0], 99), -LEVEL.get(k[1], 0), k[2]))
    return [[p, r, m, f"{counts[(p, r, m)]:,}"] for p, r, m in keys]


def cable_counts(cluster: Cluster) -> tuple[list[list[str]], list[list[str]]]:
    cables: dict[str, tuple[str, int]] = {}
    for link in cluster.links:
        cables.setdefault(link.cable_id, (link.media, link.speed))
    by_type = Counter(cables.values())
    cab = [[m, f"{s}G", f"{n:,}"] for (m, s), n in sorted(by_type.items())]
    opt = [
        [f"{s}G {m} transceiver", f"{2 * n:,}"]
        for (m, s), n in sorted(by_type.items())
        if m in OPTICAL
    ]
    return cab, opt


def rack_loads(cluster: Cluster) -> dict[str, float]:
    load: dict[str, float] = defaultdict(float)
    for d in cluster.devices:
        load[d.rack] += d.power_w / 1000
    return load


def zone_rows(cluster: Cluster) -> list[list[str]]:
    load = rack_loads(cluster)
    zones: dict[str, list[float]] = {}
    for r in cluster.racks:
        z = zones.setdefault(r.zone, [0, 0.0, 0.0, 0.0])
        z[0] += 1
        z[1] += load[r.name]
        z[2] += r.power_kw
        z[3] += r.cooling_kw
    return [
        [zone, f"{int(z[0])}", f"{z[1]:,.1f}", f"{z[2]:,.0f}", f"{z[3]:,.0f}"]
        for zone, z in sorted(zones.items())
    ]


def oversubscription_rows(cluster: Cluster) -> list[list[str]]:
    down, up = bandwidth(cluster)
    tiers: dict[tuple[str, str], list[Device]] = defaultdict(list)
    for d in cluster.devices:
        if d.role not in HOST_ROLES and up.get(d.name):
            tiers[(d.plane, d.role)].append(d)
    order = {p: i for i, p in enumerate(PLANES)}
    out = []
    for (plane, role), devs in sorted(
        tiers.items(), key=lambda kv: (order.get(kv[0][0], 99), LEVEL.get(kv[0][1], 0))
    ):
        d_total = sum(down[d.name] for d in devs)
        u_total = sum(up[d.name] for d in devs)
        worst = max(devs, key=lambda d: (down[d.name] / up[d.name], d.name))
        out.append(
            [
                plane,
                role,
                f"{len(devs):,}",
                f"{d_total:,}G",
                f"{u_total:,}G",
                f"{d_total / u_total:.2f}:1",
                f"{worst.name} {down[worst.name] / up[worst.name]:.2f}:1",
            ]
        )
    return out


def pool_rows(cluster: Cluster) -> list[list[str]]:
    subnets = Counter(s.plane for s in cluster.subnets)
    return [
        [
            p.plane,
            f"{ip(p.network)}/{p.prefix}",
            f"{p.size:,}",
            f"{p.used:,}",
            f"{100 * p.used / p.size:.1f}%",
            f"{subnets[p.plane]:,}",
        ]
        for p in cluster.pools
    ]


def rack_rows(cluster: Cluster) -> list[list[str]]:
    """One line per (zone, row): racks, devices, load against budget, fullest rack."""
    load = rack_loads(cluster)
    devices = Counter(d.rack for d in cluster.devices)
    rows: dict[tuple[str, int], list] = {}
    for r in cluster.racks:
        e = rows.setdefault((r.zone, r.row), [0, 0, 0.0, 0.0, None])
        e[0] += 1
        e[1] += devices[r.name]
        e[2] += load[r.name]
        e[3] += r.power_kw
        share = load[r.name] / r.power_kw if r.power_kw else 0
        if e[4] is None or share > e[4][0]:
            e[4] = (share, r.name)
    return [
        [
            zone,
            str(row),
            str(e[0]),
            f"{e[1]:,}",
            f"{e[2]:,.1f} / {e[3]:,.0f}",
            f"{e[4][1]} ({100 * e[4][0]:.0f}%)",
        ]
        for (zone, row), e in sorted(rows.items())
    ]


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
    nodes, edges = graph or plane_graph(cluster, plane)
    lines = ["flowchart BT"]
    for n in nodes:
        shape = ("[(", ")]") if n.role in HOST_ROLES else ('["', '"]')
        label = n.label.replace('"', "'")
        if shape[0] == "[(":
            lines.append(f'  {n.id}[("{label}")]')
        else:
            lines.append(f'  {n.id}["{label}"]')
    for e in edges:
        lines.append(f'  {e.a} -->|"{e.links:,} x, {_gbps(e.gbps)}"| {e.b}')
    return "\n".join(lines)


# --- README.md --------------------------------------------------------------------------------


def readme(cluster: Cluster, analysis: Analysis, fabric: dict[str, Graph]) -> str:
    findings = analysis.findings
    cards = sum(len(s.devices) for s in cluster.npu_servers)
    switches = sum(1 for d in cluster.devices if d.role not in HOST_ROLES)
    power = sum(d.power_w for d in cluster.devices) / 1000
    cab, opt = cable_counts(cluster)
    cables = len({x.cable_id for x in cluster.links})
    out = [
        f"# Design review: {cluster.name}",
        "",
        f"Generated by wanka from the blueprint; site `{cluster.site}`. "
        "`report.html` beside this file has the drawings, rack elevations and searchable tables.",
        "",
        "## Headline figures",
        "",
        *_table(
            ["what", "count"],
            [
                ["NPU cards", f"{cards:,}"],
                ["NPU servers", f"{len(cluster.npu_servers):,}"],
                ["devices", f"{len(cluster.devices):,}"],
                ["switches and routers", f"{switches:,}"],
                ["racks", f"{len(cluster.racks):,}"],
                ["cables", f"{cables:,}"],
                ["links (breakout legs counted)", f"{len(cluster.links):,}"],
                ["IT power (nameplate)", f"{power:,.1f} kW"],
            ],
        ),
        "",
        "### Switches per plane and layer",
        "",
        *_table(["plane", "layer", "model", "count"], switch_counts(cluster)),
        "",
        "### Cables and optics",
        "",
        *_table(["media", "speed", "cables"], cab),
        "",
        *(_table(["optic", "count"], opt) if opt else ["No pluggable optics (AOC/DAC/copper)."]),
        "",
        "### Power and cooling per zone",
        "",
        *_table(["zone", "racks", "load kW", "power budget kW", "cooling kW"], zone_rows(cluster)),
    ]
    if cluster.cdus:
        out += [
            "",
            *_table(
                ["CDU", "racks", "load kW", "capacity kW"],
                [
                    [c.name, str(len(c.racks)), f"{c.load_kw:,.1f}", f"{c.capacity_kw:,.0f}"]
                    for c in cluster.cdus
                ],
            ),
        ]
    out += ["", "## Fabrics", ""]
    for plane, graph in fabric.items():
        out += [f"### {plane}", "", "```mermaid", mermaid(cluster, plane, graph), "```", ""]
    out += [
        "## Oversubscription per tier",
        "",
        "Cabled bandwidth toward lower tiers against bandwidth up, summed over the tier; the "
        "worst single switch beside it.",
        "",
        *_table(
            ["plane", "tier", "switches", "down", "up", "ratio", "worst switch"],
            oversubscription_rows(cluster),
        ),
        "",
        "## IP plan",
        "",
        *_table(["plane", "pool", "addresses", "used", "usage", "subnets"], pool_rows(cluster)),
        "",
        "Every interface address is in `files/ip-plan.csv`.",
        "",
        "## Racks",
        "",
        *_table(
            ["zone", "row", "racks", "devices", "load / budget kW", "fullest rack"],
            rack_rows(cluster),
        ),
        "",
        "## Bill of materials",
        "",
        *_table(
            ["category", "item", "detail", "quantity", "total W"],
            [[r[0], r[1], r[2], f"{r[3]:,}", r[5]] for r in analysis.bom],
        ),
        "",
        "## Design-check findings",
        "",
        *(
            _table(
                ["severity", "check", "finding"],
                [[f.severity, f.code, f.message] for f in findings],
            )
            if findings
            else ["None."]
        ),
        "",
        "## Failure domains",
        "",
    ]
    text = markdown(cluster, analysis.failures)
    body = text.split("\n", 2)[2] if text.startswith("# ") else text
    out.append(body.replace("\n## ", "\n### ").rstrip("\n"))
    return "\n".join(out) + "\n"


# --- report.html ------------------------------------------------------------------------------


def _esc(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def fabric_svg(cluster: Cluster, plane: str, graph: Graph | None = None) -> str:
    nodes, edges = graph or plane_graph(cluster, plane)
    if not nodes:
        return f'<svg class="fabric" data-plane="{plane}" xmlns="http://www.w3.org/2000/svg" width="10" height="10"></svg>'
    levels = sorted({n.level for n in nodes}, reverse=True)
    rows = {lv: [n for n in nodes if n.level == lv] for lv in levels}
    width = max(160 * max(len(r) for r in rows.values()), 480)
    pos: dict[str, tuple[float, float]] = {}
    for i, lv in enumerate(levels):
        row = rows[lv]
        for j, n in enumerate(row):
            pos[n.id] = ((j + 0.5) * width / len(row), 40 + i * 110)
    height = 40 + len(levels) * 110
    top = max((e.gbps for e in edges), default=1)
    parts = [
        f'<svg class="fabric" data-plane="{plane}" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {width:.0f} {height}" width="{width:.0f}" height="{height}">'
    ]
    for e in edges:
        (x1, y1), (x2, y2) = pos[e.a], pos[e.b]
        w = 1 + 5 * e.gbps / top
        parts.append(
            f'<line x1="{x1:.0f}" y1="{y1:.0f}" x2="{x2:.0f}" y2="{y2:.0f}" stroke="#999" '
            f'stroke-width="{w:.1f}"><title>{e.links:,} links, {_gbps(e.gbps)}</title></line>'
        )
    for n in nodes:
        x, y = pos[n.id]
        lines = [_esc(t) for t in n.label.split("<br/>")]
        parts.append(
            f'<g><rect x="{x - 74:.0f}" y="{y - 20:.0f}" width="148" height="40" rx="4" '
            f'fill="{COLOURS.get(n.role, "#bab0ac")}"/>'
            f'<text x="{x:.0f}" y="{y - 4:.0f}" text-anchor="middle">{lines[0]}</text>'
            f'<text x="{x:.0f}" y="{y + 12:.0f}" text-anchor="middle" class="sm">'
            f"{' '.join(lines[1:])}</text></g>"
        )
    parts.append("</svg>")
    return "".join(parts)


U_PX = 3
RACK_W = 34


def elevation_svgs(cluster: Cluster) -> list[tuple[str, str]]:
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
        width = len(racks) * (RACK_W + 6) + 6
        height = tall + 44
        parts = [
            f'<svg class="elevation" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} '
            f'{height}" width="{width}" height="{height}">'
        ]
        for i, r in enumerate(racks):
            x = 6 + i * (RACK_W + 6)
            base = 4 + tall
            parts.append(
                f'<rect x="{x}" y="{base - r.height_u * U_PX}" width="{RACK_W}" '
                f'height="{r.height_u * U_PX}" class="rk"><title>{r.name}</title></rect>'
            )
            for d in in_rack[r.name]:
                y = base - (d.u - 1 + d.height_u) * U_PX
                parts.append(
                    f'<rect x="{x + 1}" y="{y}" width="{RACK_W - 2}" height="{d.height_u * U_PX - 0.5}" '
                    f'fill="{COLOURS.get(d.role, "#bab0ac")}"><title>{d.name} U{d.u} {d.model}'
                    f"</title></rect>"
                )
            share = load[r.name] / r.power_kw if r.power_kw else 0
            colour = "#e15759" if share > 1 else "#f28e2b" if share > 0.9 else "#59a14f"
            parts.append(
                f'<rect x="{x}" y="{base + 4}" width="{RACK_W * min(share, 1):.1f}" height="5" '
                f'fill="{colour}"><title>{r.name}: {load[r.name]:.1f} of {r.power_kw:g} kW'
                f"</title></rect>"
                f'<text x="{x + RACK_W / 2:.0f}" y="{base + 20}" text-anchor="middle" class="sm">'
                f"{r.name.split('-')[-1]}</text>"
                f'<text x="{x + RACK_W / 2:.0f}" y="{base + 32}" text-anchor="middle" class="sm">'
                f"{100 * share:.0f}%</text>"
            )
        parts.append("</svg>")
        out.append((f"{zone} row {row}: {len(racks)} racks", "".join(parts)))
    return out


def floor_svg(cluster: Cluster) -> str:
    if not cluster.racks:
        return '<svg class="floor" xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'
    scale = 24
    xs = [r.x_m for r in cluster.racks]
    ys = [r.y_m for r in cluster.racks]
    x0, y0 = min(xs) - 1, min(ys) - 1
    width = (max(xs) - x0 + 2) * scale
    height = (max(ys) - y0 + 2) * scale
    zone_colour = {"training": "#4e79a7", "storage": "#59a14f", "management": "#9c755f"}
    parts = [
        f'<svg class="floor" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:.0f} '
        f'{height:.0f}" width="{width:.0f}" height="{height:.0f}">'
    ]
    by_name = cluster.rack_by_name
    for c in cluster.cdus:
        cx = [by_name[r].x_m for r in c.racks]
        cy = [by_name[r].y_m for r in c.racks]
        x, y = (min(cx) - x0 - 0.35) * scale, (min(cy) - y0 - 0.45) * scale
        w, h = (max(cx) - min(cx) + 0.7) * scale, (max(cy) - min(cy) + 1.4) * scale
        parts.append(
            f'<g class="cdu"><rect x="{x:.0f}" y="{y:.0f}" width="{w:.0f}" height="{h:.0f}" '
            f'fill="none" stroke="#76b7b2" stroke-dasharray="4 2"/>'
            f'<text x="{x + 2:.0f}" y="{y + h - 3:.0f}" class="sm">{c.name} '
            f"{c.load_kw:,.0f}/{c.capacity_kw:,.0f} kW</text></g>"
        )
    for r in cluster.racks:
        x, y = (r.x_m - x0) * scale, (r.y_m - y0) * scale
        parts.append(
            f'<rect x="{x - 0.25 * scale:.0f}" y="{y - 0.35 * scale:.0f}" width="{0.5 * scale:.0f}" '
            f'height="{0.7 * scale:.0f}" fill="{zone_colour.get(r.zone, "#bab0ac")}">'
            f"<title>{r.name} {r.kind} {r.cooling} {r.cdu}</title></rect>"
        )
    parts.append("</svg>")
    return "".join(parts)


def _json(data: object) -> Markup:
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=True)
    return Markup(text.replace("</", "<\\/"))


def tables_data(cluster: Cluster, analysis: Analysis) -> dict:
    """Compact table data: repeated strings (devices, racks, planes) go by index."""
    names = [d.name for d in cluster.devices]
    index = {n: i for i, n in enumerate(names)}
    devs = [[d.name, d.rack, d.u] for d in cluster.devices]
    cables = [
        [
            x.cable_id,
            x.plane,
            index[x.a_device],
            x.a_port,
            index[x.b_device],
            x.b_port,
            x.speed,
            x.media,
            x.length_m,
        ]
        for x in cluster.links
    ]
    ips = [
        [ip(a), p, f"{ip(n)}/{p}", ip(g) if g else "", dev, port, plane]
        for a, p, n, g, dev, port, plane in analysis.ip_plan
    ]
    return {"devices": devs, "cables": cables, "ips": ips}


def report_html(cluster: Cluster, analysis: Analysis, fabric: dict[str, Graph]) -> str:
    cards = sum(len(s.devices) for s in cluster.npu_servers)
    cab, opt = cable_counts(cluster)
    rev = analysis.failures
    return render.template("docs/report.html.j2").render(
        cluster_name=cluster.name,
        site=cluster.site,
        headline=[
            ["NPU cards", f"{cards:,}"],
            ["NPU servers", f"{len(cluster.npu_servers):,}"],
            ["devices", f"{len(cluster.devices):,}"],
            ["racks", f"{len(cluster.racks):,}"],
            ["cables", f"{len({x.cable_id for x in cluster.links}):,}"],
            ["IT power", f"{sum(d.power_w for d in cluster.devices) / 1000:,.1f} kW"],
        ],
        switches=switch_counts(cluster),
        cables=cab,
        optics=opt,
        zones=zone_rows(cluster),
        fabrics=[(p, Markup(fabric_svg(cluster, p, g))) for p, g in fabric.items()],
        oversubscription=oversubscription_rows(cluster),
        pools=pool_rows(cluster),
        elevations=[(t, Markup(s)) for t, s in elevation_svgs(cluster)],
        legend=sorted(COLOURS.items()),
        floor=Markup(floor_svg(cluster)),
        cdus=[
            [c.name, len(c.racks), f"{c.load_kw:,.1f}", f"{c.capacity_kw:,.0f}"]
            for c in cluster.cdus
        ],
        bom=[[r[0], r[1], r[2], f"{r[3]:,}", r[5]] for r in analysis.bom],
        findings=[[f.severity, f.code, f.message] for f in analysis.findings],
        failure_head=columns(rev),
        failure_rows=list(rows(rev)),
        data=_json(tables_data(cluster, analysis)),
    )


def emit(cluster: Cluster, analysis: Analysis) -> Iterator[OutputFile]:
    fabric = graphs(cluster)
    yield OutputFile("docs/README.md", readme(cluster, analysis, fabric).encode())
    yield OutputFile("docs/report.html", report_html(cluster, analysis, fabric).encode())
