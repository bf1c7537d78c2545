"""The committed example inventories are what the generator produces now (CI drift check).

`wanka generate blueprints/<name>.yaml --check` compares the pipeline's files with the folder;
here the same comparison (generator.output.check) runs on the session's cached pipeline result,
so the examples are generated once for the whole test run."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import output
from tests.support.examples import generated

ROOT = Path(__file__).resolve().parents[2]
COMMITTED = sorted(
    p.name for p in (ROOT / "inventories").iterdir() if p.is_dir() and not p.name.startswith(".")
)


def test_small_examples_are_committed():
    assert {"pod-128", "cluster-1k", "legacy-100card"} <= set(COMMITTED)


@pytest.mark.parametrize("name", COMMITTED)
def test_committed_inventory_is_fresh(name):
    drift = output.check(ROOT / "inventories" / name, generated(f"{name}.yaml").files)
    assert not drift, (
        f"inventories/{name} is stale; run `wanka generate blueprints/{name}.yaml`\n"
        + "\n".join(drift.lines())
    )
