"""Address allocation from a plane's pool, by stable keys (leaf index, uplink number).

A pool is cut into fixed regions so growth never shifts existing addresses (the AVD #5777
lesson): host subnets in the first half, leaf uplink /31s in the next eighth, upper-tier /31s in
the next, loopbacks in the next, the last eighth reserved.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass

from generator.errors import BlueprintError, Problem, YamlPath
from generator.expand.fabric import PlaneBuild
from generator.model import Address, Pool, Subnet
from generator.vocab import LinkKind

REGION_HOSTS = (0, 4)  # (start eighth, eighths)
REGION_LEAF_P2P = (4, 1)
REGION_UPPER_P2P = (5, 1)
REGION_LOOPBACK = (6, 1)


@dataclass(frozen=True, slots=True)
class PlaneAddresses:
    subnets: tuple[Subnet, ...]
    addresses: tuple[Address, ...]
    p2p: dict[int, tuple[int, int]]  # wire index -> (a ip, b ip)
    loopbacks: dict[str, int]
    pool: Pool


def parse_pool(text: str) -> tuple[int, int]:
    net = ipaddress.IPv4Network(text)
    return int(net.network_address), net.prefixlen


def block_prefix(hosts: int) -> int:
    """Prefix length of a subnet holding `hosts` plus network, gateway and broadcast."""
    return 32 - max(2, math.ceil(math.log2(hosts + 3)))


def allocate(
    build: PlaneBuild,
    plane: str,
    pool_text: str,
    where: YamlPath,
    *,
    subnet_per_group: bool,
    bond_name: str,
    vlan: int = 0,
    dies: int = 1,
) -> PlaneAddresses:
    """`dies` > 1 (single-rail): each leaf gets `dies` subnets, VLAN `vlan + d`, device k of a
    server in subnet k % dies. A3 NPUs (2 dies): the two dies of one NPU are in different subnets,
    as the MindCluster deployer requires for Atlas A3 (deployer_0025: same subnet and hccn ping
    between the dies fails; domain.md §2.3); HCCL's A3 rank-table sample shows both dies in one
    /24, but it is a format sample; the deployment rule governs. Atlas 800 model 9000 (catalog
    npu_subnets_per_server 4): NPU i and i+4 share a subnet, 0-3 are apart (deployer_0025).
    Multi-rail: one subnet per leaf, holding the ports the group's hosts have on it (the 9000's
    rail leaf k carries NPU k and k+4)."""
    network, prefix = parse_pool(pool_text)
    size = 1 << (32 - prefix)
    eighth = size // 8
    dies = dies if build.rails == 1 and not subnet_per_group else 1
    leaf_ports = len(build.plan.lanes) // build.hosts_per_group  # a host's ports on one leaf
    if subnet_per_group:
        per_subnet_hosts = build.hosts_per_group
    elif build.rails == 1:
        per_subnet_hosts = len(build.plan.lanes) // dies
    else:
        per_subnet_hosts = build.hosts_per_group * leaf_ports
    sub_prefix = block_prefix(per_subnet_hosts)
    sub_size = 1 << (32 - sub_prefix)
    owners = build.leaf_groups if subnet_per_group else [(leaf.name,) for leaf in build.leaves]
    leaf_index = {leaf.name: leaf.index for leaf in build.leaves}
    uplink = LinkKind.UPLINK  # read once (vocab.py)
    upper_count = sum(1 for w in build.wires if w.kind == uplink and w.a_device not in leaf_index)
    switches = len(build.leaves) + len(build.spines) + len(build.cores)
    need = {
        "host subnets": (len(owners) * dies * sub_size, REGION_HOSTS),
        "leaf uplink /31s": (len(build.leaves) * len(build.plan.uplinks) * 2, REGION_LEAF_P2P),
        "upper-tier /31s": (upper_count * 2, REGION_UPPER_P2P),
        "loopbacks": (switches, REGION_LOOPBACK),
    }
    short = [(what, n, eighths) for what, (n, (_, eighths)) in need.items() if n > eighth * eighths]
    if short:
        needed = max(8 * n // eighths for _, n, eighths in short)
        min_prefix = 32 - math.ceil(math.log2(max(needed, 1)))
        what, n, _ = short[0]
        raise BlueprintError(
            [
                Problem(
                    where,
                    f"pool {pool_text} is too small for the {plane} plane: {n:,} addresses for {what} "
                    f"do not fit its share of the pool",
                    f"use a /{min_prefix} or larger",
                )
            ]
        )

    subnets: list[Subnet] = []
    addresses: list[Address] = []
    owner_subnet: dict[tuple[str, int], Subnet] = {}
    base = network + REGION_HOSTS[0] * eighth
    for i, names in enumerate(owners):
        for die in range(dies):
            net = base + (i * dies + die) * sub_size
            sn = Subnet.on_vlan(
                plane=plane, owners=tuple(names), network=net, prefix=sub_prefix, vlan=vlan + die
            )
            subnets.append(sn)
            for name in names:
                owner_subnet[(name, die)] = sn
    host = LinkKind.HOST  # read once (vocab.py)
    for w in build.wires:
        if w.kind != host:
            continue
        sn = owner_subnet[(w.b_device, w.port_index % dies if w.port_index >= 0 else 0)]
        if subnet_per_group:  # one address per host, on the bond across the group
            if w.port_index == 0:
                addresses.append(
                    Address(
                        device=w.a_device,
                        port=bond_name,
                        plane=plane,
                        ip=sn.network + 2 + w.member,
                        prefix=sub_prefix,
                        gateway=sn.gateway,
                        subnet=sn.name,
                    )
                )
            continue
        if build.rails == 1:  # slot of the port among the host's ports in its subnet
            offset = w.member * (leaf_ports // dies) + w.port_index // dies
        else:
            offset = w.member * leaf_ports + w.port_index // build.rails
        addresses.append(
            Address(
                device=w.a_device,
                port=w.a_port,
                plane=plane,
                ip=sn.network + 2 + offset,
                prefix=sub_prefix,
                gateway=sn.gateway,
                subnet=sn.name,
            )
        )

    p2p: dict[int, tuple[int, int]] = {}
    n_up = len(build.plan.uplinks)
    seen: dict[str, int] = {}
    upper_base = network + REGION_UPPER_P2P[0] * eighth
    upper_i = 0
    uplink = LinkKind.UPLINK  # read once (vocab.py)
    for i, w in enumerate(build.wires):
        if w.kind != uplink:
            continue
        if w.a_device in leaf_index:
            j = seen.get(w.a_device, 0)
            seen[w.a_device] = j + 1
            a = network + REGION_LEAF_P2P[0] * eighth + 2 * (leaf_index[w.a_device] * n_up + j)
        else:
            a = upper_base + 2 * upper_i
            upper_i += 1
        p2p[i] = (a, a + 1)
    loop_base = network + REGION_LOOPBACK[0] * eighth
    loopbacks = {
        sw.name: loop_base + k for k, sw in enumerate((*build.leaves, *build.spines, *build.cores))
    }
    used = len(owners) * dies * sub_size + 2 * len(p2p) + len(loopbacks)
    return PlaneAddresses(
        subnets=tuple(subnets),
        addresses=tuple(addresses),
        p2p=p2p,
        loopbacks=loopbacks,
        pool=Pool(plane=plane, network=network, prefix=prefix, used=used),
    )
