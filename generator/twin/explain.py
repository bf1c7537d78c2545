"""Why a probe failed, from the running twin: the hops `ip route get` takes there and back
through the live FIBs, and the file behind the namespace where a walk ends (a switch config,
hccn.conf, the ip plan, or the keyfiles of roles/host_network); a packet that reached the
provider from a private address is the missing source NAT."""

from __future__ import annotations

import ipaddress
import json

from generator.twin import probe
from generator.twin.instance import ns_name
from generator.twin.plan import Plan
from generator.twin.run import sh
from generator.vocab import NsKind, Plane


def inner_pools(p: Plan) -> list[ipaddress.IPv4Network]:
    from generator.verify.read import pools

    return [n for name, n in pools(p.folder).items() if name not in (Plane.PROVIDER,)]


def walk(
    p: Plan, ns: str, src: str, dst: str, limit: int = 24
) -> tuple[list[tuple[str, str]], str, bool]:
    """The egress (namespace, interface) of each hop from `ns` to `dst` by `ip route get`, the
    namespace the walk ended in, and whether `dst` is local there."""
    hops: list[tuple[str, str]] = []
    first = True
    while len(hops) < limit:
        args = ["ip", "-n", ns, "-j", "route", "get", dst] + (["from", src] if first else [])
        got = json.loads(sh(*args, check=False) or "[]")
        if got and got[0].get("type") == "local":
            return hops, ns, True
        if not got or "dev" not in got[0]:
            return hops, ns, False
        hops.append((ns, got[0]["dev"]))
        nxt = p.addresses.get(ipaddress.IPv4Address(got[0].get("gateway") or dst))
        if not nxt:
            return hops, ns, False
        if not got[0].get("gateway"):
            return hops, nxt[0], nxt[0] == p.addresses.get(ipaddress.IPv4Address(dst), ("",))[0]
        ns, first = nxt[0], False
    return hops, ns, False


def source_of(p: Plan, ns: str) -> str:
    """The file behind a namespace's addresses and routes."""
    n = p.namespaces.get(ns)
    if n is None:
        return ns
    if n.device in p.devices:
        return f"{p.devices[n.device].path} ({n.device})"
    return {
        NsKind.NPU: f"files/hccn/{n.device}.conf",
        NsKind.BMC: "files/ip-plan.csv",
        NsKind.HOST: f"{n.device}'s keyfiles from roles/host_network (host_vars/{n.device}.yml)",
    }.get(n.kind, n.device)


def diagnose(p: Plan, pr: probe.Probe, result: probe.Result, recheck: bool = True) -> str:
    """Why a probe failed: no route there, a UDP packet the listener never saw (lost on the way
    there), no route back, or dropped by a filter on the way (with `recheck`, the rule that
    dropped it, by sending it once more: see decided)."""
    private = inner_pools(p)
    came = result.arrived_from and ipaddress.ip_address(result.arrived_from)
    if came and pr.dst_ns == ns_name(NsKind.OUTSIDE) and any(came in n for n in private):
        return (
            f"it reached the provider from the private address {result.arrived_from}, "
            "which the provider cannot answer: no source NAT toward the provider"
            + nat_missed(p, pr)
        )
    hops, end, reached = walk(p, pr.src_ns, pr.src, pr.dst)
    if not reached:
        return f"no route to {pr.dst} in {source_of(p, end)}"
    if pr.proto == "udp" and not result.arrived_from:  # the listener never saw it
        return "dropped on the way there by a filter: " + _filters(p, pr, recheck, hops, pr.dst_ns)
    back, end, reached = walk(p, pr.dst_ns, pr.dst, pr.src)
    if not reached:
        return f"no route back to {pr.src} in {source_of(p, end)}"
    return "dropped by a filter on the way: " + _filters(
        p, pr, recheck, hops + back, pr.dst_ns, pr.src_ns
    )


def nat_missed(p: Plan, pr: probe.Probe) -> str:
    """The NAT rules (file:line, name, zones) of the firewalls on the probe's way out, none of
    which translated it; "" when it crossed none that has NAT rules."""
    hops, _end, _reached = walk(p, pr.src_ns, pr.src, pr.dst)
    rules = []
    for name in dict.fromkeys(p.namespaces[ns].device for ns, _ in hops):
        dev = p.devices.get(name)
        for rule in dev.nat if dev else ():
            zones = f"{', '.join(rule.source_zones)} -> {', '.join(rule.destination_zones)}"
            rules.append(f"{dev.path}:{rule.line} {rule.name} ({zones})")
    return f"; on its way, NAT rules that did not translate it: {'; '.join(rules)}" if rules else ""


def _counted(namespaces: list[str]) -> dict[tuple[str, str, str, int], tuple[int, str, str]]:
    """Every nftables rule with a counter and a comment in these namespaces: (namespace, table,
    chain, handle) -> (packets, comment, verdict)."""
    out = {}
    for ns in namespaces:
        text = sh("ip", "netns", "exec", ns, "nft", "-j", "list", "ruleset", check=False)
        for item in json.loads(text or "{}").get("nftables", []):
            rule = item.get("rule")
            if not rule or "comment" not in rule:
                continue
            exprs = rule.get("expr", [])
            packets = next((e["counter"]["packets"] for e in exprs if "counter" in e), None)
            verdict = next((k for e in exprs for k in e if k in VERDICTS), "")
            if packets is not None:
                key = (ns, rule["table"], rule["chain"], rule["handle"])
                out[key] = (packets, rule["comment"], verdict)
    return out


VERDICTS = ("accept", "drop", "return", "reject")


def decided(pr: probe.Probe, namespaces: list[str], verdicts: tuple[str, ...]) -> list[str]:
    """The rules (their comments: file:line and what the line is) that gave the probe's packets
    one of `verdicts` in these namespaces: the probe is sent once more and the rules whose
    counters grew are read (nft(8) `counter`, `list ruleset -j`), so the device's translated
    line that decided it is named, not only its file. Other traffic the twin carries meanwhile
    (routing protocols) meets other rules than a probe's port."""
    if not namespaces:  # no filter on its way: nothing to send again for
        return []
    before = _counted(namespaces)
    probe.run([pr], timeout=2.0, retry=False)
    after = _counted(namespaces)
    return sorted(
        {
            comment
            for key, (packets, comment, verdict) in after.items()
            if verdict in verdicts and packets > before.get(key, (packets,))[0]
        }
    )


def _filters(
    p: Plan, pr: probe.Probe, recheck: bool, hops: list[tuple[str, str]], *received: str
) -> str:
    """The filters a packet met that dropped it: the rule (file:line) whose counter the probe
    raised, else the files behind a forwarding filter (a firewall's policy) in a namespace
    between the two ends and an input filter (a VTY/SNMP ACL) where it was received."""
    passed = {ns for ns, _ in hops} - {pr.src_ns, *received}
    forward = sorted(ns for ns in passed if "hook forward" in p.namespaces[ns].nft)
    inputs = sorted(ns for ns in set(received) if "hook input" in p.namespaces[ns].nft)
    rules = decided(pr, forward + inputs, ("drop", "reject")) if recheck else []
    if rules:
        return "; ".join(rules)
    found = {source_of(p, ns) for ns in forward + inputs}
    return ", ".join(sorted(found)) or "none found"


def let_through(p: Plan, pr: probe.Probe) -> list[str]:
    """For a probe that should have failed: the filter rules (file:line and what) that accepted
    it on its way; none when no filter with a counted rule saw it."""
    hops, _end, _reached = walk(p, pr.src_ns, pr.src, pr.dst)
    passed = sorted({ns for ns, _ in hops} - {pr.src_ns})
    seen = [ns for ns in [*passed, pr.dst_ns] if "hook" in p.namespaces[ns].nft]
    return decided(pr, seen, ("accept",))
