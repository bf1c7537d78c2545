"""The border (firewalls between the business spines, the in-band core, the out-of-band core and
the routers) and the legacy shared storage plane (storage nodes dual-homed to the business
spines), both on free ports of switches the planes already built, split where needed; and the
border and management routing: the firewall links' addresses and every static route.

The management zone: the management nodes live on the in-band plane; switch management ports and
BMCs on the out-of-band plane. The two meet in the firewalls (a zone per plane, default deny, one
rule per required flow), never directly: an out-of-band leg on each management node would join
the planes inside every one of those hosts, out of reach of any policy or log."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from generator.blueprint.spec import Blueprint, Border
from generator.catalog import SwitchModel
from generator.errors import BlueprintError, Problem, YamlPath
from generator.expand.addressing import PlaneAddresses, block_prefix, parse_pool
from generator.expand.fabric import PlaneBuild, Wire
from generator.expand.planes import HOST_VLAN
from generator.expand.racks import Hosts
from generator.model import Address, BorderOspf, Pool, Route, SourceNat, Subnet, Uplink
from generator.vocab import HostPort, LinkKind, Plane, Role

BORDER_PREFIX = {Role.BORDER_ROUTER: "rtr", Role.FIREWALL: "fw"}  # device names: rtr-01, fw-01
BORDER_SPEED = 100
FIREWALL_PLANES = (
    Plane.BUSINESS,
    Plane.INBAND,
    Plane.OOB,
)  # the zones the firewalls face, and "border"
BORDER_REGION = 7  # the last eighth of a plane's pool (reserved by addressing) holds these /31s
BACKUP_PREFERENCE = 10  # each further firewall's routes are this much less preferred (floating)
# A firewall's static defaults back up the defaults the routers advertise by OSPF: VRP prefers
# OSPF external routes at 150 ("When ASE is specified, the default value is 150", NE40E
# V800R012C10 and CE6800 V300R023C00 `preference` (OSPF view)), so the statics float above it
FLOATING_DEFAULT = 160


@dataclass(frozen=True, slots=True)
class Attached:
    border: list[Wire]  # firewalls to business spines, in-band cores, oob cores and routers
    shared_storage: list[Wire]  # storage nodes to business spines (storage mode: shared)
    faces: dict[str, str]  # device a firewall is cabled to -> its plane (firewall zone)
    uplinks: dict[str, str]  # border router -> its free port toward the provider


def border_devices(bp: Blueprint) -> list[tuple[str, str, str]]:
    """(name, role, model) of the routers and firewalls, one or a pair each."""
    border = bp.zones.border
    boxes = {Role.BORDER_ROUTER: border.router, Role.FIREWALL: border.firewall}
    return [
        (f"{BORDER_PREFIX[role]}-{i + 1:02d}", role, box.model)
        for role, box in boxes.items()
        for i in range(2 if box.pair else 1)
    ]


class FreePorts:
    """Ports no plane has cabled yet on `devices`, handed out one at a time (a free port at the
    speed, else a free lane of a port this class split to that speed). Only these devices' cabled
    ports are indexed: a few switches and the border devices, of the hundreds of thousands of
    wire ends.

    A split port is one cage holding one module: its lanes leave on one breakout cable, or on one
    optic whose lanes run through one trunk and cassette (generator.expand.links). So a lane is
    only handed out of a port split here, never the free lanes of a port a plane split for its
    own breakout or trunk (those would be a second cable in the same cage), and the wires on the
    lanes of one port share the cable `cable_of` names: one breakout of their own."""

    def __init__(
        self,
        builds: Mapping[str, PlaneBuild],
        switch_model: Mapping[str, SwitchModel],
        splits: dict[str, dict[str, str]],
        devices: Iterable[str],
    ) -> None:
        self.used: dict[str, set[str]] = {d: set() for d in devices}
        used = self.used.get
        for b in builds.values():
            for w in b.wires:
                if (a := used(w.a_device)) is not None:
                    a.add(w.a_port)
                if (z := used(w.b_device)) is not None:
                    z.add(w.b_port)
        self.switch_model = switch_model
        self.splits = splits
        # (device, port) split here -> the wire set its lanes are for: one breakout per set,
        # since each set numbers its own cables (generator.expand.links.cable)
        self.own: dict[tuple[str, str], str] = {}

    def take(self, dev: str, speed: int, where: YamlPath, owner: str, whole=False) -> str:
        """A free port of `dev` at `speed`, else (unless `whole`) a free lane of a port split
        here to that speed for the same `owner` (wire set), else a free port split here to it."""
        model = self.switch_model[dev]
        taken = self.used[dev]  # a device not given to __init__ is a bug, not a free switch
        dev_splits = self.splits.setdefault(dev, {})
        for p in model.ports:
            k = p.speed // speed
            want = f"{k}x{speed}GE"
            if p.speed == speed and p.name not in taken and p.name not in dev_splits:
                taken.add(p.name)
                return p.name
            ours = self.own.get((dev, p.name)) == owner
            free = p.name not in taken and p.name not in dev_splits
            if (
                not whole
                and k > 1
                and p.speed == k * speed
                and want in p.splits
                and (free or (ours and dev_splits.get(p.name) == want))
            ):
                lane = next(
                    (f"{p.name}:{i}" for i in range(1, k + 1) if f"{p.name}:{i}" not in taken), None
                )
                if lane:
                    dev_splits[p.name] = want
                    self.own[(dev, p.name)] = owner
                    taken.update((lane, p.name))
                    return lane
        raise BlueprintError(
            [
                Problem(
                    where,
                    f"{dev} ({model.name}) has no free {speed}GE port left",
                    "choose a larger model",
                )
            ]
        )


def attach(
    bp: Blueprint,
    builds: Mapping[str, PlaneBuild],
    hosts: Hosts,
    switch_model: Mapping[str, SwitchModel],
    splits: dict[str, dict[str, str]],
) -> Attached:
    """Border wires, and with a shared storage plane the storage nodes' wires (two per node,
    alternating between the business spines)."""
    faces = {
        s.name: plane
        for plane in FIREWALL_PLANES
        for s in (builds[plane].spines or builds[plane].leaves[:2])
    }
    biz_spines = [s for s, plane in faces.items() if plane == Plane.BUSINESS]
    border = border_devices(bp)
    firewalls = [name for name, role, _ in border if role == Role.FIREWALL]
    routers = [name for name, role, _ in border if role == Role.BORDER_ROUTER]
    faces |= dict.fromkeys(routers, Plane.BORDER)
    ports = FreePorts(builds, switch_model, splits, [*faces, *firewalls])

    def uplink(a: str, b: str, where: YamlPath) -> Wire:
        # the firewall end is a whole port: a cable's split end is its far (b) end
        pa = ports.take(a, BORDER_SPEED, where, Plane.BORDER, whole=True)
        pb = ports.take(b, BORDER_SPEED, where, Plane.BORDER)
        return Wire(
            kind=LinkKind.UPLINK,
            a_device=a,
            a_port=pa,
            b_device=b,
            b_port=pb,
            speed=BORDER_SPEED,
            cable=cable_of(a, pa, b, pb),
        )

    where = ("zones", "border")
    wires = [uplink(fw, t, where) for fw in firewalls for t in faces]
    uplinks = {r: ports.take(r, BORDER_SPEED, where, Plane.PROVIDER) for r in routers}
    storage: list[Wire] = []
    if bp.networks.storage.mode == "shared":
        where = ("networks", "storage", "mode")
        for node in hosts.storage_nodes:
            spec = hosts.model[node].port(HostPort.STORAGE)
            for p, port in enumerate(spec.names if spec else ()):
                sp = biz_spines[p % len(biz_spines)]
                pb = ports.take(sp, spec.speed, where, Plane.STORAGE)
                storage.append(
                    Wire(
                        kind=LinkKind.HOST,
                        a_device=node,
                        a_port=port,
                        b_device=sp,
                        b_port=pb,
                        speed=spec.speed,
                        cable=cable_of(node, port, sp, pb),
                    )
                )
    return Attached(wires, storage, faces, uplinks)


def cable_of(a: str, a_port: str, b: str, b_port: str) -> tuple[str, str]:
    """The cable a border or shared-storage wire is on: a lane of a split port is a leg of that
    port's one breakout (keyed by the split port, as the planes key theirs), any other wire its
    own cable."""
    parent, split, _ = b_port.partition(":")
    return (b, parent) if split else (a, a_port)


@dataclass(frozen=True, slots=True)
class BorderRouting:
    p2p: dict[int, tuple[int, int]]  # border wire index -> (firewall address, far address)
    routes: tuple[Route, ...]
    uplinks: tuple[Uplink, ...]
    pools: tuple[Pool, ...]  # the border pool and the provider hand-off
    nat: tuple[SourceNat, ...] = ()  # per firewall: its section of the NAT pool
    ospf: tuple[BorderOspf, ...] = ()  # the firewall-router links, routers advertising default


def border_routing(bp: Blueprint, pools: Mapping[str, str], attached: Attached) -> BorderRouting:
    """/31s on every firewall link (from the last eighth of the plane's own pool, the border pool
    toward the routers), and the static routes that make the management zone and the way out:

    - business spines: default route to the firewalls; in-band cores: the out-of-band pool;
      out-of-band cores: the in-band pool; each advertised into the plane's routing protocol.
      The first firewall is preferred, the second a floating backup (symmetric, stateful paths).
    - firewalls: each plane's pool to the switches of that plane (ECMP), default to the routers;
      the business pool leaves translated to the firewall's section of the NAT pool (source_nat).
    - routers: the business pool to the firewalls (first preferred), each firewall's NAT section
      to that firewall, default to the provider."""
    border = bp.zones.border
    bases = {plane: parse_pool(pools[plane]) for plane in FIREWALL_PLANES}
    net, prefix = parse_pool(border.pool)
    nxt = {  # next free /31 of each plane's border region, and of the border pool
        plane: base + ((1 << (32 - length)) // 8) * BORDER_REGION
        for plane, (base, length) in bases.items()
    }
    nxt[Plane.BORDER] = net
    p2p: dict[int, tuple[int, int]] = {}
    for i, w in enumerate(attached.border):
        plane = attached.faces[w.b_device]
        p2p[i] = (nxt[plane], nxt[plane] + 1)
        nxt[plane] += 2
    if nxt[Plane.BORDER] > net + (1 << (32 - prefix)):
        raise BlueprintError(
            [
                Problem(
                    ("zones", "border", "pool"),
                    "too small for the firewall links",
                    "use a /28 or larger",
                )
            ]
        )
    firewalls = sorted({w.a_device for w in attached.border})
    rank = {fw: i for i, fw in enumerate(firewalls)}
    want = {Plane.BUSINESS: (0, 0), Plane.INBAND: bases[Plane.OOB], Plane.OOB: bases[Plane.INBAND]}
    routes: list[Route] = []
    for i, w in enumerate(attached.border):
        fw_ip, far_ip = p2p[i]
        plane = attached.faces[w.b_device]
        preference = 60 + BACKUP_PREFERENCE * rank[w.a_device]
        if plane in want:
            dest = want[plane]
            routes.append(Route(w.b_device, *dest, fw_ip, preference, advertise=True))
            routes.append(Route(w.a_device, *bases[plane], far_ip))
        else:
            routes.append(Route(w.b_device, *bases[Plane.BUSINESS], fw_ip, preference))
            routes.append(
                Route(
                    device=w.a_device,
                    network=0,
                    prefix=0,
                    next_hop=far_ip,
                    preference=FLOATING_DEFAULT,
                )
            )
    pnet, pprefix = parse_pool(border.provider)
    uplinks = []
    for k, (router, port) in enumerate(sorted(attached.uplinks.items())):
        if 2 * k + 2 > 1 << (32 - pprefix):
            raise BlueprintError(
                [
                    Problem(
                        ("zones", "border", "provider"),
                        "too small: one /31 per border router",
                        "use a /30 or larger",
                    )
                ]
            )
        uplinks.append(
            Uplink(device=router, port=port, ip=pnet + 2 * k, prefix=31, gateway=pnet + 2 * k + 1)
        )
        routes.append(Route(router, 0, 0, pnet + 2 * k + 1))
    nat = source_nat(border, firewalls, bases[Plane.BUSINESS], len(uplinks))
    section = {n.device: n for n in nat}
    for i, w in enumerate(attached.border):  # each router: a firewall's section to that firewall
        if attached.faces[w.b_device] == Plane.BORDER:
            s = section[w.a_device]
            routes.append(Route(w.b_device, s.network, s.prefix, p2p[i][0]))
    routes.sort(key=lambda r: (r.device, r.vrf, r.network, r.prefix, r.preference, r.next_hop))
    used = nxt[Plane.BORDER] - net
    pools_out = (
        Pool(plane=Plane.BORDER, network=net, prefix=prefix, used=used),
        Pool(plane=Plane.PROVIDER, network=pnet, prefix=pprefix, used=2 * len(uplinks)),
    )
    return BorderRouting(
        p2p=p2p,
        routes=tuple(routes),
        uplinks=tuple(uplinks),
        pools=pools_out,
        nat=nat,
        ospf=border_ospf(attached, p2p),
    )


def border_ospf(attached: Attached, p2p: dict[int, tuple[int, int]]) -> tuple[BorderOspf, ...]:
    """OSPF area 0 on every firewall-router /31: the firewalls learn a default route from each
    router that still has its own (the provider's) and stop using a router that lost it. Router
    ID: the device's lowest address on these links."""
    nets: dict[str, list[tuple[int, int]]] = {}
    lowest: dict[str, int] = {}
    for i, w in enumerate(attached.border):
        if attached.faces[w.b_device] != Plane.BORDER:
            continue
        for dev, address in ((w.a_device, p2p[i][0]), (w.b_device, p2p[i][1])):
            nets.setdefault(dev, []).append((p2p[i][0], 31))
            lowest[dev] = min(lowest.get(dev, address), address)
    return tuple(
        BorderOspf(dev, lowest[dev], tuple(sorted(n)), dev in attached.uplinks)
        for dev, n in sorted(nets.items())
    )


def source_nat(
    border: Border, firewalls: list[str], business: tuple[int, int], handoffs: int
) -> tuple[SourceNat, ...]:
    """The business plane leaves through the provider with addresses the provider routes back:
    the NAT pool (zones.border.nat; by default the upper half of zones.border.provider, whose
    lower half holds the routers' hand-off /31s), cut into one equal, aligned section per
    firewall. The firewalls keep their sessions apart (no state is shared between them), so each
    translates to its own section and the routers route each section back to its firewall."""
    pnet, pprefix = parse_pool(border.provider)
    if border.nat:
        where: YamlPath = ("zones", "border", "nat")
        net, prefix = parse_pool(border.nat)
    else:
        where = ("zones", "border", "provider")
        net, prefix = pnet + (1 << (31 - pprefix)), pprefix + 1
        if pprefix >= 32 or 2 * handoffs > 1 << (31 - pprefix):
            raise BlueprintError(
                [
                    Problem(
                        where,
                        "too small for the hand-offs (lower half) and the NAT pool (upper half)",
                        "use a /29 or larger, or give zones.border.nat",
                    )
                ]
            )
    bits = max(len(firewalls) - 1, 0).bit_length()
    if prefix + bits > 32:
        raise BlueprintError(
            [Problem(where, f"the NAT pool is too small for {len(firewalls)} firewalls")]
        )
    size = 1 << (32 - prefix - bits)
    return tuple(
        SourceNat(fw, net + i * size, prefix + bits, (business,)) for i, fw in enumerate(firewalls)
    )


def shared_storage_addresses(pool_text: str, wires: list[Wire], where: YamlPath) -> PlaneAddresses:
    """The shared storage plane's addresses, from networks.storage.pool: one subnet per business
    spine (its gateway in the storage VLAN on that spine), each storage port an address in the
    subnet of the spine it is cabled to, in cabling order."""
    network, prefix = parse_pool(pool_text)
    ports: dict[str, list[Wire]] = {}
    for w in wires:
        ports.setdefault(w.b_device, []).append(w)
    sub_prefix = block_prefix(max((len(ws) for ws in ports.values()), default=1))
    size = 1 << (32 - sub_prefix)
    if len(ports) * size > 1 << (32 - prefix):
        raise BlueprintError(
            [Problem(where, f"pool {pool_text} is too small for the shared storage plane")]
        )
    vlan = HOST_VLAN[Plane.STORAGE]
    subnets, addresses = [], []
    for i, (spine, ws) in enumerate(ports.items()):
        net = network + i * size
        sn = Subnet.on_vlan(
            plane=Plane.STORAGE, owners=(spine,), network=net, prefix=sub_prefix, vlan=vlan
        )
        subnets.append(sn)
        addresses += [
            Address(
                device=w.a_device,
                port=w.a_port,
                plane=Plane.STORAGE,
                ip=net + 2 + k,
                prefix=sub_prefix,
                gateway=sn.gateway,
                subnet=sn.name,
            )
            for k, w in enumerate(ws)
        ]
    pool = Pool(plane=Plane.STORAGE, network=network, prefix=prefix, used=len(ports) * size)
    return PlaneAddresses(
        subnets=tuple(subnets), addresses=tuple(addresses), p2p={}, loopbacks={}, pool=pool
    )
