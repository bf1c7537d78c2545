"""What the real-twin tests share: `wanka twin ...` run as a user types it, in this test
process's own twin instance (tests/conftest.py gives each pytest-xdist worker one), and the
marks of a test that needs root, FRR, nftables and dnsmasq."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator.twin import instance, run

ROOT = Path(__file__).resolve().parents[2]
POD = ROOT / "inventories" / "pod-128"
CLUSTER = ROOT / "inventories" / "cluster-1k"
# this test process's instance (generator.twin.instance): its twins are the only ones it touches
ENV = {
    **os.environ,
    "WANKA_TWIN_INSTANCE": instance.INSTANCE,
    "WANKA_TWIN_STATE": str(instance.BASE),
}
NEEDS = run.missing()
REAL = [  # a file of real twins: minutes of wall time, scheduled first (tests/conftest.py)
    pytest.mark.minutes,
    pytest.mark.slow,
    pytest.mark.skipif(bool(NEEDS), reason="the twin needs " + ", ".join(NEEDS)),
]


def twin(*args: str, timeout: float = 1800) -> subprocess.CompletedProcess:
    """`wanka twin ARGS` in this process's instance, its output captured."""
    return subprocess.run([sys.executable, "-m", "generator", "twin", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, env=ENV)  # fmt: skip


def prove(*args: str, folder: Path = CLUSTER) -> subprocess.CompletedProcess:
    """`wanka twin prove FOLDER --no-flows ARGS` (the routing alone: no host keyfiles)."""
    return twin("prove", str(folder), "--no-flows", *args)
