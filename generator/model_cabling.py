"""Structured cabling records of the model (generator.model re-exports them)."""

from __future__ import annotations

from generator.records import Record


class Trunk(Record, kw_only=True):
    """A split port cabled as structured cabling instead of one breakout cable (its legs leave
    the rack of their fan-out, or run beyond DAC/AOC): an MPO trunk from the split port's
    transceiver to a breakout cassette in the switch's rack, and one patch cord per leg (the
    Links with this trunk_id) from a cassette port to the leg's device. Catalog cables.yaml
    `breakouts` names the optics and connectors, with sources."""

    trunk_id: str  # the breakout's cable id, e.g. BIZ-002615; its patch cords are BIZ-002615.1..
    plane: str
    device: str  # the switch whose split port feeds the trunk
    port: str  # the split (parent) port, e.g. 400GE1/0/1
    split: str  # e.g. 4x100GE
    speed: int  # Gb/s of the split port
    lanes: int  # legs the split gives: the cassette's front ports
    rack: str  # where the cassette sits: the switch's rack
    cassette: str  # e.g. M01-02-CAS-001
    media: str  # MMF | SMF: the trunk's and the patch cords' fibre
    length_m: int  # the trunk, switch port to cassette
    optic: str  # transceiver in the split port, e.g. 400GBASE-DR4 ("" when the catalog names none)
    reach_m: int  # of that optic and the legs' on this fibre: the channel limit, trunk + cord
    connector: str  # the trunk's, e.g. MPO-12 APC (8 fibres)
    cord: str  # each patch cord's, e.g. LC duplex
    legs: int  # cassette ports patched
