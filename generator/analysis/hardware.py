"""Design rules about the hardware (issues #13, #15): the lossless class of every RoCE plane,
ECMP width and command families each switch model has, NPU facts for A3 rank tables, optic reach,
the provider hand-off. Each reads the Cluster only."""

from __future__ import annotations

import ipaddress
import math
from collections import defaultdict
from collections.abc import Iterator

from generator.analysis.command_table import load_table, supported
from generator.analysis.finding import ERROR, INFO, WARNING, Check, Finding
from generator.catalog import standard_length
from generator.expand.layout import RACK_WIDTH_M, ROW_PITCH_M, run_length
from generator.model import NIC_COMMANDS, Cluster, Link, Rack
from generator.model_hosts import JUMBO_FRAME_MAX, SWITCH_MTU_MAX
from generator.vocab import Plane, RackKind, Zone

DOCUMENTATION_NETS = ((0xC0000200, 24), (0xC6336400, 24), (0xCB007100, 24))  # RFC 5737


def provider(cluster: Cluster) -> Iterator[Finding]:
    """The border routers' hand-off still in a documentation range: their default route leads
    nowhere until the provider's addresses are set."""
    if any(
        u.ip >> (32 - p) == net >> (32 - p)
        for u in cluster.uplinks
        for net, p in DOCUMENTATION_NETS
    ):
        yield Finding(
            WARNING,
            Check.PROVIDER,
            "the border routers' provider hand-off is in an RFC 5737 documentation range "
            "(zones.border.provider): set your provider's addresses before deploying",
            ("zones", "border", "provider"),
        )


def lossless_class(cluster: Cluster) -> Iterator[Finding]:
    """Every RoCE plane (parameter; a dedicated storage plane, DPC over RoCE) has a lossless
    class: without PFC and ECN, RoCE drops under incast and retransmits go-back-N. The NIC PFC
    bitmap and maps, HCCL_RDMA_SL/TC and the switches' PFC queue of a plane are all derived from
    its one Lossless record, so they cannot disagree with each other; the check is whether the
    record exists."""
    for plane in cluster.roce_planes:
        lossless = cluster.lossless_of(plane)
        where = ("networks", plane, "lossless")
        if lossless is None:
            yield Finding(
                ERROR,
                Check.LOSSLESS,
                f"the {plane} plane carries RoCE but has no lossless class (PFC and ECN): RoCE on a "
                "lossy fabric drops under incast; remove `pfc: false` from "
                f"networks.{plane}.lossless",
                where,
            )
            continue
        running = sorted(
            {
                (d.model, cluster.ecn_of(d))
                for d in cluster.devices
                if d.plane == plane and d.platform
            }
        )
        ecn = ", ".join(f"{e} on {m}" for m, e in running) or lossless.ecn
        yield Finding(
            INFO,
            Check.LOSSLESS,
            f"{plane} plane lossless class: priority {lossless.priority}, DSCP {lossless.dscp} "
            f"(RDMA traffic class {lossless.hccl_rdma_tc}), NIC TC {lossless.tc}, "
            f"ECN asked {lossless.ecn} (configured: {ecn}), MTU {lossless.mtu}",
            where,
        )


def ecmp_limit(cluster: Cluster) -> Iterator[Finding]:
    """No switch needs more equal-cost paths than its model installs (catalog `ecmp_max`, the
    `maximum load-balancing` limit): the paths beyond it would carry nothing, so links sit idle
    and the plane is not the oversubscription it claims. Located at the blueprint key that
    settles it, with its value (Cluster.ecmp_options, from expand/remedies.py)."""
    over: dict[tuple[str, str], list[tuple[str, int, int]]] = defaultdict(list)
    for d in cluster.devices:
        facts = cluster.facts_of(d.model)
        if facts is not None and d.ecmp_paths > facts.ecmp_max:
            over[d.plane, d.role].append((d.name, d.ecmp_paths, facts.ecmp_max))
    options = {(p, r): (key, value) for p, r, key, value in cluster.ecmp_options}
    for (plane, role), found in sorted(over.items()):
        name, paths, limit = max(found, key=lambda f: f[1])
        key, value = options.get((plane, role), (f"networks.{plane}", ""))
        hint = (
            f"set {key}: {value}"
            if value
            else (
                f"nothing in the catalog installs {paths} paths as a {plane} {role}: more {role}s of "
                "fewer ports each, or a higher oversubscription"
            )
        )
        yield Finding(
            ERROR,
            Check.ECMP,
            f"{len(found)} {plane} {role} switches ({cluster.device_by_name[name].model}) need "
            f"more equal-cost paths than their model installs (e.g. {name}: {paths} paths, limit "
            f"{limit}); the extra links would carry nothing: {hint}",
            tuple(key.split(".")),
        )


def switch_capabilities(cluster: Cluster) -> Iterator[Finding]:
    """A lossless plane's switches have PFC (catalog `command_families`: dcb-pfc)."""
    for plane in cluster.roce_planes:
        if cluster.lossless_of(plane) is None:
            continue
        models = sorted(
            {
                d.model
                for d in cluster.devices
                if d.plane == plane
                and (f := cluster.facts_of(d.model)) is not None
                and "dcb-pfc" not in f.command_families
            }
        )
        if models:
            yield Finding(
                ERROR,
                Check.SWITCH_CAPABILITY,
                f"the {plane} plane is lossless but {', '.join(models)} has no PFC (catalog "
                "command_families lacks dcb-pfc)",
                ("networks", plane),
            )


# The lossless class's commands, as forms of the command table, and what shows on a box whether
# its software has them (the display pages of the same reference).
LOSSLESS_FORMS = (
    ("PFC", "dcb pfc", "display dcb pfc"),
    (
        "PFC deadlock protection",
        "priority <int:0-7> turn-off threshold <int:1-300>",
        "display dcb pfc deadlock trigger status",
    ),
    ("DRR scheduling", "qos drr <int:0-7> to <int:0-7>", "display qos queue statistics"),
)
AI_ECN_FORM = ("AI ECN", "ai-ecn enable", "display ai-ecn calculated state")


def lossless_needs(cluster: Cluster, model: str) -> list[tuple[str, str, str]]:
    """The lossless commands (what, form, display command) a switch model's configs carry: on
    a lossless plane, PFC with deadlock protection (where its families have it), DRR, AI ECN."""
    f = cluster.facts_of(model)
    planes = {d.plane for d in cluster.devices if d.model == model}
    if f is None or not any(cluster.lossless_of(p) for p in planes & set(cluster.roce_planes)):
        return []
    needs = [
        n for n in LOSSLESS_FORMS if "turn-off" not in n[1] or "pfc-deadlock" in f.command_families
    ]
    return needs + [AI_ECN_FORM] * (f.ecn == "ai-ecn")


def lossless_commands(cluster: Cluster) -> Iterator[Finding]:
    """Each lossless plane's switch models against the command table's pages: a model whose
    release's reference covers it but whose page lists other models lacks the command (error);
    a model outside that reference (release unconfirmed) gets the lines on trust, with the
    display command that shows on the box whether they took (warning)."""
    table = {c.form: c for c in load_table().commands.get("huawei-ce", ())}
    for plane in cluster.roce_planes:
        if cluster.lossless_of(plane) is None:
            continue
        for model in sorted({d.model for d in cluster.devices if d.plane == plane}):
            f = cluster.facts_of(model)
            missing = [
                n for n in lossless_needs(cluster, model) if not supported(table[n[1]], model)
            ]
            if f is None or f.families_confirmed or not missing:
                continue
            what = ", ".join(m[0] for m in missing)
            if f.release_confirmed:
                yield Finding(
                    ERROR,
                    Check.SWITCH_CAPABILITY,
                    f"{model} ({plane} plane) has no {what}: its {f.release} reference pages "
                    "list other models; choose a listed model for a lossless plane",
                    ("networks", plane),
                )
            else:
                yield Finding(
                    WARNING,
                    Check.SWITCH_CAPABILITY,
                    f"{model} ({plane} plane): {what} unconfirmed: the CE6800/8800 V300R023C00 "
                    f"pages list other models (catalog release {f.release or '?'}, unconfirmed); "
                    "on the box try "
                    + ", ".join(f"`{m[2]}`" for m in missing)
                    + f", then confirm catalog.switches.{model}.command_families with that "
                    f"source, or choose a listed model for networks.{plane}",
                    ("networks", plane),
                )


def npu_nic(cluster: Cluster) -> Iterator[Finding]:
    """The parameter plane's NPU addresses and MTU are ones hccn_tool accepts on every NPU server
    model in use (catalog `npu_nic`, from the tool's source): a refused address or MTU stops the
    generated files/hccn/<host>.sh (set -eu) at that NPU, and npu_nic fails the host."""
    pool = next((p for p in cluster.pools if p.plane == Plane.PARAMETER), None)
    lossless = cluster.lossless_of(Plane.PARAMETER)
    for nic in cluster.npu_nic_limits:
        unconfirmed = "" if nic.confirmed else " [unconfirmed]"
        if lossless is not None and lossless.mtu > nic.mtu_max:
            yield Finding(
                ERROR,
                Check.NPU_NIC,
                f"MTU {lossless.mtu} is above the {nic.mtu_max} that hccn_tool -mtu -s accepts on "
                f"{nic.model}{unconfirmed} ({nic.source}): set networks.parameter.lossless.mtu "
                f"to {nic.mtu_max} or less, or leave it out",
                ("networks", "parameter", "lossless", "mtu"),
            )
        if left := [c for c in NIC_COMMANDS if c not in nic.commands]:
            yield Finding(
                INFO,
                Check.NPU_NIC,
                f"{nic.model}: files/hccn/*.sh and .conf set only "
                f"{', '.join('-' + c for c in nic.commands)}, what a public source shows for it "
                f"({nic.commands_source}); {', '.join('-' + c for c in left)} are left at the "
                "driver's defaults [unconfirmed on this driver: `hccn_tool -i 0 -<setting> -g` on "
                "a delivered server would settle each]",
                ("compute", "server"),  # vocabulary: blueprint key
            )
        if pool is None:
            continue
        net = ipaddress.IPv4Network((pool.network, pool.prefix))
        for refused in nic.refused:
            if net.overlaps(ipaddress.IPv4Network(refused, strict=False)):
                yield Finding(
                    ERROR,
                    Check.NPU_NIC,
                    f"the parameter pool {net} overlaps {refused}, which hccn_tool -ip -s refuses "
                    f"as an NPU address on {nic.model}{unconfirmed} ({nic.source}): choose "
                    f"networks.parameter.pool outside {', '.join(nic.refused)} (the default is "
                    "10.64.0.0/12)",
                    ("networks", "parameter", "pool"),
                )


def switch_mtu(cluster: Cluster) -> Iterator[Finding]:
    """Every jumbo plane's switches carry its hosts' NIC MTU: the switch IP MTU (`mtu`, at most
    9600) is no smaller than the NIC MTU, and the jumbo frame (`jumboframe enable`, at most 9500)
    holds that MTU with its Ethernet header, 802.1Q tag and FCS (generator.model_hosts, CE
    V300R023C00 command reference). A larger NIC MTU would have the switches drop every full-size
    RoCE frame."""
    for m in cluster.switch_mtus:
        if m.carried:
            continue
        where = ("networks", m.plane, "lossless", "mtu")
        yield Finding(
            ERROR,
            Check.SWITCH_MTU,
            f"{m.plane} plane NIC MTU {m.nic_mtu} needs switch IP MTU {m.ip_mtu} and jumbo frames "
            f"of {m.jumbo_frame} bytes; the CE switches take `mtu` up to {SWITCH_MTU_MAX} and "
            f"`jumboframe enable` up to {JUMBO_FRAME_MAX}: set {'.'.join(where)} to "
            f"{m.nic_mtu_max} or less",
            where,
        )


def npu_facts(cluster: Cluster) -> Iterator[Finding]:
    """A 1.2 rank table needs SDIDs and Super Pod IDs read from the hardware; without them the
    table is not written (files/hccl/rank_table.MISSING.md says what to collect)."""
    if cluster.missing_facts:  # info: before delivery there is no hardware to read them from;
        # the deployment refuses without them (roles/hccl_env), not the design
        yield Finding(
            INFO,
            Check.NPU_FACTS,
            f"no rank table written: {len(cluster.missing_facts)} A3 servers have no collected "
            f"NPU facts (first {cluster.missing_facts[0]}); collect SDIDs with roles/npu_facts and "
            "pass the file with --facts or hccl.facts (files/hccl/rank_table.MISSING.md)",
            ("hccl", "facts"),
        )


def optic_reach(cluster: Cluster) -> Iterator[Finding]:
    """Every optical run is within its transceiver's reach on that fibre (catalog cables.yaml
    `optics`: e.g. 400GBASE-SR8 100 m over OM4; a structured run's patch cord and its trunk
    together), and an optical medium names an optic for the link speed. A run too long is
    located at the key that sets the floor's depth, zones.training.row.racks, with the racks per
    row that bring every such run within reach (`_rows_for_reach`)."""
    seen: set[str] = set()
    over: list[tuple[Link, float]] = []
    unnamed: list[str] = []
    trunk_m = {t.trunk_id: t.length_m for t in cluster.trunks}  # a patch cord's channel adds it
    for link in cluster.links:
        if link.cable_id in seen or link.media not in ("MMF", "SMF"):
            continue
        seen.add(link.cable_id)
        run = link.length_m + trunk_m.get(link.trunk_id, 0)
        if not link.optic:
            unnamed.append(f"{link.cable_id} ({link.media} {link.speed}G)")
        elif run > link.reach_m:
            over.append((link, run))
    if over:
        link, run = max(over, key=lambda o: o[1] - o[0].reach_m)
        per_row, fix = _rows_for_reach(cluster, over)
        if fix:
            hint = (
                f"set zones.training.row.racks: {fix} (now {per_row}): fewer, longer rows of "
                "compute racks bring every such run within reach"
            )
        else:
            hint = (
                "no row length up to 64 racks brings them within reach: put fewer NPU servers in "
                "this cluster, or give the medium a longer-reach optic in the catalog"
            )
        yield Finding(
            ERROR,
            Check.OPTIC_REACH,
            f"{len(over)} runs exceed their optic's reach (longest over: {link.cable_id} "
            f"{link.a_device}-{link.b_device} {run:g} m > {link.optic} {link.reach_m} m); {hint}",
            ("zones", "training", "row", "racks"),
        )
    if unnamed:
        yield Finding(
            WARNING,
            Check.OPTIC_REACH,
            f"{len(unnamed)} optical runs have no transceiver in the catalog (e.g. {unnamed[0]})",
            ("catalog",),
        )


ROW_RACKS_MAX = 64  # the schema's maximum of zones.training.row.racks


def _rows_for_reach(cluster: Cluster, over: list[tuple[Link, float]]) -> tuple[int, int]:
    """(compute racks per training row now, the fewest per row from which every run in `over`
    is estimated within reach, or 0). A run crosses the training rows between its ends' racks
    (an end outside them, the spine row or another zone, lies past the last): with R' racks per
    row instead of R it crosses about k*R/R' rows of ROW_PITCH_M, and a row is (R'-R) racks
    wider (layout.freeze draws the floor with these constants; layout.run_length measures a run
    between racks). The run is then cut to the catalog's next standard length and a structured
    run's trunk added, as links.cable does."""
    rows: dict[int, int] = defaultdict(int)
    for r in cluster.racks:
        if r.zone == Zone.TRAINING and r.kind == RackKind.COMPUTE:
            rows[r.row] += 1
    if not rows:
        return 0, 0
    per_row, last = max(rows.values()), max(rows)
    trunk_m = {t.trunk_id: t.length_m for t in cluster.trunks}

    def rack_of(device: str) -> Rack:
        return cluster.rack_by_name[cluster.device_by_name[device].rack]

    def row_of(rack: Rack) -> int:
        return min(rack.row, last + 1) if rack.zone == Zone.TRAINING else last + 1

    spans = []
    for x, _ in over:
        a, b = rack_of(x.a_device), rack_of(x.b_device)
        if a.name == b.name:
            return per_row, 0  # within one rack: no floor layout shortens it
        spans.append(
            (
                abs(row_of(a) - row_of(b)),
                run_length(a, 0, b, 0),
                trunk_m.get(x.trunk_id, 0),
                x.reach_m,
            )
        )

    def fits(fix: int, k: int, run: float, trunk: int, reach: int) -> bool:
        shorter = run - (k - math.ceil(k * per_row / fix)) * ROW_PITCH_M
        shorter += (fix - per_row) * RACK_WIDTH_M
        return standard_length(cluster.standard_lengths_m, shorter) + trunk <= reach

    for fix in range(per_row + 1, ROW_RACKS_MAX + 1):
        if all(fits(fix, *span) for span in spans):
            return per_row, fix
    return per_row, 0
