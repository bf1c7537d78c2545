"""The failure-domain review in words and table rows: the CSV columns and rows and the Markdown of
files/failure-domains.*, shared by the failure report and the design review (docs), so both
state the same figures the same way. Formatting only; failure_review computes the figures."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from generator.analysis.failure_domains import ClassRow, Review
from generator.model import Cluster
from generator.render import render
from generator.vocab import Plane

# the planes whose cut hosts are counted beside the parameter plane's ranks
PLANES = tuple(p for p in Plane if p.has_hosts and p != Plane.PARAMETER)

HOST = "host"  # vocabulary: display text (the noun, counted by _n)


def _num(x: float) -> str:
    """Stable text for a float: at most 6 significant digits, no float noise."""
    return f"{x:.6g}"


def _big(x: float) -> str:
    """Like _num, with thousands separators (for the Markdown tables)."""
    return f"{x:,.6g}"


def _n(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%" if x else ""


def columns(rev: Review) -> list[str]:
    return [
        "class",
        "plane",
        "units",
        "failure_rate_per_year",
        "failures_per_year",
        "worst",
        "cards_down",
        "npu_ports_cut",
        "cards_interrupted",
        "interrupted_share",
        "cards_slowed",
        "leaf_uplink_lost",
        "pod_uplink_lost",
        *(f"{p}_hosts_{what}" for p in PLANES for what in ("cut", "degraded")),
        *(f"jobs_lost_{size}_cards" for size in rev.job_sizes),
    ]


def rows(rev: Review) -> Iterator[list[str]]:
    for r in rev.rows:
        i = r.impact
        lost = dict(i.jobs_lost)
        yield [
            r.kind,
            r.plane,
            str(r.units),
            _num(r.rate),
            _num(r.per_year),
            r.worst,
            str(i.cards_down),
            str(i.npu_ports_cut),
            str(i.cards_interrupted),
            f"{i.cards_interrupted / rev.cards:.4f}" if rev.cards else "0",
            str(i.cards_slowed),
            f"{i.leaf_uplink_lost:.4f}",
            f"{i.pod_uplink_lost:.4f}",
            *(str(counts.get(p, 0)) for p in PLANES for counts in (i.hosts_cut, i.hosts_degraded)),
            *(str(lost.get(size, 0)) for size in rev.job_sizes),
        ]


def _contents(cluster: Cluster, row: ClassRow) -> str:
    """What a rack or CDU holds, when that is why its failure costs so much."""
    if not row.kind.startswith(("rack", "CDU")):
        return ""
    racks = (
        {row.worst}
        if row.kind.startswith("rack")  # vocabulary: display text
        else set(next(c.racks for c in cluster.cdus if c.name == row.worst))
    )
    held = Counter(
        f"{d.plane} {d.role}" if d.plane else d.role for d in cluster.devices if d.rack in racks
    )
    text = ", ".join(f"{n} {what}" for what, n in sorted(held.items(), key=lambda kv: -kv[1]))
    return f" ({len(racks)} racks: {text})" if len(racks) > 1 else f" ({text})"


def _effect(cluster: Cluster, rev: Review, row: ClassRow) -> str:
    i = row.impact
    parts = []
    if i.cards_down:
        parts.append(f"{_n(i.cards_down, 'card')} stop")
    if i.npu_ports_cut:
        parts.append(f"{_n(i.npu_ports_cut, 'NPU port')} cut off from the spine layer")
    if i.cards_slowed:
        lost = []
        if i.leaf_uplink_lost:
            lost.append(f"{_pct(i.leaf_uplink_lost)} of a leaf's uplinks")
        if i.pod_uplink_lost:
            lost.append(f"{_pct(i.pod_uplink_lost)} of a pod's bandwidth to the cores")
        parts.append(f"{_n(i.cards_slowed, 'card')} lose {' and '.join(lost)}")
    for p in PLANES:
        if i.hosts_cut.get(p):
            parts.append(f"{p}: {_n(i.hosts_cut[p], HOST)} cut off")
        if i.hosts_degraded.get(p):
            parts.append(f"{p}: {_n(i.hosts_degraded[p], HOST)} on fewer links")
    if not parts:
        if row.kind in ("border router", "firewall"):
            role = cluster.device_by_name[row.worst].role
            pair = sum(1 for d in cluster.devices if d.role == role) > 1
            cost = BORDER_COST[row.kind]
            if cluster.link_group(cluster.device_by_name[row.worst]):  # a firewall of a pair
                cost = FIREWALL_LINK_COST
            parts.append(
                ("its pair partner carries the traffic" + cost)
                if pair
                else "the way in from outside is lost"
            )
        else:
            parts.append("no effect on running jobs")
    return "; ".join(parts) + _contents(cluster, row)


# A firewall of a pair with its border links in one USG link-group (Cluster.link_group): one of its
# links down takes all of them down, so a single cable fails as the whole firewall does.
FIREWALL_LINK_COST = (
    " (active/standby by routing, no HRP: the sessions through it are lost; one of its border"
    " links down sets the others down too (link-group), so both directions of every flow move"
    " to the partner together)"
)
BORDER_COST = {  # what a border failure costs beyond capacity (docs "The way out")
    "firewall": " (active/standby by routing, no HRP: the sessions through it are lost)",
    "border router": " (OSPF withdraws its default; NQA does the same when its provider stops answering)",
}


def one_failure(cluster: Cluster, rev: Review, mark: str) -> tuple[list[str], list[list[str]]]:
    """The "one failure" table in words (head, rows): what the worst unit of each class costs;
    `mark` flags a class over design.max_failure_share."""
    limit = cluster.settings.design.max_failure_share
    sizes = " / ".join(f"{s:,}" for s in rev.job_sizes)
    body = []
    for r in rev.rows:
        i = r.impact
        share = i.cards_interrupted / rev.cards if rev.cards else 0
        flag = f" {mark}" if share > limit and i.cards_interrupted > rev.cards_per_server else ""
        body.append(
            [
                r.kind,
                f"{r.units:,}",
                _num(r.rate),
                _big(round(r.per_year, 4)),
                r.worst,
                f"{i.cards_interrupted:,} ({_pct(share) or '0%'}){flag}",
                " / ".join(str(n) for _, n in i.jobs_lost),
                _effect(cluster, rev, r),
            ]
        )
    return (
        [
            "failure of one",
            "units",
            "rate / year each",
            "failures / year",
            "worst unit",
            "cards interrupted",
            f"jobs of {sizes} cards lost",
            "effect",
        ],
        body,
    )


def markdown(cluster: Cluster, rev: Review, level: int = 2, title: bool = True) -> str:
    """files/failure-domains.md (templates/analysis/failure-domains.md.j2); its sections at
    heading `level`, with the page's own heading when `title`."""
    jobs = [
        [
            j.where,
            f"{j.cards:,}",
            f"{j.servers:,}",
            _big(round(j.per_year, 3)),
            f"{j.per_day:.2f}",
            f"{j.mtbi_hours:,.1f} h",
            ", ".join(f"{k} {_big(round(v, 4))}" for k, v in j.by_kind[:3]),
        ]
        for j in rev.jobs
    ]
    largest = None
    if rev.jobs:
        j = rev.jobs[-1]
        server = next((r for r in rev.rows if r.kind == "NPU server"), None)
        largest = {
            "servers": f"{j.servers:,}",
            "server": server
            and {"rate": _num(server.rate), "total": _big(round(j.servers * server.rate, 3))},
            "others": [(k, _big(round(v, 4))) for k, v in j.by_kind if k != "NPU server"],
            "per_year": _big(round(j.per_year, 3)),
            "per_day": f"{j.per_day:.2f}",
            "mtbi": f"{j.mtbi_hours:,.1f}",
        }
    return render(
        "analysis/failure-domains.md.j2",
        title=title,
        h="#" * level,
        name=cluster.name,
        cards=f"{rev.cards:,}",
        servers=f"{len(cluster.npu_servers):,}",
        jobs=jobs,
        largest=largest,
        one_failure=one_failure(cluster, rev, "**over limit**"),
        limit=f"{cluster.settings.design.max_failure_share:g}",
        rates={k: _num(rev.rates.get(k, 0)) for k in ("rack", "cdu", "cable")},
        card_failures_a_day=f"{rev.cards * 0.001 / 365.25:.3f}",
        days_between=f"{365.25 / (rev.cards * 0.001) if rev.cards else 0:,.0f}",
        unrated=rev.unrated,
    )
