"""Which Hypothesis profile this run loads (tests/conftest.py registers `ci` and `dev`):
HYPOTHESIS_PROFILE picks one; otherwise CI=true means ci, anything else dev."""

from __future__ import annotations

import os

PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or (
    "ci" if os.environ.get("CI", "").lower() == "true" else "dev"
)


def max_examples(ci: int, dev: int = 10) -> int:
    """Examples for a property test: `ci` under the ci profile, `dev` otherwise (e.g. the hostile-
    input test: max_examples(2000, 100))."""
    return ci if PROFILE == "ci" else dev
