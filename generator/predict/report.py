"""The prediction as YAML (one line per scope and condition, sorted as computed) or Markdown:
both diff well between two folders, and both state the model's limits and its constants."""

from __future__ import annotations

import json

from generator.predict import Prediction, hccl

LIMITS = (
    "flow level: no PFC, DCQCN, ECN or buffer dynamics; max-min fair sharing of line rates",
    "per-flow ECMP hash drawn uniformly per hop and seed: Huawei's hash function is not public",
    "the first N of more equal next hops than `maximum load-balancing N` [unconfirmed]",
    "HCCL level1 algorithm as coll_alg_operator.cc picks it for large data (ring for 2 servers,"
    " NHR above); the pipeline algorithm is not modelled (it overlaps level0 and level1)",
    "NHR exchange partners modelled as distance doubling [unconfirmed]",
    "AllGather level1 as half of AllReduce's [unconfirmed]",
    "RoCEv2 goodput = IB MTU / (IB MTU + 82 bytes of headers, preamble and gap; pingdo.net"
    " roce-v2-header-overhead table)",
    "intra-server HCCS busbw from the plan's server scope (catalog value, [unconfirmed] there)",
    "failures: each spine above, and each uplink of, the scope's first leaf (leaves are alike)",
)


def _row(values: tuple[float, float, float]) -> str:
    return "[" + ", ".join(f"{v:g}" for v in values) + "]"


def yaml(p: Prediction) -> str:
    lines = [
        f"# Predicted HCCL bandwidth of {p.folder} (wanka predict; 10^9 bytes/s, p5/p50/p95"
        f" over {p.seeds} hash seeds).",
        "# busbw: NCCL-tests convention (all_reduce algbw x 2(n-1)/n, all_gather x (n-1)/n);"
        " network: level1 busbw per NIC.",
        f"size_bytes: {p.size}",
        f"seeds: {p.seeds}",
        f"qps_per_connection: {p.qps}",
        f"mtu: {p.mtu}",
        f"goodput: {p.goodput:g}",
        f"hccs_busbw_gbytes_s: {p.hccs:g}",
        f"step_latency_us: {hccl.LATENCY_S * 1e6:g}",
        "limits:",
        *(f"- {json.dumps(text, ensure_ascii=False)}" for text in LIMITS),
        "notes:" if p.notes else "notes: []",
        *(f"- {json.dumps(text, ensure_ascii=False)}" for text in p.notes),
        "results:",
    ]
    for r in p.results:
        lines.append(
            f"- {{scope: {r.scope}, condition: {json.dumps(r.condition)}, ranks: {r.ranks},"
            f" units: {r.units}, algo: {r.algo}, busbw: {_row(r.busbw)},"
            f" algbw: {_row(r.algbw)}, network: {_row(r.network)}}}"
        )
    return "\n".join(lines) + "\n"


def markdown(p: Prediction) -> str:
    out = [
        f"# Expected HCCL bandwidth: {p.folder}",
        "",
        f"{p.size} bytes per rank, {p.seeds} hash seeds, {p.qps} QP per rank pair, MTU {p.mtu}"
        f" (goodput {p.goodput:g} of line rate), HCCS busbw {p.hccs:g} GB/s. GB/s = 10^9 bytes/s.",
        "",
        "| scope | condition | ranks | algo | busbw p5 / p50 / p95 | per-NIC network p5 / p50 |",
        "|---|---|---:|---|---|---|",
    ]
    for r in p.results:
        out.append(
            f"| {r.scope} | {r.condition} | {r.ranks} | {r.algo} |"
            f" {r.busbw[0]:g} / {r.busbw[1]:g} / {r.busbw[2]:g} |"
            f" {r.network[0]:g} / {r.network[1]:g} |"
        )
    out += ["", "Limits:", "", *(f"- {text}" for text in (*p.notes, *LIMITS)), ""]
    return "\n".join(out)
