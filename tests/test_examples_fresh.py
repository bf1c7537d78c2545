"""The committed example inventories are what the generator produces now (CI drift check)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = sorted(
    p.name for p in (ROOT / "inventories").iterdir() if p.is_dir() and not p.name.startswith(".")
)


def test_small_examples_are_committed():
    assert {"pod-128", "cluster-1k", "legacy-100card"} <= set(COMMITTED)


@pytest.mark.parametrize("name", COMMITTED)
def test_committed_inventory_is_fresh(name):
    res = subprocess.run(
        [sys.executable, "-m", "generator", "generate", f"blueprints/{name}.yaml", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, (
        f"inventories/{name} is stale; run `wanka generate blueprints/{name}.yaml`\n{res.stdout}{res.stderr}"
    )
