"""A build too large for one machine's memory, cut into shards that each fit (`wanka twin
prove`), and the boundary of each shard: real BGP speakers that announce what the neighbouring
shard's own FRR produced. Decided from the whole build's Plan alone (no root).

Units. The device namespaces (switches, routers, firewalls, one per VPN instance, and the
provider) are joined into units by every cable between two of them that is not an eBGP session:
an OSPF adjacency, a static route's next hop, a management port, a VLAN. A cable that carries an
eBGP session between two units can be cut (the session's far end is then a BGP speaker). A unit
over the budget (at 102,400 cards the management VPNs of every switch with the business, in-band,
out-of-band and border OSPF domains: 1,212 routers, about 21.8 GiB) is cut once more at its
quiet cables (quiet_links: between two FRR namespaces, no OSPF adjacency can form across them,
no BGP: a static route's next hop, the cable between two OSPF domains), its far end then a stand-in that
holds its address on the cable and runs nothing: the near end's connected route and the static
routes through that address are installed as uncut. An OSPF area itself is never cut: for the
FIBs inside to stay equal its stand-in would have to present each prefix its device's SPF held,
with that cost, as a stub network of its own router LSA (intra-area, so that it competes with the
paths inside on equal terms: an external or summary LSA loses to any intra-area path, whatever
its metric, and narrows the ECMP), and its device's external routes too; not built. Host namespaces (a server, its NPU NICs, its BMC) come with every
unit they are cabled to.

Size. A namespace costs MIB[daemon] for each FRR daemon it starts and PEER_MIB per BGP session
(FRR 8.4 prints what its peers take in `show bgp summary`: "Peers 16, using 11 MiB of memory",
about 724 KiB each); a boundary speaker is one bgpd with its sessions toward the shard. Measured
in the cluster-1k twin by proportional set size (smaps_rollup): zebra 9.3 MiB, staticd 3.0,
bgpd 33 (leaves of 16 peers and spines of 128), a boundary bgpd of 16 peers 20.5, an OSPF router
15 with its zebra and staticd. A 10,240-card pod's cores hold 160 sessions each, its spines 144:
sessions, not routers, are what a shard is sized by. A shard is the units of one component of
the BGP fabric without its cores (a pod: its leaves and spines, or a two-tier plane) with the
cores cabled to it; over the budget, the component without its cores (the cores then run in a
shard of their own, every pod's spines at its boundary); still over, its hubs (what announces no
host subnet: the spines) with as many of its leaves as fit, then the next leaves; shards that fit
together are merged (cluster-1k within a few GiB is one shard: the unsharded twin).

Boundary. A namespace outside the shard cabled to one inside stands in for it: it holds the far
end's addresses on the cables of its BGP sessions and runs one BIRD 2 (it installs nothing and
keeps nothing it hears) with the device's AS, router-id and peers toward the shard, announcing
each prefix its device's own FRR had as best when that device last ran, with that AS path
(`bgp_path.prepend` on the static route; eBGP adds its own AS on sending, as the device does)
and origin; a route whose path holds the AS of every peer it would reach is left out (each
would drop it: eBGP loop detection). A namespace outside cabled only to hosts of the shard is a
bare stub (its cable ends up, nothing else), so that every host namespace keeps all its
interfaces.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
from dataclasses import dataclass, field

from generator.twin.plan import Plan, ifname, ns_name
from generator.twin.records import Netns
from generator.vocab import NsKind

MIB = {"zebra": 10, "staticd": 4, "ospfd": 4, "bgpd": 10}  # per daemon, before its BGP peers
PEER_MIB = 0.75  # per BGP session of a bgpd
DEVICE_KINDS = (NsKind.SWITCH, NsKind.ROUTER, NsKind.FIREWALL, NsKind.OUTSIDE)
BOUNDARY = "boundary"  # the kind of a stand-in namespace
_ADDRESS = re.compile(r"address add (\S+) dev (\S+)$")


class TooLarge(ValueError):
    """A unit (or a pod's hubs with its cores) over the budget: it cannot be cut further."""


@dataclass(slots=True)
class Shard:
    number: int
    label: str
    interior: set[str]  # namespaces run in full
    mib: int = 0  # the budget's estimate: FRR daemons inside and at the boundary
    routers: int = 0  # FRR namespaces inside
    speakers: int = 0  # boundary BGP speakers
    hosts: bool = False  # holds host namespaces (their keyfiles come from host_network)


@dataclass(slots=True)
class Layout:
    """The whole build cut: its units (namespace -> unit number), which cables carry an eBGP
    session, the shards."""

    unit: dict[str, int]
    bgp_links: set[int]  # indexes into Plan.links
    shards: list[Shard] = field(default_factory=list)
    budget: int = 0
    quiet: set[int] = field(default_factory=set)  # cut cables without a routing protocol


def bgp_links(p: Plan) -> set[int]:
    """The cables (indexes of p.links) that carry an eBGP session the configs set up: a peer
    address of a BGP device is the far end's address on that cable."""
    index = {end: i for i, link in enumerate(p.links) for end in (link.a, link.b)}
    out = set()
    for dev in p.devices.values():
        if dev.bgp is None:
            continue
        mine = ns_name(dev.name)
        for peer, _, _ in dev.bgp.peers:
            far = p.addresses.get(peer)
            i = index.get(far) if far else None
            if i is not None and mine in (p.links[i].a[0], p.links[i].b[0]):
                out.add(i)
    return out


def ospf_links(p: Plan) -> set[int]:
    """The cables (indexes of p.links) across which OSPF may form an adjacency: both ends run
    ospfd, and neither end holds addresses on the cable that are all outside its OSPF `network`
    statements, nor is that end's interface silent (an end without addresses, a switch port of a
    VLAN, counts as speaking: its VLANIF may)."""
    held: dict[tuple[str, str], list[ipaddress.IPv4Interface]] = {}
    for n, ns in p.namespaces.items():
        for line in ns.commands:
            if m := _ADDRESS.match(line):
                held.setdefault((n, m.group(2)), []).append(ipaddress.ip_interface(m.group(1)))

    nets: dict[str, tuple[set[int], set[tuple[int, int]]]] = {}  # device: prefix lengths, nets

    def covered(dev, ip: ipaddress.IPv4Address) -> bool:
        if dev.name not in nets:  # a spine's 1,600 statements, as sets: not 1,600 tests each
            ns_ = [ipaddress.ip_network(n) for n, _ in dev.ospf.networks]
            nets[dev.name] = ({n.prefixlen for n in ns_},
                              {(int(n.network_address), n.prefixlen) for n in ns_})  # fmt: skip
        lengths, known = nets[dev.name]
        return any((int(ip) & (0xFFFFFFFF << (32 - k)) & 0xFFFFFFFF, k) in known for k in lengths)

    def speaks(end: tuple[str, str]) -> bool:
        ns = p.namespaces[end[0]]
        dev = p.devices.get(ns.device)
        if "ospfd" not in ns.daemons or dev is None or dev.ospf is None:
            return False
        if end[1] in {ifname(x) for x in dev.ospf.silent}:
            return False
        mine = held.get(end, [])
        return not mine or any(covered(dev, a.ip) for a in mine)

    return {i for i, link in enumerate(p.links) if speaks(link.a) and speaks(link.b)}


def quiet_links(p: Plan, members: set[str], bgp: set[int]) -> set[int]:
    """The cables between two FRR namespaces of `members` that carry no routing protocol: a
    static route's next hop, a cable between two OSPF domains (a namespace without FRR, a
    management VPN, costs nothing and stays with what it is cabled to). Cut, its
    far end is a stand-in holding its address on the cable: what the near end installs (its
    connected route, its static routes through that address) does not depend on what runs
    behind the address, so the near end's FIB is the uncut one."""
    ospf = ospf_links(p)
    return {i for i, link in enumerate(p.links)
            if i not in bgp and i not in ospf
            and link.a[0] in members and link.b[0] in members
            and p.namespaces[link.a[0]].frr and p.namespaces[link.b[0]].frr}  # fmt: skip


def _kind(p: Plan, ns: str) -> str:
    return p.namespaces[ns].kind


def units(p: Plan, cut: set[int]) -> dict[str, int]:
    """Device namespace -> its unit (numbered by the first namespace's name)."""
    parent = {n: n for n, ns in p.namespaces.items() if ns.kind in DEVICE_KINDS}

    def root(n: str) -> str:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for i, link in enumerate(p.links):
        a, b = link.a[0], link.b[0]
        if i not in cut and a in parent and b in parent:
            ra, rb = root(a), root(b)
            if ra != rb:
                parent[max(ra, rb)] = min(ra, rb)
    roots = sorted({root(n) for n in parent})
    number = {r: k for k, r in enumerate(roots)}
    return {n: number[root(n)] for n in parent}


def cost(p: Plan, interior: set[str], far: dict[str, dict[str, int]]) -> tuple[int, int]:
    """(MiB, boundary speakers) of a shard whose device namespaces are `interior` (`far`:
    namespace -> the namespaces across its BGP cables, with how many sessions)."""
    mib = 0.0
    speakers: dict[str, int] = {}
    for n in interior:
        ns = p.namespaces[n]
        mib += sum(MIB.get(d, MIB["bgpd"]) for d in ns.daemons)
        for m, sessions in far.get(n, {}).items():
            mib += PEER_MIB * sessions
            if m not in interior:
                speakers[m] = speakers.get(m, 0) + sessions
    mib += sum(MIB["bgpd"] + PEER_MIB * k for k in speakers.values())
    return round(mib), len(speakers)


def layout(p: Plan, budget: int) -> Layout:
    """Cut the build into shards of at most `budget` MiB (module docstring); TooLarge when a
    part that cannot be cut is over it."""
    cut = bgp_links(p)
    unit = units(p, cut)
    members: dict[int, set[str]] = {}
    for n, u in unit.items():
        members.setdefault(u, set()).add(n)
    quiet: set[int] = set()
    for _, ns in sorted(members.items()):  # a unit over the budget: cut between OSPF domains
        if len(ns) > 1 and cost(p, ns, {})[0] > budget:
            quiet |= quiet_links(p, ns, cut)
    if quiet:
        unit = units(p, cut | quiet)
        members = {}
        for n, u in unit.items():
            members.setdefault(u, set()).add(n)
    far: dict[str, dict[str, int]] = {}
    for i in cut:
        a, b = p.links[i].a[0], p.links[i].b[0]
        far.setdefault(a, {})[b] = far.get(a, {}).get(b, 0) + 1
        far.setdefault(b, {})[a] = far.get(b, {}).get(a, 0) + 1
    cores_group = {d for g, ms in p.groups.items() if g.endswith("_cores") for d in ms}
    cores = {u for u, ns in members.items()
             if all(p.namespaces[n].device in cores_group for n in ns)}  # fmt: skip
    adjacent: dict[int, set[int]] = {u: set() for u in members}
    for n, ms in far.items():
        adjacent[unit[n]] |= {unit[m] for m in ms}
    # components of the BGP fabric without its cores (a pod, a two-tier plane, the rest)
    seen: set[int] = set()
    components = []
    for u in sorted(members):
        if u in seen or u in cores:
            continue
        stack, comp = [u], set()
        while stack:
            v = stack.pop()
            if v in comp:
                continue
            comp.add(v)
            stack += [w for w in adjacent[v] if w not in cores and w not in comp]
        seen |= comp
        components.append(comp)
    pieces: list[set[int]] = []
    for comp in components:
        near = {w for v in comp for w in adjacent[v] if w in cores}
        pieces += _split(p, comp, near, members=members, far=far, budget=budget)
    covered = {u for piece in pieces for u in piece}
    pieces += [{u} for u in sorted(cores - covered)]
    shards: list[Shard] = []
    for piece in pieces:  # merged into the first shard it fits in with
        ns = {n for u in piece for n in members[u]}
        into = next((s for s in shards if cost(p, s.interior | ns, far)[0] <= budget), None)
        if into is not None:
            into.interior |= ns
        else:
            shards.append(Shard(len(shards) + 1, "", ns))
    for s in shards:
        s.mib, s.speakers = cost(p, s.interior, far)
        s.routers = sum(1 for n in s.interior if p.namespaces[n].frr)
        kinds = {p.namespaces[h].kind for h in attached(p, s.interior)}
        s.hosts = NsKind.HOST in kinds
        s.label = label(p, s.interior)

    # shards with a BGP boundary first, then those with hosts (their keyfiles arrive later), the
    # shards holding cores last: each pass then ends with cores that heard every pod, and the pods
    # of the next pass hear all of them (cores before two of wanka-10k's four pod shards left pass
    # 2's leaves 12,600 of 22,968 routes at their width, and needed a third pass)
    def hub(s: Shard) -> bool:  # a BGP core (its unit all cores; not an OSPF domain's core)
        return any(unit[n] in cores for n in s.interior)

    shards.sort(key=lambda s: (hub(s), s.hosts, not s.speakers, s.number))
    for k, s in enumerate(shards, 1):
        s.number = k
    return Layout(unit=unit, bgp_links=cut, shards=shards, budget=budget, quiet=quiet)


def _split(p, comp, near, members, far, budget) -> list[set[int]]:
    """One component with its cores, or, over the budget, without them, or its hubs with its
    leaves in turns (as many as fit each time)."""
    for whole in (comp | near, comp):
        if cost(p, {n for u in whole for n in members[u]}, far)[0] <= budget:
            return [whole]

    def leafy(u: int) -> bool:
        return any(p.devices.get(p.namespaces[n].device) and
                   p.devices[p.namespaces[n].device].host_subnets()
                   for n in members[u] if p.namespaces[n].frr)  # fmt: skip

    leaves = sorted((u for u in comp if leafy(u)), key=lambda u: min(members[u]))
    hubs = comp - set(leaves)
    base = {n for u in hubs for n in members[u]}
    need = cost(p, base, far)[0]
    if not leaves or need > budget:
        names = sorted({p.namespaces[n].device for n in base if p.namespaces[n].frr})
        raise TooLarge(f"{len(names)} routers that cannot be cut ({names[0]} ... {names[-1]}) "
                       f"need about {need:,} MiB, over the {budget:,} MiB budget "
                       "(--memory)")  # fmt: skip
    out, current, ns = [], set(hubs), set(base)
    for u in leaves:
        trial = ns | members[u]
        if cost(p, trial, far)[0] > budget and current != hubs:
            out.append(current)
            current, trial = set(hubs) | {u}, base | members[u]
        current.add(u)
        ns = trial
    out.append(current)
    return out


def attached(p: Plan, interior: set[str]) -> set[str]:
    """The host namespaces (servers, NPU NICs, BMCs) cabled to `interior`."""
    out = set()
    for link in p.links:
        for mine, other in ((link.a[0], link.b[0]), (link.b[0], link.a[0])):
            if mine in interior and p.namespaces[other].kind not in DEVICE_KINDS:
                out.add(other)
    return out


def boundary(p: Plan, interior: set[str]) -> set[str]:
    """The device namespaces outside `interior` cabled to it (its stand-ins in subplan)."""
    out = set()
    for link in p.links:
        for mine, other in ((link.a[0], link.b[0]), (link.b[0], link.a[0])):
            if (
                mine in interior
                and other not in interior
                and p.namespaces[other].kind in DEVICE_KINDS
            ):
                out.add(other)
    return out


def label(p: Plan, interior: set[str]) -> str:
    """What a shard holds, in a few words: its FRR devices by name stem."""
    stems: dict[str, int] = {}
    for n in sorted(interior):
        ns = p.namespaces[n]
        if ns.frr:
            stem = re.sub(r"-?\d+$", "", ns.device)
            stems[stem] = stems.get(stem, 0) + 1
    return ", ".join(f"{k} {v}" for k, v in stems.items()) or "no FRR"


# --- a shard as a Plan ----------------------------------------------------------------------


def subplan(p: Plan, lay: Layout, shard: Shard, routes: dict[str, list[Route]]) -> Plan:
    """The Plan of one shard: its namespaces and hosts as in the whole plan, its boundary
    stand-ins (speakers announcing `routes`, device -> what its FRR had as best, and stubs)."""
    inside = shard.interior | attached(p, shard.interior)
    q = Plan(p.folder, 0, hostvars=p.hostvars, groups=p.groups, hostlines=p.hostlines,
             bmc_gateways=p.bmc_gateways, notes=list(p.notes), hosts_done=True)  # fmt: skip
    for n in sorted(inside):
        ns = p.namespaces[n]
        q.namespaces[n] = dataclasses.replace(ns, commands=list(ns.commands),
                                              sysctls=dict(ns.sysctls))  # fmt: skip
    stand: dict[str, list[tuple[int, tuple[str, str]]]] = {}
    for i, link in enumerate(p.links):
        a_in, b_in = link.a[0] in inside, link.b[0] in inside
        if not (a_in or b_in):
            continue
        q.links.append(link)
        if not (a_in and b_in):
            end = link.b if a_in else link.a
            stand.setdefault(end[0], []).append((i, end))
    for n, ends in sorted(stand.items()):
        full = p.namespaces[n]
        ns = q.namespaces[n] = Netns(n, full.device, BOUNDARY, ["link set lo up"])
        spoken = {dev for i, (_, dev) in ends if i in lay.bgp_links}
        held = spoken | {dev for i, (_, dev) in ends if i in lay.quiet}
        for line in full.commands:
            m = _ADDRESS.match(line)
            if m and m.group(2) in held:
                ns.commands.append(line)
        dev = p.devices.get(full.device)
        if spoken and dev is not None and dev.bgp is not None:
            ns.bird = speaker(p, n, routes.get(full.device, []), set(q.namespaces) - set(stand))
            ns.daemons = ("bird",)
    names = set(q.namespaces)
    q.devices = {d: dev for d, dev in p.devices.items() if ns_name(d) in shard.interior}
    q.ports = {k: v for k, v in p.ports.items() if v[0] in inside}
    q.addresses = {ip: v for ip, v in p.addresses.items() if v[0] in inside}
    assert all(link.a[0] in names and link.b[0] in names for link in q.links)
    return q


@dataclass(frozen=True, slots=True)
class Route:
    prefix: str
    path: str  # the AS path as the device held it ("" for its own)
    origin: str  # IGP, EGP, incomplete


def captured(bgp_json: dict) -> list[Route]:
    """The best routes of `show ip bgp json` (FRR 8.4: {"routes": {prefix: [path, ...]}}, the
    best with "bestpath": true), in prefix order."""
    out = []
    for prefix, paths in (bgp_json.get("routes") or {}).items():
        best = next((x for x in paths if x.get("bestpath")), None)
        if best is None:
            continue
        path = " ".join(w for w in str(best.get("path", "")).split() if w.isdigit())
        out.append(Route(prefix, path, str(best.get("origin", "IGP"))))
    return sorted(out, key=lambda r: (ipaddress.ip_network(r.prefix), r.path))


# BIRD 2's origin attribute values (BIRD 2.0 user's guide, "BGP route attributes": bgp_origin
# ORIGIN_IGP, ORIGIN_EGP, ORIGIN_INCOMPLETE); a static route goes out as IGP unless set
BIRD_ORIGINS = {"EGP": "ORIGIN_EGP", "incomplete": "ORIGIN_INCOMPLETE"}


def speaker(p: Plan, n: str, routes: list[Route], inside: set[str]) -> str:
    """The bird.conf of the BIRD 2 standing in for namespace `n`'s device toward the shard: a
    static route per prefix its device held, with that route's AS path and origin, sent to each
    peer inside the shard over eBGP (which puts the device's AS in front, as the device would);
    nothing heard is kept (`import none`). Not FRR's bgpd: FRR 8.4.4 read a wanka-10k core's
    252 route-maps (one per AS path) in 15.6 s of CPU and half of them in 2.7 s (measured),
    worse than quadratic, and 102,400 cards have thousands of paths per core."""
    dev = p.devices[p.namespaces[n].device]
    b = dev.bgp
    peers = [(peer, asn) for peer, asn, _ in b.peers if p.addresses.get(peer, ("",))[0] in inside]
    theirs = {str(asn) for _, asn in peers}
    announce = [r for r in routes if not theirs <= set(r.path.split())]
    own = next((str(a.ip) for i in dev.interfaces.values() for a in i.addresses), "0.0.0.0")
    out = [f"router id {b.router_id or own};", "protocol device { }", "protocol static wanka {",
           "  ipv4;"]  # fmt: skip
    for r in announce:
        sets = [f"bgp_path.prepend({asn});" for asn in reversed(r.path.split())]
        if r.origin in BIRD_ORIGINS:
            sets.append(f"bgp_origin = {BIRD_ORIGINS[r.origin]};")
        out.append(
            f"  route {r.prefix} blackhole" + (" { " + " ".join(sets) + " }" if sets else "") + ";"
        )
    out.append("}")
    for k, (peer, asn) in enumerate(peers, 1):
        out += [f"protocol bgp peer{k} {{", f"  local as {b.asn};", f"  neighbor {peer} as {asn};",
                "  connect retry time 10;", "  ipv4 { import none; export all; };", "}"]  # fmt: skip
    return "\n".join(out) + "\n"
