"""M-LAG dual-active detection (DAD) on the twin: each DFS group's `dual-active detection source
ip S [vpn-instance V] peer P` must reach P from S, or a peer-link failure leaves two masters.

What the twin emulates: the path (the management VRF namespace, the cable to the out-of-band
access switch, its bridge with its isolated ports, the gateway). What it does not: the DFS
protocol itself; the probe is a UDP exchange between the two addresses on the port the CE picks
by default, "the smallest idle port number between 1025 and 2048" (CE V300R023C00
dual-active_detection_source_ip_vpn-instance.json, udp-port) when it is idle, 1025.
"""

from __future__ import annotations

from dataclasses import dataclass
from ipaddress import IPv4Address as Addr

from generator.twin import checks, probe
from generator.twin.intake import ifname
from generator.twin.outcome import Failure
from generator.twin.plan import Plan

DAD_PORT = 1025


@dataclass(frozen=True, slots=True)
class Dad:
    device: str
    file: str  # files/switches/<device>.cfg
    line: int  # its detection line
    source: str
    peer: str
    port: int


def ends(p: Plan) -> list[Dad]:
    """Every DFS group's detection line, as the reader gives it (vrp.Device.dad; the line's form
    is in commands.yaml, `twin: layer2`)."""
    return [
        Dad(device=name, file=dev.path, line=number, source=source, peer=peer, port=DAD_PORT)
        for name, dev in sorted(p.devices.items())
        for number, source, peer in dev.dad
    ]


def _access_port(p: Plan, at: tuple[str, str]) -> tuple[str, str] | None:
    """(access switch, its port) an interface is cabled to."""
    for link in p.links:
        for mine, far in ((link.a, link.b), (link.b, link.a)):
            if mine == at:
                return p.namespaces[far[0]].device, far[1]
    return None


def _unaddressed(dad: Dad) -> Failure:
    what = f"dual-active detection {dad.source} -> {dad.peer}"
    return Failure(dad.file, dad.line, what, "an address no interface of the output has")


def blocked(p: Plan) -> list[Failure]:
    """Plan level, no packet sent: every detection pair whose two ends are cabled to isolated
    ports of one switch (its bridge drops frames between them: plan._ports), or not addressed."""
    out = []
    for dad in ends(p):
        at = [p.addresses.get(Addr(a)) for a in (dad.source, dad.peer)]
        if None in at:
            out.append(_unaddressed(dad))
            continue
        ports = [_access_port(p, end) for end in at if end]
        if None in ports or ports[0][0] != ports[1][0]:
            continue
        switch = p.devices.get(ports[0][0])
        if switch is None:
            continue
        groups = [
            next((i.isolate_group for i in switch.interfaces.values()
                  if ifname(i.name) == port), None)
            for _, port in ports
        ]  # fmt: skip
        if groups[0] is not None and groups[0] == groups[1]:
            out.append(
                Failure(
                    dad.file,
                    dad.line,
                    message=f"dual-active detection {dad.source} -> {dad.peer} crosses "
                    f"{switch.name}, which isolates both ends in port isolation group {groups[0]}",
                )
            )
    return out


def check(p: Plan) -> checks.Outcome:
    """A UDP exchange from each detection source to its peer, in the management VRF where the
    configuration binds it."""
    out = checks.Outcome("M-LAG dual-active detection reaches the peer (UDP, both directions)")
    found, missing = [], []
    for dad in ends(p):
        addressed = {Addr(dad.source), Addr(dad.peer)} <= p.addresses.keys()
        (found if addressed else missing).append(dad)
    out.failures += [_unaddressed(dad) for dad in missing]
    probes = []
    for dad in found:
        src = p.addresses[Addr(dad.source)][0]
        dst = p.addresses[Addr(dad.peer)][0]
        probes.append(probe.Probe(src, dad.source, dst, dad.peer, proto="udp", port=dad.port))
    for dad, result in zip(found, probe.run(probes), strict=True):
        out.total += 1
        if result.ok:
            out.proved += 1
        else:
            what = f"dual-active detection {dad.source} -> {dad.peer} udp/{dad.port}"
            out.failures.append(Failure(dad.file, dad.line, what, result.error or "no answer"))
    return out
