"""files/failure-domains.csv and files/failure-domains.md: what one failure costs, per failure
class, and the mean time between interruptions of a job (generator.analysis computes them once;
generator.analysis.failure_text words them, for this file and the design review alike)."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator

from generator.analysis import Analysis
from generator.analysis.failure_text import columns, markdown, rows
from generator.artifacts import OutputFile
from generator.model import Cluster


def emit(cluster: Cluster, analysis: Analysis) -> Iterator[OutputFile]:
    rev = analysis.failures
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(columns(rev))
    writer.writerows(rows(rev))
    yield OutputFile("files/failure-domains.csv", buf.getvalue().encode())
    yield OutputFile("files/failure-domains.md", markdown(cluster, rev).encode())
