"""The stages in order, each timed: load -> validate -> expand -> check -> emit."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.artifacts import (
    OutputFile,
    bom,
    cabling,
    docs,
    failures,
    hccl,
    hccn,
    inventory,
    monitoring,
    scheduler,
    switches,
)
from generator.blueprint.load import LoadedBlueprint, load_blueprint
from generator.blueprint.validate import validate
from generator.checks import Finding, check
from generator.errors import BlueprintError
from generator.expand import expand
from generator.model import Cluster

EMITTERS = (
    cabling.emit,
    hccl.emit,
    hccn.emit,
    inventory.emit,
    scheduler.emit,
    switches.emit,
    failures.emit,
    monitoring.emit,
    bom.emit,
    docs.emit,
)


def emit_all(cluster: Cluster) -> list[OutputFile]:
    return sorted((f for emit in EMITTERS for f in emit(cluster)), key=lambda f: f.path)


@dataclass(slots=True)
class Result:
    loaded: LoadedBlueprint
    blueprint: dict[str, Any]
    cluster: Cluster
    findings: list[Finding]
    files: list[OutputFile]
    seconds: dict[str, float] = field(default_factory=dict)


@contextmanager
def _timed(seconds: dict[str, float], stage: str) -> Iterator[None]:
    t = time.perf_counter()
    yield
    seconds[stage] = time.perf_counter() - t


def run(
    path: str | Path, progress: Callable[[str], None] = lambda _: None, emit: bool = True
) -> Result:
    """Everything up to the files to write. Raises BlueprintError, located, for user mistakes."""
    seconds: dict[str, float] = {}
    with _timed(seconds, "load"):
        loaded = load_blueprint(path)
    try:
        with _timed(seconds, "validate"):
            bp = validate(loaded)
        progress("blueprint valid")
        with _timed(seconds, "expand"):
            cluster = expand(bp, progress=progress)
    except BlueprintError as err:
        raise err.locate(loaded.file, loaded.positions) from None
    with _timed(seconds, "check"):
        findings = check(cluster)
    docs.remember(cluster, findings)  # the design review shows them without a second check run
    progress(f"{len(findings)} design findings")
    files: list[OutputFile] = []
    if emit:
        with _timed(seconds, "emit"):
            files = emit_all(cluster)
    return Result(loaded, bp, cluster, findings, files, seconds)
