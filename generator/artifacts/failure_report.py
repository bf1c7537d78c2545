"""files/failure-domains.csv and files/failure-domains.md: what one failure costs, per failure
class, and the mean time between interruptions of a job (generator.analysis computes them once;
generator.artifacts.failure_text words them, for this file and the design review alike)."""

from __future__ import annotations

from collections.abc import Iterator

from generator.analysis import Analysis
from generator.artifacts import OutputFile, csv_bytes, emitter
from generator.artifacts.failure_text import columns, markdown, rows
from generator.model import Cluster


@emitter(analysis=True, late=True)
def emit(cluster: Cluster, analysis: Analysis) -> Iterator[OutputFile]:
    rev = analysis.failures
    yield OutputFile("files/failure-domains.csv", csv_bytes(columns(rev), rows(rev)))
    yield OutputFile("files/failure-domains.md", markdown(cluster, rev).encode())
