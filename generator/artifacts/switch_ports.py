"""Each switch's cabled ports as the switch sees them, and the indexes the switch configs are built
from (one pass over the model's links and addresses per cluster), with the platform's grouping
rules: which host ports form one server Eth-Trunk."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache

from generator.model import (
    CONFIGURED_PLATFORMS,
    Cluster,
    Device,
    Link,
    Management,
    Subnet,
    port_sort_key,
)
from generator.vocab import LinkKind, Plane

# Platforms with templates (the model's); routers and firewalls get no config here.
PLATFORMS = CONFIGURED_PLATFORMS


def configured_switches(cluster: Cluster) -> tuple[Device, ...]:
    """The switches with a rendered configuration (files/switches/), in device order."""
    return tuple(d for d in cluster.devices if d.configured)


def ztp_switches(cluster: Cluster) -> tuple[Device, ...]:
    """The switches ZTP builds (files/ztp/): every configured switch but the ZTP path
    (`Cluster.ztp_path`), which must route before any ZTP request is answered and is therefore
    configured from the console (docs/bring-up.md step 1)."""
    path = {name for name, _kind in cluster.ztp_path}
    return tuple(d for d in configured_switches(cluster) if d.name not in path)


@dataclass(slots=True)  # not frozen: a frozen dataclass is built 4x slower, and there are many
class End:
    """One cabled port of a switch, seen from that switch."""

    link: Link
    port: str
    far: str
    far_port: str
    local_ip: int
    far_ip: int
    lower: bool  # this switch is the link's a side (lower tier, or the M-LAG peer-link a side)


@dataclass(frozen=True, slots=True)
class Context:
    """Indexes built once per cluster so that no function scans all links or addresses."""

    cluster: Cluster
    devices: Mapping[str, Device]
    platform: Mapping[str, str]  # switch -> platform: the context's switches with a template
    ends: Mapping[str, list[End]]  # switch -> its cabled ports
    bond: Mapping[str, str]  # host -> its business bond name
    subnet: Mapping[str, Subnet]  # switch -> (first) host subnet it is the gateway of
    subnets: Mapping[str, tuple[Subnet, ...]]  # switch -> every host subnet (A3: one per die)
    host_subnet: Mapping[tuple[str, str], Subnet]  # (host, port) -> the subnet of its address
    mlag_peer: Mapping[str, tuple[str, bool]]  # M-LAG member -> (other member, is a side)
    port_key: Callable[[str], tuple]  # port_sort_key, memoised per cluster (names repeat)


def context(cluster: Cluster, switches: Iterable[Device] | None = None) -> Context:
    """The indexes for `switches` (default: every switch with a template): a worker rendering
    part of the switches builds the cabled ports (`ends`) of its part only."""
    devices = cluster.device_by_name
    chosen = cluster.devices if switches is None else switches
    platform = {d.name: d.platform for d in chosen if d.platform in PLATFORMS}
    ends: dict[str, list[End]] = defaultdict(list)
    for link in cluster.links:
        if link.a_device in platform:
            ends[link.a_device].append(
                End(
                    link=link,
                    port=link.a_port,
                    far=link.b_device,
                    far_port=link.b_port,
                    local_ip=link.a_ip,
                    far_ip=link.b_ip,
                    lower=True,
                )
            )
        if link.b_device in platform:
            ends[link.b_device].append(
                End(
                    link=link,
                    port=link.b_port,
                    far=link.a_device,
                    far_port=link.a_port,
                    local_ip=link.b_ip,
                    far_ip=link.a_ip,
                    lower=False,
                )
            )
    business = Plane.BUSINESS  # read once (vocab.py)
    bond = {a.device: a.port for a in cluster.addresses if a.plane == business}
    subnets: dict[str, tuple[Subnet, ...]] = defaultdict(tuple)
    by_name = {}
    for s in cluster.subnets:
        by_name[s.name] = s
        for owner in s.owners:
            subnets[owner] += (s,)
    subnet = {owner: found[0] for owner, found in subnets.items()}
    host_subnet = {
        (a.device, a.port): by_name[a.subnet] for a in cluster.addresses if a.subnet in by_name
    }
    mlag_peer = {  # the peer-link's a side takes the DFS group's first priority
        d.name: (
            d.mlag_peer,
            any(e.lower for e in ends[d.name] if e.link.kind == LinkKind.PEER_LINK),
        )
        for d in chosen
        if d.mlag_peer is not None and d.name in platform
    }
    port_key = cache(port_sort_key)  # a fresh cache per cluster
    return Context(
        cluster=cluster,
        devices=devices,
        platform=platform,
        ends=ends,
        bond=bond,
        subnet=subnet,
        subnets=dict(subnets),
        host_subnet=host_subnet,
        mlag_peer=mlag_peer,
        port_key=port_key,
    )


def meth(dev: Device) -> Management | None:
    """The switch's management-port address, when it is managed on MEth in the VRF."""
    return dev.mgmt if dev.mgmt is not None and dev.mgmt.vrf else None


# ---------------------------------------------------------------------------------------------
# How the platform spells model facts


def server_trunks(ends: list[End], port_key: Callable[[str], tuple]) -> list[tuple[str, list[End]]]:
    """Host links of a business leaf grouped per server, in port order: server i gets Eth-Trunk
    switches.SERVER_TRUNK_BASE + i. Both members of an M-LAG pair cable server i to the same
    port, so both derive the same trunk and M-LAG numbers."""
    per_host: dict[str, list[End]] = defaultdict(list)
    for e in ends:
        per_host[e.far].append(e)
    groups = [(h, sorted(es, key=lambda e: port_key(e.port))) for h, es in per_host.items()]
    return sorted(groups, key=lambda g: port_key(g[1][0].port))
