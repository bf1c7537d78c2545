"""The rendered folder as the twin reads it: only what wanka writes.

Every file is read through verify's guarded reader (no link, no FIFO, bounded), and a name read
from a file becomes a namespace, interface, file or FRR name only when it matches its pattern;
anything else is Refused, located at its file and line, before anything is made.
"""

from __future__ import annotations

import csv
import io
import ipaddress
import os
import re
import stat
import zlib
from pathlib import Path

from generator.output import MARKER, MARKER_TEXT
from generator.twin import vrp
from generator.verify import safe
from generator.verify.report import NotAnOutput
from generator.vocab import Plane


class Refused(NotAnOutput):
    """What the twin will not run as root: a folder wanka did not write, a name or value that
    is not what wanka writes, a build over the bounds of one run, an instance in use. The
    message is located (file:line where there is one); the CLI prints it and exits 2."""


# --- names from the folder ---------------------------------------------------------------
# A name read from a file becomes a namespace, interface, file or FRR name only when it matches
# its pattern: no white space, quote, slash or dot-dot can reach `ip -batch`, nft, FRR or a path.
# Device and host names: the blueprint's hostname pattern (lower-case letters, digits, "." and
# "-"), at most 63 (a DNS label; it also keeps FRR's socket paths under 108 bytes, unix(7)).
NAMES = {
    "device": re.compile(r"[a-z0-9](?:[a-z0-9.-]{0,61}[a-z0-9])?"),
    "port": re.compile(r"[A-Za-z0-9][A-Za-z0-9/:._-]{0,47}"),  # 400GE1/0/1:2, MEth0/0/0, npu0, bmc
    "VPN instance": re.compile(r"[A-Za-z0-9_][A-Za-z0-9_-]{0,30}"),  # VRP: 1-31 characters
    "cable": re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}"),
    "policy rule": re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}"),
    "zone": re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}"),
    "OSPF area": re.compile(r"\d{1,10}|\d{1,3}(?:\.\d{1,3}){3}"),
}
IFNAME = re.compile(r"[a-z0-9_.-]{1,15}")  # IFNAMSIZ 16 with its NUL (linux/if.h)


def checked(kind: str, value, where: str) -> str:
    """`value` when it is a `kind` name as wanka writes it; Refused, located, otherwise."""
    if isinstance(value, str) and NAMES[kind].fullmatch(value):
        return value
    raise Refused(f"{where}: '{value}' is not a {kind} name wanka writes")


def address(value, where: str, kind=ipaddress.IPv4Address):
    """An IPv4 address (interface, network) read from a file, or Refused where it is."""
    try:
        if not isinstance(value, str) or value != value.strip():
            raise ValueError
        return kind(value)
    except ValueError:
        name = {ipaddress.IPv4Address: "an IPv4 address", ipaddress.IPv4Network: "an IPv4 network",
                ipaddress.IPv4Interface: "an IPv4 address/prefix"}[kind]  # fmt: skip
        raise Refused(f"{where}: '{value}' is not {name}") from None


def ifname(port: str) -> str:
    """A port name as a Linux interface name (15 characters at most): 400GE1/0/1:2 -> 400ge1-0-1_2,
    GigabitEthernet0/0/0 -> gi0-0-0, Vlanif50 -> vlan50; longer names get a checksum."""
    name = (
        port.replace("GigabitEthernet", "gi").replace("Vlanif", "vlan").replace("Eth-Trunk", "et")
    )
    name = name.lower().replace("/", "-").replace(":", "_")
    if len(name) > 15:
        name = f"p{zlib.crc32(port.encode()):08x}"
    return name


CABLING = "files/cabling.csv"
CABLE_COLUMNS = ("cable_id", "plane", "a_device", "a_port", "b_device", "b_port")
PLANES = frozenset(Plane)


def table(
    folder: Path, where: str, columns: tuple[str, ...], limit: int | None = None
) -> list[tuple[int, dict[str, str]]]:
    """The rows of a CSV file of the folder (guarded reader), each with its line number; Refused
    at the header when a column wanka writes is missing, at a row that has not as many fields as
    the header."""
    text = safe.file_text(folder, folder / where, limit)
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader, [])
        if missing := [c for c in columns if c not in header]:
            raise Refused(
                f"{where}:1: no column {', '.join(missing)} (wanka writes "
                f"{', '.join(columns)}): renamed, or not a file wanka wrote"
            )
        rows, start = [], reader.line_num + 1
        for values in reader:
            if len(values) != len(header):
                raise Refused(
                    f"{where}:{start}: {len(values)} fields, the header has {len(header)}"
                )
            rows.append((start, dict(zip(header, values, strict=True))))
            start = reader.line_num + 1
    except csv.Error as error:
        raise Refused(f"{where}:{reader.line_num}: not CSV as wanka writes it: {error}") from None
    return rows


def cabling(folder: Path, devices: int = 0) -> list[tuple[int, dict[str, str]]]:
    """files/cabling.csv's rows (line, row), every name checked; of at most verify's bytes per
    device (safe.CABLE_BYTES_PER_DEVICE) when the number of `devices` is given."""
    limit = safe.CABLE_BYTES_PER_DEVICE * devices if devices else None
    rows = table(folder, CABLING, CABLE_COLUMNS, limit)
    for line, row in rows:
        where = f"{CABLING}:{line}"
        checked("cable", row["cable_id"], where)
        if row["plane"] not in PLANES:
            raise Refused(f"{where}: '{row['plane']}' is not a plane wanka writes")
        for side in "ab":
            checked("device", row[f"{side}_device"], where)
            checked("port", row[f"{side}_port"], where)
    return rows


def _head(path: Path, size: int) -> bytes:
    """The first `size` bytes of a regular file, never a link: the marker lists every file
    written (2.1 MB at 102,400 cards, over any limit a whole read would take), only its start
    tells who wrote the folder."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return b""
    try:
        return os.read(fd, size) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
    finally:
        os.close(fd)


def wanka_output(folder: Path) -> None:
    """Refused unless `folder` is one wanka wrote, as verify tells it: its marker file (written by
    generator.output, starting with MARKER_TEXT) and the files every output has, each a regular
    file (a symbolic link is not followed); a path with a control character is refused (it
    would reach the report and the terminal)."""
    if any(ord(c) < 32 or ord(c) == 127 for c in str(folder)):
        raise Refused(f"'{folder!s}': a folder name with a control character")
    needed = (MARKER, "hosts.yml", "group_vars/all.yml", CABLING)
    try:
        ours = all(safe.is_file(folder, n) for n in needed) and _head(
            folder / MARKER, len(MARKER_TEXT)
        ).startswith(MARKER_TEXT)
    except NotAnOutput as error:
        raise Refused(f"{folder} is not a wanka output folder: {error}") from None
    if not ours:
        raise Refused(f"{folder} is not a wanka output folder (needs {', '.join(needed)})")


_SECTION = re.compile(r"\s*section\s+\S+\s+(\S+)\s+(\S+)")
MAX_POOL = 65536  # addresses in one USG NAT address group's sections (a /16)


def configs(folder: Path, most: int) -> dict[str, vrp.Device]:
    """Every rendered configuration (vrp reads each through the guarded reader: no link, no
    FIFO, at most safe.MAX_CONFIG_BYTES), its file name a device name, `most` of them; every
    name the twin takes from a Device is then checked (`device_names`)."""
    paths = safe.listing(folder, "files/switches", ".cfg")
    paths += safe.listing(folder, "files/border", ".cfg")
    if len(paths) > most:
        raise Refused(f"{folder}: {len(paths)} configurations; one twin reads at most {most}")
    out: dict[str, vrp.Device] = {}
    for path in paths:
        where = safe.rel(folder, path)
        name = checked("device", path.name[:-4], where)
        if name in out:
            raise Refused(f"{where}: a second configuration of {name}")
        # a NAT pool's `section` is expanded address by address: bounded before it is read
        for n, line in enumerate(safe.file_text(folder, path).splitlines(), 1):
            if (m := _SECTION.match(line)) and _pool_size(m.groups()) > MAX_POOL:
                raise Refused(f"{where}:{n}: an address pool over {MAX_POOL} addresses")
        try:
            out[name] = vrp.device(folder, path)
        except NotAnOutput:
            raise
        except (ValueError, IndexError, KeyError, TypeError, AttributeError) as error:
            raise Refused(f"{where}: not a configuration as wanka writes it: {error}") from None
        device_names(out[name])
    return out


def _pool_size(ends: tuple[str, str]) -> int:
    try:
        first, last = (int(ipaddress.IPv4Address(e)) for e in ends)
    except ValueError:
        return 0  # not addresses: vrp refuses the line
    return last - first + 1


def device_names(dev: vrp.Device) -> None:
    """Every name of a device that becomes a namespace, interface, FRR or nftables word."""
    for iface in dev.interfaces.values():
        where = dev.where(iface.line)
        checked("port", iface.name, where)
        if iface.vpn:
            checked("VPN instance", iface.vpn, where)
    for route in dev.statics:
        if route.vpn:
            checked("VPN instance", route.vpn, dev.where(route.line))
    for rule in dev.policies + dev.nat:
        where = dev.where(rule.line)
        checked("policy rule", rule.name, where)
        for zone in rule.source_zones + rule.destination_zones:
            checked("zone", zone, where)
        if rule.nat and rule.nat != "easy-ip":
            checked("zone", rule.nat, where)
    for zone, members in dev.zones.items():
        checked("zone", zone, dev.path)
        for member in members:
            checked("port", member, dev.path)
    for group in dev.address_groups:
        checked("zone", group, dev.path)
    for proto in (dev.bgp, dev.ospf):
        if proto is not None and proto.router_id:
            address(proto.router_id, dev.where(proto.line))
    if dev.ospf:
        for silent in dev.ospf.silent:
            checked("port", silent, dev.where(dev.ospf.line))
        for _, area in dev.ospf.networks:
            checked("OSPF area", area, dev.where(dev.ospf.line))


IP_PLAN = "files/ip-plan.csv"


def host_names(folder: Path, hostvars: dict[str, dict]) -> None:
    """Refused at the line of hosts.yml that names a host whose name is not a device name."""
    for host in hostvars:
        if not NAMES["device"].fullmatch(host):
            text = safe.file_text(folder, folder / "hosts.yml").splitlines()
            n = next((i for i, t in enumerate(text, 1) if host in t), 0)  # a range: its line
            checked("device", host, f"hosts.yml:{n}" if n else "hosts.yml")
