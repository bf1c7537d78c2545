"""The bill of materials and the IP plan as rows: computed once, formatted by the BOM emitter
(files/bom.csv, files/ip-plan.csv), the design review (docs) and `wanka diff` alike."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from typing import Any

from generator.catalog import shipped_catalog
from generator.model import Cluster, Link, ip, network_of

# Media whose two ends take pluggable transceivers (AOC and DAC carry their own ends; copper
# patch cords plug into RJ45 ports).
OPTICAL = frozenset({"MMF", "SMF"})

# The port cage of each speed, as the BOM names cables and transceivers: QSFP-DD (400GE) and
# QSFP28 (100GE) as Huawei names the CE8851-32CQ8DQ-P's ports ("32*100GE QSFP28, 8*400G QSFPDD",
# Hardware Description V300 EDOC1100369504, CE8851-32CQ8DQ-P), SFP28 (25GE) as the
# CE6866-48S8CQ-P's ("48*25G SFP28", same document); QSFP56 for 200GE, SFP+ for 10GE and RJ45
# for GE are the usual cages [unconfirmed per device: the NPU server's and CE6881/CE5882
# hardware descriptions would confirm them].
CAGE = {
    400: "QSFP-DD",
    200: "QSFP56",
    100: "QSFP28",
    40: "QSFP+",
    25: "SFP28",
    10: "SFP+",
    1: "RJ45",
}

# category, item, detail, quantity, unit W, total W, confirmed (yes | no | - not a catalog
# fact), source, Huawei part number ("" where no public page gives one). Watts are integers
# (0: none drawn, or counted in the device row: see Part).
BomRow = tuple[str, str, str, int, int, int, str, str, str]
IpEntry = tuple[int, int, int, int, str, str, str]  # address, prefix, network, gateway, device..
IpRow = tuple[str, int, str, str, str, str, str]  # the same as written, addresses dotted
ORDER = {
    k: i
    for i, k in enumerate(
        ("device", "board", "line card", "power supply", "fan", "cable", "breakout cable",
         "cassette", "optic", "rack", "cooling", "licence")
    )
}  # fmt: skip
PART_CATEGORY = {
    "boards": "board",
    "line_cards": "line card",
    "psus": "power supply",
    "fans": "fan",
}


def _yes(confirmed: bool) -> str:
    return "yes" if confirmed else "no"


def cage(speed: int) -> str:
    return CAGE.get(speed, f"{speed}G")


def bom_rows(cluster: Cluster) -> list[BomRow]:
    """The bill of materials, sorted: devices (power as the racks carry it), each model's parts
    per device (Cluster.hardware), cables, breakouts, cassettes and optics by part and reach,
    racks and CDUs. Licence rows come from generator.analysis.licences."""
    rows: list[BomRow] = []
    devices: Counter[tuple[str, str, float, str]] = Counter(
        (d.role, d.model, d.power_w, d.airflow) for d in cluster.devices
    )
    per_model: Counter[str] = Counter(d.model for d in cluster.devices)
    for (role, model, power, airflow), n in devices.items():
        rows.append(_device_row(cluster, role=role, model=model, power=power, airflow=airflow, n=n))
    for model, n in per_model.items():
        hw = cluster.hardware_of(model)
        for p in hw.parts if hw else ():
            detail = f"{p.count} per {model} x {n:,}; power within the {model} row"
            if p.kind == "psus":
                detail = f"{p.count} per {model} x {n:,}; W = rated output"
            cat = PART_CATEGORY[p.kind]
            ok = _yes(p.confirmed)
            rows.append((cat, p.name, detail, p.count * n, p.watts, 0, ok, p.source, p.part_number))
    rows.extend(cabling_rows(cluster))
    racks: Counter[tuple[str, int, float]] = Counter(
        (r.kind, r.height_u, r.power_kw) for r in cluster.racks
    )
    for (kind, height, power_kw), n in racks.items():
        detail = f"{kind}, {power_kw:g} kW budget"
        rows.append(("rack", f"{height}U rack", detail, n, 0, 0, "-", "blueprint zones", ""))
    for cdu in cluster.cdus:
        detail = f"{cdu.name} {cdu.capacity_kw:g} kW"
        rows.append(("cooling", "CDU", detail, 1, 0, 0, "-", "blueprint zones.training", ""))
    return sorted(rows, key=_order)


def _device_row(
    cluster: Cluster, *, role: str, model: str, power: float, airflow: str, n: int
) -> BomRow:
    """A device model in one role (and airflow): its part number as ordered with that airflow
    where Huawei publishes one (catalog `order`), else the note saying what would give it."""
    hw = cluster.hardware_of(model)
    if hw is None:
        return ("device", model, role, n, round(power), round(power * n), "no", "", "")
    detail = f"{role}, {airflow}" if airflow else role
    if hw.order_name:  # the catalog model is a series: the model the order names
        detail += f", order as {hw.order_name}"
    number = hw.part_number(airflow)
    order = hw.order_source or "[unconfirmed] no part number in the catalog"
    if number and airflow and number == hw.part_number(""):
        order += f"; {airflow}: no variant part number [unconfirmed]"
    ok = _yes(hw.catalog.confirmed and (hw.order_confirmed or not airflow))
    src = f"{hw.catalog.source}; order: {order}"
    return ("device", model, detail, n, round(power), round(power * n), ok, src, number)


def _order(r: BomRow) -> tuple:
    length = float(r[2].split()[0]) if r[0] in ("cable", "breakout cable") else 0
    return (ORDER[r[0]], r[1], length, r[2])


@cache
def _optic_sources() -> dict[str, tuple[str, str]]:
    """Transceiver -> (confirmed, source) from catalog cables.yaml (media optics, breakouts)."""
    catalog = shipped_catalog()
    out: dict[str, tuple[str, str]] = {}
    entries = [e for m in catalog.media for e in m.optics.values()]
    for e in entries:
        out[e["optic"]] = _mark(e)
    for by_fibre in catalog.breakouts.values():
        for e in by_fibre.values():
            out.setdefault(e["port_optic"], _mark(e))
            out.setdefault(e["leg_optic"], _mark(e))
    return out


@cache
def _fibre() -> tuple[dict[str, tuple[str, str, str]], dict[str, tuple[str, str, str]]]:
    """From catalog cables.yaml: medium -> (grade, confirmed, source), and optic -> (connector,
    confirmed, source) of the direct fibre cable between two such optics."""
    grades, connectors = {}, {}
    for m in shipped_catalog().media:
        if g := m.grade:
            grades[m.name] = (str(g["value"]), *_mark(g))
        for e in m.optics.values():
            if c := e.get("connector"):
                note = {"source": e.get("connector_source"), "note": e.get("connector_note")}
                connectors[e["optic"]] = (str(c), *_mark(note))
    return grades, connectors


def _mark(e: Mapping[str, Any]) -> tuple[str, str]:
    if e.get("confirmed") is False or not e.get("source"):
        return "no", f"[unconfirmed] {e.get('note') or ''}".strip()
    return "yes", " ".join(str(e["source"]).split())


NO_PART = "cable part number: none in the catalog [unconfirmed]"


def _joined(*marks: tuple[str, str]) -> tuple[str, str]:
    """(confirmed, source) of a row several sourced values name: yes only if each is ("-":
    text that confirms nothing, such as the missing part number)."""
    ok = "yes" if all(m[0] in ("yes", "-") for m in marks) else "no"
    return ok, "; ".join(m[1] for m in marks if m[1])


def cabling_rows(cluster: Cluster) -> Iterator[BomRow]:
    """Cables (a breakout is one cable, "400G QSFP-DD to 2 x 200G QSFP56"), structured runs
    (cluster.trunks: an MPO trunk, a breakout cassette and a patch cord per leg) and the
    transceivers they take, by part and reach: two per direct optical cable, one in the split
    port per trunk and one at the device end of each patch cord. Fibre is ordered by grade and
    connector (catalog cables.yaml): a direct cable by its optics' connector, e.g. an OM4 MPO-16
    cable between two 400GBASE-SR8."""
    grades, connectors = _fibre()
    trunk_by = {t.trunk_id: t for t in cluster.trunks}
    legs: dict[str, list[Link]] = {}
    for link in cluster.links:  # breakout legs share one physical cable
        legs.setdefault(link.cable_id, []).append(link)
    # counted by what names the part (cord or legs, media, speed, optic, length), once per part
    kinds: Counter[tuple[bool, str, int, str, int, str, int]] = Counter()
    optics: Counter[tuple[str, int, str, int]] = Counter()
    for group in legs.values():
        x = group[0]
        trunk = trunk_by.get(x.trunk_id)
        cord = trunk.cord if trunk else ""
        kinds[(trunk is not None, cord, len(group), x.media, x.speed, x.optic, x.length_m)] += 1
        if x.media in OPTICAL:
            optics[(x.media, x.speed, x.optic, x.reach_m)] += 1 if trunk else 2
    rule = ("no", "catalog cables.yaml media rule (speed, length) [unconfirmed: no vendor part]")
    cables: Counter[tuple[str, str, int, tuple[str, str]]] = Counter()
    for (patched, cord, n, media, speed, optic, length), count in kinds.items():
        grade, *graded = grades.get(media, ("", "no", ""))
        fibre = f"{media} {grade}".strip()
        if patched:
            item, cat = f"{fibre} {cord} patch cord", "cable"
            mark = _joined(tuple(graded), ("-", NO_PART))
        elif n > 1:
            port = speed * n
            item = f"{media} {port}G {cage(port)} to {n} x {speed}G {cage(speed)}"
            cat, mark = "breakout cable", rule
        elif media in OPTICAL and optic in connectors:
            connector, *sourced = connectors[optic]
            item, cat = f"{fibre} {connector} fibre cable for {optic} ({cage(speed)})", "cable"
            mark = _joined(tuple(graded), tuple(sourced), ("-", NO_PART))
        else:
            item, cat, mark = f"{media} {speed}G {cage(speed)}", "cable", rule
        cables[(cat, item, length, mark)] += count
    cassettes: Counter[tuple[str, tuple[str, str]]] = Counter()
    for t in cluster.trunks:
        grade, *graded = grades.get(t.media, ("", "no", ""))
        fibre = f"{t.media} {grade}".strip()
        mark = _joined(tuple(graded), _optic_sources().get(t.optic, ("no", "")))
        mark = _joined(mark, ("-", NO_PART))
        cables[("cable", f"{fibre} {t.connector or 'MPO'} trunk", t.length_m, mark)] += 1
        item = f"{fibre} {t.connector or 'MPO'} to {t.lanes} x {t.cord or '?'}"
        cassettes[(item, mark)] += 1
        optics[(t.media, t.speed, t.optic, t.reach_m)] += 1
    for (cat, item, length, (ok, src)), n in cables.items():
        yield (cat, item, f"{length} m", n, 0, 0, ok, src, "")
    for (item, (ok, src)), n in cassettes.items():
        yield ("cassette", f"breakout cassette {item}", "", n, 0, 0, ok, src, "")
    sources = _optic_sources()
    for (media, speed, optic, reach), n in optics.items():
        grade = grades.get(media, ("",))[0]
        on = f"{media} {grade}".strip()
        if optic:
            ok, src = sources.get(optic, ("no", "[unconfirmed] not in cables.yaml"))
            if optic in connectors:
                src += f"; connector {connectors[optic][0]}: {connectors[optic][2]}"
            yield ("optic", f"{optic} {cage(speed)} {reach} m", on, n, 0, 0, ok, src, "")
        else:
            src = "[unconfirmed] cables.yaml names no optic for this speed and fibre"
            item = f"{speed}G {media} {cage(speed)} transceiver"
            yield ("optic", item, on, n, 0, 0, "no", src, "")


def ip_entries(cluster: Cluster) -> list[IpEntry]:
    """(address, prefix, network, gateway, device, port, plane) as integers, sorted.

    Host ports, switch gateways (SVI or routed host subnet), routed uplink ends and loopbacks."""
    out: list[IpEntry] = []
    for a in cluster.addresses:
        out.append(
            (a.ip, a.prefix, network_of(a.ip, a.prefix), a.gateway, a.device, a.port, a.plane)
        )
    for s in cluster.subnets:  # the gateway on each owner (both members of an M-LAG pair)
        for owner in s.owners if s.gateway else ():
            out.append((s.gateway, s.prefix, s.network, 0, owner, s.gateway_interface, s.plane))
    for link in cluster.links:
        if link.a_ip:
            net = network_of(link.a_ip, link.prefix)
            out.append((link.a_ip, link.prefix, net, 0, link.a_device, link.a_port, link.plane))
            out.append((link.b_ip, link.prefix, net, 0, link.b_device, link.b_port, link.plane))
    for d in cluster.devices:
        if d.loopback:
            out.append((d.loopback, 32, d.loopback, 0, d.name, "LoopBack0", d.plane))
    out.sort()
    return out


def ip_table(entries: Iterable[IpEntry]) -> Iterator[IpRow]:
    """The IP plan as files/ip-plan.csv and the design review write it: (address, prefix,
    "network/prefix", gateway or "", device, port, plane). The entries come sorted by address,
    so a subnet's rows follow each other and its text is made once per run of rows."""
    subnet_of, subnet, gateway_of, gateway = None, "", None, ""
    for address, prefix, network, gw, device, port, plane in entries:
        if (network, prefix) != subnet_of:
            subnet_of, subnet = (network, prefix), f"{ip(network)}/{prefix}"
        if gw != gateway_of:
            gateway_of, gateway = gw, ip(gw) if gw else ""
        yield (ip(address), prefix, subnet, gateway, device, port, plane)
