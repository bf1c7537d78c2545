"""What the twin's caches of role runs share (generator.twin.hosts: the host_network keyfiles,
whole and per host; generator.twin.ztp: the ztp_server role's files): an entry is the output of
one run, named by the SHA-256 of every byte that run reads, written whole or not at all, the least
recently used dropped beyond a count. A changed byte is a new key, so an entry is never stale."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from generator.verify.inventory import expand_hosts


def keep(cache: Path, key: str, fill: Callable[[Path], None], entries: int) -> None:
    """A role run's output into `cache` as entry `key`, written by `fill` (given the entry's
    folder, which it creates), whole or not at all (renamed into place); then drop the least
    recently used entries beyond `entries`."""
    cache.mkdir(parents=True, exist_ok=True, mode=0o700)
    partial = cache / f".{key}.{os.getpid()}"
    shutil.rmtree(partial, ignore_errors=True)
    fill(partial)
    try:
        partial.rename(cache / key)
    except OSError:  # another instance cached the same output first
        shutil.rmtree(partial, ignore_errors=True)
    used = {}
    for entry in cache.iterdir():
        try:
            if not entry.name.startswith("."):
                used[entry] = entry.stat().st_mtime
        except OSError:  # pruned meanwhile by another instance
            continue
    for old in sorted(used, key=used.__getitem__, reverse=True)[entries:]:
        shutil.rmtree(old, ignore_errors=True)


def take(cache: Path, key: str, into: Path) -> bool:
    """Entry `key` copied to `into` (replaced) and marked used; False when it is not cached (or
    was pruned meanwhile by another instance), `into` then absent."""
    shutil.rmtree(into, ignore_errors=True)
    try:
        shutil.copytree(cache / key, into, symlinks=True)
        os.utime(cache / key)
        return True
    except OSError:
        shutil.rmtree(into, ignore_errors=True)
        return False


def digest_tree(digest, base: Path) -> None:
    """Every file under `base` (but Python bytecode) into `digest`: its path from base's parent
    and its bytes, in path order."""
    for path in sorted(p for p in base.rglob("*") if p.is_file() and p.suffix != ".pyc"):
        digest.update(f"{path.relative_to(base.parent)}\0".encode())
        digest.update(path.read_bytes())


def host_view(inventory: dict, host: str) -> str:
    """What an inventory (hosts.yml, as read) says of one host: the groups it is in, from `all`
    down, with their `vars`, and its own line's variables; every other host and every group
    without it left out. Canonical JSON (the same view, the same text)."""

    def group(data) -> dict | None:
        data = data if isinstance(data, dict) else {}
        out: dict = {}
        mine = [  # the variables of each line naming it, in order (a later line wins)
            hv for line, hv in (data.get("hosts") or {}).items() if host in expand_hosts(str(line))
        ]
        if mine:
            out["hosts"] = {host: mine}
        children = {
            name: view
            for name, sub in (data.get("children") or {}).items()
            if (view := group(sub)) is not None
        }
        if children:
            out["children"] = children
        if not out:
            return None
        if data.get("vars"):
            out["vars"] = data["vars"]
        return out

    groups = {
        name: view for name, data in (inventory or {}).items() if (view := group(data)) is not None
    }
    return json.dumps(groups, sort_keys=True, default=str)
