#!/usr/bin/env python3
"""Benchmark: wall time per stage, peak memory and output size at 1k, 10k and 100k cards.

Run: python tests/benchmarks/bench_generate.py [--scales 1024,10240,102400] [--repeat 3]
Each scale runs in a fresh subprocess so peak-memory figures (this process; the forked workers
have their own) do not leak between scales.
Targets on a 2-core machine: 10,240 cards end to end < 2 s, 102,400 cards < 20 s, linear growth.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
BASE = ROOT / "blueprints" / "wanka-10k.yaml"


def blueprint_for(cards: int, folder: Path) -> Path:
    """The 10k example scaled to `cards`, with management cores large enough for it."""
    bp = yaml.safe_load(BASE.read_text())
    bp["metadata"]["name"] = f"bench-{cards}"
    bp["compute"]["cards"] = cards
    bp["compute"]["hostname"] = "npu-{index:06d}"
    bp["zones"]["storage"]["nodes"]["count"] = max(4, cards // 400)
    if cards > 20000:
        # pod spines of 72 down / 72 up keep every path within the 128-way ECMP limit (#15)
        bp["networks"]["parameter"]["spine"]["model"] = "ce16804"
        bp["networks"]["parameter"]["core"]["model"] = "ce16816"
        bp["networks"]["storage"]["spine"]["model"] = "ce16804"
        bp["networks"]["business"]["spine"]["model"] = "ce16816"
        bp["networks"]["business"]["pool"] = "10.100.0.0/15"
        bp["networks"]["management"]["inband"] = {
            "pool": "10.104.0.0/15",
            "core": {"model": "ce16816"},
        }
        # rows of 39 racks keep every run within its optic's reach at 102,400 cards (the
        # optic-reach design check's hint; the default row is longer)
        bp["zones"]["training"]["row"] = {"racks": 39}
        bp["networks"]["management"]["oob"] = {
            "pool": "10.106.0.0/15",
            "core": {"model": "ce16816-10ge"},
        }
    path = folder / f"bench-{cards}.yaml"
    path.write_text(yaml.safe_dump(bp, sort_keys=False))
    return path


def _reset_peak() -> None:
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def _peak_mib() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(path: Path, out: Path) -> dict:
    """One end-to-end run as `wanka generate` makes it (child process entry point): the pipeline
    with its own stage timings, its files written as they are made, then the swap into place
    (`write`). The model emitters run in workers beside the analysis, so `emit` is what is left
    of emitting (and writing) once the analysis is done."""
    sys.path.insert(0, str(ROOT))
    from generator import output, pipeline

    _reset_peak()
    with output.Staging(out) as stage:
        result = pipeline.run(path, sink=stage)
        t = time.perf_counter()
        written = stage.commit(result.written)
    seconds = {**result.seconds, "write": time.perf_counter() - t}
    cluster, files = result.cluster, result.written
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    said = {
        "load": f"{len(result.loaded.positions)} YAML nodes",
        "validate": "blueprint with defaults",
        "expand": (
            f"{len(cluster.devices):,} devices, {len(cluster.links):,} links, "
            f"{len(cluster.addresses):,} addresses"
        ),
        "analyse": f"{len(result.findings)} findings",
        "emit": f"{len(files)} files written, {size / 1e6:.1f} MB",
        "write": f"{written} files in place",
    }
    return {
        "cards": sum(len(s.devices) for s in cluster.npu_servers),
        "devices": len(cluster.devices),
        "links": len(cluster.links),
        "peak_mib": _peak_mib(),
        "stages": [
            {"stage": k, "seconds": v, "output": said.get(k, "")} for k, v in seconds.items()
        ],
    }


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--scales", default="1024,10240,102400")
    ap.add_argument(
        "--repeat", type=int, default=3, help="runs per scale; the fastest total is reported"
    )
    ap.add_argument("--child", nargs=2, metavar=("BLUEPRINT", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps(measure(Path(args.child[0]), Path(args.child[1]))))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        print(f"{'cards':>8} {'stage':<9} {'seconds':>8}  output")
        for cards in (int(s) for s in args.scales.split(",")):
            path = blueprint_for(cards, folder)
            runs = []
            for i in range(args.repeat):
                res = subprocess.run(
                    [
                        sys.executable,
                        __file__,
                        "--child",
                        str(path),
                        str(folder / f"out-{cards}-{i}"),
                    ],
                    check=True,
                    capture_output=True,
                    text=True,
                )
                runs.append(json.loads(res.stdout))
            best = min(runs, key=lambda r: sum(s["seconds"] for s in r["stages"]))
            for s in best["stages"]:
                print(f"{cards:>8} {s['stage']:<9} {s['seconds']:>8.3f}  {s['output']}")
            total = sum(s["seconds"] for s in best["stages"])
            print(
                f"{cards:>8} {'TOTAL':<9} {total:>8.3f}  {best['devices']:,} devices, "
                f"{best['links']:,} links, {total / cards * 1e6:.0f} us/card, "
                f"peak {best['peak_mib']:.0f} MiB"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
