"""What a device model is made of and what it must be licensed for, as the bill of materials
orders it (issue #32 item 2): built once in expand from the catalog (generator/catalog
switches.yaml `boards`, `line_cards`, `psus`, `fans`; licences.yaml), read by the analysis (BOM,
licence rows), the design review and the inventory (a switch's `licences` host variable)."""

from __future__ import annotations

from generator.records import Record

PART_KINDS = ("boards", "line_cards", "psus", "fans")  # catalog keys, in BOM order


class Part(Record, kw_only=True):
    """A field-replaceable part a device model needs: `count` per device. `watts`: what it draws
    (boards, line cards, fans) or, for a power supply, its rated output; 0 when unknown. Its
    power is inside the device model's `power_w` (the chassis as configured), never added again."""

    kind: str  # one of PART_KINDS
    name: str
    count: int
    watts: int
    confirmed: bool
    source: str  # the page that gives it, or the note saying what would confirm it
    part_number: str = ""  # Huawei's, where the page gives it


class Hardware(Record, kw_only=True):
    """A device model in use: its catalog source, whether that source confirms it, its parts,
    and what to order (catalog `order`): Huawei part numbers by airflow ("" = the bare box
    without fans and power modules), the page that gives them, or the note saying what would."""

    model: str
    confirmed: bool
    source: str
    parts: tuple[Part, ...] = ()
    part_numbers: tuple[tuple[str, str], ...] = ()  # (airflow or "", part number)
    order_name: str = ""  # what the order names when the catalog name is not a model (USG)
    order_confirmed: bool = False
    order_source: str = ""

    def part_number(self, airflow: str) -> str:
        """The part number of the box as ordered with `airflow` (fans and power modules
        included), else of the bare box; "" when the catalog has none."""
        numbers = dict(self.part_numbers)
        return numbers.get(airflow) or numbers.get("", "")


class Licence(Record, kw_only=True):
    """A licence a switch's configuration needs: the feature it runs and the page saying so."""

    name: str  # e.g. CE-LIC-AFRD
    feature: str  # e.g. ai-ecn (Cluster.ecn_of)
    source: str
