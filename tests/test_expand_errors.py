"""Design errors found while expanding are collected across steps and reported together, each
located at the blueprint line it comes from."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator import pipeline
from generator.errors import BlueprintError
from tests.conftest import ROOT

POD = (ROOT / "blueprints" / "pod-128.yaml").read_text()
SMALL = {  # plane -> (the example's pool, one far too small for it)
    "parameter": ("pool: 10.64.0.0/18", "10.64.0.0/27"),
    "storage": ("pool: 10.96.0.0/20", "10.96.0.0/28"),
    "business": ("pool: 10.100.0.0/20", "10.100.0.0/28"),
}


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_three_undersized_pools_are_reported_in_one_run_each_located(tmp_path: Path):
    text = POD
    for old, net in SMALL.values():
        text = text.replace(old, f"pool: {net}")
    path = tmp_path / "bp.yaml"
    path.write_text(text)
    with pytest.raises(BlueprintError) as caught:
        pipeline.run(path, emit=False)
    err = caught.value
    found = {tuple(p.path): p for p in err.problems}
    for plane, (_, net) in SMALL.items():
        p = found.get(("networks", plane, "pool"))
        assert p is not None, f"{plane} pool not reported: {err.render()}"
        assert "too small" in p.message and net in p.message
        assert p.line == _line_of(text, f"pool: {net}")
    rendered = err.render().splitlines()
    assert len([line for line in rendered if "too small" in line]) == 3
    assert all(line.startswith(f"{path}:") for line in rendered)
