"""Emitters: one module per artifact, each `emit(cluster) -> Iterable[OutputFile]`; and the CSV
writer they share."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class OutputFile:
    path: str  # relative to the output folder, '/'-separated
    data: bytes


def csv_bytes(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> bytes:
    """`header` and `rows` as the csv module writes them (excel dialect, `\\n` line ends)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue().encode()
