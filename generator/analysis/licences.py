"""The licences the switches' configurations need (issue #29, review 2 finding 20): one per switch
whose configuration runs a licensed feature, looked up in generator/catalog/licences.yaml
(platform -> feature -> licence, with its source). The feature is the one the model decides per
switch (`Cluster.ecn_of`: "ai-ecn" exactly where the switch config carries `ai-ecn enable`).
Computed once; files/bom.csv lists them as `licence` rows, the design review names them beside the
ECN of each plane and switch model, and roles/switch_config names the licence when the box shows
the feature not running."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from functools import cache
from importlib import resources

import yaml

from generator.model import Cluster

Licence = tuple[str, str, str, str]  # device, feature, licence, source
BomRow = tuple[str, str, str, int, str, str]  # as generator.analysis.materials.BomRow


@cache
def licence_table() -> dict[str, dict[str, dict[str, str]]]:
    """generator/catalog/licences.yaml: platform -> feature -> {licence, source, page}."""
    text = resources.files("generator.catalog").joinpath("licences.yaml").read_text("utf-8")
    return yaml.load(text, getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}


def licences(cluster: Cluster) -> list[Licence]:
    """(device, feature, licence, source) per switch running a licensed feature, by device."""
    table = licence_table()
    out = []
    for d in cluster.devices:
        feature = cluster.ecn_of(d) if d.platform else ""
        need = table.get(d.platform, {}).get(feature)
        if need:
            out.append((d.name, feature, need["licence"], need["source"]))
    return sorted(out)


def licence_rows(needs: Iterable[Licence]) -> Iterator[BomRow]:
    """files/bom.csv rows: one licence per switch, the switch's name first in the detail (the
    switch_config role reads it there), then the feature and the source."""
    for device, feature, licence, source in needs:
        yield ("licence", licence, f"{device}: {feature}; {source}", 1, "", "")
