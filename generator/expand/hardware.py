"""Per device model in use, what the bill of materials orders (catalog source, parts), and per
switch the licences its configuration needs (issue #32 item 2). Built once here; the analysis,
the design review and the inventory read `Cluster.hardware` and `Device.licences`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from generator.catalog import PART_KINDS, Catalog
from generator.catalog.licences import licence_for
from generator.model import Cluster, Device, Hardware, Part, Rack
from generator.records import replace
from generator.vocab import Airflow, RackKind


def _sourced(e: Mapping[str, Any]) -> tuple[bool, str]:
    """(confirmed, source) of a catalog entry {source} or {confirmed: false, note}."""
    confirmed = bool(e.get("source")) and e.get("confirmed", True) is not False
    return confirmed, str(e.get("source") or f"[unconfirmed] {e.get('note', '')}".strip())


def _part(kind: str, e: Mapping[str, Any]) -> Part:
    confirmed, source = _sourced(e)
    return Part(
        kind=kind,
        name=str(e["name"]),
        count=int(e["count"]),
        watts=int(e.get("watts") or 0),
        confirmed=confirmed,
        source=source,
        part_number=str(e.get("part_number", "")),
    )


def hardware(devices: Iterable[Device], catalog: Catalog) -> tuple[Hardware, ...]:
    out = []
    for name in sorted({d.model for d in devices}):
        sw = catalog.switches.get(name)
        m = sw or catalog.hosts[name]
        parts = sw.parts if sw else {}
        order = sw.order if sw else {}
        numbers = {"": str(order.get("part_number", ""))} | {
            str(k): str(v) for k, v in (order.get("airflow") or {}).items()
        }
        confirmed, source = _sourced(order) if order else (False, "")
        out.append(
            Hardware(
                catalog=m,
                parts=tuple(_part(kind, e) for kind in PART_KINDS for e in parts.get(kind, ())),
                part_numbers=tuple(sorted((k, v) for k, v in numbers.items() if v)),
                order_name=str(order.get("name", "")),
                order_confirmed=confirmed,
                order_source=source,
            )
        )
    return tuple(out)


def with_airflow(
    devices: Iterable[Device], rack_by: Mapping[str, Rack], choice: str
) -> list[Device]:
    """Each network device's airflow: the blueprint's choice (zones.training.airflow), or with
    `auto` the hot/cold-aisle layout's: a switch in a compute rack faces its ports to the servers'
    network ports at the rear, the hot aisle, so it exhausts on the port side; one in a network
    rack faces its ports to the front, the cold aisle it is patched from, so it takes air in on
    the port side."""
    out = []
    for d in devices:
        if d.is_switch:
            airflow = choice
            if choice == "auto":
                compute = rack_by[d.rack].kind == RackKind.COMPUTE
                airflow = Airflow.PORT_SIDE_EXHAUST if compute else Airflow.PORT_SIDE_INTAKE
            d = replace(d, airflow=str(airflow))
        out.append(d)
    return out


def with_licences(cluster: Cluster) -> Cluster:
    """The cluster with each switch's `licences`: the licence (licences.yaml) of the feature its
    configuration runs on the lossless queue (`Cluster.ecn_of`, e.g. ai-ecn -> CE-LIC-AFRD)."""
    devices = []
    for d in cluster.devices:
        need = licence_for(d.platform, cluster.ecn_of(d)) if d.platform else None
        devices.append(replace(d, licences=(need,)) if need else d)
    return replace(cluster, devices=tuple(devices))
