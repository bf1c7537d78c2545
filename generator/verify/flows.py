"""Proving the required flows (files/flows.csv) from the rendered files.

Endpoints come from the inventory (hosts.yml): management nodes' in-band addresses, every
switch's, router's and firewall's `ansible_host` (its management address), BMCs, NPU servers'
business bonds and storage ports, storage nodes' storage ports. A flow between two endpoints in
one connected routing domain (a plane: its switches route among themselves) is proven by the
graph. A flow between domains must follow static routes, hop by hop:

- the source's domain holds a route covering the destination (the most specific one, lowest
  preference), on a device that announces it to its plane (`import-route static`,
  `default-route-advertise`) or on a border router, whose next hop is a firewall address;
- that firewall interface is cabled, in a zone, and the firewall's own routes lead out of a
  cabled interface of another zone; its security policy, rules in order, default deny, has a
  permit rule for the zones, addresses and service before any deny that matches;
- the next domain repeats this until it holds the destination (or, for `outside`, a router's
  route leads to a next hop no rendered device owns: the provider);
- the destination's domain has a route back toward the source through a firewall.
"""

from __future__ import annotations

import csv
import io
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from generator.verify import read, safe
from generator.verify.report import Problem, Report

OUTSIDE = int(ipaddress.ip_address("198.18.0.1"))  # an address beyond the border (RFC 2544)
MAX_HOPS = 4


@dataclass(frozen=True, slots=True)
class FlowRow:
    name: str
    source: str
    destination: str
    protocol: str
    ports: tuple[int, ...]
    line: int


@safe.located("files/flows.csv")
def read_flows(folder: Path) -> list[FlowRow]:
    path = folder / "files" / "flows.csv"
    if not safe.is_file(folder, "files/flows.csv"):
        return []
    with io.StringIO(safe.file_text(folder, path), newline="") as fh:
        return [
            FlowRow(
                name=r["flow"],
                source=r["source"],
                destination=r["destination"],
                protocol=r["protocol"],
                ports=tuple(int(p) for p in r["ports"].split() if p.isdigit()),
                line=n,
            )
            for n, r in enumerate(csv.DictReader(fh), 2)
        ]


BORDER = "border"  # vocabulary: Ansible group (hosts.yml: the border routers and firewalls)


def _ip(text) -> int | None:
    try:
        return int(ipaddress.ip_interface(str(text)).ip)
    except ValueError:
        return None


def endpoints(hostvars: dict, groups: dict, routing=None) -> dict[str, list[tuple[str, int]]]:
    """Flow endpoint group -> (name, address) from the inventory; the DHCP relays (interfaces
    with `dhcp select relay`, sending from their own address) from the configs' `routing`."""

    def members(*names: str) -> list[str]:
        return sorted({h for n in names for h in groups.get(n, ())})

    def take(hosts, key):
        out = []
        for h in hosts:
            a = _ip(hostvars.get(h, {}).get(key) or "")
            if a is not None:
                out.append((h, a))
        return out

    def nics(hosts):
        return [
            (f"{h} {nic.get('port')}", a)
            for h in hosts
            for nic in hostvars.get(h, {}).get("storage_nics") or []
            if (a := _ip(nic.get("address", ""))) is not None
        ]

    npus = members("npu_servers")
    return {
        "management-nodes": take(members("management_nodes"), "inband_address"),
        "switch-management": take(members("switches", BORDER), "ansible_host"),
        "dhcp-relays": [
            (f"{dev} {port}", a)
            for a, (dev, port, _) in sorted(routing.addresses.items() if routing else ())
            if (dev, port) in routing.relays
        ],
        "bmc": take(sorted(hostvars), "bmc_address"),
        "npu-servers": take(npus, "inband_address"),
        "business-hosts": [
            (h, a)
            for h in npus
            if (a := _ip((hostvars[h].get("business_bond") or {}).get("address", ""))) is not None
        ],
        "npu-storage": nics(npus),
        "storage-data": nics(members("storage_nodes")),
        "outside": [("outside", OUTSIDE)],  # vocabulary: flow group
    }


class Prover:
    def __init__(self, g, components, pools, routing, cabled: read.Cabling, firewalls, routers):
        self.g, self.routing, self.firewalls, self.routers = g, routing, firewalls, routers
        self.cabled = cabled.ports
        self.comp: dict[tuple, int] = {}
        for i, c in enumerate(components):
            for node in c:
                self.comp[node] = i
        self.nets: dict[int, dict[int, tuple]] = {}
        for node in g.nodes:
            if node[0] == "net":
                address, _, plen = node[1].partition("/")
                self.nets.setdefault(int(plen), {})[read.ip_int(address)] = node
        self.lengths = sorted(self.nets, reverse=True)
        self.planes: dict[int, str] = {}
        for plen, nets in self.nets.items():
            for address, node in nets.items():
                for plane, pool in pools.items():
                    lo, hi = int(pool.network_address), int(pool.broadcast_address)
                    if plen >= pool.prefixlen and lo <= address <= hi:
                        self.planes.setdefault(self.comp[node], plane)
        # crossing routes per domain: routes toward a firewall or on a router, announced
        self.crossing: dict[int, list[read.StaticRoute]] = {}
        self.own: dict[str, list[read.StaticRoute]] = {}
        for r in routing.routes:
            self.own.setdefault(r.device, []).append(r)
            on_router = r.device in routers
            if r.vrf != read.DEFAULT_VRF or not (on_router or r.device in routing.advertises):
                continue
            node = ("vrf", r.device, r.vrf)
            if node in self.comp:
                self.crossing.setdefault(self.comp[node], []).append(r)
        self.memo: dict[tuple, str | None] = {}
        self.interfaces: dict[str, list[tuple[int, int, str]]] = {}  # firewall -> its subnets
        for address, (dev, port, plen) in routing.addresses.items():
            if dev in firewalls:
                mask = 0xFFFFFFFF << (32 - plen) & 0xFFFFFFFF
                self.interfaces.setdefault(dev, []).append((address & mask, mask, port))

    def plane(self, domain: int) -> str:
        return self.planes.get(domain, "unnamed")

    def net_of(self, address: int) -> tuple | None:
        for plen in self.lengths:
            node = self.nets[plen].get(address & (0xFFFFFFFF << (32 - plen)) & 0xFFFFFFFF)
            if node is not None:
                return node
        return None

    def domain(self, address: int) -> int | None:
        node = self.net_of(address)
        return self.comp.get(node) if node is not None else None

    @staticmethod
    def best(routes, address: int):
        match = [
            r
            for r in routes
            if int(r.network.network_address) <= address <= int(r.network.broadcast_address)
        ]
        if not match:
            return []
        plen = max(r.network.prefixlen for r in match)
        match = [r for r in match if r.network.prefixlen == plen]
        pref = min(r.preference for r in match)
        return [r for r in match if r.preference == pref]

    def prove(self, flow: FlowRow, src: tuple[int, int], dst: tuple[int, int]) -> str | None:
        """None when the flow is proven for the source address and destination range; else why
        not."""
        key = (flow.name, src, dst)
        if key not in self.memo:
            self.memo[key] = self._prove(flow, src, dst)
        return self.memo[key]

    def _prove(self, flow: FlowRow, src: tuple[int, int], dst: tuple[int, int]) -> str | None:
        here = self.domain(src[0])
        if here is None:
            return f"the {flow.source} are on no subnet a rendered config serves"
        target = None if dst[0] == OUTSIDE else self.domain(dst[0])
        for _ in range(MAX_HOPS):
            if target is not None and here == target:
                return self._back(flow, src[0], here)
            routes = self.best(self.crossing.get(here, []), dst[0])
            if not routes:
                return f"no route toward the {flow.destination} leaves the {self.plane(here)} plane"
            why = None
            for r in routes:
                hop = self.routing.addresses.get(r.next_hop)
                if hop is None:
                    if target is None and r.device in self.routers:
                        return None  # the provider: outside reached
                    why = f"{r.where[0]}:{r.where[1]}: next hop {ipaddress.ip_address(r.next_hop)} is no rendered interface"
                    continue
                fw, port, _ = hop
                if self.comp.get(("if", fw, port)) != here:
                    why = f"{r.where[0]}:{r.where[1]}: next hop {ipaddress.ip_address(r.next_hop)} ({fw} {port}) is not cabled to {r.device}"
                    continue
                if fw not in self.firewalls:
                    why = f"{r.where[0]}:{r.where[1]}: next hop {ipaddress.ip_address(r.next_hop)} is {fw}, not a firewall"
                    continue
                nxt = self._through(fw=fw, port=port, flow=flow, src=src, dst=dst)
                if isinstance(nxt, str):
                    why = nxt
                    continue
                here = nxt
                break
            else:
                return why
        return "too many hops"

    def _through(
        self, fw: str, port: str, flow: FlowRow, src: tuple[int, int], dst: tuple[int, int]
    ):
        if (fw, port) not in self.cabled:
            return f"{fw} {port} is not cabled"
        zin = self.routing.zones.get((fw, port))
        if zin is None:
            return f"{fw} {port} is in no security zone"
        routes = self.best([r for r in self.own.get(fw, []) if r.vrf == read.DEFAULT_VRF], dst[0])
        for r in routes:
            hop = self.routing.addresses.get(r.next_hop)
            out = self._egress(fw, r.next_hop)
            if out is None or (fw, out) not in self.cabled:
                continue
            zout = self.routing.zones.get((fw, out))
            if zout is None:
                return f"{fw} {out} is in no security zone"
            verdict = self._policy(fw=fw, zin=zin, zout=zout, flow=flow, src=src, dst=dst)
            if verdict:
                return verdict
            if dst[0] == OUTSIDE and not self._translated(fw, zin, zout, src):
                return (
                    f"{fw} sends the {flow.source} toward the provider ({zout}) with their own, "
                    "private addresses (no nat-policy rule translates them: action source-nat)"
                )
            if hop is None:
                return f"{fw}: next hop {ipaddress.ip_address(r.next_hop)} is no rendered interface"
            there = self.comp.get(("if", hop[0], hop[1]))
            if there != self.comp.get(("if", fw, out)):
                return f"{fw} {out}: next hop {ipaddress.ip_address(r.next_hop)} ({hop[0]} {hop[1]}) is not cabled to it"
            return there
        return f"{fw} has no route toward the {flow.destination} out of a cabled interface"

    def _egress(self, fw: str, hop: int) -> str | None:
        for network, mask, port in self.interfaces.get(fw, ()):
            if hop & mask == network:
                return port
        return None

    def _policy(self, fw, zin, zout, flow: FlowRow, src, dst) -> str | None:
        for rule in self.routing.rules.get(fw, []):
            if (rule.source_zone, rule.destination_zone) != (zin, zout):
                continue
            if rule.sources and not _covered(rule.sources, src):
                continue
            if rule.destinations and not _covered(rule.destinations, dst):
                continue
            if rule.services and not any(
                proto == flow.protocol and (port in flow.ports) for proto, port in rule.services
            ):
                continue
            if rule.permit:
                return None
            return f"{rule.where[0]}:{rule.where[1]}: {fw} rule {rule.name} denies it"
        return f"{fw} denies {zin} -> {zout} {flow.protocol} {' '.join(map(str, flow.ports))} (no rule permits it)"

    def _translated(self, fw: str, zin: str, zout: str, src: tuple[int, int]) -> bool:
        """A nat-policy rule of the firewall translates the source range leaving zin for zout."""
        return any(
            rule.action == "source-nat"
            and (rule.source_zone, rule.destination_zone) == (zin, zout)
            and (not rule.sources or _covered(rule.sources, src))
            for rule in self.routing.nat.get(fw, [])
        )

    def _back(self, flow: FlowRow, src: int, here: int) -> str | None:
        """The destination's domain routes back toward the source."""
        if self.domain(src) == here:
            return None
        for r in self.best(self.crossing.get(here, []), src):
            hop = self.routing.addresses.get(r.next_hop)
            if hop is not None and self.comp.get(("if", hop[0], hop[1])) == here:
                return None
        return f"no route back from the {self.plane(here)} plane toward the {flow.source}"


def _covered(ranges: tuple[tuple[int, int], ...], want: tuple[int, int]) -> bool:
    """The rule's address ranges together cover `want` (a range of endpoints, e.g. three
    management nodes each permitted by its own /32)."""
    lo, hi = want
    for a, b in sorted(ranges):
        if a > lo:
            return False
        if b >= lo:
            lo = b + 1
            if lo > hi:
                return True
    return False


def prove(
    folder: Path, g, components, pools, routing, cabled, hostvars, groups, report: Report
) -> None:
    rows = read_flows(folder)
    if not rows:
        report.problems.append(
            Problem(
                "files/flows.csv",
                1,
                "no required flows to prove (files/flows.csv missing or empty)",
            )
        )
        return
    ends = endpoints(hostvars, groups, routing)
    prover = Prover(
        g=g,
        components=components,
        pools=pools,
        routing=routing,
        cabled=cabled,
        firewalls=groups.get("firewalls", set()),
        routers=groups.get("border_routers", set()),
    )
    for flow in rows:
        sources, dests = ends.get(flow.source, []), ends.get(flow.destination, [])
        if flow.source == "dhcp-relays" and not sources and ends["switch-management"]:
            report.problems.append(
                Problem(
                    "files/flows.csv",
                    flow.line,
                    f"required flow {flow.name}: no out-of-band gateway relays DHCP (`dhcp "
                    "select relay`): a factory-default switch's ZTP request never leaves its VLAN",
                )
            )
            continue
        if not sources or not dests:  # e.g. no storage-plane ports on a shared storage plane
            report.flows_idle.append(flow.name)
            continue
        lost: dict[str, list[str]] = {}
        proven = 0
        small_is_source = len(sources) <= len(dests)
        small, big = (sources, dests) if small_is_source else (dests, sources)
        ranges = _ranges(prover, big)
        for name, address in small:
            one = (address, address)
            for rng, members in ranges.items():
                s, d = (one, rng) if small_is_source else (rng, one)
                why = prover.prove(flow, s, d)
                if why:
                    lost.setdefault(why, []).append(name if small_is_source else members[0][0])
                else:
                    proven += len(members)
        report.flows += 1
        report.flow_pairs += proven
        for why, who in lost.items():
            ports = " ".join(map(str, flow.ports))
            report.problems.append(
                Problem(
                    "files/flows.csv",
                    flow.line,
                    f"required flow {flow.name} ({flow.source} -> {flow.destination}, "
                    f"{flow.protocol} {ports}) lost for {len(who)} source/subnet pairs, e.g. {who[0]}: "
                    f"{why}",
                )
            )


def _ranges(prover: Prover, endpoints: list[tuple[str, int]]) -> dict[tuple[int, int], list]:
    """Endpoints grouped by the subnet they are on, as (lowest, highest) address ranges."""
    by_net: dict[tuple, list[tuple[str, int]]] = {}
    for name, address in endpoints:
        by_net.setdefault(prover.net_of(address) or ("none", address), []).append((name, address))
    out = {}
    for members in by_net.values():
        addrs = [a for _, a in members]
        out[(min(addrs), max(addrs))] = members
    return out
