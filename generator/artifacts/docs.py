"""docs/README.md and docs/report.html: the design review a pull-request reviewer reads.

README.md is Markdown for a git web UI (tables, Mermaid diagrams aggregated per pod and tier).
report.html is one self-contained page for a design review: warnings and errors first (with the
growth plan's status and, beyond the plan, the devices that move), then the summary, inline SVG
fabric drawings with bandwidth labels (drawings.py), rack elevations naming every device and the
floor plan with rows and CDUs (rack_drawings.py), and cabling / IP tables rendered by a little
inline JS from one JSON array each (written once, a row at a time, so the 30k-cable example stays
O(size) and small). Everything fits a 1,400 px window; the page's script records whether it does
(data-fits) for the tests.

The findings, the failure-domain review and the bill of materials come from the Analysis the
pipeline computed once (generator.analysis); this module only formats them. The markup lives in
templates/docs/ (README.md.j2, report.html.j2 and the drawings' *.svg.j2, HTML and SVG escaped).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterator

from markupsafe import Markup

from generator import render
from generator.analysis import ERROR, WARNING, Analysis
from generator.analysis.growth_cost import summary as growth_summary
from generator.artifacts import OutputFile, emitter
from generator.artifacts.drawings import (
    COLOURS,
    LEVEL,
    Graph,
    fabric_svg,
    graphs,
    mermaid,
)
from generator.artifacts.failure_text import markdown, one_failure
from generator.artifacts.rack_drawings import (
    ALL_RACKS,
    KIND_COLOURS,
    elevation_svgs,
    floor_svg,
)
from generator.hccl_cost import LIMITS, MARGIN, MARGIN_REASON, NO_HCCS, SOURCES, threshold
from generator.model import Cluster, Device, Plane, ip
from generator.structured_yaml import line

# --- shared figures ---------------------------------------------------------------------------


def cdu_rows(cluster: Cluster) -> list[list[str]]:
    return [
        [c.name, str(len(c.racks)), f"{c.load_kw:,.1f}", f"{c.capacity_kw:,.0f}"]
        for c in cluster.cdus
    ]


def bom_rows(analysis: Analysis) -> list[list[str]]:
    return [[r[0], r[1], r[2], f"{r[3]:,}", f"{r[5]:,}", r[6], r[8]] for r in analysis.bom]


def switch_counts(cluster: Cluster) -> list[list[str]]:
    counts = Counter((d.plane, d.role, d.model) for d in cluster.devices if d.is_switch)
    order = {p: i for i, p in enumerate(Plane)}
    keys = sorted(counts, key=lambda k: (order.get(k[0], 99), -LEVEL.get(k[1], 0), k[2]))
    return [[p, r, m, f"{counts[(p, r, m)]:,}"] for p, r, m in keys]


def ecn_rows(cluster: Cluster, analysis: Analysis) -> list[list[str]]:
    """Per lossless plane and switch model: the switches, the ECN their configurations carry on
    the lossless queue (`Cluster.ecn_of`, what the switch emitter writes) and the licence that
    needs (analysis.licences, the BOM's licence rows); "none" where no licence is listed."""
    licence_of = {device: licence for device, _feature, licence, _source in analysis.licences}
    counts: Counter[tuple[str, str, str, str]] = Counter(
        (d.plane, d.model, ecn, licence_of.get(d.name, "none"))
        for d in cluster.devices
        if d.platform and d.is_switch and (ecn := cluster.ecn_of(d)) != "off"
    )
    order = {p: i for i, p in enumerate(Plane)}
    keys = sorted(counts, key=lambda k: (order.get(k[0], 99), k[1:]))
    return [[p, m, f"{counts[(p, m, e, lic)]:,}", e, lic] for p, m, e, lic in keys]


def cable_counts(analysis: Analysis) -> tuple[list[list[str]], list[list[str]]]:
    """Cables (trunks, patch cords and cassettes among them) and optics per item, all lengths
    together: the bill of materials' rows (analysis.bom), so the review and bom.csv agree."""
    counts: dict[str, Counter[str]] = {"cable": Counter(), "optic": Counter()}
    for category, item, _detail, n, *_ in analysis.bom:
        if category in ("cable", "cassette", "optic"):
            counts["optic" if category == "optic" else "cable"][item] += n
    cab = [[item, f"{n:,}"] for item, n in counts["cable"].items()]
    return cab, [[item, f"{n:,}"] for item, n in counts["optic"].items()]


def zone_rows(cluster: Cluster) -> list[list[str]]:
    zones: dict[str, list[float]] = {}
    for r in cluster.racks:
        z = zones.setdefault(r.zone, [0, 0.0, 0.0, 0.0])
        z[0] += 1
        z[1] += r.load_kw
        z[2] += r.power_kw
        z[3] += r.cooling_kw
    return [
        [zone, f"{int(z[0])}", f"{z[1]:,.1f}", f"{z[2]:,.0f}", f"{z[3]:,.0f}"]
        for zone, z in sorted(zones.items())
    ]


def oversubscription_rows(cluster: Cluster) -> list[list[str]]:
    tiers: dict[tuple[str, str], list[Device]] = defaultdict(list)
    for d in cluster.devices:
        if d.is_switch and d.up_gbps:
            tiers[(d.plane, d.role)].append(d)
    order = {p: i for i, p in enumerate(Plane)}
    out = []
    for (plane, role), devs in sorted(
        tiers.items(), key=lambda kv: (order.get(kv[0][0], 99), LEVEL.get(kv[0][1], 0))
    ):
        d_total = sum(d.down_gbps for d in devs)
        u_total = sum(d.up_gbps for d in devs)
        worst = max(devs, key=lambda d: (d.down_gbps / d.up_gbps, d.name))
        out.append(
            [
                plane,
                role,
                f"{len(devs):,}",
                f"{d_total:,}G",
                f"{u_total:,}G",
                f"{d_total / u_total:.2f}:1",
                f"{worst.name} {worst.down_gbps / worst.up_gbps:.2f}:1",
            ]
        )
    return out


def acceptance_review(cluster: Cluster) -> dict | None:
    """The acceptance section of both review files: the rows, the margin and the model's
    limits (hccl_cost's, the same text `wanka predict` writes); None without a plan."""
    if not cluster.acceptance.scopes:
        return None
    rows = acceptance_rows(cluster)
    server = [s for s in cluster.acceptance.scopes if s.tiers == "HCCS"]  # vocabulary: tiers
    notes = () if server and server[0].bound_gbytes_s else (NO_HCCS,)  # as predict notes it
    keys = ("scope", "test", "ranks", "units", "tiers", "ceiling", "free", "predicted", "mark")
    return {
        "rows": rows,
        "table": [[r[k] for k in keys] for r in rows],
        "margin": f"{MARGIN:g}",
        "margin_reason": MARGIN_REASON,
        "limits": (*notes, *LIMITS),
        "sources": SOURCES,
        "size": f"{cluster.acceptance.max_bytes:,}",
    }


def acceptance_rows(cluster: Cluster) -> list[dict[str, str]]:
    """Per acceptance scope: the HCCL Test it runs, the plan's ceiling (the role's pass mark
    without a prediction), the collision-free busbw (the model's, hccl_cost.collision_free: the
    figure `wanka predict` reports for the scope), and where no ECMP hash is involved
    (`hash_free`) the prediction's p5 / p50 / p95 and the pass mark `wanka predict --write`
    gives, p5 x (1 - margin) at the default margin; elsewhere those need the hash draws of
    `wanka predict`, which generate cannot afford."""
    rows = []
    for s in cluster.acceptance.scopes:
        free = s.collision_free
        known = free is not None and s.hash_free
        rows.append(
            {
                "scope": s.name,
                "test": f"{s.op}_test",
                "command": cluster.acceptance.command(s),
                "ranks": f"{s.ranks:,}",
                "units": f"{len(s.units):,}",
                "tiers": s.tiers,
                "ceiling": f"{s.expected_busbw:g}" if s.bound_gbytes_s else "measured, not judged",
                "free": "-" if free is None else f"{free:g}",
                "predicted": f"{free:g} / {free:g} / {free:g}"
                if known
                else PREDICT_CELL[free is None],
                "mark": f"{threshold(free):g}" if known else MARK_CELL[free is None],
            }
        )
    return rows


PREDICT_CELL = {False: "`wanka predict` (ECMP hash)", True: "-"}
MARK_CELL = {False: "`wanka predict --write`", True: "-"}


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


def way_out_rows(cluster: Cluster) -> list[list[str]]:
    """The provider hand-offs and each firewall's source NAT section (the addresses the
    business plane leaves with)."""
    rows = [
        [u.device, u.port, f"{ip(u.ip)}/{u.prefix}", f"hand-off; default route via {ip(u.gateway)}"]
        for u in cluster.uplinks
    ]
    rows += [
        [
            n.device,
            "source NAT",
            f"{ip(n.network)}/{n.prefix}",
            f"{', '.join(f'{ip(a)}/{p}' for a, p in n.sources)} ({n.zones[0]}) leaves with these; "
            f"the border routers route them back to {n.device}",
        ]
        for n in cluster.source_nat
    ]
    return rows


def rack_rows(cluster: Cluster) -> list[list[str]]:
    """One line per (zone, row): racks, devices, load against budget, fullest rack."""
    devices = Counter(d.rack for d in cluster.devices)
    rows: dict[tuple[str, int], list] = {}
    for r in cluster.racks:
        e = rows.setdefault((r.zone, r.row), [0, 0, 0.0, 0.0, None])
        e[0] += 1
        e[1] += devices[r.name]
        e[2] += r.load_kw
        e[3] += r.power_kw
        share = r.load_kw / r.power_kw if r.power_kw else 0
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


# --- README.md --------------------------------------------------------------------------------


def readme(cluster: Cluster, analysis: Analysis, fabric: dict[str, Graph]) -> str:
    switches = sum(1 for d in cluster.devices if d.is_switch)
    cab, opt = cable_counts(analysis)
    failure_domains = markdown(cluster, analysis.failures, level=3, title=False)
    return render.render(
        "docs/README.md.j2",
        name=cluster.name,
        site=cluster.site,
        headline=[
            ["NPU cards", f"{cluster.cards:,}"],
            ["NPU servers", f"{len(cluster.npu_servers):,}"],
            ["devices", f"{len(cluster.devices):,}"],
            ["switches and routers", f"{switches:,}"],
            ["racks", f"{len(cluster.racks):,}"],
            ["cables", f"{cluster.cables:,}"],
            ["links (breakout legs counted)", f"{len(cluster.links):,}"],
            ["IT power (nameplate)", f"{cluster.power_kw:,.1f} kW"],
        ],
        switches=switch_counts(cluster),
        ecn=ecn_rows(cluster, analysis),
        cables=cab,
        optics=opt,
        zones=zone_rows(cluster),
        cdus=cdu_rows(cluster),
        fabrics=[(plane, mermaid(cluster, plane, graph)) for plane, graph in fabric.items()],
        oversubscription=oversubscription_rows(cluster),
        acceptance=acceptance_review(cluster),
        pools=pool_rows(cluster),
        way_out=way_out_rows(cluster),
        flows=[
            [
                f.name,
                f.source,
                f.destination,
                f.protocol,
                " ".join(str(p) for p in f.ports if p) or "any",
                " -> ".join(f.zones) if f.zones[0] else "(within one plane)",
                f.purpose,
            ]
            for f in cluster.flows
        ],
        racks=rack_rows(cluster),
        growth_cost=growth_summary(analysis.growth) if analysis.growth else None,
        bom=bom_rows(analysis),
        findings=finding_rows(analysis),
        accepted=[[check, reason] for check, reason in sorted(cluster.settings.accepted.items())],
        unconfirmed=[
            [model, platform, str(len(forms)), ", ".join(f"`{f}`" for f in forms)]
            for model, platform, forms in analysis.unconfirmed_commands
        ],
        unconfirmed_facts=[[p, f"`{form}`", fact] for p, form, fact in analysis.unconfirmed_facts],
        failure_domains=failure_domains.rstrip("\n"),
    )


def finding_rows(analysis: Analysis) -> list[list[str]]:
    """[severity, check, finding] per design finding; an accepted warning (design.accept) says
    so with its reason."""
    return [
        [f.severity, f.code, f"{f.message} (accepted: {f.accepted})" if f.accepted else f.message]
        for f in analysis.findings
    ]


# --- report.html ------------------------------------------------------------------------------


def _html_json(text: str) -> Markup:
    """JSON text made safe inside a <script> element."""
    return Markup(text.replace("</", "<\\/"))


def tables_data(cluster: Cluster, analysis: Analysis) -> str:
    """The report's tables as compact JSON, one array a row. A device: name, rack, U; a cable:
    id, plane, a, a port, b, b port, Gb/s, media, m (a and b index devices); an address:
    address, prefix, subnet, gateway, device, port, plane."""
    index = {d.name: i for i, d in enumerate(cluster.devices)}
    devs = [(d.name, d.rack, d.u) for d in cluster.devices]
    cables = [
        (
            x.cable_id,
            x.plane,
            index[x.a_device],
            x.a_port,
            index[x.b_device],
            x.b_port,
            x.speed,
            x.media,
            x.length_m,
        )
        for x in cluster.links
    ]
    return line({"devices": devs, "cables": cables, "ips": analysis.ip_plan})


def growth_status(cluster: Cluster) -> dict | None:
    """The growth plan in words for the top of the review; None without a plan."""
    g = cluster.growth
    if not g.planned_servers:
        return None
    npus = cluster.cards_per_server
    text = (
        f"Built now: {g.servers:,} of {g.planned_servers:,} planned NPU servers "
        f"({g.servers * npus:,} of {g.planned_servers * npus:,} cards)."
    )
    if g.beyond:
        text += (
            f" Beyond the plan: the fabric is re-planned for the larger size and "
            f"{len(g.moved):,} devices of the planned build move."
        )
    else:
        text += (
            " Within the plan: spines, cores, racks, pools and ASNs are laid out for the planned"
            " size, so adding servers up to it moves nothing that is installed."
        )
    return {"beyond": g.beyond, "text": text, "moved": list(g.moved)}


def report_html(cluster: Cluster, analysis: Analysis, fabric: dict[str, Graph]) -> str:
    cab, opt = cable_counts(analysis)
    failure_head, failure_rows = one_failure(cluster, analysis.failures, "over limit")
    return render.template("docs/report.html.j2").render(
        cluster_name=cluster.name,
        site=cluster.site,
        headline=[
            ["NPU cards", f"{cluster.cards:,}"],
            ["NPU servers", f"{len(cluster.npu_servers):,}"],
            ["devices", f"{len(cluster.devices):,}"],
            ["racks", f"{len(cluster.racks):,}"],
            ["cables", f"{cluster.cables:,}"],
            ["IT power", f"{cluster.power_kw:,.1f} kW"],
        ],
        switches=switch_counts(cluster),
        cables=cab,
        optics=opt,
        zones=zone_rows(cluster),
        fabrics=[(p, fabric_svg(cluster, p, g)) for p, g in fabric.items()],
        oversubscription=oversubscription_rows(cluster),
        pools=pool_rows(cluster),
        acceptance=acceptance_review(cluster),
        elevations=elevation_svgs(cluster),
        grouped=len(cluster.racks) > ALL_RACKS,
        legend=sorted((r, c) for r, c in COLOURS.items() if r != "managed"),
        floor=floor_svg(cluster),
        kinds=sorted(KIND_COLOURS.items()),
        cdus=cdu_rows(cluster),
        bom=bom_rows(analysis),
        problems=[row for row in finding_rows(analysis) if row[0] in (ERROR, WARNING)],
        growth=growth_status(cluster),
        growth_cost=growth_summary(analysis.growth) if analysis.growth else None,
        findings=finding_rows(analysis),
        failure_head=failure_head,
        failure_rows=failure_rows,
        data=_html_json(tables_data(cluster, analysis)),
    )


@emitter(analysis=True)
def emit(cluster: Cluster, analysis: Analysis) -> Iterator[OutputFile]:
    fabric = graphs(cluster)
    yield OutputFile("docs/README.md", readme(cluster, analysis, fabric).encode())
    yield OutputFile("docs/report.html", report_html(cluster, analysis, fabric).encode())
