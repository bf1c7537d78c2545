"""Floor layout: zones of rows of racks, devices stacked bottom-up, cable runs between them."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from generator.errors import BlueprintError, Problem
from generator.model import Rack
from generator.vocab import RackKind, Zone

RACK_WIDTH_M = 0.6
ROW_PITCH_M = 3.0  # rack depth + aisle
ZONE_GAP_M = 6.0
VERTICAL_M = 2.0  # run from a port up to the overhead tray, each end
SLACK_M = 1.0
U_M = 0.0445
ZONE_LETTER = {Zone.TRAINING: "T", Zone.STORAGE: "S", Zone.MANAGEMENT: "M"}  # T01-05, S01-01


@dataclass(slots=True)
class RackSlot:
    """A rack being filled; frozen into a `Rack` at the end."""

    name: str
    zone: Zone
    row: int
    position: int
    kind: RackKind
    height_u: int
    power_kw: float
    cooling_kw: float
    cooling: str
    used_u: int = 0
    load_w: float = 0.0
    devices: list[str] = field(default_factory=list)
    side: int = 0  # network racks: A (0) or B (1) side, so redundant switches never share a rack

    def fits(self, height_u: int, power_w: float) -> bool:
        return (
            self.used_u + height_u <= self.height_u
            and self.load_w + power_w <= self.power_kw * 1000
        )

    def put(self, name: str, height_u: int, power_w: float) -> int:
        u = self.used_u + 1
        self.used_u += height_u
        self.load_w += power_w
        self.devices.append(name)
        return u


@dataclass(slots=True)
class Floor:
    """All racks, row by row, zone by zone; hands out positions."""

    racks: dict[str, RackSlot] = field(default_factory=dict)
    rows: dict[tuple[Zone, int], list[RackSlot]] = field(default_factory=dict)
    zone_rows: dict[Zone, int] = field(default_factory=dict)
    position: dict[str, tuple[str, int]] = field(default_factory=dict)  # device -> (rack, u)

    def new_row(self, zone: Zone) -> int:
        self.zone_rows[zone] = self.zone_rows.get(zone, 0) + 1
        self.rows[(zone, self.zone_rows[zone])] = []
        return self.zone_rows[zone]

    def new_rack(
        self,
        zone: Zone,
        row: int,
        kind: RackKind,
        height_u: int,
        power_kw: float,
        cooling_kw: float,
        cooling: str,
    ) -> RackSlot:
        racks = self.rows[(zone, row)]
        slot = RackSlot(
            name=f"{ZONE_LETTER[zone]}{row:02d}-{len(racks) + 1:02d}",
            zone=zone,
            row=row,
            position=len(racks) + 1,
            kind=kind,
            height_u=height_u,
            power_kw=power_kw,
            cooling_kw=cooling_kw,
            cooling=cooling,
        )
        racks.append(slot)
        self.racks[slot.name] = slot
        return slot

    def place(self, rack: RackSlot, name: str, height_u: int, power_w: float) -> None:
        self.position[name] = (rack.name, rack.put(name, height_u, power_w))

    def place_network(
        self,
        zone: Zone,
        row: int,
        name: str,
        height_u: int,
        power_w: float,
        power_kw: float,
        side: int = 0,
    ) -> None:
        """Stack a switch into the row's network racks of its side (A/B), opening one when full."""
        network = RackKind.NETWORK
        racks = [r for r in self.rows[(zone, row)] if r.kind == network and r.side == side]
        rack = racks[-1] if racks and racks[-1].fits(height_u, power_w) else None
        if rack is None:
            rack = self.new_rack(
                zone=zone,
                row=row,
                kind=network,
                height_u=42,
                power_kw=power_kw,
                cooling_kw=power_kw,
                cooling="air",
            )
            rack.side = side
            if not rack.fits(height_u, power_w):
                raise BlueprintError(
                    [
                        Problem(
                            ("zones", "training", "network_rack", "power_kw"),
                            f"{name} ({height_u}U, {power_w / 1000:g} kW) does not fit an empty "
                            f"42U network rack of {power_kw:g} kW",
                            "raise zones.training.network_rack.power_kw to at least "
                            f"{math.ceil(power_w / 1000)}",
                        )
                    ]
                )
        self.place(rack, name, height_u, power_w)

    def freeze(self, zone_order: tuple[Zone, ...]) -> tuple[Rack, ...]:
        out = []
        y = 0.0
        for zone in zone_order:
            for row in range(1, self.zone_rows.get(zone, 0) + 1):
                for slot in self.rows[(zone, row)]:
                    out.append(
                        Rack(
                            name=slot.name,
                            zone=zone,
                            row=row,
                            position=slot.position,
                            kind=slot.kind,
                            x_m=slot.position * RACK_WIDTH_M,
                            y_m=y,
                            height_u=slot.height_u,
                            power_kw=slot.power_kw,
                            cooling_kw=slot.cooling_kw,
                            cooling=slot.cooling,
                        )
                    )
                y += ROW_PITCH_M
            y += ZONE_GAP_M
        return tuple(out)


def run_length(a: Rack, a_u: int, b: Rack, b_u: int) -> float:
    """Cable run in metres: in-rack by U distance, else overhead tray (Manhattan) plus drops.
    Depends on the two racks and, within one rack, the U distance only: links.cable keeps one
    length per such run."""
    if a.name == b.name:
        return abs(a_u - b_u) * U_M + SLACK_M
    return abs(a.x_m - b.x_m) + abs(a.y_m - b.y_m) + 2 * VERTICAL_M + SLACK_M
