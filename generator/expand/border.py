"""The border (firewalls between the business spines, the in-band core and the routers) and the
legacy shared storage plane (storage nodes dual-homed to the business spines), both on free ports
of switches the planes already built, split where needed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from generator.catalog import SwitchModel
from generator.errors import BlueprintError, Problem, YamlPath
from generator.expand.addressing import PlaneAddresses, block_prefix, parse_pool
from generator.expand.fabric import PlaneBuild, Wire
from generator.expand.planes import HOST_VLAN
from generator.expand.racks import Hosts
from generator.model import Address, Pool, Subnet

BORDER = {"border-router": ("router", "rtr"), "firewall": ("firewall", "fw")}
BORDER_SPEED = 100


@dataclass(frozen=True, slots=True)
class Attached:
    border: list[Wire]  # firewalls to business spines, in-band cores and routers
    shared_storage: list[Wire]  # storage nodes to business spines (storage mode: shared)


def border_devices(bp: Mapping[str, Any]) -> list[tuple[str, str, str]]:
    """(name, role, model) of the routers and firewalls, one or a pair each."""
    border = bp["zones"]["border"]
    return [
        (f"{prefix}-{i + 1:02d}", role, border[key]["model"])
        for role, (key, prefix) in BORDER.items()
        for i in range(2 if border[key]["pair"] else 1)
    ]


class FreePorts:
    """Ports no plane has cabled yet, handed out one at a time (a free port at the speed, else a
    free lane of a port split to that speed)."""

    def __init__(
        self,
        builds: Mapping[str, PlaneBuild],
        switch_model: Mapping[str, SwitchModel],
        splits: dict[str, dict[str, str]],
    ) -> None:
        self.used: dict[str, set[str]] = {}
        for b in builds.values():
            for w in b.wires:
                self.used.setdefault(w.a_device, set()).add(w.a_port)
                self.used.setdefault(w.b_device, set()).add(w.b_port)
        self.switch_model = switch_model
        self.splits = splits

    def take(self, dev: str, speed: int, where: YamlPath) -> str:
        model = self.switch_model[dev]
        taken = self.used.setdefault(dev, set())
        dev_splits = self.splits.setdefault(dev, {})
        for p in model.ports:
            k = p.speed // speed
            want = f"{k}x{speed}GE"
            if p.speed == speed and p.name not in taken and p.name not in dev_splits:
                taken.add(p.name)
                return p.name
            whole_in_use = p.name in taken and p.name not in dev_splits
            if (
                k > 1
                and p.speed == k * speed
                and want in p.splits
                and not whole_in_use
                and dev_splits.get(p.name, want) == want
            ):
                lane = next(
                    (f"{p.name}:{i}" for i in range(1, k + 1) if f"{p.name}:{i}" not in taken), None
                )
                if lane:
                    dev_splits[p.name] = want
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
    bp: Mapping[str, Any],
    builds: Mapping[str, PlaneBuild],
    hosts: Hosts,
    switch_model: Mapping[str, SwitchModel],
    splits: dict[str, dict[str, str]],
) -> Attached:
    """Border wires, and with a shared storage plane the storage nodes' wires (two per node,
    alternating between the business spines)."""
    ports = FreePorts(builds, switch_model, splits)

    def uplink(a: str, b: str, where: YamlPath) -> Wire:
        pa, pb = ports.take(a, BORDER_SPEED, where), ports.take(b, BORDER_SPEED, where)
        return Wire("uplink", a, pa, b, pb, BORDER_SPEED, (a, pa))

    biz_spines = [s.name for s in builds["business"].spines]
    inband_cores = [s.name for s in builds["inband"].spines]
    border = border_devices(bp)
    firewalls = [name for name, role, _ in border if role == "firewall"]
    routers = [name for name, role, _ in border if role == "border-router"]
    where = ("zones", "border")
    wires = [
        uplink(fw, t, where) for fw in firewalls for t in (*biz_spines, *inband_cores, *routers)
    ]
    storage: list[Wire] = []
    if bp["networks"]["storage"]["mode"] == "shared":
        where = ("networks", "storage", "mode")
        for node in hosts.storage_nodes:
            spec = hosts.model[node].port("storage")
            for p, port in enumerate(spec.names() if spec else ()):
                sp = biz_spines[p % len(biz_spines)]
                pb = ports.take(sp, spec.speed, where)
                storage.append(Wire("host", node, port, sp, pb, spec.speed, (node, port)))
    return Attached(wires, storage)


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
    vlan = HOST_VLAN["storage"]
    subnets, addresses = [], []
    for i, (spine, ws) in enumerate(ports.items()):
        net = network + i * size
        sn = Subnet.on_vlan("storage", (spine,), net, sub_prefix, vlan)
        subnets.append(sn)
        addresses += [
            Address(w.a_device, w.a_port, "storage", net + 2 + k, sub_prefix, sn.gateway, sn.name)
            for k, w in enumerate(ws)
        ]
    pool = Pool("storage", network, prefix, len(ports) * size)
    return PlaneAddresses(tuple(subnets), tuple(addresses), {}, {}, pool)
