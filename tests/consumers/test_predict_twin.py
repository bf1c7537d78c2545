"""Issue #43 item 4, run for real (root, network namespaces, iproute2 tc, nftables, iperf3):
per-flow rates of `wanka predict`'s flow model (flows.max_min) against real Linux L4 ECMP and
TCP on a pod-128 reduction (two leaves, four spines, 64 NPU ports), by
tests/benchmarks/bench_predict_twin.py, which says how. Within +/-15 % per flow."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.twin import instance

ROOT = Path(__file__).resolve().parents[2]
missing = [tool for tool in ("ip", "tc", "nft", "iperf3") if not shutil.which(tool)]
pytestmark = [
    pytest.mark.minutes,
    pytest.mark.slow,
    pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root"),
    pytest.mark.skipif(bool(missing), reason="needs " + ", ".join(missing)),
]


def test_every_flow_is_within_15_percent_of_its_max_min_rate():
    env = {**os.environ, "WANKA_TWIN_INSTANCE": instance.INSTANCE, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "tests/benchmarks/bench_predict_twin.py", "--seconds", "12", "--quiet"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    summary = re.search(r"worst ([\d.]+)%.*within 15 %: (\d+) of (\d+)", done.stdout)
    assert summary, done.stdout + done.stderr
    worst, within, flows = float(summary[1]), int(summary[2]), int(summary[3])
    assert flows == 32 and within == flows and worst <= 15, done.stdout
    assert done.returncode == 0
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert f"predict-{instance.INSTANCE}-" not in listed  # its namespaces are gone
