"""The bill of materials and the IP plan as rows: computed once, formatted by the BOM emitter
(files/bom.csv, files/ip-plan.csv), the design review (docs) and `wanka diff` alike."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator

from generator.model import Cluster, Link, ip, network_of

# Media whose two ends take pluggable transceivers (AOC and DAC carry their own ends; copper
# patch cords plug into RJ45 ports).
OPTICAL = frozenset({"MMF", "SMF"})

BomRow = tuple[str, str, str, int, str, str]  # category, item, detail, quantity, unit W, total W
IpEntry = tuple[int, int, int, int, str, str, str]  # address, prefix, network, gateway, device..
IpRow = tuple[str, int, str, str, str, str, str]  # the same as written, addresses dotted


def bom_rows(cluster: Cluster) -> list[BomRow]:
    """(category, item, detail, quantity, unit power W, total power W), sorted."""
    rows: list[BomRow] = []
    devices: Counter[tuple[str, str, float]] = Counter(
        (d.role, d.model, d.power_w) for d in cluster.devices
    )
    for (role, model, power), n in devices.items():
        rows.append(("device", model, role, n, f"{power:g}", f"{power * n:g}"))
    rows.extend(cabling_rows(cluster))
    racks: Counter[tuple[str, int, float]] = Counter(
        (r.kind, r.height_u, r.power_kw) for r in cluster.racks
    )
    for (kind, height, power_kw), n in racks.items():
        rows.append(("rack", f"{height}U rack", f"{kind}, {power_kw:g} kW budget", n, "", ""))
    for cdu in cluster.cdus:
        rows.append(("cooling", "CDU", f"{cdu.name} {cdu.capacity_kw:g} kW", 1, "", ""))
    order = {"device": 0, "cable": 1, "cassette": 2, "optic": 3, "rack": 4, "cooling": 5}
    return sorted(
        rows,
        key=lambda r: (order[r[0]], r[1], float(r[2].split()[0]) if r[0] == "cable" else 0, r[2]),
    )


def cabling_rows(cluster: Cluster) -> Iterator[BomRow]:
    """Cables (breakout legs share one), structured runs (cluster.trunks: an MPO trunk, a
    breakout cassette and a patch cord per leg) and the transceivers they take: two per direct
    optical cable, one in the split port per trunk and one at the device end of each patch cord."""
    trunk_by = {t.trunk_id: t for t in cluster.trunks}
    cable_ids: dict[str, Link] = {}
    for link in cluster.links:  # breakout legs share one physical cable
        cable_ids.setdefault(link.cable_id, link)
    cables: Counter[tuple[str, int]] = Counter()
    optics: Counter[tuple[str, int, str, int]] = Counter()
    for x in cable_ids.values():
        trunk = trunk_by.get(x.trunk_id)
        item = f"{x.media} {trunk.cord} patch cord" if trunk else f"{x.media} {x.speed}G"
        cables[(item, x.length_m)] += 1
        if x.media in OPTICAL:
            optics[(x.media, x.speed, x.optic, x.reach_m)] += 1 if trunk else 2
    cassettes: Counter[str] = Counter()
    for t in cluster.trunks:
        cables[(f"{t.media} {t.connector or 'MPO'} trunk", t.length_m)] += 1
        cassettes[f"{t.media} {t.connector or 'MPO'} to {t.lanes} x {t.cord or '?'}"] += 1
        optics[(t.media, t.speed, t.optic, t.reach_m)] += 1
    for (item, length), n in cables.items():
        yield ("cable", item, f"{length} m", n, "", "")
    for item, n in cassettes.items():
        yield ("cassette", f"breakout cassette {item}", "", n, "", "")
    for (media, speed, optic, reach), n in optics.items():
        name = f"{optic} ({media}, {reach} m)" if optic else f"{speed}G {media}"
        yield ("optic", f"{name} transceiver", "", n, "", "")


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
