"""Emitters: one module per artifact, each `emit(cluster) -> Iterable[OutputFile]`; and the CSV
writer they share."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from typing import Any

from generator.output import OutputFile  # the writer's record, which the emitters return

__all__ = ["OutputFile", "csv_bytes"]


def csv_bytes(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> bytes:
    """`header` and `rows` as the csv module writes them (excel dialect, `\\n` line ends)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue().encode()
