"""What changes in the physical and logical build between two pipeline results.

Pure functions over two `pipeline.Result`s (clusters plus rendered files); `wanka diff` only
prints. Cables are matched by their endpoints, not by cable id (ids are renumbered when racks
are added): a cable only on one side that shares one end with a cable only on the other side is
reported as re-patched. Switch configuration changes are counted as lines added and removed
(multiset difference of the rendered .cfg lines, so moved lines do not count).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from generator.analysis.materials import ip_entries
from generator.expand.growth import prefix
from generator.model import Cluster, Growth, Link, ip
from generator.render import render

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


def configs(old_files, new_files) -> list[dict[str, Any]]:
    """Per switch: lines added and removed in files/switches/<name>.cfg."""

    def cfgs(files) -> dict[str, bytes]:
        return {
            f.path.removeprefix("files/switches/").removesuffix(".cfg"): f.data
            for f in files
            if f.path.startswith("files/switches/") and f.path.endswith(".cfg")
        }

    a, b = cfgs(old_files), cfgs(new_files)
    out = []
    for name in sorted(a.keys() | b.keys()):
        x, y = a.get(name, b""), b.get(name, b"")
        if x == y:
            continue
        ca, cb = Counter(x.decode().splitlines()), Counter(y.decode().splitlines())
        status = "added" if name not in a else "removed" if name not in b else "changed"
        out.append(
            {
                "switch": name,
                "status": status,
                "added": sum((cb - ca).values()),
                "removed": sum((ca - cb).values()),
            }
        )
    return out


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
        add(
            "device moved" if (o["rack"], o["u"]) != (n["rack"], n["u"]) else "device changed",
            x["name"],
            f"{o['model']} {o['rack']} U{o['u']}",
            f"{n['model']} {n['rack']} U{n['u']}",
        )
    for x in d["removed"]:
        add("device removed", x["name"], f"{x['model']} {x['rack']} U{x['u']}", "-")
    for x in c["repatched"]:
        o, n = x["old"], x["new"]
        add("cable re-patched", n["cable_id"], f"{o['a']} - {o['b']}", f"{n['a']} - {n['b']}")
    for x in c["changed"]:
        o, n = x["old"], x["new"]
        add(
            "cable changed",
            f"{o['a']} - {o['b']}",
            f"{o['speed']}G {o['media']} {o['length_m']} m",
            f"{n['speed']}G {n['media']} {n['length_m']} m",
        )
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
            add(
                "switch config changed",
                x["switch"],
                f"{x['removed']:,} lines removed",
                f"{x['added']:,} lines added",
            )
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


def compare(old, new) -> dict[str, Any]:
    """Everything that differs between two pipeline Results, as plain data (JSON-ready), with
    the changes to installed gear listed under `disturbances` and, when they come from growing
    past the old plan, the plan that would have avoided them under `plan`."""
    report = {
        "old": old.cluster.name,
        "new": new.cluster.name,
        **model_report(old.cluster, new.cluster),
        "configs": configs(old.files, new.files),
    }
    report["disturbances"] = disturbances(report)
    report["plan"] = plan(old.cluster, new.cluster) if report["disturbances"] else None
    return report


def changed(report: dict[str, Any]) -> bool:
    r = report
    return bool(
        any(r["devices"].values())
        or any(r["cables"].values())
        or any(r["addresses"].values())
        or r["asns"]
        or r["ranks"]["moved"]
        or r["ranks"]["old"] != r["ranks"]["new"]
        or r["configs"]
    )


LIMIT = 50  # rows listed per table in Markdown (counts are always complete)


def _table(head: list[str], body: list[list[Any]], title: str = "") -> dict[str, Any]:
    """A Markdown table's data: at most LIMIT rows, and how many more there are."""
    more = len(body) - LIMIT
    return {
        "title": title,
        "count": f"{len(body):,}",
        "head": head,
        "rows": body[:LIMIT],
        "more": f"{more:,}" if more > 0 else "",
    }


def markdown(report: dict[str, Any]) -> str:
    """The report for a pull request or a change ticket (templates/diff/diff.md.j2)."""
    r = report
    if not changed(r):
        return render("diff/diff.md.j2", changed=False)
    d, c, a = r["devices"], r["cables"], r["addresses"]
    k = r["ranks"]
    dist = r["disturbances"]
    kinds = Counter(x["kind"] for x in dist)
    plan = None
    if p := r.get("plan"):
        plan = {
            "cards": p["cards"],
            "moved": f"{p['disturbances'].get('device moved', 0):,}",
            "left": f"{sum(p['disturbances'].values()):,}",
            "all": not sum(p["disturbances"].values()),
        }
    status = Counter(x["status"] for x in r["configs"])
    counts = {
        "devices_added": len(d["added"]),
        "devices_removed": len(d["removed"]),
        "devices_changed": len(d["changed"]),
        "cables_added": len(c["added"]),
        "cables_removed": len(c["removed"]),
        "cables_repatched": len(c["repatched"]),
        "cables_changed": len(c["changed"]),
        "addresses_added": len(a["added"]),
        "addresses_removed": len(a["removed"]),
        "addresses_changed": len(a["changed"]),
        "asns": len(r["asns"]),
        "ranks_added": max(0, k["new"] - k["old"]),
        "ranks_removed": max(0, k["old"] - k["new"]),
        "ranks_moved": len(k["moved"]),
        "configs_added": status["added"],
        "configs_removed": status["removed"],
        "configs_changed": status["changed"],
    }
    dev = ["name", "role", "plane", "model", "rack", "U"]
    fields = ("name", "role", "plane", "model", "rack", "u")
    cab = ["cable", "plane", "a end", "b end", "speed", "media", "length m"]

    def cables(xs: list[dict[str, Any]]) -> list[list[Any]]:
        return [
            [x["cable_id"], x["plane"], x["a"], x["b"], f"{x['speed']}G", x["media"], x["length_m"]]
            for x in xs
        ]

    def kit(x: dict[str, Any]) -> str:
        return f"{x['speed']}G {x['media']} {x['length_m']} m"

    adr = ["device", "port", "plane", "address"]
    sections = [
        _table(dev, [[x[h] for h in fields] for x in d["added"]], "Devices added"),
        _table(dev, [[x[h] for h in fields] for x in d["removed"]], "Devices removed"),
        _table(
            ["name", "old", "new"],
            [
                [
                    x["name"],
                    f"{x['old']['model']} {x['old']['rack']} U{x['old']['u']}",
                    f"{x['new']['model']} {x['new']['rack']} U{x['new']['u']}",
                ]
                for x in d["changed"]
            ],
            "Devices changed",
        ),
        _table(cab, cables(c["added"]), "Cables added"),
        _table(cab, cables(c["removed"]), "Cables removed"),
        _table(
            ["cable", "old ends", "new ends"],
            [
                [
                    x["new"]["cable_id"],
                    f"{x['old']['a']} - {x['old']['b']}",
                    f"{x['new']['a']} - {x['new']['b']}",
                ]
                for x in c["repatched"]
            ],
            "Cables re-patched",
        ),
        _table(
            ["ends", "old", "new"],
            [
                [f"{x['old']['a']} - {x['old']['b']}", kit(x["old"]), kit(x["new"])]
                for x in c["changed"]
            ],
            "Cables changed",
        ),
        _table(
            adr,
            [[x["device"], x["port"], x["plane"], x["address"]] for x in a["added"]],
            "Addresses added",
        ),
        _table(
            adr,
            [[x["device"], x["port"], x["plane"], x["address"]] for x in a["removed"]],
            "Addresses removed",
        ),
        _table(
            ["device", "port", "plane", "old", "new"],
            [[x["device"], x["port"], x["plane"], x["old"], x["new"]] for x in a["changed"]],
            "Addresses changed",
        ),
        _table(
            ["device", "old", "new"],
            [[x["device"], x["old"] or "-", x["new"] or "-"] for x in r["asns"]],
            "ASNs changed",
        ),
        _table(
            ["server", "device", "old rank", "new rank"],
            [[x["server"], x["device_id"], x["old"], x["new"]] for x in k["moved"]],
            "Ranks moved",
        ),
        _table(
            ["switch", "status", "lines added", "lines removed"],
            [[x["switch"], x["status"], x["added"], x["removed"]] for x in r["configs"]],
            "Switch configurations",
        ),
    ]
    listed = [[x["kind"], x["item"], x["old"], x["new"]] for x in dist]
    return render(
        "diff/diff.md.j2",
        changed=True,
        disturbances=f"{len(dist):,}",
        kinds=[f"{n:,} {kind}" for kind, n in sorted(kinds.items())],
        plan=plan,
        listed=_table(["kind", "what", "old", "new"], listed) if listed else None,
        n={key: f"{v:,}" for key, v in counts.items()},
        sections=[t for t in sections if t["rows"]],
    )
