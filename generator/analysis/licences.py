"""The licences the switches' configurations need (issue #29, review 2 finding 20; issue #32: per
model in the BOM). Each switch carries its own in the model (`Device.licences`, set in expand
from generator/catalog/licences.yaml for the feature `Cluster.ecn_of` decides: "ai-ecn" exactly
where the switch config carries `ai-ecn enable`). files/bom.csv orders them per switch model and
licence (quantity = switches), the design review names them beside the ECN of each plane and
model, and roles/switch_config reads a switch's own from its `licences` host variable."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator

from generator.analysis.materials import BomRow
from generator.model import Cluster

Licence = tuple[str, str, str, str]  # device, feature, licence, source


def licences(cluster: Cluster) -> list[Licence]:
    """(device, feature, licence, source) per switch running a licensed feature, by device."""
    return sorted(
        (d.name, lic.feature, lic.name, lic.source) for d in cluster.devices for lic in d.licences
    )


def licence_rows(cluster: Cluster, needs: Iterable[Licence]) -> Iterator[BomRow]:
    """files/bom.csv rows: per switch model and licence, as many as switches need it."""
    model_of = {d.name: d.model for d in cluster.devices}
    counts: Counter[tuple[str, str, str, str]] = Counter(
        (licence, model_of[device], feature, source) for device, feature, licence, source in needs
    )
    for (licence, model, feature, source), n in sorted(counts.items()):
        yield ("licence", licence, f"{model}: {feature}", n, 0, 0, "yes", source, "")
