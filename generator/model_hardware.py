"""What a device model is made of and what it must be licensed for, as the bill of materials
orders it (issue #32 item 2): built once in expand from the catalog (generator/catalog
switches.yaml `boards`, `line_cards`, `psus`, `fans`, `order`; licences.yaml), read by the
analysis (design checks, BOM, licence rows), the design review and the inventory (a switch's
`licences` host variable)."""

from __future__ import annotations

from generator.catalog import HostModel, SwitchModel
from generator.catalog.licences import Licence  # noqa: F401  (re-exported: Device.licences)
from generator.records import Record


class Part(Record, kw_only=True):
    """A field-replaceable part a device model needs: `count` per device. `watts`: what it draws
    (boards, line cards, fans) or, for a power supply, its rated output; 0 when unknown. Its
    power is inside the device model's `power_w` (the chassis as configured), never added again."""

    kind: str  # one of generator.catalog.PART_KINDS
    name: str
    count: int
    watts: int
    confirmed: bool
    source: str  # the page that gives it, or the note saying what would confirm it
    part_number: str = ""  # Huawei's, where the page gives it


class Hardware(Record, kw_only=True):
    """A device model in use: its catalog record (`catalog`, the blueprint's overrides merged:
    every fact the catalog gives, e.g. `catalog.height_u`, `catalog.confirmed`, `catalog.source`;
    a design check reads a new catalog key there, with no field added here), its parts, and
    what to order (catalog `order`): Huawei part numbers by airflow ("" = the bare box without
    fans and power modules), the page that gives them, or the note saying what would."""

    catalog: SwitchModel | HostModel
    parts: tuple[Part, ...] = ()
    part_numbers: tuple[tuple[str, str], ...] = ()  # (airflow or "", part number)
    order_name: str = ""  # what the order names when the catalog name is not a model (USG)
    order_confirmed: bool = False
    order_source: str = ""

    @property
    def model(self) -> str:
        return self.catalog.name

    def part_number(self, airflow: str) -> str:
        """The part number of the box as ordered with `airflow` (fans and power modules
        included), else of the bare box; "" when the catalog has none."""
        numbers = dict(self.part_numbers)
        return numbers.get(airflow) or numbers.get("", "")
