"""The stages in order, each timed: load -> validate -> expand -> analyse -> emit. For a large
cluster the emitters that need no analysis start in forked workers right after expand, beside the
analysis; the stage times then add up to the wall time (emit is what is left after analyse)."""

from __future__ import annotations

import os
import pickle
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator import forking, output
from generator.analysis import Analysis, Finding, analyse
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
from generator.blueprint.facts import facts_path, load_npu_facts
from generator.blueprint.load import LoadedBlueprint, load_blueprint
from generator.blueprint.validate import validate
from generator.errors import BlueprintError
from generator.expand import expand
from generator.model import Cluster

# Emitters that read only the model, `emit(cluster)`: for a large cluster they start in forked
# workers as soon as expand is done, while this process analyses (the slowest first, so the
# workers finish together). The switch configurations are half of all emit work at 10,240 cards.
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
# emitters that render device by device, split into this many parts across the workers
PARTS = {switches.emit: 2}

# every file once the analysis exists: the files, or with an output root the paths written
Collect = Callable[[Analysis], list[Any]]


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
    dropped with the spool folder (or the caller's Staging).

    With `root` (an output.Staging's folder) each task's files are written there by the process
    that made them, and the function returns the paths written. Otherwise a worker hands its
    files over as a pickle in a spool folder, not through the pool's pipe: this process is busy
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


Emit = Callable[..., Iterable[OutputFile]]  # an emitter's `emit` (pickled by reference)


def _model_tasks() -> list[tuple[Emit, int, int]]:
    """(model emitter, part, parts) in MODEL_EMITTERS order: the slowest first."""
    return [
        (emit, part, parts)
        for emit in MODEL_EMITTERS
        for parts in (PARTS.get(emit, 1),)
        for part in range(parts)
    ]


def _emit_model(task: tuple[Emit, int, int]) -> str | list[str]:
    emit, part, parts = task
    cluster, spool, root = forking.shared()
    files = emit(cluster, None, part, parts) if parts > 1 else emit(cluster)
    return _hand_over(root, spool, files)


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


@dataclass(slots=True)
class Result:
    loaded: LoadedBlueprint
    blueprint: dict[str, Any]
    cluster: Cluster
    analysis: Analysis
    files: list[OutputFile]  # empty when `into` wrote them (run)
    written: list[str] = field(default_factory=list)  # the paths `into` received
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.analysis.findings


@contextmanager
def _timed(seconds: dict[str, float], stage: str) -> Iterator[None]:
    t = time.perf_counter()
    yield
    seconds[stage] = time.perf_counter() - t


def run(
    path: str | Path,
    progress: Callable[[str], None] = lambda _: None,
    emit: bool = True,
    facts: str | Path | None = None,
    into: Callable[[Cluster], output.Staging] | None = None,
) -> Result:
    """Everything up to the files to write. Raises BlueprintError, located, for user mistakes.
    `facts`: the NPU facts file (roles/npu_facts); default the blueprint's hccl.facts.
    `into`: given the expanded cluster, the output.Staging to write the files into as they are
    made (the caller commits it, or drops it after a design error); the result then lists their
    paths in `written` instead of holding the files (at 102,400 cards the files are 750 MB,
    copied twice more on their way to disk otherwise)."""
    with forking.no_cycle_collection():
        return _run(path, progress, emit, facts, into)


def _run(
    path: str | Path,
    progress: Callable[[str], None],
    emit: bool,
    facts: str | Path | None,
    into: Callable[[Cluster], output.Staging] | None,
) -> Result:
    seconds: dict[str, float] = {}
    with _timed(seconds, "load"):
        loaded = load_blueprint(path)
    try:
        with _timed(seconds, "validate"):
            bp = validate(loaded)
        progress("blueprint valid")
        with _timed(seconds, "facts"):
            facts_file = str(facts) if facts else facts_path(bp, loaded.file)
            npu_facts = load_npu_facts(facts_file) if facts_file else None
        with _timed(seconds, "expand"):
            cluster = expand(bp, progress=progress, facts=npu_facts)
    except BlueprintError as err:
        raise err.locate(loaded.file, loaded.positions) from None
    got: list[Any] = []
    stage = into(cluster) if emit and into else None
    root = stage.root if stage else ""
    # the model emitters run beside the analysis; a design error discards their files
    with emitters(cluster, root) if emit else nullcontext() as collect:
        with _timed(seconds, "analyse"):
            analysis = analyse(cluster, bp if emit else None)  # the growth cost: for the review
        progress(f"{len(analysis.findings)} design findings")
        if collect and not any(f.severity == "error" for f in analysis.findings):
            # what is left of emit once the analysis is done; a failed write (disk full) is
            # reported as the output folder's
            with _timed(seconds, "emit"), stage.os_errors() if stage else nullcontext():
                got = collect(analysis)
    files, written = ([], got) if root else (got, [])
    return Result(loaded, bp, cluster, analysis, files, written, seconds)
