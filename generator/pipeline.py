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

from generator import forking
from generator.analysis import Analysis, Finding, analyse
from generator.artifacts import (
    OutputFile,
    acceptance,
    bom,
    border,
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

Collect = Callable[[Analysis], list[OutputFile]]  # every file, once the analysis exists


def emit_all(cluster: Cluster, analysis: Analysis) -> list[OutputFile]:
    """Every emitter's files, sorted by path, made in this process (`emitters` makes the same
    bytes in worker processes)."""
    files = [f for emit in MODEL_EMITTERS for f in emit(cluster)]
    files += [f for emit in ANALYSIS_EMITTERS for f in emit(cluster, analysis)]
    return sorted(files, key=lambda f: f.path)


@contextmanager
def emitters(cluster: Cluster) -> Iterator[Collect]:
    """Yields the function that returns every emitter's files once the analysis exists. For a
    large cluster the model emitters start at once in forked worker processes (they are pure;
    the workers inherit the cluster, nothing is copied), the analysis emitters join them when
    the function is called; a small cluster is emitted in this process. Leaving the block waits
    for the workers' queued tasks (forking.pool says why); after a design error their files are
    dropped with the spool folder.

    A worker hands its files over as a pickle in a spool folder, not through the pool's pipe:
    this process is busy analysing meanwhile, and the pool's result thread, waiting for the GIL
    at every pipe read, held each worker up for most of a second per 20 MB (measured at 10k).
    The analysis goes to the workers the same way, pickled once."""
    workers = os.cpu_count() or 1
    if not forking.available(workers) or len(cluster.links) < PARALLEL_FROM_LINKS:
        yield lambda analysis: emit_all(cluster, analysis)
        return
    with (
        tempfile.TemporaryDirectory(prefix="wanka-emit-") as spool,
        forking.pool(workers, (cluster, spool)) as pool,
    ):
        model = pool.imap_unordered(_emit_model, _model_tasks())

        def collect(analysis: Analysis) -> list[OutputFile]:
            shared = _spool(spool, analysis)  # pickled once, here, not once per task
            shown = pool.imap_unordered(_emit_shown, [(shows, shared) for shows in ANALYSIS_TASKS])
            # each task's files are read back as soon as it is done, while the others still run
            files = [f for paths in (model, shown) for path in paths for f in _unspool(path)]
            return sorted(files, key=lambda f: f.path)

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


def _emit_model(task: tuple[Emit, int, int]) -> str:
    emit, part, parts = task
    cluster, spool = forking.shared()
    return _spool(spool, list(emit(cluster, None, part, parts) if parts > 1 else emit(cluster)))


def _emit_shown(task: tuple[tuple[Emit, ...], str]) -> str:
    shows, shared = task
    cluster, spool = forking.shared()
    analysis = _unspool(shared)
    return _spool(spool, [f for emit in shows for f in emit(cluster, analysis)])


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
    files: list[OutputFile]
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
) -> Result:
    """Everything up to the files to write. Raises BlueprintError, located, for user mistakes.
    `facts`: the NPU facts file (roles/npu_facts); default the blueprint's hccl.facts."""
    with forking.no_cycle_collection():
        return _run(path, progress, emit, facts)


def _run(
    path: str | Path, progress: Callable[[str], None], emit: bool, facts: str | Path | None
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
    files: list[OutputFile] = []
    # the model emitters run beside the analysis; a design error discards their files
    with emitters(cluster) if emit else nullcontext() as collect:
        with _timed(seconds, "analyse"):
            analysis = analyse(cluster)
        progress(f"{len(analysis.findings)} design findings")
        if collect and not any(f.severity == "error" for f in analysis.findings):
            with _timed(seconds, "emit"):  # what is left of emit once the analysis is done
                files = collect(analysis)
    return Result(loaded, bp, cluster, analysis, files, seconds)
