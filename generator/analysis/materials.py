"""The bill of materials and the IP plan as rows: computed once, formatted by the BOM emitter
(files/bom.csv, files/ip-plan.csv), the design review (docs) and `wanka diff` alike."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from functools import cache
from typing import Any

from generator.catalog import shipped_data
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
# fact), source. Watts are integers (0: none drawn, or counted in the device row: see Part).
BomRow = tuple[str, str, str, int, int, int, str, str]
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
    devices: Counter[tuple[str, str, float]] = Counter(
        (d.role, d.model, d.power_w) for d in cluster.devices
    )
    per_model: Counter[str] = Counter(d.model for d in cluster.devices)
    for (role, model, power), n in devices.items():
        hw = cluster.hardware_of(model)
        ok, src = (_yes(hw.confirmed), hw.source) if hw else ("no", "")
        rows.append(("device", model, role, n, round(power), round(power * n), ok, src))
    for model, n in per_model.items():
        hw = cluster.hardware_of(model)
        for p in hw.parts if hw else ():
            detail = f"{p.count} per {model} x {n:,}; power within the {model} row"
            if p.kind == "psus":
                detail = f"{p.count} per {model} x {n:,}; W = rated output"
            cat = PART_CATEGORY[p.kind]
            rows.append((cat, p.name, detail, p.count * n, p.watts, 0, _yes(p.confirmed), p.source))
    rows.extend(cabling_rows(cluster))
    racks: Counter[tuple[str, int, float]] = Counter(
        (r.kind, r.height_u, r.power_kw) for r in cluster.racks
    )
    for (kind, height, power_kw), n in racks.items():
        detail = f"{kind}, {power_kw:g} kW budget"
        rows.append(("rack", f"{height}U rack", detail, n, 0, 0, "-", "blueprint zones"))
    for cdu in cluster.cdus:
        detail = f"{cdu.name} {cdu.capacity_kw:g} kW"
        rows.append(("cooling", "CDU", detail, 1, 0, 0, "-", "blueprint zones.training"))
    return sorted(rows, key=_order)


def _order(r: BomRow) -> tuple:
    length = float(r[2].split()[0]) if r[0] in ("cable", "breakout cable") else 0
    return (ORDER[r[0]], r[1], length, r[2])


@cache
def _optic_sources() -> dict[str, tuple[str, str]]:
    """Transceiver -> (confirmed, source) from catalog cables.yaml (media optics, breakouts)."""
    cables = shipped_data()["cables"]
    out: dict[str, tuple[str, str]] = {}
    entries = [e for m in cables["media"] for e in (m.get("optics") or {}).values()]
    for e in entries:
        out[e["optic"]] = _mark(e)
    for by_fibre in cables.get("breakouts", {}).values():
        for e in by_fibre.values():
            out.setdefault(e["port_optic"], _mark(e))
            out.setdefault(e["leg_optic"], _mark(e))
    return out


def _mark(e: Mapping[str, Any]) -> tuple[str, str]:
    if e.get("confirmed") is False or not e.get("source"):
        return "no", f"[unconfirmed] {e.get('note', '')}".strip()
    return "yes", " ".join(str(e["source"]).split())


def cabling_rows(cluster: Cluster) -> Iterator[BomRow]:
    """Cables (a breakout is one cable, "400G QSFP-DD to 2 x 200G QSFP56"), structured runs
    (cluster.trunks: an MPO trunk, a breakout cassette and a patch cord per leg) and the
    transceivers they take, by part and reach: two per direct optical cable, one in the split
    port per trunk and one at the device end of each patch cord."""
    trunk_by = {t.trunk_id: t for t in cluster.trunks}
    legs: dict[str, list[Link]] = {}
    for link in cluster.links:  # breakout legs share one physical cable
        legs.setdefault(link.cable_id, []).append(link)
    # counted by what names the part (cord or legs, media, speed, length), named once per part
    kinds: Counter[tuple[bool, str, int, str, int, int]] = Counter()
    optics: Counter[tuple[str, int, str, int]] = Counter()
    for group in legs.values():
        x = group[0]
        trunk = trunk_by.get(x.trunk_id)
        cord = trunk.cord if trunk else ""
        kinds[(trunk is not None, cord, len(group), x.media, x.speed, x.length_m)] += 1
        if x.media in OPTICAL:
            optics[(x.media, x.speed, x.optic, x.reach_m)] += 1 if trunk else 2
    cables: Counter[tuple[str, str, int]] = Counter()
    for (patched, cord, n, media, speed, length), count in kinds.items():
        if patched:
            item, cat = f"{media} {cord} patch cord", "cable"
        elif n > 1:
            port = speed * n
            item = f"{media} {port}G {cage(port)} to {n} x {speed}G {cage(speed)}"
            cat = "breakout cable"
        else:
            item, cat = f"{media} {speed}G {cage(speed)}", "cable"
        cables[(cat, item, length)] += count
    cassettes: Counter[str] = Counter()
    for t in cluster.trunks:
        cables[("cable", f"{t.media} {t.connector or 'MPO'} trunk", t.length_m)] += 1
        cassettes[f"{t.media} {t.connector or 'MPO'} to {t.lanes} x {t.cord or '?'}"] += 1
        optics[(t.media, t.speed, t.optic, t.reach_m)] += 1
    rule = "catalog cables.yaml media rule (speed, length) [unconfirmed: no vendor part]"
    for (cat, item, length), n in cables.items():
        yield (cat, item, f"{length} m", n, 0, 0, "no", rule)
    for item, n in cassettes.items():
        yield ("cassette", f"breakout cassette {item}", "", n, 0, 0, "no", rule)
    sources = _optic_sources()
    for (media, speed, optic, reach), n in optics.items():
        if optic:
            ok, src = sources.get(optic, ("no", "[unconfirmed] not in cables.yaml"))
            yield ("optic", f"{optic} {cage(speed)} {reach} m", media, n, 0, 0, ok, src)
        else:
            src = "[unconfirmed] cables.yaml names no optic for this speed and fibre"
            yield (
                "optic",
                f"{speed}G {media} {cage(speed)} transceiver",
                media,
                n,
                0,
                0,
                "no",
                src,
            )


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
