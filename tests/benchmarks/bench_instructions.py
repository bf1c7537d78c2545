#!/usr/bin/env python3
"""Benchmark: CPU instructions per stage and per emitter, counted by valgrind's callgrind.

Wall times on a shared 2-core VM drift by a third within minutes, so two versions of a change
are compared by the instructions they execute: the same count on every run (PYTHONHASHSEED=0).
Run it in each tree and compare. Everything runs in one process, one stage after another (the
work, not the parallel layout); cache misses are not counted, so large models gain less in
seconds than here. The targets in seconds are bench_generate.py's.

Run: python tests/benchmarks/bench_instructions.py [--cards 10240]
Needs valgrind. Slow: about 60x the native time (3-4 minutes at 10,240 cards).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def child(blueprint: str) -> None:
    """Under callgrind with instrumentation off: each stage is counted and dumped on its own."""
    sys.path.insert(0, str(ROOT))
    import gc

    from generator import parallel
    from generator.analysis import analyse
    from generator.blueprint.load import load_blueprint
    from generator.blueprint.spec import blueprint_spec
    from generator.blueprint.validate import validate
    from generator.expand import expand

    gc.disable()  # as pipeline.run

    def callgrind(*command: str) -> None:
        subprocess.run(["callgrind_control", *command, str(os.getpid())], capture_output=True)

    bp = blueprint_spec(validate(load_blueprint(blueprint)))
    callgrind("--instr=on")
    callgrind("--zero")
    cluster = expand(bp)
    callgrind("--dump=expand")
    analysis = analyse(cluster)
    callgrind("--dump=analyse")
    for e in parallel.MODEL_EMITTERS:
        list(e.emit(cluster, None))
        callgrind(f"--dump={e.name}")
    for e in parallel.ANALYSIS_EMITTERS:
        list(e.emit(cluster, analysis))
        callgrind(f"--dump={e.name}")
    callgrind("--instr=off")


def counts(folder: Path) -> list[tuple[str, int]]:
    """(stage, instructions) from callgrind's dump files, in the order they were written."""
    out = []
    for dump in sorted(folder.glob("callgrind.out.*"), key=lambda p: int(p.suffix[1:])):
        text = dump.read_text(errors="replace")
        trigger = next(x for x in text.splitlines() if x.startswith("desc: Trigger:"))
        total = next(x for x in text.splitlines() if x.startswith(("summary:", "totals:")))
        out.append((trigger.rsplit(" ", 1)[-1], int(total.split()[1])))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--cards", type=int, default=10240)
    ap.add_argument("--child", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child(args.child)
        return 0
    if not shutil.which("valgrind") or not shutil.which("callgrind_control"):
        print("bench_instructions: needs valgrind (apt install valgrind)", file=sys.stderr)
        return 2
    sys.path.insert(0, str(Path(__file__).parent))
    from bench_generate import blueprint_for

    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        blueprint = blueprint_for(args.cards, folder)
        subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                "--instr-atstart=no",
                f"--callgrind-out-file={folder}/callgrind.out",
                sys.executable,
                __file__,
                "--child",
                str(blueprint),
            ],
            check=True,
            capture_output=True,
            env={**os.environ, "PYTHONHASHSEED": "0"},
        )
        found = counts(folder)
    print(f"{'cards':>8} {'stage':<15} {'M instructions':>15}")
    for stage, n in found:
        print(f"{args.cards:>8} {stage:<15} {n / 1e6:>15.1f}")
    total = sum(n for _, n in found)
    print(f"{args.cards:>8} {'TOTAL':<15} {total / 1e6:>15.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
