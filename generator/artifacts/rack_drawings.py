"""The design review's rack drawings: rack elevations with every device named, and the floor plan
with rows, zones and CDUs. Geometry is computed here; the SVG markup lives in
templates/docs/elevation.svg.j2 and floor.svg.j2 (autoescaped). A helper of the docs emitter, not
an emitter itself. Both drawings fit a 1,400 px window: elevations are one small SVG per rack
that the page wraps, and the floor plan is scaled to the page width.
"""

from __future__ import annotations

from collections import defaultdict
from itertools import pairwise

from markupsafe import Markup

from generator.artifacts.drawings import COLOURS, _svg
from generator.model import Cluster, Device, Rack
from generator.vocab import RackKind

U_PX = 10  # one rack unit, px: a 1U device holds one line of 8 px text
RACK_W = 124
ALL_RACKS = 64  # up to this many racks every rack is drawn; above, one rack per layout
PAGE_W = 1330  # drawing width that fits a 1,400 px window with the page margins


def _ink(fill: str) -> str:
    """The class of the text on the fill: "" (black) or "lt" (white), whichever reads better."""
    r, g, b = (int(fill[i : i + 2], 16) for i in (1, 3, 5))
    return "" if 0.299 * r + 0.587 * g + 0.114 * b > 150 else "lt"


def _rack_svg(r: Rack, devices: list[Device], load: float, note: str = "") -> Markup:
    top = 16
    base = top + r.height_u * U_PX
    share = load / r.power_kw if r.power_kw else 0
    drawn = []
    for d in sorted(devices, key=lambda d: d.u):
        fill = COLOURS.get(d.role, "#bab0ac")
        y = base - (d.u - 1 + d.height_u) * U_PX
        h = d.height_u * U_PX
        text = [d.name] if d.height_u < 2 else [d.name, d.model]
        drawn.append(
            dict(
                y=y + 0.5,
                h=h - 1,
                fill=fill,
                ink=_ink(fill),
                title=f"{d.name} U{d.u} {d.model}",
                lines=[
                    (y + h / 2 + 3 + 9 * (i - (len(text) - 1) / 2), t) for i, t in enumerate(text)
                ],
            )
        )
    return _svg(
        "docs/elevation.svg.j2",
        width=RACK_W + 4,
        height=base + (42 if note else 30),
        note=note,
        note_y=base + 34,
        rack_w=RACK_W,
        name=r.name,
        top=top,
        h=r.height_u * U_PX,
        cx=2 + RACK_W / 2,
        devices=drawn,
        bar_y=base + 4,
        bar_w=f"{RACK_W * min(share, 1):.1f}",
        colour="#e15759" if share > 1 else "#f28e2b" if share > 0.9 else "#59a14f",
        label_y=base + 22,
        power=f"{load:.1f} of {r.power_kw:g} kW ({100 * share:.0f}%)",
    )


def _layout(r: Rack, devices: list[Device]) -> tuple:
    return (
        r.zone,
        r.kind,
        r.height_u,
        r.power_kw,
        tuple(sorted((d.u, d.height_u, d.role, d.model) for d in devices)),
    )


def elevation_svgs(cluster: Cluster) -> list[tuple[str, list[Markup]]]:
    """(title, one svg per rack) per (zone, row) on small clusters; on large ones one group per
    rack layout (same devices in the same units), drawn once with the names of its first rack."""
    in_rack: dict[str, list[Device]] = defaultdict(list)
    for d in cluster.devices:
        in_rack[d.rack].append(d)
    racks = sorted(cluster.racks, key=lambda r: (r.zone, r.row, r.position))
    if len(racks) <= ALL_RACKS:
        rows: dict[tuple[str, int], list[Rack]] = defaultdict(list)
        for r in racks:
            rows[(r.zone, r.row)].append(r)
        return [
            (
                f"{zone} row {row}: {len(rs)} racks",
                [_rack_svg(r, in_rack[r.name], r.load_kw) for r in rs],
            )
            for (zone, row), rs in rows.items()
        ]
    layouts: dict[tuple, list[Rack]] = defaultdict(list)
    for r in racks:
        layouts[_layout(r, in_rack[r.name])].append(r)
    zones: dict[str, list[list[Rack]]] = defaultdict(list)
    for rs in sorted(layouts.values(), key=lambda rs: (rs[0].zone, rs[0].row, rs[0].position)):
        zones[rs[0].zone].append(rs)
    out = []
    for zone, groups in zones.items():
        n = sum(len(rs) for rs in groups)
        svgs = []
        for rs in groups:
            first = rs[0]
            note = f"x {len(rs):,}: {first.name} ... {rs[-1].name}" if len(rs) > 1 else ""
            svgs.append(_rack_svg(first, in_rack[first.name], first.load_kw, note))
        out.append((f"{zone}: {n:,} racks in {len(groups):,} layouts", svgs))
    return out


KIND_COLOURS = {
    RackKind.COMPUTE: "#4e79a7",
    RackKind.NETWORK: "#f28e2b",
    RackKind.STORAGE: "#59a14f",
    RackKind.MANAGEMENT: "#9c755f",
}
LEFT = 150  # row labels
DEPTH = 26  # a rack's depth on the plan, px
BAND = DEPTH + 32  # a row: racks, the CDU labels under them, a gap


def floor_svg(cluster: Cluster) -> Markup:
    """Rows top down in floor order (racks along a row to scale, rows stacked), each labelled
    with zone, row and its y; racks coloured by kind with their position; CDUs as dashed
    outlines per row they feed, named with load against capacity."""
    if not cluster.racks:
        return _svg("docs/floor.svg.j2", racks=[], cdus=[], rows=[])
    rows: dict[tuple[str, int], list[Rack]] = defaultdict(list)
    for r in cluster.racks:
        rows[(r.zone, r.row)].append(r)
    order = sorted(rows, key=lambda k: (min(r.y_m for r in rows[k]), k))
    x0 = min(r.x_m for r in cluster.racks)
    gaps = [
        b.x_m - a.x_m
        for rs in rows.values()
        for a, b in pairwise(sorted(rs, key=lambda r: r.x_m))
        if b.x_m > a.x_m
    ]
    pitch = min(gaps, default=0.6)
    span = max(r.x_m for r in cluster.racks) - x0 + pitch
    scale = min(60.0, (PAGE_W - LEFT) / span)
    band_y: dict[tuple[str, int], float] = {}
    labels, y, zone = [], 6.0, None
    for key in order:
        if key[0] != zone:
            zone = key[0]
            y += 8 if len(band_y) else 0
        band_y[key] = y
        ym = min(r.y_m for r in rows[key])
        labels.append(
            dict(
                y1=f"{y + 11:.0f}",
                y2=f"{y + 23:.0f}",
                text=f"{key[0]} row {key[1]}",
                where=f"{len(rows[key])} racks, y {ym:g} m",
            )
        )
        y += BAND

    def x_of(r: Rack) -> float:
        return LEFT + (r.x_m - x0) * scale

    w = pitch * scale - 2
    racks = [
        dict(
            x=f"{x_of(r):.1f}",
            y=f"{band_y[(r.zone, r.row)]:.0f}",
            w=f"{w:.1f}",
            h=DEPTH,
            fill=KIND_COLOURS.get(r.kind, "#bab0ac"),
            tx=f"{x_of(r) + w / 2:.1f}",
            ty=f"{band_y[(r.zone, r.row)] + DEPTH / 2 + 3:.0f}",
            text=f"{r.position:02d}",
            title=f"{r.name} {r.kind} {r.cooling} {r.cdu}".rstrip(),
        )
        for r in cluster.racks
    ]
    by_name = cluster.rack_by_name
    cdus = []
    for c in cluster.cdus:
        if not c.racks:  # a standby CDU (expand.racks.assign_cdus) feeds the loop, no rack
            continue
        segments: dict[tuple[str, int], list[Rack]] = defaultdict(list)
        for name in c.racks:
            segments[(by_name[name].zone, by_name[name].row)].append(by_name[name])
        widest = max(segments, key=lambda k: (len(segments[k]), -order.index(k)))
        for key, rs in sorted(segments.items(), key=lambda kv: order.index(kv[0])):
            left = min(x_of(r) for r in rs) - 1
            width = max(x_of(r) for r in rs) + w + 1 - left
            label = c.name
            full = f"{c.name} {c.load_kw:,.0f} of {c.capacity_kw:,.0f} kW"
            if key == widest and 5.2 * len(full) < width:  # else it would run into the next CDU's
                label = full
            cdus.append(
                dict(
                    x=f"{left:.1f}",
                    y=f"{band_y[key] - 3:.0f}",
                    w=f"{width:.1f}",
                    h=DEPTH + 6,
                    tx=f"{left + 2:.1f}",
                    ty=f"{band_y[key] + DEPTH + 14:.0f}",
                    label=label if 5.2 * len(label) < width or key == widest else "",
                    over=c.load_kw > c.capacity_kw,
                )
            )
    return _svg(
        "docs/floor.svg.j2",
        width=PAGE_W,
        height=f"{y:.0f}",
        rows=labels,
        cdus=cdus,
        racks=racks,
    )
