#!/usr/bin/env python3
"""Benchmark: the twin's bring-up time, test time and memory per generated folder.

Run (root, with frr, nftables and dnsmasq installed; see .ci/run):
    python tests/benchmarks/bench_twin.py [inventories/pod-128 inventories/cluster-1k ...]
    wanka generate blueprints/wanka-10k.yaml -o /tmp/w10k && \
        python tests/benchmarks/bench_twin.py --pod 1 /tmp/w10k
For each folder: `wanka twin up` (wall time, and the namespaces, cables and FRR routers it made),
the memory of every process in the twin's namespaces once it is up (FRR daemons: their
resident set, summed, and per daemon), `wanka twin test` on the running twin (sessions, flows,
NPU paths, drills, ZTP; wall time and its exit code), the peak resident set of the wanka
processes, and `wanka twin down`. Figures print as a table; nothing is asserted (targets live
here, not in a timed unit test).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from generator.twin import instance, run  # noqa: E402

WANKA = [sys.executable, "-m", "generator", "twin"]
# the twin instance this benchmark runs (and reads back with generator.twin.instance)
ENV = {
    **os.environ,
    "WANKA_TWIN_INSTANCE": instance.INSTANCE,
    "WANKA_TWIN_STATE": str(instance.BASE),
}


def _wanka(*args: str) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    done = subprocess.run([*WANKA, *args], cwd=ROOT, capture_output=True, text=True, env=ENV)
    return time.perf_counter() - start, done


def _rss_mib(pid: int) -> float:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0.0
    m = re.search(r"^VmRSS:\s+(\d+) kB", status, re.M)
    return int(m.group(1)) / 1024 if m else 0.0


def _twin_memory() -> tuple[int, float]:
    """Processes in the twin's namespaces and their summed resident set (MiB)."""
    pids = set()
    for ns in run.namespaces():
        pids |= {int(x) for x in run.sh("ip", "netns", "pids", ns, check=False).split()}
    return len(pids), sum(_rss_mib(p) for p in pids)


def bench(folder: Path, pod: int) -> dict[str, object]:
    part = ["--pod", str(pod)] if pod else []
    up_s, up = _wanka("up", str(folder), *part)
    if up.returncode != 0:
        raise SystemExit(f"twin up {folder} failed:\n{up.stdout}{up.stderr}")
    made = re.search(r"(\d+) namespaces, (\d+) cables", up.stdout + up.stderr)
    routers = re.search(r"FRR in (\d+) namespaces", up.stdout + up.stderr)
    processes, frr_mib = _twin_memory()
    with tempfile.TemporaryDirectory() as tmp:
        test_s, test = _wanka("test", str(folder), *part, "--report", f"{tmp}/twin-report.md")
    down_s, _ = _wanka("down")
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    failed = [line for line in test.stdout.splitlines() if line.startswith("FAIL")]
    for line in failed:
        print(f"{folder.name}: {line}", file=sys.stderr)
    return {
        "folder": folder.name + (f" pod {pod}" if pod else ""),
        "namespaces": made.group(1) if made else "?",
        "cables": made.group(2) if made else "?",
        "FRR routers": routers.group(1) if routers else "?",
        "up s": f"{up_s:.1f}",
        "test s": f"{test_s:.1f}",
        "down s": f"{down_s:.1f}",
        "twin processes": processes,
        "their RSS MiB": f"{frr_mib:.0f}",
        "MiB per process": f"{frr_mib / max(processes, 1):.1f}",
        "wanka peak RSS MiB (so far)": f"{peak:.0f}",
        "test exit": f"{test.returncode}" + (f" ({len(failed)} checks failed)" if failed else ""),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="*", type=Path,
                        default=[ROOT / "inventories" / "pod-128"])  # fmt: skip
    parser.add_argument("--pod", type=int, default=0,
                        help="one pod of each folder (wanka twin --pod): a 10k-card build")  # fmt: skip
    args = parser.parse_args()
    if need := run.missing():
        print("the twin needs " + ", ".join(need), file=sys.stderr)
        return 2
    _wanka("down")
    rows = [bench(folder.resolve(), args.pod) for folder in args.folders]
    keys = list(rows[0])
    print("| " + " | ".join(keys) + " |")
    print("|" + "---|" * len(keys))
    for row in rows:
        print("| " + " | ".join(str(row[k]) for k in keys) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
