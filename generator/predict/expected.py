"""`wanka predict FOLDER --write`: the prediction as the acceptance role's pass thresholds.

Written into the site overlay, `<FOLDER>.site/acceptance/expected.yml` (and expected.md, the
same figures for a reader), never into the generated folder: the next `wanka generate`
replaces that folder and refuses while it holds a file generate did not write (output.py).
Why a command and not a stage of generate: the prediction of wanka-10k's scopes and their
single failures takes minutes on this machine (tests/benchmarks/bench_predict.py), generate
two seconds; a stage would multiply generate's time many times over.

One fact, computed once: each scope's and condition's busbw p5/p50/p95 comes from
generator.predict.predict; the threshold is p5 x (1 - margin), written here and only read by
plugins/modules/wanka_hccl_acceptance.py, which judges a run against it and reports
measured / predicted (p50). plan_sha256 ties the file to the plan it was predicted from: the
module refuses a prediction of another plan.yml (the cluster was generated again).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from generator.predict import Prediction, report

PATH = "acceptance/expected.yml"  # under the site overlay (group_vars wanka_site_dir)
MARGIN = 0.10
MARGIN_REASON = (
    "the model's own error against the public figures it is held to: the collision-free"
    " plateau within 5 % of NCCL's 24 GB/s-per-200G rule and the ECMP/NSLB ratio within 10 % of"
    " Tolly's 0.65 (tests/unit/test_predict.py); it also leaves PFC/DCQCN, the RDMA WRITE"
    " header (RETH) and run-to-run spread out, so a run below p5 by more than that is the"
    " fabric's, not the model's [reasoned, not measured on Ascend hardware]"
)


def threshold(p5: float, margin: float) -> float:
    return round(p5 * (1 - margin), 2)


def yaml_text(p: Prediction, plan_bytes: bytes, margin: float) -> str:
    """expected.yml: per scope, per condition busbw p5/p50/p95 and the pass threshold."""
    lines = [
        f"# Expected HCCL bus bandwidth of {p.folder} (wanka predict --write; do not edit: run it"
        " again after every generate).",
        "# The npu_acceptance role judges each run against `threshold` (busbw, 10^9 bytes/s, at"
        " the plan's largest size) and reports measured / p50.",
        f"cluster: {p.folder}",
        f"plan_sha256: {hashlib.sha256(plan_bytes).hexdigest()}",
        f"size_bytes: {p.size}",
        f"seeds: {p.seeds}",
        f"margin: {margin:g}",
        f"threshold: p5 x (1 - margin)  # {margin:g}: {json.dumps(MARGIN_REASON)}",
        "limits:",
        *(f"- {json.dumps(text, ensure_ascii=False)}" for text in (*p.notes, *report.LIMITS)),
        "scopes:",
    ]
    seen: set[str] = set()
    for r in p.results:
        if r.scope not in seen:
            seen.add(r.scope)
            lines.append(f"  {r.scope}:")
        lines.append(
            f"    {json.dumps(r.condition)}: {{ranks: {r.ranks}, algo: {r.algo},"
            f" busbw: [{r.busbw[0]:g}, {r.busbw[1]:g}, {r.busbw[2]:g}],"
            f" threshold: {threshold(r.busbw[0], margin):g}}}"
        )
    return "\n".join(lines) + "\n"


def markdown(p: Prediction, margin: float) -> str:
    """expected.md: the design review's table of expected numbers per scope."""
    out = [
        f"# Expected HCCL bandwidth per acceptance scope: {p.folder}",
        "",
        f"Bus bandwidth (10^9 bytes/s) at {p.size} bytes, p5 / p50 / p95 over {p.seeds} ECMP hash"
        f" seeds. Pass threshold = p5 x (1 - {margin:g}): {MARGIN_REASON}.",
        "",
        "| scope | condition | ranks | algo | busbw p5 / p50 / p95 | threshold |",
        "|---|---|---:|---|---|---:|",
    ]
    for r in p.results:
        out.append(
            f"| {r.scope} | {r.condition} | {r.ranks} | {r.algo} |"
            f" {r.busbw[0]:g} / {r.busbw[1]:g} / {r.busbw[2]:g} |"
            f" {threshold(r.busbw[0], margin):g} |"
        )
    out += ["", "Limits:", "", *(f"- {text}" for text in (*p.notes, *report.LIMITS)), ""]
    return "\n".join(out)


def write(folder: Path, p: Prediction, margin: float) -> Path:
    """Both files into the site overlay, atomically; the path of expected.yml."""
    from generator.output import write_file
    from generator.site import overlay

    plan = (Path(folder) / "files" / "acceptance" / "plan.yml").read_bytes()
    target = overlay(Path(folder)) / PATH
    write_file(target.with_suffix(".md"), markdown(p, margin).encode())
    write_file(target, yaml_text(p, plan, margin).encode())
    return target
