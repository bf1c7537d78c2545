"""`wanka twin prove FOLDER --since PREVIOUS`: re-prove only the shards that a grown (or
otherwise changed) output touches, against the green proof of PREVIOUS recorded on this machine.

The record. Every `twin prove` that exits 0 writes one JSON file under the twin's state folder
(proofs/<digest>.json, the digest of the folder's files, and proofs/by-path/<digest of the
folder's path> naming the latest for that path): per namespace a digest of what the twin runs in
it (kind, `ip` lines, frr.conf, daemons, nftables ruleset, sysctls, and its cable ends, without
cabling.csv's line numbers and cable ids, which a grown output renumbers), and per BGP device
the routes its FRR had as best (what a boundary speaker standing in for it announces).

PREVIOUS is a folder proved earlier: its files' digest names its record; when PREVIOUS is FOLDER
itself (generated again in place), the latest proof recorded for that path is taken. A shard of
FOLDER is touched when one of its namespaces or of the hosts cabled to it is new or differs from
the record: only those run (to their own fixpoint), their boundaries fed by the record's routes
where a neighbour is not run again. An untouched shard's namespaces all ran in the recorded green
proof with the same configs: it is carried, and said so, with how many prefixes its boundary
would now announce that it did not when it was proved (a grown pod's new subnets reach every
pod through the cores; the configs that carry them there are unchanged, not re-run)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from generator.twin import instance, shard
from generator.twin.plan import Plan

VERSION = 1


class NoRecord(ValueError):
    """PREVIOUS has no green proof recorded on this machine."""


def proofs() -> Path:
    return instance.BASE / "proofs"


def folder_digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        h.update(str(path.relative_to(folder)).encode() + b"\0")
        h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def _path_key(folder: Path) -> str:
    return hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:32]


def namespace_digests(p: Plan) -> dict[str, str]:
    ends: dict[str, list] = {}
    for link in p.links:
        for near, far in ((link.a, link.b), (link.b, link.a)):
            ends.setdefault(near[0], []).append([near[1], far[0], far[1], link.plane])
    out = {}
    for name, ns in p.namespaces.items():
        what = [ns.kind, ns.commands, ns.frr, list(ns.daemons), ns.nft,
                sorted(ns.sysctls.items()), sorted(ends.get(name, []))]  # fmt: skip
        out[name] = hashlib.sha256(json.dumps(what).encode()).hexdigest()[:24]
    return out


def write(folder: Path, digests: dict[str, str], routes: dict[str, list[shard.Route]]) -> Path:
    """The record of a green proof of `folder` (atomically), and the path's pointer to it;
    `digests`: namespace_digests of its plan."""
    digest = folder_digest(folder)
    record = {
        "version": VERSION,
        "folder": str(folder.resolve()),
        "namespaces": digests,
        "routes": {
            d: [[r.prefix, r.path, r.origin] for r in rs] for d, rs in sorted(routes.items())
        },
    }
    target = proofs() / f"{digest}.json"
    _atomic(target, json.dumps(record, sort_keys=True) + "\n")
    _atomic(proofs() / "by-path" / _path_key(folder), digest + "\n")
    return target


def _atomic(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def read(previous: Path, folder: Path) -> dict:
    """The record PREVIOUS names (module docstring), NoRecord when none."""
    previous = previous.resolve()
    if not previous.is_dir():
        raise NoRecord(f"--since {previous}: not a folder")
    digest = folder_digest(previous)
    target = proofs() / f"{digest}.json"
    if not target.is_file() and previous == folder.resolve():
        pointer = proofs() / "by-path" / _path_key(previous)
        if pointer.is_file():
            target = proofs() / f"{pointer.read_text().strip()}.json"
    if not target.is_file():
        raise NoRecord(f"--since {previous}: no green `wanka twin prove` of this folder is "
                       f"recorded on this machine (under {proofs()}); prove it first, without "
                       "--since")  # fmt: skip
    record = json.loads(target.read_text(encoding="utf-8"))
    if record.get("version") != VERSION:
        raise NoRecord(f"--since {previous}: its record {target} is of another wanka version; "
                       "prove it again without --since")  # fmt: skip
    return record


def routes_of(record: dict) -> dict[str, list[shard.Route]]:
    return {d: [shard.Route(*r) for r in rs] for d, rs in record["routes"].items()}


def touched(p: Plan, lay: shard.Layout, record: dict, now: dict[str, str]) -> dict[int, list[str]]:
    """Shard number -> its namespaces (and attached hosts) new or changed since the record
    (`now`: namespace_digests of `p`)."""
    then = record["namespaces"]
    out = {}
    for s in lay.shards:
        names = sorted(s.interior | shard.attached(p, s.interior))
        changed = [n for n in names if then.get(n) != now[n]]
        if changed:
            out[s.number] = changed
    return out
