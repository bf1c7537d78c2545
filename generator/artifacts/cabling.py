"""files/cabling.csv and files/cabling.json: one row per cabled link, both ends located."""

from __future__ import annotations

from collections.abc import Iterator

from generator.artifacts import OutputFile, csv_bytes
from generator.model import Cluster
from generator.structured_yaml import quote

COLUMNS = (
    "cable_id",
    "plane",
    "a_device",
    "a_port",
    "a_rack",
    "a_u",
    "b_device",
    "b_port",
    "b_rack",
    "b_u",
    "speed",
    "media",
    "length_m",
)


def rows(cluster: Cluster) -> Iterator[tuple]:
    by_name = cluster.device_by_name
    for link in cluster.links:
        a, b = by_name[link.a_device], by_name[link.b_device]
        yield (
            link.cable_id,
            link.plane,
            a.name,
            link.a_port,
            a.rack,
            a.u,
            b.name,
            link.b_port,
            b.rack,
            b.u,
            f"{link.speed}GE",
            link.media,
            link.length_m,
        )


# cabling.json's line for one row: what `compact(dict(zip(COLUMNS, row)))` writes, 4x faster
NUMBERS = ("a_u", "b_u", "length_m")
_LINE = "{" + ",".join(f'"{c}":%s' for c in COLUMNS) + "}"
# the same with the strings' quotes in the format: right for strings JSON writes unescaped
_PLAIN_LINE = "{" + ",".join(f'"{c}":%s' if c in NUMBERS else f'"{c}":"%s"' for c in COLUMNS) + "}"
# the bytes a string JSON writes unescaped can hold (ASCII from space to ~), and the line break
_PLAIN = bytes(range(0x20, 0x7F)) + b"\n"


def json_file(table: list[tuple]) -> bytes:
    """cabling.json: the rows one object a line, strings quoted as JSON (ASCII), numbers as
    Python prints them, which is how JSON writes them. Cable ids, names and ports need no
    escapes: the rows are formatted with the quotes in place, and only when the text shows an
    escape would be needed (more quotes than the format's, a backslash, a control or non-ASCII
    character, a line break inside a field) each string is quoted by the JSON encoder instead."""
    data = ("[\n" + ",\n".join([_PLAIN_LINE % row for row in table]) + "\n]\n").encode()
    if (
        data.count(b'"') == len(table) * _PLAIN_LINE.count('"')
        and data.count(b"\n") == len(table) + 2
        and b"\\" not in data
        and not data.translate(None, _PLAIN)
    ):
        return data
    q = quote
    lines = [
        _LINE % (q(c), q(p), q(a), q(ap), q(ar), au, q(b), q(bp), q(br), bu, q(s), q(m), n)
        for c, p, a, ap, ar, au, b, bp, br, bu, s, m, n in table
    ]
    return ("[\n" + ",\n".join(lines) + "\n]\n").encode()


def emit(cluster: Cluster, analysis: object = None) -> Iterator[OutputFile]:
    table = list(rows(cluster))
    yield OutputFile("files/cabling.csv", csv_bytes(COLUMNS, table))
    # JSON: one object per line inside the array keeps git diffs to the changed cables
    yield OutputFile("files/cabling.json", json_file(table))
