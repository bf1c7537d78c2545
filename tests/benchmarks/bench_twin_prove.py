#!/usr/bin/env python3
"""Benchmark: `wanka twin prove` (every switch of a build in FRR, shard by shard): shards,
routers, boundary speakers, passes, wall time, peak memory.

Run (root, with frr and nftables installed; see .ci/run):
    python tests/benchmarks/bench_twin_prove.py                  # wanka-10k, generated to a tmp folder
    python tests/benchmarks/bench_twin_prove.py --cards 102400   # bench_generate's 100k blueprint
    python tests/benchmarks/bench_twin_prove.py inventories/cluster-1k --memory 1000
Peak memory is printed twice: what prove reports (the FRR daemons of its largest shard, by
proportional set size) and what this script sees the machine lose (MemTotal - MemAvailable,
sampled every 0.5 s, less its value before the run: namespaces, veths and the kernel's tables
too). The issue's targets on a 2-core / 24 GiB machine: 102,400 cards in <= 45 min and <= 16 GiB.
Nothing is asserted (timings do not belong in tests).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))

from generator.twin import run  # noqa: E402

WANKA = [sys.executable, "-m", "generator"]
ENV = {**os.environ, "WANKA_TWIN_INSTANCE": run.INSTANCE, "WANKA_TWIN_STATE": str(run.BASE)}


def _used_mib() -> int:
    text = Path("/proc/meminfo").read_text()
    total, available = (int(re.search(rf"^{k}:\s+(\d+) kB", text, re.M).group(1))
                        for k in ("MemTotal", "MemAvailable"))  # fmt: skip
    return (total - available) // 1024


def bench(folder: Path, memory: int, flows: bool) -> dict[str, str]:
    base, peak, done = _used_mib(), [0], threading.Event()

    def sample() -> None:
        while not done.wait(0.5):
            peak[0] = max(peak[0], _used_mib() - base)

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    start = time.perf_counter()
    args = ["twin", "prove", str(folder)] + (["--memory", str(memory)] if memory else [])
    proved = subprocess.run([*WANKA, *args, *([] if flows else ["--no-flows"])], cwd=ROOT,
                            capture_output=True, text=True, env=ENV)  # fmt: skip
    wall = time.perf_counter() - start
    done.set()
    watcher.join()
    summary = next((line for line in proved.stdout.splitlines() if line.startswith("shards ")), "")
    for line in proved.stdout.splitlines():
        if line.startswith("FAIL"):
            print(f"{folder.name}: {line}", file=sys.stderr)
    if not summary:
        print(proved.stderr[-3000:], file=sys.stderr)

    def field(pattern: str) -> str:
        m = re.search(pattern, summary)
        return m.group(1) if m else "?"

    return {
        "folder": folder.name,
        "shards": field(r"shards (\d+)"),
        "routers": field(r"routers (\d+)"),
        "boundary speakers": field(r"(\d+) boundary speakers"),
        "passes (shard runs)": field(r"passes (\d+)") + " (" + field(r"\((\d+) shard runs") + ")",
        "wall s": f"{wall:.0f}",
        "peak MiB (FRR, largest shard)": field(r"peak memory ([\d,]+) MiB"),
        "peak MiB (machine)": f"{peak[0]:,}",
        "exit": str(proved.returncode),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--cards", type=int, default=10240,
                        help="with no folder: generate wanka-10k (10240) or bench_generate's "
                        "blueprint scaled to this many cards")  # fmt: skip
    parser.add_argument("--memory", type=int, default=0, help="wanka twin prove --memory")
    parser.add_argument("--flows", action="store_true", help="prove the flows too (host_network)")
    args = parser.parse_args()
    if need := run.missing():
        print("the twin needs " + ", ".join(need), file=sys.stderr)
        return 2
    subprocess.run([*WANKA, "twin", "down"], cwd=ROOT, capture_output=True, env=ENV)
    with tempfile.TemporaryDirectory() as tmp:
        folders = [f.resolve() for f in args.folders]
        if not folders:
            if args.cards == 10240:
                blueprint = ROOT / "blueprints" / "wanka-10k.yaml"
            else:
                from bench_generate import blueprint_for

                blueprint = blueprint_for(args.cards, Path(tmp))
            out = Path(tmp) / blueprint.stem
            subprocess.run([*WANKA, "generate", str(blueprint), "-q", "-o", str(out)], cwd=ROOT,
                           check=True)  # fmt: skip
            folders = [out]
        rows = [bench(folder, args.memory, args.flows) for folder in folders]
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(row[k] for k in keys) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
