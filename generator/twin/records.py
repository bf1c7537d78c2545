"""What the twin builds: its network namespaces (`Netns`), its cables (`Link`) and the `Plan` that
holds them with what was read to make them (generator.twin.plan makes it from a folder)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from pathlib import Path

from generator.twin import vrp
from generator.vocab import NsKind


@dataclass(slots=True)
class Netns:
    name: str
    device: str
    kind: NsKind
    commands: list[str] = field(default_factory=list)  # `ip -batch` lines, run inside
    frr: str = ""  # frr.conf, when the namespace runs FRR
    bird: str = ""  # bird.conf, when it stands in at a shard's boundary (generator.twin.shard)
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
