"""Design rules about the hardware (issues #13, #15): the lossless class of every RoCE plane,
ECMP width and command families each switch model has, NPU facts for A3 rank tables, optic reach,
the provider hand-off. Each reads the Cluster only."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from generator.analysis.finding import ERROR, INFO, WARNING, Finding
from generator.model import Cluster

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
            "provider",
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
                "lossless",
                f"the {plane} plane carries RoCE but has no lossless class (PFC and ECN): RoCE on a "
                "lossy fabric drops under incast; remove `pfc: false` from "
                f"networks.{plane}.lossless",
                where,
            )
            continue
        yield Finding(
            INFO,
            "lossless",
            f"{plane} plane lossless class: priority {lossless.priority}, DSCP {lossless.dscp} "
            f"(RDMA traffic class {lossless.hccl_rdma_tc}), NIC TC {lossless.tc}, "
            f"ECN {lossless.ecn}, MTU {lossless.mtu}",
            where,
        )


def ecmp_limit(cluster: Cluster) -> Iterator[Finding]:
    """No switch needs more equal-cost paths than its model installs (catalog `ecmp_max`, the
    `maximum load-balancing` limit): the paths beyond it would carry nothing, so links sit idle
    and the plane is not the oversubscription it claims."""
    over: dict[str, list[tuple[str, int, int]]] = defaultdict(list)
    for d in cluster.devices:
        facts = cluster.facts_of(d.model)
        if facts is not None and d.ecmp_paths > facts.ecmp_max:
            over[d.plane].append((d.name, d.ecmp_paths, facts.ecmp_max))
    for plane, found in sorted(over.items()):
        name, paths, limit = found[0]
        yield Finding(
            ERROR,
            "ecmp",
            f"{len(found)} {plane} switches need more equal-cost paths than their model installs "
            f"(e.g. {name}: {paths} paths, limit {limit}); the extra links would carry nothing. "
            "Use a model with fewer ports per tier, more spines or cores, or a wider-ECMP model",
            ("networks", plane),
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
                "switch-capability",
                f"the {plane} plane is lossless but {', '.join(models)} has no PFC (catalog "
                "command_families lacks dcb-pfc)",
                ("networks", plane),
            )


def npu_facts(cluster: Cluster) -> Iterator[Finding]:
    """A 1.2 rank table needs SDIDs and Super Pod IDs read from the hardware; without them the
    table is not written (files/hccl/rank_table.MISSING.md says what to collect)."""
    if cluster.missing_facts:  # info: before delivery there is no hardware to read them from;
        # the deployment refuses without them (roles/hccl_env), not the design
        yield Finding(
            INFO,
            "npu-facts",
            f"no rank table written: {len(cluster.missing_facts)} A3 servers have no collected "
            f"NPU facts (first {cluster.missing_facts[0]}); collect SDIDs with roles/npu_facts and "
            "pass the file with --facts or hccl.facts (files/hccl/rank_table.MISSING.md)",
            ("hccl", "facts"),
        )


def optic_reach(cluster: Cluster) -> Iterator[Finding]:
    """Every optical run is within its transceiver's reach on that fibre (catalog cables.yaml
    `optics`: e.g. 400GBASE-SR8 100 m over OM4), and an optical medium names an optic for the
    link speed."""
    seen: set[str] = set()
    over: list[str] = []
    unnamed: list[str] = []
    for link in cluster.links:
        if link.cable_id in seen or link.media not in ("MMF", "SMF"):
            continue
        seen.add(link.cable_id)
        if not link.optic:
            unnamed.append(f"{link.cable_id} ({link.media} {link.speed}G)")
        elif link.length_m > link.reach_m:
            over.append(f"{link.cable_id} {link.length_m} m > {link.optic} {link.reach_m} m")
    if over:
        yield Finding(
            ERROR,
            "optic-reach",
            f"{len(over)} runs exceed their optic's reach (e.g. {over[0]}); move racks closer or "
            "give the medium a longer-reach optic in the catalog",
            ("catalog",),
        )
    if unnamed:
        yield Finding(
            WARNING,
            "optic-reach",
            f"{len(unnamed)} optical runs have no transceiver in the catalog (e.g. {unnamed[0]})",
            ("catalog",),
        )
