from __future__ import annotations

import contextlib
import fcntl
import gc
import os
import pickle
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# pytest imports this file as `conftest` (tests/ is not a package); test modules import it as
# `tests.conftest` or `conftest`. One module under both names, so that the examples generated once
# (generated(), the `example` fixture) are shared, not generated again per name.
sys.modules.setdefault("tests.conftest", sys.modules[__name__])

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(p.name for p in (ROOT / "blueprints").glob("*.yaml"))
LARGE_EXAMPLES = {
    "wanka-10k.yaml"
}  # per-output checks of 10,240 cards: CI (slow), not the inner loop

# Hypothesis profiles: `ci` runs the full example counts, `dev` a few so that `pytest -m "not
# slow"` stays quick. HYPOTHESIS_PROFILE picks one; otherwise CI=true means ci, anything else dev.
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
PROFILE = os.environ.get("HYPOTHESIS_PROFILE") or (
    "ci" if os.environ.get("CI", "").lower() == "true" else "dev"
)
settings.load_profile(PROFILE)


def max_examples(ci: int, dev: int = 10) -> int:
    """Examples for a property test: `ci` under the ci profile, `dev` otherwise (e.g. the hostile-
    input test: max_examples(2000, 100))."""
    return ci if PROFILE == "ci" else dev


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test parametrized with a large example (its own parameter or the `example` fixture's) is
    slow: checking 10,240 cards' outputs costs seconds per test. CI runs them."""
    for item in items:
        params = getattr(getattr(item, "callspec", None), "params", {})
        if any(isinstance(v, str) and v in LARGE_EXAMPLES for v in params.values()):
            item.add_marker(pytest.mark.slow)


# Examples whose 1.2 rank table needs facts only hardware has (A3 SDIDs, Super Pod IDs) run with
# a test fixture in the format roles/npu_facts writes; without it they write no rank table
# (tests/test_a3_facts.py runs the example without facts too).
FACTS = {"supernode-768.yaml": ROOT / "tests" / "data" / "npu-facts" / "supernode-768.yml"}


# A 16-card cluster: the smallest that generates, so each case costs a fraction of a second.
TINY = """\
apiVersion: wanka/v1
kind: Cluster
metadata:
  name: tiny
compute:
  cards: 16
zones:
  storage: {nodes: {count: 1}}
  management: {nodes: {controller: 1}}
  border: {router: {pair: false}, firewall: {pair: false}}
"""


_RESULTS: dict[tuple[str, bool], object] = {}  # (example, with files) -> pipeline.Result
_SHARED: list[Path] = []  # under pytest-xdist: this run's folder shared by its workers


@pytest.fixture(scope="session", autouse=True)
def _examples_shared_by_workers(request, tmp_path_factory) -> None:
    """Each pytest-xdist worker is a process of its own: the first worker to need an example
    generates it and leaves the result pickled in this run's temporary folder (new every run, so
    never stale) for the others, which load it in a fraction of the time."""
    if hasattr(request.config, "workerinput") and not _SHARED:
        folder = tmp_path_factory.getbasetemp().parent / "wanka-examples"
        folder.mkdir(exist_ok=True)
        _SHARED.append(folder)


def _once_per_run(name: str, emit: bool):
    from generator import pipeline

    def run():
        return pipeline.run(ROOT / "blueprints" / name, facts=FACTS.get(name), emit=emit)

    if not _SHARED or (name in LARGE_EXAMPLES and not emit):
        # the 10,240-card model alone unpickles in about the time it expands in (~0.7 s against
        # ~0.9 s, after 0.5 s to pickle it): each worker expands it
        return run()
    stem = _SHARED[0] / f"{name}-{'files' if emit else 'model'}"
    with open(f"{stem}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one worker generates, the others wait and load
        done = Path(f"{stem}.pickle")
        if done.exists():
            return pickle.loads(done.read_bytes())
        result = run()
        part = Path(f"{stem}.part")
        part.write_bytes(pickle.dumps(result, protocol=pickle.HIGHEST_PROTOCOL))
        part.replace(done)
        return result


def _long_lived() -> None:
    """Collect the garbage there is, then move every object alive now out of the collector's
    reach (gc.freeze): the examples' results and the collected tests live until the session
    ends, and each full collection would walk their millions of objects again (seconds of CPU
    per worker, and again in pytest's closing collections). Garbage made later is collected as
    usual."""
    gc.collect()
    gc.freeze()


def pytest_collection_finish(session: pytest.Session) -> None:
    _long_lived()


def pytest_sessionfinish(session: pytest.Session) -> None:
    """pytest ends with five full collections (to report unraisable exceptions of late garbage);
    the first, here, finds the same garbage, and the others then skip what is still alive."""
    _long_lived()


def generated(name: str):
    """pipeline.Result of an example blueprint, computed once per test session."""
    if (name, True) not in _RESULTS:
        _RESULTS[name, True] = _once_per_run(name, emit=True)
        _long_lived()
    return _RESULTS[name, True]


def expanded(name: str):
    """pipeline.Result of an example without its files (load, validate, expand, analyse): the
    same cluster and findings as generated(name), for tests that read only those. The 10,240-card
    example expands in about a second and takes several more to emit. Computed once per session;
    a small example is generated whole (other tests read its files anyway)."""
    if (name, True) in _RESULTS or name not in LARGE_EXAMPLES:
        return generated(name)
    if (name, False) not in _RESULTS:
        _RESULTS[name, False] = _once_per_run(name, emit=False)
        _long_lived()
    return _RESULTS[name, False]


def emitted(name: str, emit) -> dict[str, bytes]:
    """path -> bytes of the files one emitter (an `emit` of generator/artifacts/) writes for an
    example: the same bytes `wanka generate` writes at those paths (emitters are pure functions of
    the cluster and the analysis), without the cost of the others."""
    result = expanded(name)
    return {f.path: f.data for f in emit(result.cluster, result.analysis)}


@pytest.fixture(
    params=[pytest.param(n, marks=pytest.mark.slow) if n in LARGE_EXAMPLES else n for n in EXAMPLES]
)
def example(request):
    return generated(request.param)


class Forked:
    """A child process forked from this one, running `body` (e.g. `lambda: cli.main([...])`, what
    `wanka ...` runs) with its stdout and stderr in files: a process of its own, to kill, to
    limit or to run beside another, without starting an interpreter and importing the generator
    again (a second of CPU per `python -m generator`). The child ends with os._exit(body's
    return value); an exception in it is printed to its stderr and ends it with 70."""

    def __init__(self, body: Callable[[], int | None]) -> None:
        self._streams = (tempfile.TemporaryFile(), tempfile.TemporaryFile())  # noqa: SIM115
        self.pid = os.fork()
        if self.pid == 0:  # the child: never returns into pytest
            code = 70
            try:
                code = self._child(body)
            finally:
                os._exit(code)

    def _child(self, body: Callable[[], int | None]) -> int:
        code = 70
        for fd, f in enumerate(self._streams, start=1):
            os.dup2(f.fileno(), fd)
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        try:
            code = body() or 0
        except SystemExit as exit_:  # argparse refusing the command line
            code = exit_.code if isinstance(exit_.code, int) else 2
        except BaseException:
            traceback.print_exc()
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
            sys.stderr.flush()
        return code

    def kill(self, sig: int) -> None:
        os.kill(self.pid, sig)

    def wait(self) -> subprocess.CompletedProcess:
        """returncode as subprocess reports it: the exit code, or -N when signal N ended it."""
        _, status = os.waitpid(self.pid, 0)
        texts = []
        for f in self._streams:
            f.seek(0)
            texts.append(f.read().decode(errors="replace"))
            f.close()
        return subprocess.CompletedProcess([], os.waitstatus_to_exitcode(status), *texts)


def render_example(tmp_path_factory, label: str, name: str = "pod-128") -> Path:
    """`wanka generate blueprints/NAME.yaml -o <a new tmp folder>/NAME`, in this process: a
    folder of the example's own for a test module that runs roles or verify on real files."""
    from generator.cli import main

    out = tmp_path_factory.mktemp(label) / name
    assert main(["generate", str(ROOT / "blueprints" / f"{name}.yaml"), "-o", str(out), "-q"]) == 0
    return out
