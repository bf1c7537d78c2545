"""What changes between two clusters (no rendered files): devices, cables, addresses, ASNs and
ranks, and which of them disturb installed gear. The design review's growth cost
(generator.analysis.growth_cost) counts these; `wanka diff` (generator.diff) adds the switch
configurations' line changes and prints them. Cables are matched by their endpoints, not by
cable id (ids are renumbered when racks are added): a cable only on one side that shares one end
with a cable only on the other side is reported as re-patched.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from generator.analysis.materials import ip_entries
from generator.expand.growth import prefix
from generator.model import Cluster, Growth, Link, ip

End = tuple[str, str]  # (device, port)


def _ends(link: Link) -> tuple[End, End]:
    return (link.a_device, link.a_port), (link.b_device, link.b_port)


def _cable(link: Link) -> dict[str, Any]:
    return {
        "cable_id": link.cable_id,
        "plane": link.plane,
        "a": f"{link.a_device}:{link.a_port}",
        "b": f"{link.b_device}:{link.b_port}",
        "speed": link.speed,
        "media": link.media,
        "length_m": link.length_m,
    }


def cables(old: Cluster, new: Cluster) -> dict[str, list]:
    before = {_ends(x): x for x in old.links}
    after = {_ends(x): x for x in new.links}
    gone = [before[k] for k in sorted(before.keys() - after.keys())]
    came = [after[k] for k in sorted(after.keys() - before.keys())]
    changed = [
        {"old": _cable(before[k]), "new": _cable(after[k])}
        for k in sorted(before.keys() & after.keys())
        if (before[k].speed, before[k].media, before[k].length_m)
        != (after[k].speed, after[k].media, after[k].length_m)
    ]
    # re-patched: one end stays, the other moves
    came_by_end: dict[End, Link] = {}
    for x in came:
        for end in _ends(x):
            came_by_end.setdefault(end, x)
    repatched, used = [], set()
    removed = []
    for x in gone:
        partner = next(
            (
                came_by_end[e]
                for e in _ends(x)
                if e in came_by_end and id(came_by_end[e]) not in used
            ),
            None,
        )
        if partner is None:
            removed.append(_cable(x))
        else:
            used.add(id(partner))
            repatched.append({"old": _cable(x), "new": _cable(partner)})
    added = [_cable(x) for x in came if id(x) not in used]
    return {"added": added, "removed": removed, "repatched": repatched, "changed": changed}


def devices(old: Cluster, new: Cluster) -> dict[str, list]:
    a, b = old.device_by_name, new.device_by_name

    def row(d) -> dict[str, Any]:
        return {
            "name": d.name,
            "role": d.role,
            "plane": d.plane,
            "model": d.model,
            "rack": d.rack,
            "u": d.u,
        }

    moved = []
    for name in sorted(a.keys() & b.keys()):
        x, y = row(a[name]), row(b[name])
        if x != y:
            moved.append({"name": name, "old": x, "new": y})
    return {
        "added": [row(b[n]) for n in sorted(b.keys() - a.keys())],
        "removed": [row(a[n]) for n in sorted(a.keys() - b.keys())],
        "changed": moved,
    }


def _addresses(cluster: Cluster) -> dict[tuple[str, str, str], str]:
    return {
        (dev, port, plane): f"{ip(addr)}/{prefix}"
        for addr, prefix, _net, _gw, dev, port, plane in ip_entries(cluster)
    }


def addresses(old: Cluster, new: Cluster) -> dict[str, list]:
    a, b = _addresses(old), _addresses(new)

    def row(k, v) -> dict[str, str]:
        return {"device": k[0], "port": k[1], "plane": k[2], "address": v}

    return {
        "added": [row(k, b[k]) for k in sorted(b.keys() - a.keys())],
        "removed": [row(k, a[k]) for k in sorted(a.keys() - b.keys())],
        "changed": [
            {"device": k[0], "port": k[1], "plane": k[2], "old": a[k], "new": b[k]}
            for k in sorted(a.keys() & b.keys())
            if a[k] != b[k]
        ],
    }


def asns(old: Cluster, new: Cluster) -> list[dict[str, Any]]:
    a = {d.name: d.asn for d in old.devices if d.asn}
    b = {d.name: d.asn for d in new.devices if d.asn}
    return [
        {"device": n, "old": a.get(n, 0), "new": b.get(n, 0)}
        for n in sorted(a.keys() | b.keys())
        if a.get(n, 0) != b.get(n, 0)
    ]


def _ranks(cluster: Cluster) -> dict[tuple[str, int], int]:
    """(server, device id) -> rank id, as the model assigned it (the rank table's)."""
    return {(s.name, d.device_id): d.rank for s in cluster.npu_servers for d in s.devices}


def ranks(old: Cluster, new: Cluster) -> dict[str, Any]:
    """Rank-table changes: ranks added or removed, and devices whose rank moved."""
    a, b = _ranks(old), _ranks(new)
    moved = [
        {"server": k[0], "device_id": k[1], "old": a[k], "new": b[k]}
        for k in sorted(a.keys() & b.keys())
        if a[k] != b[k]
    ]
    return {"old": len(a), "new": len(b), "moved": moved}


def disturbances(report: dict[str, Any]) -> list[dict[str, str]]:
    """Changes to what is already installed, as opposed to additions: a device moved, changed
    or removed; a cable re-patched, changed or removed; an address, ASN or rank changed or
    removed; a switch whose configuration loses lines (only adding ports and peers is an
    addition). Each as {kind, item, old, new}."""
    r = report
    d, c, a = r["devices"], r["cables"], r["addresses"]
    out: list[dict[str, str]] = []

    def add(kind: str, item: str, old: Any, new: Any) -> None:
        out.append({"kind": kind, "item": item, "old": str(old), "new": str(new)})

    for x in d["changed"]:
        o, n = x["old"], x["new"]
        add("device moved" if (o["rack"], o["u"]) != (n["rack"], n["u"]) else "device changed",
            x["name"], f"{o['model']} {o['rack']} U{o['u']}", f"{n['model']} {n['rack']} U{n['u']}")  # fmt: skip
    for x in d["removed"]:
        add("device removed", x["name"], f"{x['model']} {x['rack']} U{x['u']}", "-")
    for x in c["repatched"]:
        o, n = x["old"], x["new"]
        add("cable re-patched", n["cable_id"], f"{o['a']} - {o['b']}", f"{n['a']} - {n['b']}")
    for x in c["changed"]:
        o, n = x["old"], x["new"]
        add("cable changed", f"{o['a']} - {o['b']}",
            f"{o['speed']}G {o['media']} {o['length_m']} m",
            f"{n['speed']}G {n['media']} {n['length_m']} m")  # fmt: skip
    for x in c["removed"]:
        add("cable removed", x["cable_id"], f"{x['a']} - {x['b']}", "-")
    for x in a["changed"]:
        add("address changed", f"{x['device']} {x['port']}", x["old"], x["new"])
    for x in a["removed"]:
        add("address removed", f"{x['device']} {x['port']}", x["address"], "-")
    for x in r["asns"]:
        if x["old"]:
            add("ASN changed", x["device"], x["old"], x["new"] or "-")
    for x in r["ranks"]["moved"]:
        add("rank changed", f"{x['server']} device {x['device_id']}", x["old"], x["new"])
    for x in r["configs"]:
        if x["status"] == "removed" or (x["status"] == "changed" and x["removed"]):
            add("switch config changed", x["switch"], f"{x['removed']:,} lines removed",
                f"{x['added']:,} lines added")  # fmt: skip
    return out


def model_report(old: Cluster, new: Cluster) -> dict[str, Any]:
    """The changes two clusters show without their rendered files (no switch configurations):
    what the design review's growth cost (generator.analysis.growth_cost) counts."""
    return {
        "devices": devices(old, new),
        "cables": cables(old, new),
        "addresses": addresses(old, new),
        "asns": asns(old, new),
        "ranks": ranks(old, new),
        "configs": [],
    }


def plan(old: Cluster, new: Cluster) -> dict[str, Any] | None:
    """The growth plan that would have made `old` -> `new` only additions: growth.cards at the
    new size, set in `old`'s blueprint. Its build is the part of `new` the old servers need
    (generator.expand.growth.prefix, what expand keeps under that plan), and the disturbances
    of growing from it are counted, not assumed. None unless `new` has more NPU servers than
    `old` and more than `old`'s plan."""
    now, then = len(old.npu_servers), len(new.npu_servers)
    if not now or then <= max(now, old.growth.planned_servers):
        return None
    size = max(then, new.growth.planned_servers)
    planned = prefix(new, now, Growth(size, now))
    kinds = Counter(x["kind"] for x in disturbances(model_report(planned, new)))
    return {"cards": size * new.cards_per_server, "disturbances": dict(sorted(kinds.items()))}
