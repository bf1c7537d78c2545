"""Fixtures and Hypothesis profiles only. What tests import (the examples generated once, the
in-process CLI runner, readers of the outputs, the Ansible runner) is in tests/support/."""

from __future__ import annotations

import hashlib
import os

import pytest
from hypothesis import HealthCheck, settings

from tests.support.examples import (
    EXAMPLES,
    LARGE_EXAMPLES,
    generated,
    long_lived,
    share_between_workers,
)
from tests.support.profiles import PROFILE

# One twin instance per test process, set before generator.twin is imported: the instance a run
# takes by default is derived from its working folder (generator.twin.instance.instance_id), which
# every pytest-xdist worker shares, so two workers' twin tests would take each other's lock or
# tear down each other's namespaces. A worker folds its id in, also over the value the
# controlling process set here (the workers inherit its environment); without xdist a given
# WANKA_TWIN_INSTANCE is kept.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER")
if _WORKER or "WANKA_TWIN_INSTANCE" not in os.environ:
    _seed = f"{os.getcwd()}\0{_WORKER or 'main'}"
    os.environ["WANKA_TWIN_INSTANCE"] = hashlib.sha256(_seed.encode()).hexdigest()[:8]

# Hypothesis profiles: `ci` runs the full example counts, `dev` a few so that `pytest -m "not
# slow"` stays quick. HYPOTHESIS_PROFILE picks one; otherwise CI=true means ci, anything else dev
# (tests/support/profiles.py; max_examples there scales a test's own count the same way).
settings.register_profile(
    "ci",
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile(
    "dev",
    max_examples=10,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(PROFILE)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` (addopts): one worker per core and one more. The files of minutes (the twin, the
    fleet) mostly wait on timers (BGP's update hold-back, settle periods, the Ansible forks):
    test_twin_prove_ospf took 165 s of wall for 13-19 s of CPU. PYTEST_XDIST_AUTO_NUM_WORKERS
    still decides when set."""
    if os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS"):
        return None
    return len(os.sched_getaffinity(0)) + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test parametrized with a large example (its own parameter or the `example` fixture's) is
    slow: checking 10,240 cards' outputs costs seconds per test. CI runs them."""
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if any(isinstance(v, str) and v in LARGE_EXAMPLES for v in params.values()):
            item.add_marker(pytest.mark.slow)
    # pytest-xdist (--dist loadfile) hands out files in this order: the files of minutes first,
    # each to a worker of its own, the short ones filling in around them (stable sort)
    items.sort(key=lambda item: item.get_closest_marker("minutes") is None)


@pytest.fixture(scope="session", autouse=True)
def _examples_shared_by_workers(request, tmp_path_factory) -> None:
    """Each pytest-xdist worker is a process of its own: the first worker to need an example
    generates it and leaves the result pickled in this run's temporary folder for the others."""
    if hasattr(request.config, "workerinput"):
        share_between_workers(tmp_path_factory.getbasetemp().parent / "wanka-examples")


def pytest_collection_finish(session: pytest.Session) -> None:
    long_lived()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """pytest ends with five full collections (to report unraisable exceptions of late garbage);
    the first, here, finds the same garbage, and the others then skip what is still alive."""
    long_lived()


@pytest.fixture(
    params=[pytest.param(n, marks=pytest.mark.slow) if n in LARGE_EXAMPLES else n for n in EXAMPLES]
)
def example(request):
    return generated(request.param)
