"""The parameter-plane domain tree the schedulers read, built from the model's domains.

A server's *access unit* is what it hangs off on the parameter plane: its leaf (single rail), or
the rail group of leaves it is cabled to (multi-rail; named first-last, e.g. par-leaf-0001-0008).
Above the access units: the pod (3 tiers, `par-pod01`) and the whole fabric (`par-spines` in 2
tiers, `par-cores` in 3). With supernodes the supernode (HCCS scale-up domain) is the lowest
domain, and above it come only those RoCE domains that hold every supernode whole. A level that
would split a domain below it (a rail group across two pods) is left out, so every level is a
strict tree: each server in exactly one domain per level, each domain in one parent. The names
are the model's (`NpuServer.domains`), the same in every output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from generator.model import Cluster, Device
from generator.vocab import DomainKind, Plane, Role, Tier

PLANE = Plane.PARAMETER


@dataclass(frozen=True, slots=True)
class Level:
    """One tier of domains."""

    tier_name: Tier  # supernode | leaf | spine | core
    domains: dict[str, list[str]]  # domain -> members (servers, or domains one level down)
    of: dict[str, str]  # server -> its domain at this level


@dataclass(frozen=True, slots=True)
class Topology:
    servers: tuple[Device, ...]  # NPU servers in model order
    access: dict[str, tuple[Device, ...]]  # access unit -> its leaves
    fabric: tuple[Level, ...]  # access units, pods (3 tiers), the whole fabric
    hyper: tuple[Level, ...]  # supernodes (when any) or access units, then what holds them whole

    @property
    def supernodes(self) -> bool:
        return self.hyper[0].tier_name == Tier.SUPERNODE


def topology(cluster: Cluster) -> Topology:
    """The domain tree, from the model's domains of each NPU server (leaf, pod, fabric,
    supernode): the same names the inventory, monitoring and failure reports use."""
    by_name = cluster.device_by_name
    servers = tuple(d for d in cluster.devices if d.role == Role.NPU_SERVER)
    npu = {s.name: s for s in cluster.npu_servers}
    access: dict[str, tuple[Device, ...]] = {}
    order: dict[str, int] = {}
    unit_of: dict[str, str] = {}
    members: dict[str, list[str]] = {}
    for d in servers:  # model order = slot order on the leaf
        s = npu.get(d.name)
        unit = s.domain(DomainKind.LEAF) if s else None
        if unit is None:
            raise ValueError(f"NPU server {d.name} has no parameter-plane leaf")
        if unit.name not in access:
            access[unit.name] = tuple(sorted((by_name[n] for n in s.leaves), key=lambda x: x.index))
            order[unit.name] = unit.index
        unit_of[d.name] = unit.name
        members.setdefault(unit.name, []).append(d.name)
    members = dict(sorted(members.items(), key=lambda kv: order[kv[0]]))

    def named(kind: str) -> dict[str, str]:
        found = {n: npu[n].domain(kind) for n in unit_of}
        return {n: x.name if x else "" for n, x in found.items()}

    fabric = cluster.fabric(PLANE)
    tiers = fabric.tiers if fabric else 2
    above: list[tuple[str, dict[str, str]]] = []
    if tiers == 3:
        above.append((Tier.SPINE, named(DomainKind.POD)))
    if tiers >= 2:
        top = Tier.SPINE if tiers == 2 else Tier.CORE
        above.append((top, named(DomainKind.FABRIC)))
    fabric_levels = _stack(Level(Tier.LEAF, members, unit_of), above)

    supernode_of = {n: x for n, x in named(DomainKind.SUPERNODE).items() if x}
    if not supernode_of:
        return Topology(servers, access, fabric_levels, fabric_levels)
    if len(supernode_of) != len(servers):
        raise ValueError("some NPU servers are in a supernode and some are not")
    in_supernode: dict[str, list[str]] = {}
    for d in servers:
        in_supernode.setdefault(supernode_of[d.name], []).append(d.name)
    base = Level(Tier.SUPERNODE, in_supernode, supernode_of)
    levels = [(Tier.LEAF, unit_of), *above]
    return Topology(servers, access, fabric_levels, _stack(base, levels))


def _stack(base: Level, candidates: Sequence[tuple[str, dict[str, str]]]) -> tuple[Level, ...]:
    """`base`, then each candidate level (server -> domain) that holds every domain below whole."""
    levels = [base]
    for tier_name, parent_of in candidates:
        below = levels[-1]
        up: dict[str, str] = {}
        for server, child in below.of.items():
            parent = parent_of.get(server, "")
            if not parent or up.setdefault(child, parent) != parent:
                break
        else:
            domains: dict[str, list[str]] = {}
            for child, parent in up.items():
                domains.setdefault(parent, []).append(child)
            levels.append(Level(tier_name, domains, parent_of))
    return tuple(levels)
