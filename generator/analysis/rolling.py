"""The order Ansible changes hosts in, and the batches day-2 switch changes run in, from the
model's failure domains (computed once, in the analysis stage).

Each device belongs to one *batch domain*: an NPU server to its leaf domain
(`NpuServer.domain("leaf")`: its leaf, or its multi-rail leaf group), another host to its rack, a
switch to its M-LAG pair (the switches a peer-link joins) or to itself. Within every inventory
group the plays target (npu_servers, storage_nodes, management_nodes, each switch layer), the
members of each domain are spread evenly over the order: member i of a domain of n sits at
(i + 0.5) / n of the way. With `serial: N` Ansible's batch k is the group's hosts [kN, (k+1)N) in
inventory order, so while N is at most the number of (equal-size) domains a batch never holds two
servers behind one leaf or both members of an M-LAG pair.

Day-2 switch changes (files/switch-rollout.yml) go layer by layer (leaves and access switches,
spines, cores; within a role plane by plane): a batch takes at most MAX_LAYER_SHARE of its layer,
never both members of an M-LAG pair, and parameter-plane spines and cores go one at a time.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from generator.model import Cluster
from generator.vocab import DomainKind, Plane, Role

MAX_LAYER_SHARE = 0.25
ROLE_ORDER = (Role.LEAF, Role.ACCESS, Role.SPINE, Role.CORE)
ONE_AT_A_TIME = {(Plane.PARAMETER, Role.SPINE), (Plane.PARAMETER, Role.CORE)}


@dataclass(frozen=True, slots=True)
class Rolling:
    order: tuple[str, ...]  # every device: within each kind/layer spread over its domains
    domains: tuple[tuple[str, str], ...]  # (device, batch domain), device order
    switch_batches: tuple[tuple[str, ...], ...]  # day-2 switch changes, in order


def batch_domains(cluster: Cluster) -> dict[str, str]:
    """Device -> the failure domain a rolling batch takes at most one device of."""
    leaf = {s.name: s.domain(DomainKind.LEAF) for s in cluster.npu_servers}
    out: dict[str, str] = {}
    for d in cluster.devices:
        if d.plane:
            out[d.name] = "mlag:" + min(d.name, d.mlag_peer or d.name)
        elif leaf.get(d.name) is not None:
            out[d.name] = f"leaf:{leaf[d.name].name}"
        else:
            out[d.name] = f"rack:{d.rack}"
    return out


def _spread(domains: dict[str, list[str]]) -> list[str]:
    """Members of every domain spread evenly: member i of n at position (i + 0.5) / n."""
    keyed = [
        ((i + 0.5) / len(members), d, name)
        for d, members in enumerate(domains.values())
        for i, name in enumerate(members)
    ]
    return [name for *_, name in sorted(keyed)]


def rolling_order(cluster: Cluster, domain: dict[str, str]) -> list[str]:
    """NPU servers (from rank order), storage nodes, management nodes, then each switch layer,
    every kind or layer spread over its batch domains."""
    kinds: dict[tuple[str, str], dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    ranked = [s.name for s in cluster.npu_servers]
    seen = set(ranked)
    for name in ranked + [d.name for d in cluster.devices if d.name not in seen]:
        d = cluster.device_by_name[name]
        kinds[(d.plane, d.role)][domain[name]].append(name)
    return [name for kind in kinds.values() for name in _spread(kind)]


def switch_batches(cluster: Cluster) -> list[list[str]]:
    layers: dict[tuple[str, str], list[str]] = defaultdict(list)
    for d in cluster.devices:
        if d.configured:
            layers[(d.plane, d.role)].append(d.name)
    peer = {d.name: d.mlag_peer for d in cluster.devices}
    rank = {r: i for i, r in enumerate(ROLE_ORDER)}
    out: list[list[str]] = []
    for plane, role in sorted(layers, key=lambda k: (rank.get(k[1], len(rank)), k[1], k[0])):
        names = sorted(layers[(plane, role)])
        size = 1 if (plane, role) in ONE_AT_A_TIME else max(1, int(len(names) * MAX_LAYER_SHARE))
        mine: list[list[str]] = []
        for name in names:
            home = next((b for b in mine if len(b) < size and peer.get(name) not in b), None)
            if home is None:
                home = []
                mine.append(home)
            home.append(name)
        out.extend(mine)
    return out


def rolling(cluster: Cluster) -> Rolling:
    domain = batch_domains(cluster)
    return Rolling(
        order=tuple(rolling_order(cluster, domain)),
        domains=tuple(domain.items()),
        switch_batches=tuple(tuple(b) for b in switch_batches(cluster)),
    )
