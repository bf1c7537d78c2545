"""The stages in order, each timed: load, validate, facts, expand, analyse, emit and write,
one call each as netlab's `cli/create.py:run`. The emit stage (generator.parallel) starts the
model emitters in forked workers beside the analysis, each file written into the output sink
where it is made (emit is what is left after analyse); the caller commits the sink."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from generator import forking, parallel
from generator.analysis import ERROR, Analysis, Finding, analyse
from generator.artifacts import OutputFile
from generator.blueprint.facts import facts_path, load_npu_facts
from generator.blueprint.load import LoadedBlueprint, load_blueprint
from generator.blueprint.spec import Blueprint, blueprint_spec
from generator.blueprint.validate import validate
from generator.errors import BlueprintError, Problem
from generator.expand import Substituted, expand
from generator.model import Cluster
from generator.output import Staging


@dataclass(slots=True)
class Result:
    loaded: LoadedBlueprint
    blueprint: dict[str, Any]  # validated, defaults filled: what sizing rewrites and tests read
    spec: Blueprint  # the same as typed records: what expand and the analysis read
    cluster: Cluster
    analysis: Analysis
    files: list[OutputFile]  # empty when the files went into a sink
    written: list[str] = field(default_factory=list)  # the paths put into the sink
    seconds: dict[str, float] = field(default_factory=dict)

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self.analysis.findings


def _chosen(cluster: Cluster, loaded: LoadedBlueprint) -> Cluster:
    """The cluster's settings with what the blueprint wrote rather than left to the schema's
    defaults (validate fills them in; the loaded file's positions hold only written keys)."""
    written = ("zones", "training", "cooling") in loaded.positions
    return replace(cluster, settings=replace(cluster.settings, cooling_chosen=written))


SUBSTITUTED = "found on the cluster built with the values suggested above"


def substituted_checks(cluster: Cluster) -> list[Problem]:
    """The design-check errors of a cluster expand built with its suggested values (expand's
    `Substituted`): reported with the expansion problems, so one run lists them all."""
    return [
        Problem(f.where, f"[{f.code}] {f.message}", SUBSTITUTED)
        for f in analyse(cluster).findings
        if f.severity == ERROR
    ]


def run(
    blueprint: str | Path | LoadedBlueprint,
    progress: Callable[[str], None] = lambda _: None,
    emit: bool = True,
    facts: str | Path | None = None,
    sink: Staging | None = None,
) -> Result:
    """Everything up to the files to write. `blueprint`: a file or one loaded (load_text).
    Raises BlueprintError, located, for user mistakes. `facts`: the NPU facts file; default the
    blueprint's hccl.facts. `sink`: the output.Staging the files go into as they are made (the
    result lists their paths in `written`: at 102,400 cards the files are 750 MB)."""
    seconds: dict[str, float] = {}
    with forking.no_cycle_collection():
        with _timed(seconds, "load"):
            loaded = (
                blueprint if isinstance(blueprint, LoadedBlueprint) else load_blueprint(blueprint)
            )
        try:
            with _timed(seconds, "validate"):
                bp = validate(loaded)
                spec = blueprint_spec(bp)
            progress("blueprint valid")
            with _timed(seconds, "facts"):
                facts_file = str(facts) if facts else facts_path(spec, loaded.file)
                npu_facts = load_npu_facts(facts_file) if facts_file else None
            with _timed(seconds, "expand"):
                cluster = _chosen(expand(spec, progress=progress, facts=npu_facts), loaded)
        except Substituted as err:
            raise BlueprintError([*err.problems, *substituted_checks(err.cluster)]).locate(
                loaded.file, loaded.positions
            ) from None
        except BlueprintError as err:
            raise err.locate(loaded.file, loaded.positions) from None
        got: list[Any] = []
        root = sink.open(cluster.name) if emit and sink else ""
        # the model emitters start beside the analysis; a design error discards their files
        with parallel.emitters(cluster, root) if emit else nullcontext() as collect:
            with _timed(seconds, "analyse"):
                analysis = analyse(cluster, spec if emit else None)  # growth cost: for the review
            progress(f"{len(analysis.findings)} design findings")
            if collect and not any(f.severity == ERROR for f in analysis.findings):
                # what is left of emit once the analysis is done, and the writing into the sink;
                # a failed write (disk full) is reported as the output folder's
                with _timed(seconds, "emit"), sink.os_errors() if sink else nullcontext():
                    got = collect(analysis)
    files, written = ([], got) if root else (got, [])
    return Result(loaded, bp, spec, cluster, analysis, files, written, seconds)


@contextmanager
def _timed(seconds: dict[str, float], stage: str) -> Iterator[None]:
    t = time.perf_counter()
    yield
    seconds[stage] = time.perf_counter() - t
