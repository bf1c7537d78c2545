#!/usr/bin/env python3
"""Benchmark: wall time, peak memory and output size per stage at 1k, 10k and 100k cards.

Run: python tests/benchmarks/bench_generate.py [--scales 1024,10240,102400] [--repeat 3]
Each scale runs in a fresh subprocess so peak-memory figures do not leak between scales.
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
    """One end-to-end run, stage by stage (child process entry point)."""
    sys.path.insert(0, str(ROOT))
    from generator import output
    from generator.analysis import analyse
    from generator.blueprint.load import load_blueprint
    from generator.blueprint.validate import validate
    from generator.expand import expand
    from generator.pipeline import emit_all

    stages = []

    def stage(name, fn, size):
        _reset_peak()
        t = time.perf_counter()
        value = fn()
        stages.append(
            {
                "stage": name,
                "seconds": time.perf_counter() - t,
                "peak_mib": _peak_mib(),
                "output": size(value),
            }
        )
        return value

    loaded = stage("load", lambda: load_blueprint(path), lambda v: f"{len(v.positions)} YAML nodes")
    bp = stage("validate", lambda: validate(loaded), lambda v: "blueprint with defaults")
    cluster = stage(
        "expand",
        lambda: expand(bp),
        lambda c: (
            f"{len(c.devices):,} devices, {len(c.links):,} links, {len(c.addresses):,} addresses"
        ),
    )
    analysis = stage("analyse", lambda: analyse(cluster), lambda a: f"{len(a.findings)} findings")
    files = stage(
        "emit",
        lambda: emit_all(cluster, analysis),
        lambda fs: f"{len(fs)} files, {sum(len(f.data) for f in fs) / 1e6:.1f} MB",
    )
    stage("write", lambda: output.write(out, files), lambda n: f"{n} files written")
    npus = sum(1 for d in cluster.devices if d.role == "npu-server") * 8
    return {
        "cards": npus,
        "devices": len(cluster.devices),
        "links": len(cluster.links),
        "stages": stages,
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
        print(f"{'cards':>8} {'stage':<9} {'seconds':>8} {'peak MiB':>9}  output")
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
                print(
                    f"{cards:>8} {s['stage']:<9} {s['seconds']:>8.3f} {s['peak_mib']:>9.0f}  {s['output']}"
                )
            total = sum(s["seconds"] for s in best["stages"])
            print(
                f"{cards:>8} {'TOTAL':<9} {total:>8.3f} {max(s['peak_mib'] for s in best['stages']):>9.0f}  "
                f"{best['devices']:,} devices, {best['links']:,} links, {total / cards * 1e6:.0f} us/card"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
