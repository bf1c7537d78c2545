#!/usr/bin/env python3
"""Benchmark: `wanka twin prove` (every switch of a build in FRR, shard by shard): shards,
routers, boundary speakers, passes, wall time, peak memory.

Run (root, with frr and nftables installed; see .ci/run):
    python tests/benchmarks/bench_twin_prove.py                  # wanka-10k, generated to a tmp folder
    python tests/benchmarks/bench_twin_prove.py --cards 102400   # bench_generate's 100k blueprint
    python tests/benchmarks/bench_twin_prove.py inventories/cluster-1k --memory 1000
    python tests/benchmarks/bench_twin_prove.py --cards 102400 --layout-only --seconds-per-router 3.6
The last (no root, nothing runs) prints the build's shards, routers and boundary speakers and an
EXTRAPOLATED wall time: each shard's routers times the seconds per router of a measured run
(a run prints it), times the passes given (--passes, default 2: a three-tier fabric's boundaries
settle in two). The load average is printed beside every figure (the machine is shared).
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

from generator.twin import instance, run  # noqa: E402

WANKA = [sys.executable, "-m", "generator"]
ENV = {
    **os.environ,
    "WANKA_TWIN_INSTANCE": instance.INSTANCE,
    "WANKA_TWIN_STATE": str(instance.BASE),
}


def _used_mib() -> int:
    text = Path("/proc/meminfo").read_text()
    total, available = (int(re.search(rf"^{k}:\s+(\d+) kB", text, re.M).group(1))
                        for k in ("MemTotal", "MemAvailable"))  # fmt: skip
    return (total - available) // 1024


def bench(folder: Path, memory: int, flows: bool, drills: bool) -> dict[str, str]:
    base, peak, done = _used_mib(), [0], threading.Event()

    def sample() -> None:
        while not done.wait(0.5):
            peak[0] = max(peak[0], _used_mib() - base)

    watcher = threading.Thread(target=sample, daemon=True)
    watcher.start()
    start = time.perf_counter()
    args = ["twin", "prove", str(folder)] + (["--memory", str(memory)] if memory else [])
    args += [] if drills else ["--no-drills"]
    proved = subprocess.run([*WANKA, *args, *([] if flows else ["--no-flows"])], cwd=ROOT,
                            capture_output=True, text=True, env=ENV)  # fmt: skip
    wall = time.perf_counter() - start
    done.set()
    watcher.join()
    summary = next((line for line in proved.stdout.splitlines() if line.startswith("shards ")), "")
    for line in proved.stderr.splitlines():  # each shard run: its routers, seconds, memory
        if re.search(r"shard \d+, pass \d+: (\d+ namespaces|\d+ s, )", line):
            print(f"{folder.name}: {line.removeprefix('twin prove: ')}", file=sys.stderr)
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
        "load average (1, 5, 15 min) at the end": _load(),
    }


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def layout_only(folder: Path, memory: int, per_router: float, passes: int) -> dict[str, str]:
    """The build's shards as `twin prove` would cut them, and an extrapolated wall time."""
    from generator.twin import plan, prove, routing, shard

    p = plan.plan(folder, {}, bounded=False)
    routing.apply(p)
    budget = memory or prove.available_mib() // 2
    try:
        lay = shard.layout(p, budget)
    except shard.TooLarge as err:  # what cannot be cut does not fit: said, not extrapolated
        return {"folder": folder.name, "shards": f"none: {err}", "budget MiB": f"{budget:,}",
                "load average (1, 5, 15 min)": _load()}  # fmt: skip
    for s in lay.shards:
        print(f"{folder.name}: shard {s.number}: {s.label}; {s.routers} routers, {s.speakers} "
              f"boundary speakers, about {s.mib:,} MiB", file=sys.stderr)  # fmt: skip
    routers = sum(s.routers for s in lay.shards)
    row = {
        "folder": folder.name,
        "shards": str(len(lay.shards)),
        "routers": str(sum(1 for n in p.namespaces.values() if n.frr and n.kind != shard.BOUNDARY)),
        "boundary speakers": str(sum(s.speakers for s in lay.shards)),
        "budget MiB": f"{budget:,}",
        "largest shard MiB (estimate)": f"{max(s.mib for s in lay.shards):,}",
        "quiet cables cut": f"{len(lay.quiet):,}",  # static next hops, management ports
    }
    if per_router:
        row["EXTRAPOLATED wall s"] = (
            f"{routers * per_router * passes:.0f} ({routers} routers x "
            f"{per_router} s x {passes} passes)"
        )
    row["load average (1, 5, 15 min)"] = _load()
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", type=Path)
    parser.add_argument("--cards", type=int, default=10240,
                        help="with no folder: generate wanka-10k (10240) or bench_generate's "
                        "blueprint scaled to this many cards")  # fmt: skip
    parser.add_argument("--memory", type=int, default=0, help="wanka twin prove --memory")
    parser.add_argument("--flows", action="store_true", help="prove the flows too (host_network)")
    parser.add_argument("--drills", action="store_true", help="run the drills too")
    parser.add_argument("--layout-only", action="store_true",
                        help="no run: the shards, and the wall time extrapolated")  # fmt: skip
    parser.add_argument("--seconds-per-router", type=float, default=0.0,
                        help="with --layout-only: a measured run's seconds per router and pass")  # fmt: skip
    parser.add_argument("--passes", type=int, default=2, help="with --layout-only (default 2)")
    args = parser.parse_args()
    if (need := run.missing()) and not args.layout_only:
        print("the twin needs " + ", ".join(need), file=sys.stderr)
        return 2
    if not args.layout_only:
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
        print(f"load average (1, 5, 15 min) at the start: {_load()}", file=sys.stderr)
        if args.layout_only:
            rows = [layout_only(f, args.memory, args.seconds_per_router, args.passes)
                    for f in folders]  # fmt: skip
        else:
            rows = [bench(folder, args.memory, args.flows, args.drills) for folder in folders]
    keys = list(dict.fromkeys(k for row in rows for k in row))
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(row.get(k, "") for k in keys) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
