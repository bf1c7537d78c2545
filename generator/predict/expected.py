"""`wanka predict FOLDER --write`: the prediction as the acceptance role's pass thresholds.

Written into the site overlay, `<FOLDER>.site/acceptance/expected.yml` (and expected.md, the
same figures for a reader), never into the generated folder: the next `wanka generate`
replaces that folder and refuses while it holds a file generate did not write (output.py).
Why a command and not a stage of generate: the prediction of wanka-10k's scopes and their
single failures takes minutes on this machine (tests/benchmarks/bench_predict.py), generate
two seconds; a stage would multiply generate's time many times over. The design review shows
what generate can afford: each scope's collision-free figure (generator/hccl_cost.py), which
this prediction reports too (`collision_free`), and no hashed percentiles across spines.

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

from generator.hccl_cost import MARGIN, MARGIN_REASON, threshold  # the one margin and mark
from generator.predict import Prediction, report

PATH = "acceptance/expected.yml"  # under the site overlay (group_vars wanka_site_dir)
__all__ = ["MARGIN", "MARGIN_REASON", "PATH", "markdown", "threshold", "write", "yaml_text"]


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
            f" threshold: {threshold(r.busbw[0], margin):g}{report.free_field(r)}}}"
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
        "| scope | condition | ranks | algo | busbw p5 / p50 / p95 | threshold | collision-free |",
        "|---|---|---:|---|---|---:|---:|",
    ]
    for r in p.results:
        out.append(
            f"| {r.scope} | {r.condition} | {r.ranks} | {r.algo} |"
            f" {r.busbw[0]:g} / {r.busbw[1]:g} / {r.busbw[2]:g} |"
            f" {threshold(r.busbw[0], margin):g} | {report.cell(r.collision_free)} |"
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
