from __future__ import annotations

import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(p.name for p in (ROOT / "blueprints").glob("*.yaml"))


@functools.cache
def generated(name: str):
    """pipeline.Result of an example blueprint, computed once per test session."""
    from generator import pipeline

    return pipeline.run(ROOT / "blueprints" / name)


@pytest.fixture(params=EXAMPLES)
def example(request):
    return generated(request.param)
