"""Cross-field refusals for values that are well-formed but would be wrong where they land.

- Address pools are private unicast ranges: a loopback, multicast, link-local, reserved or
  public pool would give switches and hosts addresses that cannot work (or collide with the
  Internet). Private here is RFC 1918 (10/8, 172.16/12, 192.168/16) or the RFC 6598 shared
  range 100.64/10 that data centres use for fabrics. No two pools overlap, the provider's
  hand-off range included (overlap_problems).
- Mount points are absolute, normalised paths (no `.`/`..` parts, no `//`, no trailing `/`),
  not `/` itself, and each file system is mounted at its own place, under its own name.
- Host paths the roles mount over (zones.storage.filesystems mountpoints, roles/dpc_client) or
  delete under (acceptance.compile_cache.paths: a daily root `find PATH ... -delete`,
  roles/ops_checklist) are normalised too and are neither a system folder nor inside a system
  tree; a cache path is not a DPC mount or a folder holding one. The roles refuse the same paths
  (plugins/filter/wanka_mount_unit.py, plugins/modules/wanka_ops_checklist.py).
"""

from __future__ import annotations

import ipaddress
import posixpath
from collections.abc import Iterable, Mapping
from typing import Any

from generator.errors import Problem, YamlPath, format_path

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
_CACHES = ("acceptance", "compile_cache", "paths")
# The system's own trees, after the Filesystem Hierarchy Standard 3.0 ch. 3 (/bin /boot /dev
# /etc /lib<qual> /sbin /usr: programs, libraries, configuration, boot files, devices) and
# ch. 6.1 (Linux: /proc, /sys); /run holds runtime data (ch. 3.15). Nothing belongs under them.
SYSTEM_TREES = (
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32",
    "/proc", "/run", "/sbin", "/sys", "/usr",
)  # fmt: skip
# Folders that hold other people's data (FHS 3.0 ch. 3: /home /media /mnt /opt /root /srv /tmp;
# ch. 5: /var and its own folders): a path may lie under one, never be one.
SYSTEM_FOLDERS = (
    "/", "/home", "/media", "/mnt", "/opt", "/root", "/srv", "/tmp", "/var",
    "/var/cache", "/var/lib", "/var/local", "/var/log", "/var/mail", "/var/opt",
    "/var/spool", "/var/tmp",
)  # fmt: skip


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


def _normal_problem(path: YamlPath, value: str) -> Problem | None:
    """`value` is not an absolute path in normal form (`/x/../` and `/x/` alike)."""
    normal = posixpath.normpath(value).replace("//", "/")
    if value == normal and value.startswith("/"):
        return None
    parts = value.split("/")
    return Problem(
        path,
        f"{value!r} is not a normalised absolute path (it means {normal!r})",
        f"write {normal!r}" if ".." not in parts else "remove '..' parts and write the real path",
    )


def system_path(value: str) -> str | None:
    """Why the normalised path `value` is no place to mount over or delete under, or None."""
    if value in SYSTEM_FOLDERS:
        return "is a system folder" if value != "/" else "is the root file system"
    tree = next((t for t in SYSTEM_TREES if value == t or value.startswith(t + "/")), None)
    return f"is inside the system tree {tree}" if tree else None


def cache_path_problems(data: Mapping[str, Any]) -> list[Problem]:
    """Every compile-cache path is normalised, no system folder and no DPC mount or its parent:
    the cleanup timer deletes every old file under it on every NPU server, daily, as root."""
    mounts = [fs["mountpoint"] for fs in data["zones"]["storage"]["filesystems"]]
    hint = "give the cache's own folder, e.g. /root/atc_data or /var/cache/ascend"
    problems = []
    for index, value in enumerate(data["acceptance"]["compile_cache"]["paths"]):
        path = (*_CACHES, index)
        if (bad := _normal_problem(path, value)) is not None:
            problems.append(bad)
        elif why := system_path(value):
            problems.append(Problem(path, f"{value!r} {why}: the cleanup would delete it", hint))
        elif held := [m for m in mounts if m == value or m.startswith(value + "/")]:
            which = "is the DPC mount" if held[0] == value else "holds the DPC mount"
            problems.append(
                Problem(
                    path,
                    f"{value!r} {which} {held[0]} "
                    f"(zones.storage.filesystems[{mounts.index(held[0])}].mountpoint): "
                    "the cleanup would delete the file system's data",
                    hint,
                )
            )
    return problems


def mountpoint_problems(data: Mapping[str, Any]) -> list[Problem]:
    """Mount points are absolute, normalised, no system folder, and unique; names are unique."""
    problems = []
    seen: dict[str, dict[str, int]] = {"mountpoint": {}, "name": {}}
    for index, fs in enumerate(data["zones"]["storage"]["filesystems"]):
        path = (*_FILESYSTEMS, index, "mountpoint")
        mount = fs["mountpoint"]
        if (bad := _normal_problem(path, mount)) is not None:
            problems.append(bad)
        elif why := system_path(mount):
            hidden = "the root file system" if mount == "/" else "it"
            problems.append(
                Problem(path, f"{mount!r} {why}: mounting over {hidden} hides it", "e.g. /data")
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


PROVIDER: YamlPath = ("zones", "border", "provider")
NAT: YamlPath = ("zones", "border", "nat")
_OWN_RANGE = "give each plane its own address range"
_HANDOFF = "zones.border.provider holds the provider's addresses, outside every pool of the cluster"


def overlap_problems(pools: Iterable[tuple[YamlPath, Any]]) -> list[Problem]:
    """Every address pool is an IPv4 network without host bits, and no two overlap: the plane
    pools, the border pool, the provider hand-off (zones.border.provider: the routers' /31s)
    and the NAT pool when given. An overlap is reported at both pools, each naming the other,
    so the user sees the FILE:LINE:COL of each. The NAT pool may sit in the provider's upper
    half (where it is by default), never over its lower half, which holds the hand-offs."""
    problems, networks = [], []
    for path, text in pools:
        try:
            networks.append((path, ipaddress.IPv4Network(text)))
        except ValueError:
            problems.append(_bad_pool(path, text))
    for index, (path_a, a) in enumerate(networks):
        for path_b, b in networks[index + 1 :]:
            if (path_a, path_b) == (PROVIDER, NAT):
                problems += _nat_over_handoffs(a, b)
            elif a.overlaps(b):
                hint = _HANDOFF if PROVIDER in (path_a, path_b) else _OWN_RANGE
                problems += [
                    Problem(path_b, f"{b} overlaps {format_path(path_a)} {a}", hint),
                    Problem(path_a, f"{a} overlaps {format_path(path_b)} {b}", hint),
                ]
    return problems


def _nat_over_handoffs(
    provider: ipaddress.IPv4Network, nat: ipaddress.IPv4Network
) -> list[Problem]:
    """The NAT pool over the provider's lower half, where the routers' hand-off /31s are (the
    upper half is where the NAT pool is by default: expand/border.source_nat)."""
    lower = next(provider.subnets()) if provider.prefixlen < 32 else provider
    if not lower.overlaps(nat):
        return []
    hint = "put the NAT pool in the provider's upper half or outside the provider's range"
    return [
        Problem(NAT, f"{nat} overlaps {lower}, the hand-off half of zones.border.provider "
                f"{provider}", hint),
        Problem(PROVIDER, f"{provider}: its hand-off half {lower} overlaps zones.border.nat "
                f"{nat}", hint),
    ]  # fmt: skip


def _bad_pool(path: YamlPath, text: str) -> Problem:
    try:
        network = ipaddress.IPv4Network(text, strict=False)
    except ValueError:
        return Problem(path, f"{text} is not a valid IPv4 network", "e.g. 10.64.0.0/12")
    return Problem(path, f"{text} has host bits set", f"did you mean {network}?")
