"""Per device model in use, what the bill of materials orders (catalog source, parts), and per
switch the licences its configuration needs (issue #32 item 2). Built once here; the analysis,
the design review and the inventory read `Cluster.hardware` and `Device.licences`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from generator.catalog import Catalog
from generator.catalog.licences import licence_for
from generator.model import Cluster, Device, Hardware, Part
from generator.model_hardware import PART_KINDS
from generator.records import replace


def _part(kind: str, e: Mapping[str, Any]) -> Part:
    confirmed = bool(e.get("source")) and e.get("confirmed", True) is not False
    source = str(e.get("source") or f"[unconfirmed] {e.get('note', '')}".strip())
    return Part(
        kind=kind,
        name=str(e["name"]),
        count=int(e["count"]),
        watts=int(e.get("watts") or 0),
        confirmed=confirmed,
        source=source,
    )


def hardware(devices: Iterable[Device], catalog: Catalog) -> tuple[Hardware, ...]:
    out = []
    for name in sorted({d.model for d in devices}):
        sw = catalog.switches.get(name)
        m = sw or catalog.hosts[name]
        parts = sw.parts if sw else {}
        out.append(
            Hardware(
                model=name,
                confirmed=m.confirmed,
                source=m.source,
                parts=tuple(_part(kind, e) for kind in PART_KINDS for e in parts.get(kind, ())),
            )
        )
    return tuple(out)


def with_licences(cluster: Cluster) -> Cluster:
    """The cluster with each switch's `licences`: the licence (licences.yaml) of the feature its
    configuration runs on the lossless queue (`Cluster.ecn_of`, e.g. ai-ecn -> CE-LIC-AFRD)."""
    devices = []
    for d in cluster.devices:
        need = licence_for(d.platform, cluster.ecn_of(d)) if d.platform else None
        devices.append(replace(d, licences=(need,)) if need else d)
    return replace(cluster, devices=tuple(devices))
