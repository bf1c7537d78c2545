"""Flows over every ECMP path and their max-min fair rates (vectorised over hash seeds).

Routing: a flow goes from its NPU's leaf toward the destination leaf by the fewest switch hops
(eBGP/OSPF equal-cost paths of a Clos: every shortest path), each switch keeping at most its
`maximum load-balancing` next hops. Which of the equal links a flow takes is the switch's hash
of the packet header; Huawei's hash function and seeds are not public, so each hop is drawn
uniformly and independently per flow, once per seed, and the answer is a distribution over
seeds [hash unknown]. `spread` instead splits every flow evenly over all its equal links (the
fluid ideal a network-side load balancer such as NSLB approaches: collision-free).

Rates: max-min fair sharing by progressive filling (every unfrozen flow grows at the same
pace; a link that fills freezes the flows crossing it), one independent problem per seed, all
seeds advanced together with numpy. Flow level only: no PFC, DCQCN or buffer dynamics.
"""

from __future__ import annotations

import numpy as np

from generator.predict.fabric import Fabric


def _hops(n: int, nb: list[np.ndarray]) -> np.ndarray:
    """Switch-hop distance between every two switches (-1: unreachable), breadth-first from
    all sources at once with boolean matrix products."""
    adj = np.zeros((n, n), dtype=bool)
    for u, near in enumerate(nb):
        adj[u, near] = True
    dist = np.where(np.eye(n, dtype=bool), 0, -1)
    frontier = np.eye(n, dtype=bool)
    seen = frontier.copy()
    step = 0
    while frontier.any():
        step += 1
        frontier = (frontier.astype(np.float32) @ adj.astype(np.float32) > 0) & ~seen
        dist[frontier] = step
        seen |= frontier
    return dist


class Unreachable(Exception):
    """A flow has no path (a failure cut its leaf off)."""


class Router:
    """Equal-cost next hops toward each destination switch over the cables not `down`."""

    def __init__(self, fabric: Fabric, down: frozenset[int] = frozenset(), gone: int = -1):
        adj = fabric.adjacency(down)
        if gone >= 0:  # a failed switch: no link into or out of it
            adj = [
                [] if i == gone else [(v, link) for v, link in near if v != gone]
                for i, near in enumerate(adj)
            ]
        n = self.n = len(adj)
        self.nb = [np.array([v for v, _ in near], dtype=np.int64) for near in adj]
        self.lk = [np.array([link for _, link in near], dtype=np.int64) for near in adj]
        self.width = [fabric.ecmp.get(name, 1) for name in fabric.switches]
        self.hops = _hops(n, self.nb)
        self.slot = np.full(n * n, -1, dtype=np.int64)  # key -> its row in start/count
        self.start: list[int] = []
        self.count: list[int] = []
        self.links: list[int] = []
        self.nexts: list[int] = []
        self.arrays: tuple[np.ndarray, ...] = ()

    def _add(self, keys: np.ndarray) -> None:
        for key in np.unique(keys).tolist():
            u, dst = divmod(key, self.n)
            d = self.hops[dst]
            nb, lk = self.nb[u], self.lk[u]
            mask = (d[nb] == d[u] - 1) & (d[u] > 0)
            nb, lk = nb[mask][: self.width[u]], lk[mask][: self.width[u]]  # first N [unconfirmed]
            self.slot[key] = len(self.start)
            self.start.append(len(self.links))
            self.count.append(int(nb.size))
            self.links += lk.tolist()
            self.nexts += nb.tolist()
        self.arrays = tuple(
            np.asarray(a, dtype=np.int64) for a in (self.start, self.count, self.links, self.nexts)
        )

    def _table(self, keys: np.ndarray) -> tuple[np.ndarray, ...]:
        """(start, count) of each key's equal links, and the link and next-switch tables."""
        slot = self.slot[keys]
        if (slot < 0).any():
            self._add(keys[slot < 0])
            slot = self.slot[keys]
        start, count, links, nexts = self.arrays
        count = count[slot]
        if not count.all():
            raise Unreachable("a flow has no equal-cost path left")
        return start[slot], count, links, nexts

    def hashed(self, src: np.ndarray, dst: np.ndarray, seeds: int, seed: int = 0):
        """(row, directed link, 1) incidences of every flow under `seeds` hash draws; rows are
        seed-major (row = s * F + f). Unreachable when a flow has no path."""
        rng = np.random.default_rng(seed)
        cur = np.tile(src, seeds)
        dst_r = np.tile(dst, seeds)
        rows, out = [], []
        alive = np.flatnonzero(cur != dst_r)
        while alive.size:
            start, count, links, nexts = self._table(cur[alive] * self.n + dst_r[alive])
            pick = start + (rng.random(alive.size) * count).astype(np.int64)
            rows.append(alive)
            out.append(links[pick])
            cur[alive] = nexts[pick]
            alive = alive[cur[alive] != dst_r[alive]]
        if not rows:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
        r, k = np.concatenate(rows), np.concatenate(out)
        return r, k, np.ones(r.size)

    def spread(self, src: np.ndarray, dst: np.ndarray):
        """(flow, directed link, share) incidences with every flow split evenly over its equal
        next hops at each switch (the fluid, collision-free ideal)."""
        n = self.n
        flow = np.arange(src.size)
        cur, dst_f, share = src.copy(), dst.copy(), np.ones(src.size)
        out_f, out_l, out_w = [], [], []
        keep = cur != dst_f
        flow, cur, dst_f, share = flow[keep], cur[keep], dst_f[keep], share[keep]
        while flow.size:
            start, count, links, nexts = self._table(cur * n + dst_f)
            rep = np.repeat(np.arange(flow.size), count)
            offset = np.arange(rep.size) - np.repeat(np.cumsum(count) - count, count)
            pick = start[rep] + offset
            link, nxt = links[pick], nexts[pick]
            w = share[rep] / count[rep]
            out_f.append(flow[rep])
            out_l.append(link)
            out_w.append(w)
            # merge the rows of one flow that reach the same switch
            merged, back = np.unique(flow[rep] * n + nxt, return_inverse=True)
            share = np.bincount(back, w)
            flow, cur = merged // n, merged % n
            dst_f = dst[flow]
            keep = cur != dst_f
            flow, cur, dst_f, share = flow[keep], cur[keep], dst_f[keep], share[keep]
        if not out_f:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
        return np.concatenate(out_f), np.concatenate(out_l), np.concatenate(out_w)


def slowest(rows, links, weights, cap, flows: int, groups: int) -> np.ndarray:
    """The slowest flow's max-min fair rate in each group: the first level of progressive
    filling (every flow grows together until the first link fills; no flow ends below it, and
    those crossing that link end at it), so exact without filling further."""
    n_links = cap.size
    key = rows // flows * n_links + links
    load = np.bincount(key, weights, minlength=groups * n_links).reshape(groups, n_links)
    with np.errstate(divide="ignore"):
        return (cap / load).min(axis=1)


def max_min(rows, links, weights, cap, flows: int, groups: int) -> np.ndarray:
    """Max-min fair rate of each of `groups` x `flows` rows (group-major), each group an
    independent copy of the fabric with capacities `cap`; links of row r are `links` of the
    incidences naming r, weighted (a flow's share of a link)."""
    n_links = cap.size
    group = rows // flows
    key = group * n_links + links
    used, inc_link = np.unique(key, return_inverse=True)
    remaining = cap[used % n_links].astype(float)
    link_group = used // n_links
    total = flows * groups
    rate = np.zeros(total)
    frozen = np.zeros(total, dtype=bool)
    full = cap[used % n_links] * 1e-9
    while True:
        live = ~frozen[rows]
        if not live.any():
            break
        load = np.bincount(inc_link[live], weights[live], minlength=used.size)
        open_ = load > 0
        step = np.full(used.size, np.inf)
        step[open_] = remaining[open_] / load[open_]
        delta = np.full(groups, np.inf)
        np.minimum.at(delta, link_group[open_], step[open_])
        delta[~np.isfinite(delta)] = 0.0
        rate[~frozen] += delta[np.arange(total)[~frozen] // flows]
        remaining -= delta[link_group] * load
        hit = open_ & (remaining <= full)
        frozen[rows[live & hit[inc_link]]] = True
        no_link = np.bincount(rows[live], minlength=total) == 0
        frozen |= no_link  # flows without a shared link (none in practice)
    return rate
