"""Cross-field refusals for values that are well-formed but would be wrong where they land.

- Address pools are private unicast ranges: a loopback, multicast, link-local, reserved or
  public pool would give switches and hosts addresses that cannot work (or collide with the
  Internet). Private here is RFC 1918 (10/8, 172.16/12, 192.168/16) or the RFC 6598 shared
  range 100.64/10 that data centres use for fabrics.
- Mount points are absolute, normalised paths (no `.`/`..` parts, no `//`, no trailing `/`),
  not `/` itself, and each file system is mounted at its own place, under its own name.
"""

from __future__ import annotations

import ipaddress
import posixpath
from collections.abc import Iterable, Mapping
from typing import Any

from generator.errors import Problem, YamlPath

PRIVATE_RANGES = tuple(
    ipaddress.IPv4Network(n)
    for n in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10")
)
_SPECIAL = (
    ("is_loopback", "a loopback range (127.0.0.0/8)"),
    ("is_multicast", "a multicast range (224.0.0.0/4)"),
    ("is_link_local", "the link-local range (169.254.0.0/16)"),
    ("is_unspecified", "the unspecified address range (0.0.0.0)"),
    ("is_reserved", "a reserved range (240.0.0.0/4)"),
)
_FILESYSTEMS = ("zones", "storage", "filesystems")


def pool_kind_problems(pools: Iterable[tuple[YamlPath, Any]]) -> list[Problem]:
    """Every pool (path, value) that parses as a network is inside a private unicast range."""
    problems = []
    for path, value in pools:
        try:
            network = ipaddress.IPv4Network(value)
        except (ValueError, TypeError):
            continue  # pool_problems reports it
        what = next((words for attr, words in _SPECIAL if getattr(network, attr)), None)
        if what is None and any(network.subnet_of(r) for r in PRIVATE_RANGES):
            continue
        problems.append(
            Problem(
                path,
                f"{network} is {what or 'not inside a private range'}; "
                "a pool must be private unicast addresses",
                "use a range inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16 "
                "(or 100.64.0.0/10), e.g. 10.64.0.0/12",
            )
        )
    return problems


def mountpoint_problems(data: Mapping[str, Any]) -> list[Problem]:
    """Mount points are absolute, normalised, not `/`, and unique; names are unique."""
    problems = []
    seen: dict[str, dict[str, int]] = {"mountpoint": {}, "name": {}}
    for index, fs in enumerate(data["zones"]["storage"]["filesystems"]):
        path = (*_FILESYSTEMS, index, "mountpoint")
        mount = fs["mountpoint"]
        normal = posixpath.normpath(mount).replace("//", "/")
        if mount == "/" or normal == "/":
            problems.append(
                Problem(path, f"{mount!r} would mount over the root file system", "e.g. /data")
            )
        elif mount != normal or ".." in mount.split("/") or "." in mount.split("/"):
            problems.append(
                Problem(
                    path,
                    f"{mount!r} is not a normalised absolute path",
                    f"write {normal!r}" if ".." not in mount.split("/") else "remove '..' parts",
                )
            )
        for key in ("mountpoint", "name"):
            value = fs[key]
            if value in seen[key]:
                first = seen[key][value]
                problems.append(
                    Problem(
                        (*_FILESYSTEMS, index, key),
                        f"{key} {value!r} is also given by filesystems[{first}]",
                        "each file system needs its own name and mount point",
                    )
                )
            else:
                seen[key][value] = index
    return problems
