"""Finding the real consumer tools the tests run on the outputs (Chromium, node): missing
locally, the test skips naming the tool; in CI (CI=true, .ci/run installs them) it fails."""

from __future__ import annotations

import os
import shutil

import pytest

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--enable-logging=stderr",
    "--v=0",
)


def missing(what: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is required in CI (.ci/run installs it)")
    pytest.skip(f"{what} not installed")


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    missing("chromium")
    raise AssertionError  # unreachable
