#!/usr/bin/env python3
"""Benchmark: `wanka predict` of the full-cluster AllReduce (the plan's `cluster` scope, no
failures) at 10,240 cards, and optionally 102,400.

Run: python tests/benchmarks/bench_predict.py [--scales 10240,102400] [--seeds 32]
Each scale is generated into a temporary folder first (bench_generate's blueprint), then timed:
reading the folder, and the prediction itself. Targets on a 2-core machine (issue #43): 10,240
cards <= 60 s, 102,400 cards <= 10 min.

Measured (2 cores shared with other jobs, load average 21-28; wall time, the process's own CPU
in brackets): 10,240 cards 30.3 s (3.0 s CPU), 102,400 cards 254 s (62 s CPU, peak 3.4 GiB);
busbw p5/p50/p95 52.2/57.9/60.2 and 47.0/50.0/51.7 GB/s. Placement of 512 cards on wanka-10k:
plain rank order loses 49.1 % of its collision-free busbw at p5; servers and rank order alone
(one server per leaf) 43.1 % (12 % less); with 4 QPs per rank pair 3.3 % (93 % less).
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "benchmarks"))

from bench_generate import blueprint_for  # noqa: E402

from generator import cli  # noqa: E402
from generator.predict import advise_placement, fabric, predict  # noqa: E402


def one(cards: int, seeds: int, placement: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        bp = blueprint_for(cards, Path(tmp))
        assert cli.main(["generate", str(bp), "-o", str(out), "-q"]) == 0
        load = os.getloadavg()[0]
        c0 = time.process_time()
        t0 = time.perf_counter()
        fab = fabric.load(out)
        t1 = time.perf_counter()
        c1 = time.process_time()
        p = predict(out, scopes=("cluster/all_reduce",), seeds=seeds, with_failures=False)
        t2 = time.perf_counter()
        c2 = time.process_time()
        r = p.results[0]
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"{cards:>7} cards: {len(fab.switches)} switches, {r.ranks} ranks, {r.algo}, "
            f"{seeds} seeds: read {t1 - t0:.2f} s ({c1 - c0:.1f} s CPU), predict (read included)"
            f" {t2 - t1:.2f} s ({c2 - c1:.1f} s CPU; load average {load:.1f} on"
            f" {os.cpu_count()} cores), "
            f"peak {peak:.0f} MiB; busbw p5/p50/p95 {r.busbw}, per-NIC network {r.network}"
        )
        if placement:
            t3 = time.perf_counter()
            advice = advise_placement(out, placement, seeds=seeds)
            plain, best = advice[0], advice[1]
            print(
                f"{'':>7}        placement of {placement} cards ({len(advice)} candidates, "
                f"{time.perf_counter() - t3:.1f} s): plain p5 {plain.p5} GB/s, loss "
                f"{plain.loss:.1%}; best {best.servers}/{best.order}/{best.algo}/{best.qps} QPs "
                f"p5 {best.p5} GB/s, loss {best.loss:.1%} ({1 - best.loss / plain.loss:.0%} less)"
            )
            placed = min(
                (c for c in advice if c.qps == 1 and "HCCL_ALGO" not in c.algo),
                key=lambda c: c.loss,
            )  # servers and rank order only, HCCL's defaults
            print(
                f"{'':>7}        servers and rank order alone: {placed.servers}/{placed.order} p5"
                f" {placed.p5} GB/s, loss {placed.loss:.1%}"
                f" ({1 - placed.loss / plain.loss:.0%} less than plain rank order)"
            )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--scales", default="10240")
    ap.add_argument("--seeds", type=int, default=32)
    ap.add_argument("--placement", type=int, default=512, help="job size to advise (0: none)")
    args = ap.parse_args()
    for cards in (int(s) for s in args.scales.split(",")):
        one(cards, args.seeds, args.placement)


if __name__ == "__main__":
    main()
