"""The emit stage: every emitter, and for a large cluster the forked workers that run them.

The emitters that read only the model start in forked workers as soon as the cluster is
expanded, beside the analysis in the parent; the emitters that show the analysis join them once
it exists. Each emitter declares what it needs in its own module (generator/artifacts:
`@emitter(analysis=..., late=...)`) and is scheduled here from that declaration, so adding an
output touches only its module. An emitter that renders unit by unit (the switch
configurations, half of all emit work at 10,240 cards) is split into parts across the workers
here: it declares `parts` with its `units` and `emit_units`, and `emit(cluster, analysis)` stays
the one signature the rest of wanka sees.
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
from generator.artifacts import Emitter, OutputFile, registered
from generator.model import Cluster

# every emitter, as its module declares it (generator/artifacts: `@emitter(...)`), by name
EMITTERS = {e.name: e for e in registered()}
# Emitters that read only the model: for a large cluster they start in forked workers as soon as
# expand is done, while the parent analyses (the largest first, so the workers finish together);
# the late ones are queued behind the analysis emitters' tasks instead: they fill the workers'
# last moments rather than delay the design review, the last task to end (at 10,240 cards a
# worker sat idle for 0.1-0.15 s while the other finished it).
MODEL_EMITTERS = tuple(e for e in EMITTERS.values() if not e.analysis)
# Emitters that show the analysis: they join the workers once it exists, each that is not late
# (the design review, the largest) alone, the late ones as one task (one copy of the analysis
# each).
ANALYSIS_EMITTERS = tuple(e for e in EMITTERS.values() if e.analysis)
_SMALL = tuple(e.name for e in ANALYSIS_EMITTERS if e.late)
ANALYSIS_TASKS = (
    *((e.name,) for e in ANALYSIS_EMITTERS if not e.late),
    *((_SMALL,) if _SMALL else ()),
)

PARALLEL_FROM_LINKS = 20_000  # below this, forking costs more than it saves

# every file once the analysis exists: the files, or with an output root the paths written
Collect = Callable[[Analysis], list[Any]]


def emit_all(cluster: Cluster, analysis: Analysis) -> list[OutputFile]:
    """Every emitter's files, sorted by path, made in this process (`emitters` makes the same
    bytes in worker processes)."""
    files = [f for e in MODEL_EMITTERS for f in e.emit(cluster, None)]
    files += [f for e in ANALYSIS_EMITTERS for f in e.emit(cluster, analysis)]
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
        model = pool.imap_unordered(_emit_model, [t for t in tasks if not EMITTERS[t[0]].late])

        def collect(analysis: Analysis) -> list[Any]:
            shared = _spool(spool, analysis)  # pickled once, here, not once per task
            shown = pool.imap_unordered(_emit_shown, [(shows, shared) for shows in ANALYSIS_TASKS])
            late = pool.imap_unordered(_emit_model, [t for t in tasks if EMITTERS[t[0]].late])
            # each task's result is taken as soon as it is done, while the others still run
            done = (model, shown, late)
            got = [x for results in done for r in results for x in (r if root else _unspool(r))]
            return got if root else sorted(got, key=lambda f: f.path)

        yield collect


def _model_tasks() -> list[tuple[str, int]]:
    """(model emitter's name, part) in MODEL_EMITTERS order, the largest first; part -1: not
    split."""
    return [
        (e.name, part)
        for e in MODEL_EMITTERS
        for part in (range(e.parts) if e.parts > 1 else (-1,))
    ]


def split(e: Emitter, cluster: Cluster, part: int) -> Iterable[OutputFile]:
    """The files of part `part` of an emitter split into `e.parts`: every parts-th unit from
    `part`."""
    assert e.units and e.emit_units
    return e.emit_units(cluster, e.units(cluster)[part :: e.parts])


def _emit_model(task: tuple[str, int]) -> str | list[str]:
    name, part = task
    cluster, spool, root = forking.shared()
    e = EMITTERS[name]
    return _hand_over(root, spool, e.emit(cluster, None) if part < 0 else split(e, cluster, part))


def _emit_shown(task: tuple[tuple[str, ...], str]) -> str | list[str]:
    names, shared = task
    cluster, spool, root = forking.shared()
    analysis = _unspool(shared)
    return _hand_over(root, spool, (f for n in names for f in EMITTERS[n].emit(cluster, analysis)))


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
