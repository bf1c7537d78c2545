"""`wanka catalog MODEL`: every value the design reads from one catalog model, each with its
source or `[unconfirmed]` and what would confirm it (issue #32 item 2)."""

from __future__ import annotations

import difflib
from collections import Counter
from collections.abc import Mapping
from typing import Any

from generator.catalog import PART_KINDS, Catalog, HostModel, SwitchModel
from generator.catalog.licences import licence_for

Value = dict[str, Any]  # {"value": ..., "source": "..."}


def close_names(catalog: Catalog, name: str) -> list[str]:
    models = [*catalog.switches, *catalog.hosts]
    return difflib.get_close_matches(name.lower(), models, n=5, cutoff=0.5)


def _cited(value: Any, entry: Mapping[str, Any] | None, fallback: str) -> Value:
    """A value with its entry's source, or [unconfirmed] and the entry's note."""
    e = entry or {}
    if e.get("source") and e.get("confirmed", True) is not False:
        return {"value": value, "source": " ".join(str(e["source"]).split())}
    note = e.get("note") or fallback
    return {"value": value, "source": f"[unconfirmed] {' '.join(str(note).split())}".strip()}


def _model_cited(value: Any, m: SwitchModel | HostModel) -> Value:
    return _cited(value, {"source": m.source, "confirmed": m.confirmed}, m.source)


def describe(catalog: Catalog, name: str) -> dict[str, Any]:
    """Every value the design uses of model `name` (KeyError when the catalog has none)."""
    if name in catalog.switches:
        return _switch(catalog.switches[name])
    return _host(catalog.hosts[name])


def _switch(m: SwitchModel) -> dict[str, Any]:
    by_speed = Counter(p.speed for p in m.ports)
    splits = {p.speed: p.splits for p in m.ports}
    ports = [
        _model_cited(f"{n} x {speed}GE" + (f" (split {', '.join(splits[speed])})"
                                           if splits[speed] else ""), m)
        for speed, n in sorted(by_speed.items(), reverse=True)
    ]  # fmt: skip
    out: dict[str, Any] = {
        "model": m.name,
        "type": "switch",
        "platform": m.platform,
        "description": m.description,
        "confirmed": m.confirmed,
        "ports": ports,
        "mgmt_port": _model_cited(m.mgmt_port, m),
        "height_u": _model_cited(m.height_u, m),
        "power_w": _model_cited(round(m.power_w), m),
        "failure_rate_per_year": _cited(
            m.failure_rate_per_year, None, "assumption (switches.yaml)"
        ),
    }
    for fact, entry in m.facts.items():
        out[fact] = _cited(entry.get("value"), entry, "")
    for kind in PART_KINDS:
        out[kind] = [
            {**_cited(f"{e['count']} x {e['name']}", e, ""), "watts": int(e.get("watts") or 0)}
            for e in m.parts.get(kind, ())
        ]
    if m.order:
        numbers = [f"{m.order['part_number']} (bare)"] if m.order.get("part_number") else []
        numbers += [f"{pn} ({airflow})" for airflow, pn in (m.order.get("airflow") or {}).items()]
        name = f"{m.order['name']}: " if m.order.get("name") else ""
        out["order"] = _cited(name + (", ".join(numbers) or "no part number"), m.order, "")
    ecn = str(m.fact("ecn", "none"))
    need = licence_for(m.platform, ecn)
    out["licences"] = [{"value": f"{need.name} ({ecn})", "source": need.source}] if need else []
    return out


def _host(m: HostModel) -> dict[str, Any]:
    out: dict[str, Any] = {
        "model": m.name,
        "type": m.kind,
        "description": m.description,
        "confirmed": m.confirmed,
        "ports": [
            _model_cited(f"{p.role}: {p.count} x {p.speed}GE ({p.name})", m)
            for p in m.ports.values()
        ],
        "height_u": _model_cited(m.height_u, m),
        "power_w": _model_cited(round(m.power_w), m),
        "cooling": _model_cited(list(m.cooling), m),
    }
    if m.npus:
        out["npus"] = _model_cited(m.npus, m)
        out["dies_per_npu"] = _model_cited(m.dies_per_npu, m)
    nic = m.npu_nic
    if nic:
        out["npu_nic"] = [
            _cited(f"mtu_max {nic.get('mtu_max')}", nic, "npu_nic in servers.yaml"),
            _cited(f"refused networks {list(nic.get('refused_networks', []))}", nic, ""),
        ]
    if m.storage_nic:
        s = m.storage_nic
        out["storage_nic"] = [_cited(f"{s.get('model')} ({s.get('driver')})", s, "")]
    return out


def text(d: Mapping[str, Any]) -> str:
    """The description as lines people read: `key: value  <- source`."""
    lines = [f"{d['model']} ({d['type']}): {d['description']}"]
    for key, v in d.items():
        if key in ("model", "type", "description", "platform", "confirmed"):
            continue
        for one in v if isinstance(v, list) else [v]:
            watts = f", {one['watts']} W" if one.get("watts") else ""
            lines.append(f"  {key}: {one['value']}{watts}  <- {one['source']}")
        if isinstance(v, list) and not v:
            lines.append(f"  {key}: none")
    return "\n".join(lines) + "\n"


def listing(catalog: Catalog) -> list[dict[str, Any]]:
    """`wanka catalog` without a model: every model a blueprint can name."""
    return [
        {"model": m.name, "type": "switch", "description": m.description, "confirmed": m.confirmed}
        for m in catalog.switches.values()
    ] + [
        {"model": m.name, "type": m.kind, "description": m.description, "confirmed": m.confirmed}
        for m in catalog.hosts.values()
    ]


def listing_text(rows: list[dict[str, Any]]) -> str:
    width = max(len(r["model"]) for r in rows)
    return "".join(
        f"{r['model']:<{width}}  {r['type']:<15}  {r['description']}"
        + ("" if r["confirmed"] else "  [unconfirmed]")
        + "\n"
        for r in rows
    )
