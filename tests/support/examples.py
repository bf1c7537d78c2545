"""The example blueprints and their generated results, computed once per test session.

generated(name) and expanded(name) run the pipeline on blueprints/<name> once per session; under
pytest-xdist the first worker to need an example leaves its result pickled for the others (the
folder is set by the session fixture in tests/conftest.py, share_between_workers)."""

from __future__ import annotations

import fcntl
import gc
import pickle
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p.name for p in (ROOT / "blueprints").glob("*.yaml"))
LARGE_EXAMPLES = {
    "wanka-10k.yaml"
}  # per-output checks of 10,240 cards: CI (slow), not the inner loop

# Examples whose 1.2 rank table needs facts only hardware has (A3 SDIDs, Super Pod IDs) run with
# a test fixture in the format roles/npu_facts writes; without it they write no rank table
# (tests/outputs/test_a3_facts.py runs the example without facts too).
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


def share_between_workers(folder: Path) -> None:
    """Under pytest-xdist: leave each example's result pickled in `folder` (this run's, new every
    run, so never stale) for the other workers, which load it in a fraction of the time."""
    if not _SHARED:
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


def long_lived() -> None:
    """Collect the garbage there is, then move every object alive now out of the collector's
    reach (gc.freeze): the examples' results and the collected tests live until the session
    ends, and each full collection would walk their millions of objects again (seconds of CPU
    per worker, and again in pytest's closing collections). Garbage made later is collected as
    usual."""
    gc.collect()
    gc.freeze()


def generated(name: str):
    """pipeline.Result of an example blueprint, computed once per test session."""
    if (name, True) not in _RESULTS:
        _RESULTS[name, True] = _once_per_run(name, emit=True)
        long_lived()
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
        long_lived()
    return _RESULTS[name, False]


def emitted(name: str, emit) -> dict[str, bytes]:
    """path -> bytes of the files one emitter (an `emit` of generator/artifacts/) writes for an
    example: the same bytes `wanka generate` writes at those paths (emitters are pure functions of
    the cluster and the analysis), without the cost of the others."""
    result = expanded(name)
    return {f.path: f.data for f in emit(result.cluster, result.analysis)}


def render_example(tmp_path_factory, label: str, name: str = "pod-128") -> Path:
    """`wanka generate blueprints/NAME.yaml -o <a new tmp folder>/NAME`, in this process: a
    folder of the example's own for a test module that runs roles or verify on real files."""
    from generator.cli import main

    out = tmp_path_factory.mktemp(label) / name
    assert main(["generate", str(ROOT / "blueprints" / f"{name}.yaml"), "-o", str(out), "-q"]) == 0
    return out
