"""The stages in order, each timed: load -> validate -> expand -> analyse -> emit."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
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

EMITTERS = (  # the slowest first, so parallel workers finish together
    switches.emit,
    cabling.emit,
    docs.emit,
    bom.emit,
    hccl.emit,
    hccn.emit,
    inventory.emit,
    monitoring.emit,
    scheduler.emit,
    failure_report.emit,
    border.emit,
    ztp.emit,
    rollout.emit,
    acceptance.emit,
)


PARALLEL_FROM_LINKS = 20_000  # below this, forking costs more than it saves
# emitters that render device by device, split into this many parts across the workers (the
# switch configs are half of all emit work at 10,240 cards)
PARTS = {switches.emit: 2}


def emit_all(cluster: Cluster, analysis: Analysis) -> list[OutputFile]:
    """Every emitter's files, sorted by path. Large clusters run the emitters in forked worker
    processes (the emitters are pure; the cluster and analysis are inherited, not copied); the
    result is the same bytes either way."""
    workers = min(os.cpu_count() or 1, len(EMITTERS))
    if not forking.available(workers) or len(cluster.links) < PARALLEL_FROM_LINKS:
        files = [f for emit in EMITTERS for f in emit(cluster, analysis)]
    else:
        # the workers inherit the cluster and analysis (forking.pool); this process keeps no state
        with forking.pool(workers, _WORKER_INPUT.append, ((cluster, analysis),)) as pool:
            files = [f for batch in pool.imap_unordered(_emit_in_worker, _tasks()) for f in batch]
    return sorted(files, key=lambda f: f.path)


_WORKER_INPUT: list[tuple[Cluster, Analysis]] = []  # set once in each forked worker, never here


def _tasks() -> list[tuple[int, int, int]]:
    """(emitter, part, parts) in EMITTERS order: the slowest first."""
    return [
        (index, part, parts)
        for index, emit in enumerate(EMITTERS)
        for parts in (PARTS.get(emit, 1),)
        for part in range(parts)
    ]


def _emit_in_worker(task: tuple[int, int, int]) -> list[OutputFile]:
    cluster, analysis = _WORKER_INPUT[0]
    index, part, parts = task
    emit = EMITTERS[index]
    return list(emit(cluster, analysis, part, parts) if parts > 1 else emit(cluster, analysis))


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
    with _timed(seconds, "analyse"):
        analysis = analyse(cluster)
    progress(f"{len(analysis.findings)} design findings")
    files: list[OutputFile] = []
    if emit and not any(f.severity == "error" for f in analysis.findings):  # nothing is written
        with _timed(seconds, "emit"):
            files = emit_all(cluster, analysis)
    return Result(loaded, bp, cluster, analysis, files, seconds)
