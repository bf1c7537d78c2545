"""What `wanka twin test` proves from the running twin, each as an Outcome with its counts and,
per failure, the file and line behind it.

Sessions and routes are read from the running FRR (vtysh JSON) and the kernel FIBs (`ip -j route`);
reachability is real packets (generator.twin.probe). Nothing here reads the blueprint or the model.
"""

from __future__ import annotations

import ipaddress
import json
import re
import time
from concurrent.futures import ThreadPoolExecutor

from generator.catalog import shipped_data
from generator.twin import probe
from generator.twin.explain import diagnose, inner_pools, let_through, nat_missed, walk
from generator.twin.netlink import Fibs
from generator.twin.outcome import Failure, Outcome
from generator.twin.plan import NPU_PORT, OUTSIDE, Plan, ifname, ns_name
from generator.twin.run import sh, vtysh_json
from generator.verify.flows import endpoints, read_flows
from generator.vocab import NsKind, Plane

OUTSIDE_GROUP = "outside"  # vocabulary: flow group (files/flows.csv: beyond the border routers)

ANY_PORT = 50000  # a flow of protocol "any" is probed as TCP to this port
FORBIDDEN_PORT = 50001  # no flow names it: every cross-plane probe to it must fail
SAMPLE = 64  # endpoints of a group probed in full up to this many; beyond it, one per rack


def _bgp_expected(p: Plan):
    for dev in p.devices.values():
        if dev.bgp:
            for peer, asn, line in dev.bgp.peers:
                yield dev, ns_name(dev.name), str(peer), asn, line


def _ospf_expected(p: Plan):
    """(device, namespace, interface, line) of each OSPF interface cabled to another OSPF one."""
    covered = {}
    for dev in p.devices.values():
        if not dev.ospf:
            continue
        for iface in dev.interfaces.values():
            if iface.name in dev.ospf.silent or not iface.addresses:
                continue
            if any(a.ip in net for a in iface.addresses for net, _ in dev.ospf.networks):
                covered[(dev.name, iface.name)] = (dev, iface)
    ends = {end: key for key, end in p.ports.items()}
    for link in p.links:
        a, b = ends.get(link.a), ends.get(link.b)
        if a in covered and b in covered:
            for dev, iface in (covered[a], covered[b]):
                yield dev, ns_name(dev.name), iface, iface.line


def sessions(p: Plan, timeout: float = 90.0) -> list[Outcome]:
    """Every BGP peer Established and every OSPF adjacency over a cable Full, waiting for them
    (a look every POLL seconds at the routers that still had one down, then a look at all)."""
    bgp = list(_bgp_expected(p))
    ospf = list(_ospf_expected(p))
    start = time.monotonic()
    bgp_down, ospf_down = _down(p, bgp, ospf)
    while (bgp_down or ospf_down) and time.monotonic() - start <= timeout:
        time.sleep(POLL)
        waiting = {ns for ns, _ in bgp_down + ospf_down}
        bgp_down, ospf_down = _down(p, [e for e in bgp if e[1] in waiting],
                                    [e for e in ospf if e[1] in waiting])  # fmt: skip
        if not bgp_down and not ospf_down:  # each up once: all up at the same time?
            bgp_down, ospf_down = _down(p, bgp, ospf)
    took = time.monotonic() - start
    settle(p)
    bgp_failures, ospf_failures = [f for _, f in bgp_down], [f for _, f in ospf_down]
    bgp_up, ospf_full = len(bgp) - len(bgp_down), len(ospf) - len(ospf_down)
    return [
        Outcome("BGP sessions Established", bgp_up, len(bgp), bgp_failures, seconds=took),
        Outcome("OSPF adjacencies Full", ospf_full, len(ospf), ospf_failures, seconds=took),
    ]


POLL = 0.25  # seconds between looks at FRR's sessions and the FIBs
LOOKERS = 8  # vtysh processes at once


def cable_blame(p: Plan, dev, peer: str) -> Failure | None:
    """Why the cable toward a BGP peer (or from an OSPF interface, given its own address)
    cannot carry the session: a port at either end is shut down (its `shutdown` line), or,
    naming its cabling.csv row, the port whose subnet holds the address is cabled to a port
    whose addresses are in another subnet (a swapped or mis-patched row), or to nothing. None
    when the cable is not to blame."""
    address = ipaddress.IPv4Address(peer)
    iface = next(
        (i for i in dev.interfaces.values() for a in i.addresses if address in a.network), None
    )
    if iface is None or (dev.name, iface.name) not in p.ports:
        return None
    if iface.shutdown:
        return Failure(dev.path, iface.shutdown, message=f"{iface.name} is shut down (`shutdown`)")
    net = next(a.network for a in iface.addresses if address in a.network)
    end = p.ports[(dev.name, iface.name)]
    owner = {ns_if: key for key, ns_if in p.ports.items()}
    for link in p.links:
        if end not in (link.a, link.b):
            continue
        far_dev, far_port = owner.get(link.b if link.a == end else link.a, ("?", "?"))
        far = p.devices.get(far_dev)
        far_if = far.interfaces.get(far_port) if far else None
        if far_if is not None and far_if.shutdown:
            return Failure(
                far.path, far_if.shutdown, message=f"{far_port}, the far end, is shut down"
            )
        theirs = list(far_if.addresses) if far_if else []
        if any(a.network == net for a in theirs):
            return None
        shown = ", ".join(str(a) for a in theirs) or "no address"
        return Failure(
            "files/cabling.csv",
            link.line,
            message=f"cable {link.cable} joins {dev.name} {iface.name} ({net}) to {far_dev} "
            f"{far_port} ({shown}), another subnet",
        )
    return Failure(
        dev.path, iface.line, message=f"{iface.name} ({net}) has no cable in files/cabling.csv"
    )


def _down(p, bgp, ospf) -> tuple[list[tuple[str, Failure]], list[tuple[str, Failure]]]:
    """(namespace, failure) of each expected BGP session and OSPF adjacency that is not up."""
    asks = [(ns, "show bgp summary") for ns in sorted({e[1] for e in bgp})]
    asks += [(ns, "show ip ospf neighbor") for ns in sorted({e[1] for e in ospf})]
    with ThreadPoolExecutor(LOOKERS) as pool:
        answers = dict(zip(asks, pool.map(lambda a: vtysh_json(*a), asks), strict=True))
    summaries = {ns: answers[(ns, "show bgp summary")] for ns in {e[1] for e in bgp}}
    neighbours = {ns: answers[(ns, "show ip ospf neighbor")] for ns in {e[1] for e in ospf}}
    bgp_down = []
    for dev, ns, peer, asn, line in bgp:
        state = (
            summaries[ns]
            .get("ipv4Unicast", {})
            .get("peers", {})
            .get(peer, {})
            .get("state", "absent")
        )
        if state != "Established":
            down = Failure(dev.path, line, dev.name, f"BGP peer {peer} (AS {asn}) is {state}",
                           cause=cable_blame(p, dev, peer))  # fmt: skip
            bgp_down.append((ns, down))
    ospf_down = []
    for dev, ns, iface, line in ospf:
        ifname = p.ports[(dev.name, iface.name)][1]
        full = any(
            n.get("nbrState", "").startswith("Full")
            and n.get("ifaceName", "").split(":")[0] == ifname
            for group in neighbours[ns].get("neighbors", {}).values()
            for n in group
        )
        if not full:
            mine = str(iface.addresses[0].ip) if iface.addresses else ""
            blame = cable_blame(p, dev, mine) if mine else None
            down = Failure(dev.path, line, dev.name, f"no Full OSPF adjacency on {iface.name}",
                           cause=blame)  # fmt: skip
            ospf_down.append((ns, down))
    return bgp_down, ospf_down


def settle(p: Plan, quiet: float = 3.0, timeout: float = 60.0) -> float:
    """Wait until no FRR namespace's FIB has changed for `quiet` seconds (OSPF's SPF and external
    routes, BGP's best paths follow the sessions by a few seconds); return the seconds waited.
    The FIBs are read over rtnetlink in this process (generator.twin.netlink), every 0.1 s."""
    return settle_fibs([n.name for n in p.namespaces.values() if n.frr], quiet, timeout)


def settle_fibs(names: list[str], quiet: float, timeout: float, every: float = 0.1) -> float:
    """Wait until no FIB of the namespaces `names` has changed for `quiet` seconds, looking
    every `every` seconds; return the seconds waited."""
    start = time.monotonic()
    last, since = None, start
    with Fibs(names) as fibs:
        while time.monotonic() - start < timeout:
            now = fibs.dump()
            if now != last:
                last, since = now, time.monotonic()
            elif time.monotonic() - since >= quiet:
                break
            time.sleep(every)
    return time.monotonic() - start


def routes(ns: str) -> dict[str, list[dict]]:
    """The kernel FIB of a namespace: destination -> next hops."""
    out = {}
    for r in json.loads(sh("ip", "-n", ns, "-j", "route", "show") or "[]"):
        out[r["dst"]] = r.get("nexthops") or [r]
    return out


def leaves(p: Plan) -> dict[str, list[ipaddress.IPv4Network]]:
    """BGP devices that announce a Vlanif subnet (the leaves) -> those subnets."""
    return {d.name: nets for d in p.devices.values() if (nets := d.host_subnets())}


def design_width(p: Plan, leaf: str) -> tuple[int, int | None]:
    """The ECMP width the design gives a leaf, from the folder and the catalog, not from the
    config that must provide it: one path per cable to a spine (cabling.csv rows to a member of
    an inventory group `*_spines`), at most the model's `ecmp_max` (catalog; None when the
    inventory names no catalog model)."""
    spines = {
        d for group, members in p.groups.items() if group.endswith("_spines") for d in members
    }
    mine = ns_name(leaf)
    uplinks = sum(
        1
        for link in p.links
        if (link.a[0] == mine and p.namespaces[link.b[0]].device in spines)
        or (link.b[0] == mine and p.namespaces[link.a[0]].device in spines)
    )
    model = shipped_data()["switches"].get(str(p.hostvars.get(leaf, {}).get("model", "")))
    cap = model["ecmp_max"]["value"] if model and "ecmp_max" in model else None
    return uplinks, cap


def leaf_width(out: Outcome, p: Plan, name: str, *, fib: dict, subnets) -> None:
    """Leaf `name`'s route in `fib` to each subnet of the other leaves of `subnets` (leaf ->
    subnets, its plane's) has the width of the design (design_width), counted into `out`."""
    dev = p.devices[name]
    uplinks, cap = design_width(p, name)
    want = min(uplinks, cap) if cap else uplinks
    for other, nets in subnets:
        if other == name:
            continue
        for net in nets:
            out.total += 1
            width = len(fib.get(str(net), []))
            if width == want:
                out.proved += 1
            else:
                catalog = f", catalog ecmp_max {cap}" if cap else ""
                message = (
                    f"{width} next hops to {net} ({other}), the design gives {want} ({uplinks} "
                    f"uplinks to spines{catalog}); the config: maximum load-balancing "
                    f"{dev.bgp.maximum_paths}, {len(dev.bgp.peers)} BGP peers"
                )
                line = dev.bgp.maximum_line or dev.bgp.line
                out.failures.append(Failure(dev.path, line, name, message))


def ecmp(p: Plan) -> Outcome:
    """Each leaf's route to every other leaf's subnets has as many next hops as the design
    gives it (design_width), not only as many as its config claims: a config that lost its
    `maximum load-balancing` line proves width 1 against its own claim and fails here."""
    out = Outcome("leaf-to-leaf routes with the ECMP width of the design (uplinks, catalog)")
    subnets = leaves(p)
    for name, _ in sorted(subnets.items()):
        same = [(o, nets) for o, nets in subnets.items() if _plane(p, o) == _plane(p, name)]
        leaf_width(out, p, name, fib=routes(ns_name(name)), subnets=same)
    return out


def _plane(p: Plan, device: str) -> str:
    return next((link.plane for link in p.links if link.a[0] == ns_name(device)), "")


def _sample(p: Plan, members: list[tuple[str, int]]) -> list[tuple[str, int]]:
    if len(members) <= SAMPLE:
        return members
    seen, out = set(), []
    for name, address in members:
        rack = p.hostvars.get(name.split()[0], {}).get("rack", name)  # vocabulary: host_vars key
        if rack not in seen:
            seen.add(rack)
            out.append((name, address))
    return out


def _endpoint(p: Plan, address: int) -> tuple[str, str] | None:
    ip = ipaddress.IPv4Address(address)
    return p.addresses.get(ip)


def relays(p: Plan):
    """(device, interface, its address, the servers) of every interface that relays DHCP: the
    device has `dhcp enable` ("By default, the DHCP function is disabled"), the interface has
    `dhcp select relay` ("By default, the DHCP relay function is disabled") and a
    `dhcp relay server-ip` (CE6800 V300R023C00 command reference, DHCPv4 Configuration
    Commands: dhcp_enable.json, dhcp_select_relay.json, as cited in commands.yaml)."""
    for dev in p.devices.values():
        if not dev.dhcp_enabled:
            continue
        for iface in dev.interfaces.values():
            if iface.relay_selected and iface.relay_servers and iface.addresses:
                yield dev, iface, str(iface.addresses[0].ip), [str(s) for s in iface.relay_servers]


def flows(
    p: Plan, only: set[str] | None = None, skip: set[str] | None = None, retry: bool = True
) -> Outcome:
    """Every required flow (or those named in `only`), from a sample of its sources to a sample
    of its destinations. A flow of any protocol is probed by TCP (UDP 53 to the outside, whose
    answer shows the source address the provider sees). `retry`: as in probe.run."""
    out = Outcome("required flows (files/flows.csv) with real packets")
    skip = skip or set()
    groups = endpoints(p.hostvars, p.groups)
    groups[OUTSIDE_GROUP] = [(OUTSIDE_GROUP, int(OUTSIDE))]
    groups["dhcp-relays"] = [
        (f"{dev.name} {i.name}", int(ipaddress.IPv4Address(a))) for dev, i, a, _ in relays(p)
    ]
    probes, why, skipped, unheld = [], [], 0, 0
    for flow in read_flows(p.folder):
        if only is not None and flow.name not in only:
            continue
        proto = (
            flow.protocol
            if flow.protocol in ("tcp", "udp")
            else ("udp" if flow.destination == OUTSIDE_GROUP else "tcp")
        )
        given = [port for port in flow.ports if port]
        port = given[0] if given else (53 if flow.destination == OUTSIDE_GROUP else ANY_PORT)
        for sname, saddr in _sample(p, groups.get(flow.source, [])):
            for dname, daddr in _sample(p, groups.get(flow.destination, [])):
                src, dst = _endpoint(p, saddr), _endpoint(p, daddr)
                if not src or not dst:
                    unheld += 1  # e.g. a host's address in a --pod run, which has no hosts
                    continue
                if src[0] == dst[0]:
                    continue
                if {src[0], dst[0]} & skip:
                    skipped += 1
                    continue
                routed = NsKind(p.namespaces[src[0]].kind).routes
                probes.append(
                    probe.Probe(
                        src[0],
                        str(ipaddress.IPv4Address(saddr)),
                        dst[0],
                        str(ipaddress.IPv4Address(daddr)),
                        proto=proto,
                        port=port,
                        src_dev="" if routed else src[1],  # a device's own traffic follows its FIB
                    )
                )
                why.append((flow, sname, dname))
    notes = [f"{skipped} probes not made: to or from a device the drill cut"] if skipped else []
    if unheld:
        notes.append(f"{unheld} probes not made: an end no namespace of this twin holds")
    out.note = "; ".join(notes)
    pools, rechecked = inner_pools(p), set()
    for pr, result, (flow, sname, dname) in zip(
        probes, probe.run(probes, retry=retry), why, strict=False
    ):
        out.total += 1
        if not result.ok:
            # the deciding rule is read for a flow's first failure only: each read sends the
            # probe again (up to 2 s), and a broken filter fails many probes of one flow
            why = diagnose(p, pr, result, recheck=flow.name not in rechecked)
            rechecked.add(flow.name)
            out.failures.append(
                Failure(
                    "files/flows.csv",
                    flow.line,
                    flow.name,
                    f"{sname} ({pr.src}) -> {dname} ({pr.dst}) {pr.proto}/{pr.port}: "
                    f"{result.error}; {why}",
                )
            )
        elif flow.destination == OUTSIDE_GROUP and any(
            ipaddress.ip_address(result.seen_as) in n for n in pools
        ):
            out.failures.append(
                Failure(
                    "files/flows.csv",
                    flow.line,
                    flow.name,
                    f"{sname} reached the provider with its private address {result.seen_as}: "
                    "no source NAT on the way out" + nat_missed(p, pr),
                )
            )
        else:
            out.proved += 1
    return out


def planes(p: Plan) -> dict[str, set[str]]:
    """Namespace -> the planes of the cables it has."""
    out: dict[str, set[str]] = {}
    for link in p.links:
        for ns, _ in (link.a, link.b):
            out.setdefault(ns, set()).add(link.plane)
    return out


def forbidden(p: Plan) -> Outcome:
    """From two namespaces of each plane cabled to that plane only (NPU NIC stacks, BMCs,
    leaves and access switches: what the network itself routes) and from the outside, to an
    address of every other plane, on a port no flow names; and between two isolated ports of
    each switch that has them: every probe must fail."""
    out = Outcome(
        "forbidden pairs fail (every pair of planes, the outside to each, isolated ports)"
    )
    cabled = planes(p)
    by_plane: dict[str, list[tuple[str, str]]] = {}
    for ip, (ns, _dev) in sorted(p.addresses.items()):
        only = cabled.get(ns, set())
        if len(only) == 1 and next(iter(only)) in PLANES and ip.is_private:
            members = by_plane.setdefault(next(iter(only)), [])
            if ns not in {m[0] for m in members}:
                members.append((ns, str(ip)))
    sources = {plane: ends[:1] + ends[-1:] for plane, ends in by_plane.items()}
    sources[OUTSIDE_GROUP] = [(ns_name(NsKind.OUTSIDE), str(OUTSIDE))]
    hosts = {}
    for ip, (ns, dev) in sorted(p.addresses.items()):
        plane = next((link.plane for link in p.links if (ns, dev) in (link.a, link.b)), None)
        if plane in PLANES and ns not in hosts.get(plane, {}):
            hosts.setdefault(plane, {})[ns] = str(ip)
    probes, names = [], []
    for splane, ends in sources.items():
        for dplane, dests in hosts.items():
            if splane == dplane:
                continue
            for ns, ip in ends:
                dns, dip = list(dests.items())[-1]
                probes.append(probe.Probe(ns, ip, dns, dip, proto="tcp", port=FORBIDDEN_PORT))
                names.append((splane, dplane))
    for switch, (a, aip), (b, bip) in isolated_pairs(p):
        probes.append(probe.Probe(a, aip, b, bip, proto="tcp", port=FORBIDDEN_PORT))
        names.append((f"{switch} isolated port", "another isolated port"))
    for pr, result, (a, b) in zip(
        probes, probe.run(probes, timeout=2.0, retry=False), names, strict=False
    ):
        out.total += 1
        if result.ok:
            rules = let_through(p, pr)  # the accepting rules, "file:line what" each
            m = re.match(r"(\S+):(\d+) (.*)", rules[0] if rules else "")
            out.failures.append(
                Failure(
                    subject=f"{a} -> {b}",
                    message=f"{pr.src_ns} {pr.src} reached {pr.dst} tcp/{FORBIDDEN_PORT} "
                    f"({pr.dst_ns})" + (f", let through by {'; '.join(rules)}" if rules else ""),
                    cause=Failure(m[1], int(m[2]), message=m[3]) if m else None,
                )
            )
        else:
            out.proved += 1
    return out


PLANES = tuple(p for p in Plane if p.has_hosts)


ISOLATED = 64  # isolated ports probed per switch (pod-128: 51 on three); beyond, the first 64


def isolated_pairs(p: Plan):
    """Per switch with `port-isolate enable group` ports, each isolated port cabled to an
    addressed namespace (up to ISOLATED) and the next one round the switch: they share the
    VLAN and must not reach each other (a Linux bridge's isolated ports, plan._ports)."""
    ends: dict[str, list[tuple[str, str]]] = {}
    for link in p.links:
        for mine, far in ((link.a, link.b), (link.b, link.a)):
            dev = p.devices.get(p.namespaces[mine[0]].device)
            iface = dev and next(
                (i for i in dev.interfaces.values() if ifname(i.name) == mine[1]), None
            )
            if iface is None or iface.isolate_group is None:
                continue
            ip = next((str(a) for a, at in p.addresses.items() if at == far), None)
            if ip and len(ends.setdefault(dev.name, [])) < ISOLATED:
                ends[dev.name].append((far[0], ip))
    for switch, ports in sorted(ends.items()):
        if len(ports) > 1:
            for i, port in enumerate(ports):
                yield switch, port, ports[(i + 1) % len(ports)]


EVERY_NIC = 512  # NPU NICs probed each (pod-128: 128); beyond, an even sample of this many


def npu_paths(p: Plan, retry: bool = True, every: bool = False) -> Outcome:
    """NPU 0 of the first server of every leaf to NPU 0 of the first server of every other leaf
    (TCP), and with `every` each NPU NIC (up to EVERY_NIC, then an even sample: the note says
    how many) to one on another leaf, each path walked hop by hop through the live FIBs:
    parameter-plane cables only."""
    out = Outcome("NPU to NPU across leaves, parameter plane only")
    first = {}
    for server in sorted(p.groups.get("npu_servers", ())):
        lldp = (p.hostvars.get(server, {}).get("npu_lldp") or [""])[0].split()
        if lldp and lldp[0] not in first:
            first[lldp[0]] = p.ports.get((server, "npu0"))
    ends = {
        name: next(a for a, e in p.addresses.items() if e == end)
        for name, end in first.items()
        if end
    }
    probes = []
    for a, ia in ends.items():
        for b, ib in ends.items():
            if a != b:
                probes.append(
                    probe.Probe(
                        first[a][0],
                        str(ia),
                        first[b][0],
                        str(ib),
                        proto="tcp",
                        port=ANY_PORT,
                        src_dev=first[a][1],
                    )
                )
    if every:
        nics = _nics(p)
        step = max(1, -(-len(nics) // EVERY_NIC))
        chosen = nics[::step]
        for i, (ns, dev, ip, leaf) in enumerate(chosen):
            half = len(chosen) // 2
            far = next((n for n in chosen[i + half :] + chosen[: i + half] if n[3] != leaf), None)
            if far is not None:
                probes.append(probe.Probe(ns, ip, far[0], far[2], proto="tcp", port=ANY_PORT,
                                          src_dev=dev))  # fmt: skip
        out.note = f"{len(chosen):,} of {len(nics):,} NPU NICs probed each"
    cabled = planes(p)
    for pr, result in zip(probes, probe.run(probes, retry=retry), strict=False):
        out.total += 1
        hops = walk(p, pr.src_ns, pr.src, pr.dst)[0]
        off = [
            f"{ns} ({', '.join(sorted(cabled[ns]))})"
            for ns, _ in hops
            if cabled.get(ns) != {Plane.PARAMETER}
        ]
        wrong = npu_failure(pr, result, off)
        out.failures += wrong
        out.proved += not wrong
    return out


def npu_failure(pr: probe.Probe, result: probe.Result, off: list[str]) -> list[Failure]:
    """What is wrong with an NPU probe: it did not arrive, or its path left the parameter plane
    at `off` (the namespaces and their planes); nothing when it arrived inside the plane."""
    if not result.ok:
        return [Failure(subject=f"{pr.src_ns} {pr.src} -> {pr.dst}", message=result.error)]
    if off:
        where = ", ".join(off)
        return [Failure(message=f"{pr.src} -> {pr.dst} leaves the parameter plane at {where}")]
    return []


def _nics(p: Plan) -> list[tuple[str, str, str, str]]:
    """Every cabled NPU NIC: (namespace, interface, address, the device at its cable's far end),
    in name order."""
    far_of = {}
    for link in p.links:
        far_of[link.a], far_of[link.b] = link.b, link.a
    out = []
    for (host, port), end in sorted(p.ports.items()):
        if host not in p.groups.get("npu_servers", ()) or not port.startswith(NPU_PORT):
            continue
        ip = next((str(a) for a, at in p.addresses.items() if at == end), None)
        far = far_of.get(end)
        if ip and far:
            out.append((end[0], end[1], ip, p.namespaces[far[0]].device))
    return out


def pod_boundary(p: Plan) -> Outcome:
    """Every spine of the pod reaches each other pod's leaf subnet through every core it is
    cabled to (the ECMP width the cores' announcements give it)."""
    out = Outcome("pod boundary: the other pods' subnets through every cabled core")
    cores = set(p.groups.get("parameter_cores", ()))
    standin = sorted({n for d in p.devices.values() if d.bgp for n in d.bgp.stand_in}, key=str)
    for ns in sorted(p.namespaces.values(), key=lambda n: n.name):
        if ns.device not in p.groups.get("parameter_spines", ()):
            continue
        width = sum(
            1
            for link in p.links
            for near, far in ((link.a, link.b), (link.b, link.a))
            if near[0] == ns.name and p.namespaces[far[0]].device in cores
        )
        fib = routes(ns.name)
        for net in standin:
            out.total += 1
            want = min(width, p.devices[ns.device].bgp.maximum_paths)
            got = len(fib.get(str(net), []))
            if got == want:
                out.proved += 1
            else:
                out.failures.append(
                    Failure(subject=ns.device, message=f"{net} through {got} next hops, not {want}")
                )
    return out
