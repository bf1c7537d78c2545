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

from collections import deque

import numpy as np

from generator.predict.fabric import Fabric


class Unreachable(Exception):
    """A flow has no path (a failure cut its leaf off)."""


class Router:
    """Equal-cost next hops toward each destination switch over the cables not `down`."""

    def __init__(self, fabric: Fabric, down: frozenset[int] = frozenset(), gone: int = -1):
        self.adj = fabric.adjacency(down)
        if gone >= 0:  # a failed switch: no link into or out of it
            self.adj = [
                [] if i == gone else [(v, link) for v, link in near if v != gone]
                for i, near in enumerate(self.adj)
            ]
        self.width = [fabric.ecmp.get(name, 1) for name in fabric.switches]
        self.dist: dict[int, np.ndarray] = {}
        self.cand: dict[int, tuple[int, int]] = {}  # key -> (start, count) in the tables
        self.links: list[int] = []
        self.nexts: list[int] = []

    def _distance(self, dst: int) -> np.ndarray:
        d = self.dist.get(dst)
        if d is None:
            d = np.full(len(self.adj), -1, dtype=np.int64)
            d[dst] = 0
            queue = deque([dst])
            while queue:
                u = queue.popleft()
                for v, _ in self.adj[u]:
                    if d[v] < 0:
                        d[v] = d[u] + 1
                        queue.append(v)
            self.dist[dst] = d
        return d

    def _candidates(self, key: int) -> tuple[int, int]:
        got = self.cand.get(key)
        if got is None:
            u, dst = divmod(key, len(self.adj))
            d = self._distance(dst)
            near = [(v, link) for v, link in self.adj[u] if d[v] >= 0 and d[v] == d[u] - 1]
            near = near[: self.width[u]]  # the first N equal links [unconfirmed]
            got = (len(self.links), len(near))
            self.links += [link for _, link in near]
            self.nexts += [v for v, _ in near]
            self.cand[key] = got
        return got

    def hashed(self, src: np.ndarray, dst: np.ndarray, seeds: int, seed: int = 0):
        """(row, directed link) incidences of every flow under `seeds` hash draws; rows are
        seed-major (row = s * F + f). Unreachable when a flow has no path."""
        n = len(self.adj)
        rng = np.random.default_rng(seed)
        cur = np.tile(src, seeds)
        dst_r = np.tile(dst, seeds)
        rows, links = [], []
        alive = np.flatnonzero(cur != dst_r)
        while alive.size:
            keys = cur[alive] * n + dst_r[alive]
            uniq, inv = np.unique(keys, return_inverse=True)
            table = np.array([self._candidates(int(k)) for k in uniq], dtype=np.int64)
            start, count = table[inv, 0], table[inv, 1]
            if not count.all():
                raise Unreachable("a flow has no equal-cost path left")
            pick = start + (rng.random(alive.size) * count).astype(np.int64)
            all_links = np.asarray(self.links, dtype=np.int64)
            rows.append(alive)
            links.append(all_links[pick])
            cur[alive] = np.asarray(self.nexts, dtype=np.int64)[pick]
            alive = alive[cur[alive] != dst_r[alive]]
        if not rows:
            return np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)
        r, k = np.concatenate(rows), np.concatenate(links)
        return r, k, np.ones(r.size)

    def spread(self, src: np.ndarray, dst: np.ndarray):
        """(flow, directed link, share) incidences with every flow split evenly over its equal
        next hops at each switch (the fluid, collision-free ideal)."""
        n = len(self.adj)
        flow = np.arange(src.size)
        cur, dst_f, share = src.copy(), dst.copy(), np.ones(src.size)
        out_f, out_l, out_w = [], [], []
        keep = cur != dst_f
        flow, cur, dst_f, share = flow[keep], cur[keep], dst_f[keep], share[keep]
        while flow.size:
            keys = cur * n + dst_f
            uniq, inv = np.unique(keys, return_inverse=True)
            table = np.array([self._candidates(int(k)) for k in uniq], dtype=np.int64)
            start, count = table[inv, 0], table[inv, 1]
            if not count.all():
                raise Unreachable("a flow has no equal-cost path left")
            rep = np.repeat(np.arange(flow.size), count)
            offset = np.arange(rep.size) - np.repeat(np.cumsum(count) - count, count)
            pick = start[rep] + offset
            link = np.asarray(self.links, dtype=np.int64)[pick]
            nxt = np.asarray(self.nexts, dtype=np.int64)[pick]
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
        return np.concatenate(out_f), np.concatenate(out_l), np.concatenate(out_w)


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
