"""What changes in the physical and logical build between two pipeline results.

Pure functions over two `pipeline.Result`s (clusters plus rendered files); `wanka diff` only
prints. The changes the clusters show are generator.analysis.changes' (the design review's
growth cost counts them too); this module adds the rendered switch configurations and the
Markdown. Switch configuration changes are counted as lines added and removed
(multiset difference of the rendered .cfg lines, so moved lines do not count).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from generator.analysis.changes import disturbances, model_report, plan
from generator.render import render


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
