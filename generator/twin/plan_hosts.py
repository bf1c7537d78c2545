"""The hosts' side of a plan: what NetworkManager makes of the keyfiles host_network writes,
what hccn_tool makes of an NPU server's hccn.conf, and the BMCs' addresses."""

from __future__ import annotations

import configparser
import ipaddress
import re
from pathlib import Path

from generator.twin.intake import Refused, address, checked, ifname
from generator.twin.records import Netns, Plan
from generator.verify import safe
from generator.vocab import HostPort, NsKind

MAX_NICS = 64  # NPU NICs in one hccn.conf (8 on an Atlas 800T A2)
HCCN_BYTES = 64 * 1024  # an hccn.conf is 1-2 KB


def add_hosts(
    p: Plan, folder: Path, keyfiles: dict[str, dict[str, configparser.ConfigParser]]
) -> None:
    """Each host namespace's addresses and routes from its keyfiles, each NPU namespace's from
    its server's hccn.conf, each BMC's from hosts.yml and files/ip-plan.csv."""
    for ns in list(p.namespaces.values()):
        hv = p.hostvars.get(ns.device, {})
        if ns.kind == NsKind.HOST:
            apply_keyfiles(p, ns, keyfiles.get(ns.device, {}))
        elif ns.kind == NsKind.NPU:
            _npus(p, ns, folder / "files" / "hccn" / f"{ns.device}.conf")
        elif ns.kind == NsKind.BMC and hv.get("bmc_address"):
            file, keys = p.hostlines.get(ns.device, ("hosts.yml", {}))
            where = f"{file}:{keys['bmc_address']}" if "bmc_address" in keys else file
            bmc = address(hv["bmc_address"], f"{where}: bmc_address", ipaddress.IPv4Interface)
            p.address(ns, bmc, HostPort.BMC)  # the BMC namespace's interface is named as its port
            if gateway := p.bmc_gateways.get(ns.device):
                ns.commands.append(f"route add default via {gateway}")


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


def apply_keyfiles(p: Plan, ns: Netns, files: dict[str, configparser.ConfigParser]) -> None:
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
