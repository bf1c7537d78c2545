"""The prediction as YAML (one line per scope and condition, sorted as computed) or Markdown:
both diff well between two folders, and both state the model's limits and its constants."""

from __future__ import annotations

import json

from generator import hccl_cost
from generator.predict import Prediction

LIMITS = hccl_cost.LIMITS


def _row(values: tuple[float, float, float]) -> str:
    return "[" + ", ".join(f"{v:g}" for v in values) + "]"


def cell(value: float | None) -> str:
    return "" if value is None else f"{value:g}"


def free_field(r) -> str:
    return "" if r.collision_free is None else f", collision_free: {r.collision_free:g}"


def yaml(p: Prediction) -> str:
    lines = [
        f"# Predicted HCCL bandwidth of {p.folder} (wanka predict; 10^9 bytes/s, p5/p50/p95"
        f" over {p.seeds} hash seeds).",
        "# busbw: NCCL-tests convention (all_reduce algbw x 2(n-1)/n, all_gather x (n-1)/n);"
        " network: level1 busbw per NIC; collision_free: every flow at the scope's per-NIC"
        " bound (the design review's figure, hccl_cost.collision_free).",
        f"size_bytes: {p.size}",
        f"seeds: {p.seeds}",
        f"qps_per_connection: {p.qps}",
        f"mtu: {p.mtu}",
        f"goodput: {p.goodput:g}",
        f"hccs_busbw_gbytes_s: {p.hccs:g}",
        f"step_latency_us: {hccl_cost.LATENCY_S * 1e6:g}",
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
            f" algbw: {_row(r.algbw)}, network: {_row(r.network)}{free_field(r)}}}"
        )
    return "\n".join(lines) + "\n"


def markdown(p: Prediction) -> str:
    out = [
        f"# Expected HCCL bandwidth: {p.folder}",
        "",
        f"{p.size} bytes per rank, {p.seeds} hash seeds, {p.qps} QP per rank pair, MTU {p.mtu}"
        f" (goodput {p.goodput:g} of line rate), HCCS busbw {p.hccs:g} GB/s. GB/s = 10^9 bytes/s.",
        "",
        "| scope | condition | ranks | algo | busbw p5 / p50 / p95 | collision-free |"
        " per-NIC network p5 / p50 |",
        "|---|---|---:|---|---|---:|---|",
    ]
    for r in p.results:
        out.append(
            f"| {r.scope} | {r.condition} | {r.ranks} | {r.algo} |"
            f" {r.busbw[0]:g} / {r.busbw[1]:g} / {r.busbw[2]:g} | {cell(r.collision_free)} |"
            f" {r.network[0]:g} / {r.network[1]:g} |"
        )
    out += ["", "Limits:", "", *(f"- {text}" for text in (*p.notes, *LIMITS)), ""]
    return "\n".join(out)
