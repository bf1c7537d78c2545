"""One pod of a build too large for this machine, in full, and the rest stood in for at its
boundary (`wanka twin up|test --pod N`): a 10,240-card build is 5,165 namespaces and 1,254 FRR
routers, about 26 GiB of FRR alone at the 21 MiB a daemon measured here.

A pod is what the parameter plane's leaves and spines join without the cores: the connected
components of the parameter cabling between them, numbered by their first device's name. The
twin runs that pod's leaves and spines, its NPU servers' NPU NICs (hccn.conf), and every core
cabled to the pod, each core with the BGP peers it has in the pod only. What the cores would
learn from the other pods, those pods' leaf subnets, each core announces itself (a blackhole
route and a `network`), as the rendered cores would pass them on: the pod's spines then see the
other pods at their boundary. The other planes (storage, business, management, border) are not
in a one-pod twin: cluster-1k and pod-128 run them in full.
"""

from __future__ import annotations

from generator.twin import vrp
from generator.vocab import Plane

Row = tuple[int, dict[str, str]]


class PodError(ValueError):
    """A --pod the build does not have."""


def _components(names: set[str], rows: list[Row]) -> list[set[str]]:
    parent = {n: n for n in names}

    def root(n: str) -> str:
        while parent[n] != n:
            parent[n] = parent[parent[n]]
            n = parent[n]
        return n

    for _, r in rows:
        a, b = r["a_device"], r["b_device"]
        if a in names and b in names:
            parent[root(a)] = root(b)
    groups: dict[str, set[str]] = {}
    for n in names:
        groups.setdefault(root(n), set()).add(n)
    return sorted(groups.values(), key=min)


def select(
    devices: dict[str, vrp.Device], groups: dict[str, list[str]], rows: list[Row], pod: int
) -> tuple[set[str], list[Row], int]:
    """(the devices of pod `pod` and the cores cabled to it, the parameter cables among them and
    to the pod's NPU servers, how many pods the build has). Trims the cores' BGP to the pod's
    peers and gives each core the other pods' leaf subnets to announce (vrp.Bgp.stand_in)."""
    cores = set(groups.get("parameter_cores", ()))
    fabric = set(groups.get("parameter_leaves", ())) | set(groups.get("parameter_spines", ()))
    parameter = [(n, r) for n, r in rows if r["plane"] == Plane.PARAMETER]
    pods = _components(fabric, parameter)
    if not cores or len(pods) < 2:
        raise PodError("the build has one pod (no parameter cores): run it in full")
    if not 1 <= pod <= len(pods):
        raise PodError(f"--pod {pod}: the build has pods 1 to {len(pods)}")
    mine = pods[pod - 1]
    servers = {
        r[side + "_device"]
        for _, r in parameter
        for side, other in (("a", "b"), ("b", "a"))
        if r[other + "_device"] in mine and r[side + "_device"] not in fabric | cores
    }
    near = {
        r[side + "_device"]
        for _, r in parameter
        for side, other in (("a", "b"), ("b", "a"))
        if r[side + "_device"] in cores and r[other + "_device"] in mine
    }
    keep = mine | near | servers
    kept_rows = [(n, r) for n, r in parameter if r["a_device"] in keep and r["b_device"] in keep]
    others = [
        net
        for other in pods
        if other is not mine
        for leaf in sorted(other)
        if leaf in devices
        for net in devices[leaf].host_subnets()
    ]
    addresses = {
        a.ip
        for name in keep & set(devices)
        for i in devices[name].interfaces.values()
        for a in i.addresses
    }
    for core in near:
        bgp = devices[core].bgp
        if bgp is not None:
            bgp.peers = [peer for peer in bgp.peers if peer[0] in addresses]
            bgp.stand_in = sorted(set(others), key=lambda n: (int(n.network_address), n.prefixlen))
    return keep, kept_rows, len(pods)
