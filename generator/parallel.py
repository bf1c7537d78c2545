"""The emit stage: every emitter, and for a large cluster the forked workers that run them.

The emitters that read only the model start in forked workers as soon as the cluster is
expanded, beside the analysis in the parent; the emitters that show the analysis join them once
it exists. An emitter that renders unit by unit (the switch configurations, half of all emit
work at 10,240 cards) is split into parts across the workers here: its module offers
`units(cluster)` and `emit_units(cluster, units)`, and its `emit(cluster)` stays the only
signature the rest of wanka sees.
"""

from __future__ import annotations

import os
import pickle
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from generator import forking, output
from generator.analysis import Analysis
from generator.artifacts import (
    OutputFile,
    acceptance,
    bom,
    border,
    bring_up,
    cabling,
    docs,
    failure_report,
    hccl,
    hccn,
    inventory,
    monitoring,
    rollout,
    scheduler,
    switches,
    ztp,
)
from generator.model import Cluster

# Emitters that read only the model, `emit(cluster)`: for a large cluster they start in forked
# workers as soon as expand is done, while the parent analyses (the slowest first, so the
# workers finish together).
MODEL_EMITTERS = (
    switches.emit,
    cabling.emit,
    hccl.emit,
    hccn.emit,
    monitoring.emit,
    scheduler.emit,
    border.emit,
    ztp.emit,
    acceptance.emit,
    bring_up.emit,
)
# The small ones are queued behind the analysis emitters' tasks instead: they fill the workers'
# last moments rather than delay the design review, the last task to end (at 10,240 cards a
# worker sat idle for 0.1-0.15 s while the other finished it).
LATE = frozenset(
    (monitoring.emit, scheduler.emit, border.emit, ztp.emit, acceptance.emit, bring_up.emit)
)
# Emitters that show the analysis, `emit(cluster, analysis)`: they join the workers once it
# exists, the design review alone (the largest), the rest as one task (one copy of the analysis
# each).
ANALYSIS_EMITTERS = (
    docs.emit,
    bom.emit,
    inventory.emit,
    failure_report.emit,
    rollout.emit,
)
ANALYSIS_TASKS = (ANALYSIS_EMITTERS[:1], ANALYSIS_EMITTERS[1:])

PARALLEL_FROM_LINKS = 20_000  # below this, forking costs more than it saves
# emitters that render unit by unit: their module (`units`, `emit_units`) and how many parts
# their units are split into across the workers
PARTS = {switches.emit: (switches, 2)}

# every file once the analysis exists: the files, or with an output root the paths written
Collect = Callable[[Analysis], list[Any]]
Emit = Callable[..., Iterable[OutputFile]]  # an emitter's `emit` (pickled by reference)


def emit_all(cluster: Cluster, analysis: Analysis) -> list[OutputFile]:
    """Every emitter's files, sorted by path, made in this process (`emitters` makes the same
    bytes in worker processes)."""
    files = [f for emit in MODEL_EMITTERS for f in emit(cluster)]
    files += [f for emit in ANALYSIS_EMITTERS for f in emit(cluster, analysis)]
    return sorted(files, key=lambda f: f.path)


@contextmanager
def emitters(cluster: Cluster, root: str = "") -> Iterator[Collect]:
    """Yields the function that returns every emitter's files once the analysis exists. For a
    large cluster the model emitters start at once in forked worker processes (they are pure;
    the workers inherit the cluster, nothing is copied), the analysis emitters join them when
    the function is called; a small cluster is emitted in this process. Leaving the block waits
    for the workers' queued tasks (forking.pool says why); after a design error their files are
    dropped with the spool folder (or the caller's output.Staging).

    With `root` (an output.Staging's folder) each task's files are written there by the process
    that made them, and the function returns the paths written. Otherwise a worker hands its
    files over as a pickle in a spool folder, not through the pool's pipe: the parent is busy
    analysing meanwhile, and the pool's result thread, waiting for the GIL at every pipe read,
    held each worker up for most of a second per 20 MB (measured at 10k). The analysis goes to
    the workers as a pickle there too, made once."""
    workers = os.cpu_count() or 1
    if not forking.available(workers) or len(cluster.links) < PARALLEL_FROM_LINKS:

        def here(analysis: Analysis) -> list[Any]:
            files = emit_all(cluster, analysis)
            return output.put(root, files) if root else files

        yield here
        return
    with (
        tempfile.TemporaryDirectory(prefix="wanka-emit-") as spool,
        forking.pool(workers, (cluster, spool, root)) as pool,
    ):
        tasks = _model_tasks()
        model = pool.imap_unordered(_emit_model, [t for t in tasks if t[0] not in LATE])

        def collect(analysis: Analysis) -> list[Any]:
            shared = _spool(spool, analysis)  # pickled once, here, not once per task
            shown = pool.imap_unordered(_emit_shown, [(shows, shared) for shows in ANALYSIS_TASKS])
            late = pool.imap_unordered(_emit_model, [t for t in tasks if t[0] in LATE])
            # each task's result is taken as soon as it is done, while the others still run
            done = (model, shown, late)
            got = [x for results in done for r in results for x in (r if root else _unspool(r))]
            return got if root else sorted(got, key=lambda f: f.path)

        yield collect


def _model_tasks() -> list[tuple[Emit, int]]:
    """(model emitter, part) in MODEL_EMITTERS order, the slowest first; part -1: not split."""
    return [
        (emit, part)
        for emit in MODEL_EMITTERS
        for part in (range(PARTS[emit][1]) if emit in PARTS else (-1,))
    ]


def _emit_model(task: tuple[Emit, int]) -> str | list[str]:
    emit, part = task
    cluster, spool, root = forking.shared()
    if part < 0:
        return _hand_over(root, spool, emit(cluster))
    module, parts = PARTS[emit]  # every parts-th unit from `part`
    return _hand_over(root, spool, module.emit_units(cluster, module.units(cluster)[part::parts]))


def _emit_shown(task: tuple[tuple[Emit, ...], str]) -> str | list[str]:
    shows, shared = task
    cluster, spool, root = forking.shared()
    analysis = _unspool(shared)
    return _hand_over(root, spool, (f for emit in shows for f in emit(cluster, analysis)))


def _hand_over(root: str, spool: str, files: Iterable[OutputFile]) -> str | list[str]:
    """A worker's files as the parent takes them: written under the output `root` as they are
    made (their paths), else pickled into the spool (the pickle's path)."""
    return output.put(root, files) if root else _spool(spool, list(files))


def _spool(spool: str, value: object) -> str:
    """`value` (a task's files, the analysis) pickled into the spool folder; the pickle's path."""
    fd, path = tempfile.mkstemp(suffix=".pickle", dir=spool)
    with os.fdopen(fd, "wb") as fh:
        pickle.dump(value, fh, protocol=pickle.HIGHEST_PROTOCOL)
    return path


def _unspool(path: str) -> Any:
    with open(path, "rb") as fh:
        return pickle.load(fh)
