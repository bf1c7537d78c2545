"""files/cabling.csv and files/cabling.json: one row per cabled link, both ends located.

A leg of a structured run (model Trunk) is its patch cord: cable_id TRUNK.k, length_m the cord's;
the last columns name the trunk, the cassette it lands on, that cassette's rack, the cassette
port the cord leaves from and the trunk's length ("" and 0 on every other row)."""

from __future__ import annotations

from collections.abc import Iterator

import msgspec
from msgspec.structs import astuple

from generator.artifacts import OutputFile, csv_bytes, emitter
from generator.model import Cluster
from generator.structured_yaml import line


class CableRow(msgspec.Struct, frozen=True, gc=False):
    """One row of cabling.csv and one object of cabling.json: the fields are the columns, in
    order. `line` encodes it to JSON without a dict per row."""

    cable_id: str
    plane: str
    a_device: str
    a_port: str
    a_rack: str
    a_u: int
    b_device: str
    b_port: str
    b_rack: str
    b_u: int
    speed: str
    media: str
    length_m: int
    trunk_id: str
    cassette: str
    cassette_rack: str
    cassette_port: int
    trunk_m: int


COLUMNS = CableRow.__struct_fields__


def rows(cluster: Cluster) -> Iterator[CableRow]:
    by_name = cluster.device_by_name
    trunk_by = {t.trunk_id: t for t in cluster.trunks}
    for link in cluster.links:
        a, b = by_name[link.a_device], by_name[link.b_device]
        t = trunk_by.get(link.trunk_id)
        yield CableRow(
            cable_id=link.cable_id,
            plane=link.plane,
            a_device=a.name,
            a_port=link.a_port,
            a_rack=a.rack,
            a_u=a.u,
            b_device=b.name,
            b_port=link.b_port,
            b_rack=b.rack,
            b_u=b.u,
            speed=f"{link.speed}GE",
            media=link.media,
            length_m=link.length_m,
            trunk_id=link.trunk_id,
            cassette=t.cassette if t else "",
            cassette_rack=t.rack if t else "",
            cassette_port=link.cassette_port,
            trunk_m=t.length_m if t else 0,
        )


def json_file(table: list[CableRow]) -> bytes:
    """cabling.json: one object a line inside the array, which keeps git diffs to the changed
    cables."""
    lines = ",\n".join([line(row) for row in table])
    return ("[\n" + lines + "\n]\n").encode()


@emitter()
def emit(cluster: Cluster, analysis: object = None) -> Iterator[OutputFile]:
    table = list(rows(cluster))
    yield OutputFile("files/cabling.csv", csv_bytes(COLUMNS, map(astuple, table)))
    yield OutputFile("files/cabling.json", json_file(table))
