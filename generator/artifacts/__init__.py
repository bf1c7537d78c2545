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
    """`header` and `rows` as Python's csv.writer writes them (excel dialect, `\\n` line ends).

    The csv module inspects every character of every field in C, about 20,000 instructions a
    row of 13 fields (callgrind). Most tables need none of its quoting, so each row is written
    with one `%s,%s,...` format, and the csv module writes the table only when the text shows a
    field that would differ: a quote, carriage return or NUL anywhere, a comma or line break
    inside a field (more of them than the separators), a None (csv writes it empty), rows of
    another width than the header's, or a single column."""
    table = [header, *rows]
    width = len(header)
    line = ",".join(["%s"] * width)
    try:
        text = "\n".join([line % (r if type(r) is tuple else tuple(r)) for r in table]) + "\n"
    except TypeError:  # a row of another width
        text = ""
    if (
        width > 1
        and text.count(",") == len(table) * (width - 1)
        and text.count("\n") == len(table)
        and not any(c in text for c in ('"', "\r", "\0", "None"))
    ):
        return text.encode()
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(table)
    return buf.getvalue().encode()
