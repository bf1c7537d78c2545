"""files/bom.csv (bill of materials) and files/ip-plan.csv (one row per interface address).

The rows come from the analysis (generator.analysis.materials computes them once; the design
review shows the same rows), sorted, so the same blueprint gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Iterator

from generator.analysis import Analysis
from generator.artifacts import OutputFile, csv_bytes, emitter
from generator.model import Cluster

# confirmed and source were appended (issue #32), part_number after them (issue #41): readers
# of the first columns keep working
BOM_COLUMNS = (
    "category",
    "item",
    "detail",
    "quantity",
    "unit_power_w",
    "total_power_w",
    "confirmed",
    "source",
    "part_number",  # appended (issue #41): Huawei's, where a public page gives it
)
IP_COLUMNS = ("address", "prefix", "subnet", "gateway", "device", "port", "plane")


@emitter(analysis=True, late=True)
def emit(cluster: Cluster, analysis: Analysis) -> Iterator[OutputFile]:
    yield OutputFile("files/bom.csv", csv_bytes(BOM_COLUMNS, analysis.bom))
    yield OutputFile("files/ip-plan.csv", csv_bytes(IP_COLUMNS, analysis.ip_plan))
