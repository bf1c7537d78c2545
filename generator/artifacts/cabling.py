"""files/cabling.csv and files/cabling.json: one row per cabled link, both ends located.

A leg of a structured run (model Trunk) is its patch cord: cable_id TRUNK.k, length_m the cord's;
the last columns name the trunk, the cassette it lands on, that cassette's rack, the cassette
port the cord leaves from and the trunk's length ("" and 0 on every other row)."""

from __future__ import annotations

from collections.abc import Iterator

from generator.artifacts import OutputFile, csv_bytes
from generator.model import Cluster
from generator.structured_yaml import line

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
    "trunk_id",
    "cassette",
    "cassette_rack",
    "cassette_port",
    "trunk_m",
)


def rows(cluster: Cluster) -> Iterator[tuple]:
    by_name = cluster.device_by_name
    trunk_by = {t.trunk_id: t for t in cluster.trunks}
    for link in cluster.links:
        a, b = by_name[link.a_device], by_name[link.b_device]
        t = trunk_by.get(link.trunk_id)
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
            link.trunk_id,
            t.cassette if t else "",
            t.rack if t else "",
            link.cassette_port,
            t.length_m if t else 0,
        )


def json_file(table: list[tuple]) -> bytes:
    """cabling.json: one object a line inside the array, which keeps git diffs to the changed
    cables."""
    lines = ",\n".join([line(dict(zip(COLUMNS, row, strict=True))) for row in table])
    return ("[\n" + lines + "\n]\n").encode()


def emit(cluster: Cluster, analysis: object = None) -> Iterator[OutputFile]:
    table = list(rows(cluster))
    yield OutputFile("files/cabling.csv", csv_bytes(COLUMNS, table))
    yield OutputFile("files/cabling.json", json_file(table))
