"""The stages in order, each timed: load -> validate -> expand -> analyse -> emit. For a large
cluster the emitters that need no analysis start in forked workers right after expand, beside the
analysis; the stage times then add up to the wall time (emit is what is left after analyse)."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
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
# Emitters that show the analysis, `emit(cluster, analysis)`: they run here once it exists.
ANALYSIS_EMITTERS = (
    docs.emit,
    bom.emit,
    inventory.emit,
    failure_report.emit,
    rollout.emit,
)

PARALLEL_FROM_LINKS = 20_000  # below this, forking costs more than it saves
# emitters that render device by device, split into this many parts across the workers
PARTS = {switches.emit: 2}

ModelFiles = Callable[[], list[OutputFile]]  # waits for the workers' files


def emit_all(
    cluster: Cluster, analysis: Analysis, model_files: ModelFiles | None = None
) -> list[OutputFile]:
    """Every emitter's files, sorted by path: the analysis emitters' made here, the model
    emitters' from `model_files` (workers started by `model_emitters`) or made here too. The
    result is the same bytes either way."""
    files = [f for emit in ANALYSIS_EMITTERS for f in emit(cluster, analysis)]
    if model_files is None:
        files += [f for emit in MODEL_EMITTERS for f in emit(cluster)]
    else:
        files += model_files()
    return sorted(files, key=lambda f: f.path)


@contextmanager
def model_emitters(cluster: Cluster) -> Iterator[ModelFiles | None]:
    """Starts the model emitters in forked worker processes for a large cluster (they are pure;
    the workers inherit the cluster, nothing is copied) and yields the function that collects
    their files; yields None when they are better run in this process. Leaving the block stops
    workers that are still running (their files are not wanted after a design error)."""
    workers = os.cpu_count() or 1
    if not forking.available(workers) or len(cluster.links) < PARALLEL_FROM_LINKS:
        yield None
        return
    with forking.pool(workers, _WORKER_INPUT.append, (cluster,)) as pool:
        pending = pool.map_async(_emit_in_worker, _tasks(), chunksize=1)
        yield lambda: [f for batch in pending.get() for f in batch]


_WORKER_INPUT: list[Cluster] = []  # set once in each forked worker, never here


def _tasks() -> list[tuple[int, int, int]]:
    """(emitter, part, parts) in MODEL_EMITTERS order: the slowest first."""
    return [
        (index, part, parts)
        for index, emit in enumerate(MODEL_EMITTERS)
        for parts in (PARTS.get(emit, 1),)
        for part in range(parts)
    ]


def _emit_in_worker(task: tuple[int, int, int]) -> list[OutputFile]:
    index, part, parts = task
    emit = MODEL_EMITTERS[index]
    cluster = _WORKER_INPUT[0]
    return list(emit(cluster, None, part, parts) if parts > 1 else emit(cluster))


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
    with model_emitters(cluster) if emit else nullcontext() as model_files:
        with _timed(seconds, "analyse"):
            analysis = analyse(cluster)
        progress(f"{len(analysis.findings)} design findings")
        if emit and not any(f.severity == "error" for f in analysis.findings):
            with _timed(seconds, "emit"):  # what is left of emit once the analysis is done
                files = emit_all(cluster, analysis, model_files)
    return Result(loaded, bp, cluster, analysis, files, seconds)
