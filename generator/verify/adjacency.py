"""Reachability over cabled adjacencies only: the routing domains the flow proof walks.

Two interfaces with addresses in one subnet are neighbours only if files/cabling.csv joins them:
a cable between them, or a path of cables, Eth-Trunk/bond memberships and VLANs (the layer-2
part of the graph). An interface cabled to none of the other interfaces of its subnet is cut
from that subnet here, so a static route's next hop or an OSPF/BGP adjacency over it counts for
nothing, and the interface is reported at its address line. The isolation check keeps the full
graph (an address alone may join two planes); only reachability needs the cables.
"""

from __future__ import annotations

from collections import defaultdict

from generator.verify import read
from generator.verify.report import Problem, Report

LAYER2 = ("if", "vlan")


class _Sets:
    """Union-find over graph nodes (path halving, union by size)."""

    def __init__(self) -> None:
        self.parent: dict[tuple, tuple] = {}
        self.size: dict[tuple, int] = {}

    def find(self, node: tuple) -> tuple:
        parent = self.parent
        if node not in parent:
            parent[node] = node
            self.size[node] = 1
            return node
        while parent[node] != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    def union(self, a: tuple, b: tuple) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return
        if self.size[ra] < self.size[rb]:
            ra, rb = rb, ra
        self.parent[rb] = ra
        self.size[ra] += self.size[rb]


def _name(node: tuple) -> str:
    return f"{node[1]} {node[2]}"


def cabled_components(
    g: read.Graph, components: list[set[tuple]], report: Report
) -> list[set[tuple]]:
    """The connected components of the graph without the address edges of interfaces that no
    cable joins to another interface of their subnet; each such interface is a problem. With
    none, the graph's own `components` (as rules.isolation found them)."""
    layer2 = _Sets()
    for a, near in g.adj.items():
        if a[0] in LAYER2:
            layer2.find(a)
            for b in near:
                if b[0] in LAYER2:
                    layer2.union(a, b)
    cut: set[tuple[tuple, tuple]] = set()
    for net, near in g.adj.items():
        if net[0] != "net" or net[1].endswith("/32"):
            continue  # a /32: a loopback, or a gateway outside the port's subnet (no neighbour)
        members = [n for n in near if n[0] == "if"]
        if len(members) < 2:
            continue  # alone on its subnet (a loopback, the provider hand-off): nothing to cable
        count: dict[tuple, int] = defaultdict(int)
        for m in members:
            count[layer2.find(m)] += 1
        for m in sorted(members):
            if count[layer2.find(m)] > 1:
                continue
            cut.add((m, net))
            others = ", ".join(_name(o) for o in sorted(members) if o != m)
            file, line = near[m]
            report.problems.append(
                Problem(
                    file,
                    line,
                    f"{_name(m)} ({net[1]}) is cabled to none of the other interfaces of its "
                    f"subnet ({others}): files/cabling.csv has no cable between them, so no route "
                    "or adjacency over this address reaches anything",
                )
            )
    if not cut:
        return components
    sets = _Sets()
    for a, near in g.adj.items():
        sets.find(a)
        for b in near:
            if (a, b) not in cut and (b, a) not in cut:
                sets.union(a, b)
    out: dict[tuple, set[tuple]] = {}
    for node in g.adj:  # in the order the nodes were added, as Graph.components
        out.setdefault(sets.find(node), set()).add(node)
    return list(out.values())
