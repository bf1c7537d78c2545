"""What the twin builds, decided from a rendered folder alone (no root needed to make a Plan).

One network namespace per device and one more per VPN instance of a device (this kernel has no
VRF device), NPU servers split into the host, its NPUs' NIC stack (each NPU NIC is its own
network stack on the card; here one namespace with a routing table per NIC, as `hccn_tool
-gateway` gives each NIC its own gateway) and its BMC. Every row of files/cabling.csv is a veth
pair. A VLAN is one Linux bridge per VLAN per switch (bridge VLAN filtering and 802.1Q devices do
not work on this kernel); an Eth-Trunk or a host bond is emulated by its first member only.
Routing: FRR (zebra, staticd, bgpd, ospfd) where the config runs BGP or OSPF; kernel routes
(metric = preference, routes over a dead link ignored) where it has only static routes.
"""

from __future__ import annotations

import configparser
import csv
import hashlib
import io
import ipaddress
import os
import re
import stat
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from generator.output import MARKER, MARKER_TEXT
from generator.twin import kernel, vrp
from generator.twin import pod as pods
from generator.verify import safe
from generator.verify.inventory import hosts as read_hosts
from generator.verify.report import NotAnOutput
from generator.vocab import NsKind, Plane

# host port names (the catalog's server ports): a server's NPU ports are npu0, npu1, ...
NPU_PORT, BMC_PORT = "npu", "bmc"  # vocabulary: host port
OUTSIDE = ipaddress.IPv4Address("198.18.0.1")  # "the internet", as verify names it (RFC 2544)


class Refused(NotAnOutput):
    """What the twin will not run as root: a folder wanka did not write, a name or value that
    is not what wanka writes, a build over the bounds of one run, an instance in use. The
    message is located (file:line where there is one); the CLI prints it and exits 2."""


# --- one run, one instance ---------------------------------------------------------------
# Every namespace, process, state folder and lock of a run carries its instance id, so that
# two runs on one machine (two CI jobs, a test and a user) never touch each other's. The id is
# WANKA_TWIN_INSTANCE, else derived from where the run is started (the working folder) and the
# CI job it runs in, so that `twin up` and `twin down` of one checkout meet, and two jobs (each
# in its own workspace, with its own job id) never do.
INSTANCE_PATTERN = re.compile(r"[a-z0-9]{1,12}")  # no "-": it ends the instance in a name
CI_JOB = ("GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT", "GITHUB_JOB", "RUNNER_NAME", "CI_JOB_ID",
          "BUILD_TAG", "EXECUTOR_NUMBER", "BUILDKITE_JOB_ID", "CIRCLE_WORKFLOW_JOB_ID")  # fmt: skip


def instance_id(env=os.environ) -> str:
    """This run's instance: WANKA_TWIN_INSTANCE as given (checked by `instance_error`), else
    8 hex digits of the working folder and the CI job variables that are set."""
    if given := env.get("WANKA_TWIN_INSTANCE"):
        return given
    try:
        here = os.getcwd()
    except OSError:
        here = "?"
    seed = "\0".join([here, *(f"{k}={env[k]}" for k in CI_JOB if k in env)])
    return hashlib.sha256(seed.encode("utf-8", "surrogateescape")).hexdigest()[:8]


INSTANCE = instance_id()
PREFIX = f"wt-{INSTANCE}-"  # every namespace of this instance starts with it


def instance_error() -> str:
    """Why INSTANCE cannot name a twin ("" when it can)."""
    if INSTANCE_PATTERN.fullmatch(INSTANCE):
        return ""
    return (f"WANKA_TWIN_INSTANCE='{INSTANCE}': an instance id is 1 to 12 lower-case letters "
            "and digits")  # fmt: skip


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


# --- bounds of one run ---------------------------------------------------------------------
# pod-128 makes 124 namespaces and 395 cables, cluster-1k about 600 and 2,500; a 10,240-card
# build 5,165 namespaces, which is run one pod at a time (--pod). A folder asking for more is
# refused before anything is made.
MAX_NAMESPACES = 4096
MAX_LINKS = 16384
MAX_DEVICES = 4096  # configurations in files/switches and files/border
# ... in a build read whole but run in shards (`twin prove`, `twin export`): a 102,400-card build
# has 6,188; each shard is bounded by the memory it may take (generator.twin.shard)
MAX_SHARDED = 16384
MAX_NICS = 64  # NPU NICs in one hccn.conf (8 on an Atlas 800T A2)
HCCN_BYTES = 64 * 1024  # an hccn.conf is 1-2 KB


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


def ns_name(device: str, part: str = "") -> str:
    return f"{PREFIX}{device}" + (f".{part.strip('_')}" if part else "")


def checked_ns_name(device: str, part: str = "") -> str:
    """ns_name of names given by a user (`twin exec`): Refused unless they are names."""
    checked("device", device, "device")
    if part:
        checked("VPN instance", part, "--part")
    return ns_name(device, part)


@dataclass(slots=True)
class Netns:
    name: str
    device: str
    kind: NsKind
    commands: list[str] = field(default_factory=list)  # `ip -batch` lines, run inside
    frr: str = ""  # frr.conf, when the namespace runs FRR
    daemons: tuple[str, ...] = ()
    nft: str = ""  # an nftables ruleset, when it filters
    sysctls: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Link:
    a: tuple[str, str]  # (namespace, interface)
    b: tuple[str, str]
    cable: str
    plane: str
    line: int  # in files/cabling.csv


@dataclass(slots=True)
class Plan:
    folder: Path
    pod: int = 0  # one pod of the parameter plane only (generator.twin.pod), 0: everything
    namespaces: dict[str, Netns] = field(default_factory=dict)
    links: list[Link] = field(default_factory=list)
    ports: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)  # (dev, port) ->
    addresses: dict[ipaddress.IPv4Address, tuple[str, str]] = field(
        default_factory=dict
    )  # -> ns, if
    devices: dict[str, vrp.Device] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what is emulated differently, and why
    hostvars: dict[str, dict] = field(default_factory=dict)
    groups: dict[str, set[str]] = field(default_factory=dict)
    bmc_gateways: dict[str, str] = field(default_factory=dict)
    hostlines: dict[str, tuple[str, dict[str, int]]] = field(default_factory=dict)  # host_vars
    hosts_done: bool = False  # the hosts' keyfiles are in (twin.bring_up)

    def ns(self, name: str, device: str, kind: str) -> Netns:
        if name not in self.namespaces:
            self.namespaces[name] = Netns(name, device, kind)
            self.namespaces[name].commands.append("link set lo up")
        return self.namespaces[name]

    def address(self, ns: Netns, address: ipaddress.IPv4Interface, dev: str) -> None:
        ns.commands.append(f"address add {address} dev {dev}")
        self.addresses.setdefault(address.ip, (ns.name, dev))


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


def configs(folder: Path, most: int = MAX_DEVICES) -> dict[str, vrp.Device]:
    """Every rendered configuration (vrp reads each through the guarded reader: no link, no
    FIFO, at most safe.MAX_CONFIG_BYTES), its file name a device name; every name the twin
    takes from a Device is then checked (`device_names`)."""
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


def _host_ns(plan: Plan, device: str, port: str) -> tuple[str, str]:
    if port.startswith(NPU_PORT):
        return ns_name(device, NsKind.NPU), NsKind.NPU
    if port == BMC_PORT:
        return ns_name(device, NsKind.BMC), NsKind.BMC
    return ns_name(device), NsKind.HOST


def plan(
    folder: Path,
    keyfiles: dict[str, dict[str, configparser.ConfigParser]],
    pod: int = 0,
    bounded: bool = True,
) -> Plan:
    """The twin of a rendered folder; `keyfiles` are the NetworkManager keyfiles host_network
    writes for each host (generator.twin.hosts renders them with the real role). `pod`: that pod
    of the parameter plane only, the rest stood in for at the cores (generator.twin.pod).
    `bounded`: refused over what one run on this machine makes (not for an export, whose
    runtime spreads it over several machines: generator.twin.clab)."""
    wanka_output(folder)
    p = Plan(folder, pod, devices=configs(folder, MAX_DEVICES if bounded else MAX_SHARDED))
    p.hostvars, p.groups, p.hostlines = read_hosts(folder)
    host_names(folder, p.hostvars)
    known = p.devices.keys() | p.hostvars.keys()
    rows = cabling(folder, len(known))
    for line, row in rows:
        for side in "ab":
            if row[f"{side}_device"] not in known:
                raise Refused(
                    f"{CABLING}:{line}: {row[side + '_device']} is neither a configured device "
                    "(files/switches, files/border) nor a host of hosts.yml"
                )
    if pod:
        keep, rows, count = pods.select(p.devices, p.groups, rows, pod)
        p.devices = {name: _public(dev) for name, dev in p.devices.items() if name in keep}
        p.notes.append(
            f"pod {pod} of {count}: its parameter leaves and spines, its NPU servers' NPU NICs "
            "and the cores cabled to it; each core announces the other pods' leaf subnets "
            "itself (a blackhole route), as it would pass them on from their spines; no other "
            "plane, no management VPN"
        )
    if bounded:
        _bound(p, rows)
    for dev in p.devices.values():
        _device(p, dev)
    first_member = _bond_members(p.hostvars)
    for line, row in rows:
        ends = []
        for side in "ab":
            device, port = row[f"{side}_device"], row[f"{side}_port"]
            if device in p.devices:
                iface = p.devices[device].interfaces.get(port)
                ns = ns_name(device, iface.vpn if iface else "")
            else:
                ns, kind = _host_ns(p, device, port)
                p.ns(ns, device, kind)
            ends.append((device, port, ns))
        if any(port in first_member.get(dev, ()) for dev, port, _ in ends):
            continue  # a bond's other members: the bond is emulated by its first member
        for device, port, ns in ends:
            p.ports[(device, port)] = (ns, ifname(port))
        (_da, pa, na), (_db, pb, nb) = ends
        p.links.append(
            Link(
                a=(na, ifname(pa)),
                b=(nb, ifname(pb)),
                cable=row["cable_id"],
                plane=row["plane"],
                line=line,
            )
        )
    for dev in p.devices.values():
        _ports(p, dev)
    for line, r in table(folder, IP_PLAN, ("device", "port", "gateway")):
        if r["port"] == BMC_PORT and r["gateway"]:
            where = f"{IP_PLAN}:{line}"
            p.bmc_gateways[checked("device", r["device"], where)] = str(
                address(r["gateway"], where)
            )
    p.notes.append("BMCs are addressed from files/ip-plan.csv (no generated file configures them)")
    _hosts(p, folder, keyfiles)
    _outside(p)
    for link in p.links:  # ifname keeps to IFNAMSIZ: a guard, not a limit a folder can reach
        for _, dev in (link.a, link.b):
            if not IFNAME.fullmatch(dev):
                raise Refused(f"{CABLING}:{link.line}: '{dev}' is not a Linux interface name")
    kernel.multicast_room(p)  # after every cable and bridge: sized from them
    p.notes.append(
        "host bonds and Eth-Trunks run on their first member only (no bond device on this "
        "kernel); an M-LAG peer-link carries the first VLAN over its first member, and both "
        "leaves answer for the gateway address, each with its own MAC: a Linux bridge drops "
        "frames that carry its own address, so the shared `mac-address` of M-LAG's "
        "active-active gateway is not set (measured on cluster-1k: with it, a leaf reached no "
        "host cabled to its peer)"
    )
    return p


IP_PLAN = "files/ip-plan.csv"


def host_names(folder: Path, hostvars: dict[str, dict]) -> None:
    """Refused at the line of hosts.yml that names a host whose name is not a device name."""
    for host in hostvars:
        if not NAMES["device"].fullmatch(host):
            text = safe.file_text(folder, folder / "hosts.yml").splitlines()
            n = next((i for i, t in enumerate(text, 1) if host in t), 0)  # a range: its line
            checked("device", host, f"hosts.yml:{n}" if n else "hosts.yml")


def _bound(p: Plan, rows: list[tuple[int, dict[str, str]]]) -> None:
    """Refused before anything is built when the folder asks for more than one run makes."""
    names = {ns_name(d.name, v) for d in p.devices.values() for v in d.vpns or [vrp.PUBLIC]}
    for _, row in rows:
        for side in "ab":
            device = row[f"{side}_device"]
            if device not in p.devices:
                names.add(ns_name(device, _host_part(row[f"{side}_port"])))
        if len(names) > MAX_NAMESPACES:
            break
    if len(names) > MAX_NAMESPACES or len(rows) > MAX_LINKS:
        raise Refused(
            f"{CABLING}: {len(rows):,} cables and {len(names):,}{'+' * (len(names) > MAX_NAMESPACES)}"
            f" namespaces: one twin makes at most {MAX_NAMESPACES:,} namespaces and "
            f"{MAX_LINKS:,} cables (a larger build runs one pod at a time: --pod N)"
        )


def _host_part(port: str) -> str:
    return NsKind.NPU if port.startswith(NPU_PORT) else NsKind.BMC if port == BMC_PORT else ""


def _bond_members(hostvars: dict[str, dict]) -> dict[str, set[str]]:
    """Host -> the bond members after the first (their cables are not emulated)."""
    out = {}
    for host, hv in hostvars.items():
        bond = hv.get("business_bond") or {}
        if len(bond.get("members") or []) > 1:
            out[host] = set(bond["members"][1:])
    return out


def _public(dev: vrp.Device) -> vrp.Device:
    """The device without its management VPN (a one-pod twin has no management plane)."""
    dev.interfaces = {k: i for k, i in dev.interfaces.items() if i.vpn == vrp.PUBLIC}
    dev.statics = [s for s in dev.statics if s.vpn == vrp.PUBLIC]
    return dev


def _device(p: Plan, dev: vrp.Device) -> None:
    router = NsKind.ROUTER if dev.path.startswith("files/border") else NsKind.SWITCH
    kind = NsKind.FIREWALL if dev.zones else router
    for vpn in dev.vpns or [vrp.PUBLIC]:
        ns = p.ns(ns_name(dev.name, vpn), dev.name, kind)
        ns.sysctls |= {
            "net.ipv4.ip_forward": "1",
            "net.ipv4.conf.all.ignore_routes_with_linkdown": "1",
        }
    for iface in dev.interfaces.values():
        ns = p.namespaces[ns_name(dev.name, iface.vpn)]
        if iface.name.startswith("LoopBack"):
            for a in iface.addresses:
                p.address(ns, a, "lo")
        elif iface.name.startswith("Vlanif"):
            bridge = ifname(iface.name)
            ns.commands += [f"link add {bridge} type bridge", f"link set {bridge} up"]
            for a in iface.addresses:
                p.address(ns, a, bridge)


def _ports(p: Plan, dev: vrp.Device) -> None:
    """Cabled ports: addresses, and access ports (or an Eth-Trunk's member) into their VLAN (a
    VLAN without a Vlanif gets its bridge here: the loop runs over the ports it started with); a
    port with `shutdown` is down ("The shutdown command shuts down an interface": CE6800
    V300R023C00 shutdown.json), so its cable carries nothing."""
    for iface in list(dev.interfaces.values()):
        if (dev.name, iface.name) not in p.ports:
            continue
        ns = p.namespaces[ns_name(dev.name, iface.vpn)]
        name = ifname(iface.name)
        trunk = dev.interfaces.get(f"Eth-Trunk{iface.trunk}") if iface.trunk is not None else None
        vlan = iface.access_vlan if iface.access_vlan is not None else (trunk and trunk.access_vlan)
        if vlan is not None and f"Vlanif{vlan}" not in dev.interfaces:
            ns.commands += [f"link add vlan{vlan} type bridge", f"link set vlan{vlan} up"]
            dev.interfaces[f"Vlanif{vlan}"] = vrp.Interface(f"Vlanif{vlan}", 0)
        if trunk is not None and trunk.peer_link and name == _first_member(p, dev, iface.trunk):
            bridges = sorted(i for i in dev.interfaces if i.startswith("Vlanif"))
            vlan = (
                int(bridges[0][6:]) if bridges else None
            )  # the first VLAN only: one veth, one bridge
        if vlan is not None:
            ns.commands.append(f"link set {name} master vlan{vlan}")
            if iface.isolate_group is not None:  # one group per switch: the bridge's isolated ports
                ns.commands.append(f"link set {name} type bridge_slave isolated on")
        for a in iface.addresses:
            p.address(ns, a, name)
        if iface.shutdown:  # after the cable ends come up (run.configure): the port stays down
            ns.commands.append(f"link set {name} down")


def _first_member(p: Plan, dev: vrp.Device, trunk: int) -> str:
    """The Eth-Trunk member that carries a peer-link in the twin (the others stay out of the
    bridge: two would make a loop, and this kernel has no bond)."""
    members = [
        i.name
        for i in dev.interfaces.values()
        if i.trunk == trunk and (dev.name, i.name) in p.ports
    ]
    return ifname(members[0]) if members else ""


def _hosts(
    p: Plan, folder: Path, keyfiles: dict[str, dict[str, configparser.ConfigParser]]
) -> None:
    for ns in list(p.namespaces.values()):
        hv = p.hostvars.get(ns.device, {})
        if ns.kind == NsKind.HOST:
            _keyfiles(p, ns, keyfiles.get(ns.device, {}))
        elif ns.kind == NsKind.NPU:
            _npus(p, ns, folder / "files" / "hccn" / f"{ns.device}.conf")
        elif ns.kind == NsKind.BMC and hv.get("bmc_address"):
            file, keys = p.hostlines.get(ns.device, ("hosts.yml", {}))
            where = f"{file}:{keys['bmc_address']}" if "bmc_address" in keys else file
            bmc = address(hv["bmc_address"], f"{where}: bmc_address", ipaddress.IPv4Interface)
            p.address(ns, bmc, BMC_PORT)  # the BMC namespace's interface is named as its port
            if gateway := p.bmc_gateways.get(ns.device):
                ns.commands.append(f"route add default via {gateway}")


def add_keyfiles(
    p: Plan, keyfiles: dict[str, dict[str, configparser.ConfigParser]]
) -> dict[str, list[str]]:
    """The hosts' keyfiles, into a plan made without them (the role was still running); return
    namespace -> the commands they added."""
    added = {}
    for ns in p.namespaces.values():
        if ns.kind == NsKind.HOST:
            before = len(ns.commands)
            _keyfiles(p, ns, keyfiles.get(ns.device, {}))
            added[ns.name] = ns.commands[before:]
    return added


def _npus(p: Plan, ns: Netns, path: Path) -> None:
    """An NPU server's NICs from its /etc/hccn.conf: address, netmask, gateway per NIC i, each NIC
    answering ARP only for its own address and routing from its own table (table 100 + i)."""
    where = safe.rel(p.folder, path)
    lines: dict[str, tuple[int, str]] = {}
    for n, line in enumerate(safe.file_text(p.folder, path, HCCN_BYTES).splitlines(), 1):
        if "=" in line:
            key, value = line.split("=", 1)
            lines[key] = (n, value)

    def value(key: str, kind=ipaddress.IPv4Address):
        n, text = lines[key]
        return address(text, f"{where}:{n}: {key}", kind)

    ns.sysctls |= {"net.ipv4.conf.all.arp_ignore": "1", "net.ipv4.conf.all.arp_announce": "2"}
    i = 0
    while f"address_{i}" in lines:
        if i >= MAX_NICS or f"netmask_{i}" not in lines:
            n = lines[f"address_{i}"][0]
            raise Refused(f"{where}:{n}: NIC {i}: " + (f"more than {MAX_NICS} NICs" if i >= MAX_NICS
                                                       else f"no netmask_{i}"))  # fmt: skip
        ip, mask = value(f"address_{i}"), value(f"netmask_{i}")
        nic = address(f"{ip}/{mask}", f"{where}:{lines[f'netmask_{i}'][0]}: netmask_{i}",
                      ipaddress.IPv4Interface)  # fmt: skip
        dev = f"npu{i}"
        p.address(ns, nic, dev)
        if lines.get(f"gateway_{i}", (0, ""))[1]:
            gw = value(f"gateway_{i}")
            ns.commands += [
                f"route add {nic.network} dev {dev} src {nic.ip} table {100 + i}",
                f"route add default via {gw} dev {dev} table {100 + i}",
                f"rule add from {nic.ip} table {100 + i} priority {100 + i}",
            ]
        i += 1


def _keyfiles(p: Plan, ns: Netns, files: dict[str, configparser.ConfigParser]) -> None:
    """What NetworkManager makes of the keyfiles host_network wrote: addresses, gateways (unless
    never-default), routes (in their table), routing rules; a bond on its first member."""
    members = {}
    for name, kf in files.items():
        where = f"keyfile {ns.device}/{name}.nmconnection (roles/host_network)"
        if kf.get("connection", "master", fallback=""):
            master = checked("port", kf["connection"]["master"], f"{where}: master")
            dev = checked("port", kf.get("connection", "interface-name", fallback=""),
                          f"{where}: interface-name")  # fmt: skip
            members.setdefault(master, dev)
    for name, kf in files.items():
        where = f"keyfile {ns.device}/{name}.nmconnection (roles/host_network)"
        if "ipv4" not in kf or kf["ipv4"].get("method") != "manual":
            continue
        dev = checked("port", kf.get("connection", "interface-name", fallback=""),
                      f"{where}: interface-name")  # fmt: skip
        dev = ifname(members.get(dev, dev))
        v4 = kf["ipv4"]
        for key in sorted(k for k in v4 if re.fullmatch(r"address\d+", k)):
            text, _, gw = v4[key].partition(",")
            p.address(ns, address(text, f"{where}: {key}", ipaddress.IPv4Interface), dev)
            if gw and v4.get("never-default", "false") != "true":
                ns.commands.append(
                    f"route add default via {address(gw, f'{where}: {key}')} dev {dev}"
                )
        for key in sorted(k for k in v4 if re.fullmatch(r"route\d+", k)):
            net, gw, *_ = [*v4[key].split(","), ""]
            net = address(net, f"{where}: {key}", ipaddress.IPv4Network)
            gw = address(gw, f"{where}: {key}")
            options = dict(
                o.partition("=")[::2] for o in v4.get(f"{key}_options", "").split(",") if o
            )
            table = (
                f" table {_number(options['table'], f'{where}: {key}_options')}"
                if "table" in options
                else ""
            )
            ns.commands.append(f"route add {net} via {gw} dev {dev}{table}")
        for key in sorted(k for k in v4 if re.fullmatch(r"routing-rule\d+", k)):
            ns.commands.append("rule add " + rule(v4[key], f"{where}: {key}"))


# NetworkManager's routing-rule syntax is `ip rule`'s (nm-settings-keyfile(5), ipv4.routing-rules):
# the words the role writes, each value checked for its kind; anything else is refused
_RULE_WORDS = {"priority": "number", "table": "number", "from": "network", "to": "network",
               "iif": "port", "oif": "port", "fwmark": "number"}  # fmt: skip


def rule(text: str, where: str) -> str:
    """A keyfile routing rule, rebuilt from its checked words (nothing else reaches `ip`)."""
    words = text.split(" ")
    if len(words) % 2 or not words[0] or not text.isprintable():
        raise Refused(f"{where}: '{text}' is not a routing rule as host_network writes it")
    out = []
    for key, value in zip(words[::2], words[1::2], strict=True):
        kind = _RULE_WORDS.get(key)
        if kind == "number":
            value = _number(value, where)
        elif kind == "network":
            value = str(address(value, where, ipaddress.IPv4Network if "/" in value
                                else ipaddress.IPv4Address))  # fmt: skip
        elif kind == "port":
            value = ifname(checked("port", value, where))
        else:
            raise Refused(
                f"{where}: '{text}': '{key}' is not a routing-rule word host_network writes"
            )
        out.append(f"{key} {value}")
    return " ".join(out)


def _number(text: str, where: str) -> int:
    if not re.fullmatch(r"\d{1,10}", text):
        raise Refused(f"{where}: '{text}' is not a number")
    return int(text)


def _outside(p: Plan) -> None:
    """The provider: a namespace on every router interface that is addressed but not cabled and
    that a default route points through, holding that next hop, and the internet at OUTSIDE."""
    outside = None
    for dev in p.devices.values():
        for iface in dev.interfaces.values():
            if (dev.name, iface.name) in p.ports or not iface.addresses:
                continue
            for route in dev.statics:
                if route.network.prefixlen == 0 and route.next_hop in iface.addresses[0].network:
                    outside = outside or p.ns(
                        ns_name(NsKind.OUTSIDE), NsKind.OUTSIDE, NsKind.OUTSIDE
                    )
                    name = f"to-{dev.name}"
                    name = name if len(name) <= 15 else f"to{zlib.crc32(dev.name.encode()):08x}"
                    p.ports[(dev.name, iface.name)] = (
                        ns_name(dev.name, iface.vpn),
                        ifname(iface.name),
                    )
                    p.links.append(
                        Link(
                            a=(ns_name(dev.name, iface.vpn), ifname(iface.name)),
                            b=(outside.name, name),
                            cable="provider",
                            plane=Plane.PROVIDER,
                            line=iface.line,
                        )
                    )
                    near = p.namespaces[ns_name(dev.name, iface.vpn)]
                    p.address(near, iface.addresses[0], ifname(iface.name))
                    net = iface.addresses[0].network
                    p.address(
                        outside, ipaddress.ip_interface(f"{route.next_hop}/{net.prefixlen}"), name
                    )
    if outside:
        p.address(outside, ipaddress.ip_interface(f"{OUTSIDE}/32"), "lo")
        # the provider stops sending into a hand-off whose link is down, as its router would
        outside.sysctls["net.ipv4.conf.all.ignore_routes_with_linkdown"] = "1"
        handoffs = {k.a for k in p.links if k.plane == Plane.PROVIDER}  # one pass: not per port
        routers = [
            str(next(iter(p.devices[d].interfaces[i].addresses)).ip)
            for (d, i), (ns, _) in p.ports.items()
            if ns != outside.name and (ns, ifname(i)) in handoffs
        ]
        for dev in p.devices.values():  # the provider routes each NAT pool to the hand-offs
            for pool in dev.address_groups.values():
                for a in pool:
                    hops = " ".join(f"nexthop via {r}" for r in routers)
                    outside.commands.append(f"route add {a}/32 {hops}")
        if any(d.address_groups for d in p.devices.values()):
            p.notes.append(
                "the provider routes the firewalls' NAT pools to the routers' hand-offs "
                "(the provider's side of the contract: nothing generated configures it)"
            )
