"""Placement advice for a job size (issue #43 step 3): which servers, which rank order and
which HCCL settings minimise the predicted worst-case collision loss, beside plain rank order.

A proven-heuristic search, not an LP: every candidate is predicted with the same flow model
(hccl.collective over the same hash seeds) and ranked by its p5 busbw. Candidates:
- servers: the fewest leaves (plain rank order, as `wanka ranktable` places a job), half of
  each leaf, or one server per leaf, walking the plan's leaves in order (pods stay together);
- rank order: leaf by leaf (ring neighbours share a leaf) or round-robin over the leaves;
- level1 algorithm: HCCL's own choice or ring (HCCL_ALGO="level0:NA;level1:ring",
  CANN envref_07_0079);
- QPs per rank pair: 1, 2, 4 (HCCL_RDMA_QPS_PER_CONNECTION, CANN envref_07_0094: data split
  evenly over the QPs, each hashed on its own).
Loss = 1 - p5 busbw / the collision-free busbw of plain rank order (the same job with every flow
spread over all equal paths): ranking by loss is ranking by p5 busbw, and a setting that is
collision-free but slower (ring's 2(m-1) steps) is not mistaken for a gain. A bulk-synchronous step waits for the worst link among all the job
crosses, so placement alone helps little on 1:1 leaves; more QPs per pair help most.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from generator.predict import flows, hccl
from generator.predict.fabric import Fabric


@dataclass(frozen=True, slots=True)
class Candidate:
    servers: str
    order: str
    algo: str
    qps: int
    p5: float
    p50: float
    free: float
    loss: float
    first: tuple[str, ...]  # the first servers in rank order (what to put in the rank table)


def _servers(leaves: dict[str, list[str]], count: int, per_leaf: int) -> list[list[str]]:
    """Servers grouped by leaf, `per_leaf` of each leaf in the plan's order, `count` in all."""
    out, left = [], count
    for servers in leaves.values():
        take = servers[: min(per_leaf, left)]
        if take:
            out.append(take)
            left -= len(take)
        if not left:
            return out
    return []


def advise(
    fab: Fabric,
    leaves: dict[str, list[str]],
    job_of,
    *,
    cards: int,
    size: int,
    hccs: float,
    seeds: int = 32,
) -> list[Candidate]:
    """Candidates for a job of `cards` NPUs, the plain one first, then best p5 busbw first.
    `job_of(servers)` makes the hccl.Job of servers in rank order."""
    per_server = job_of([next(iter(leaves.values()))[0]]).per_server
    count = -(-cards // per_server)
    full = max(len(v) for v in leaves.values())
    router = flows.Router(fab)
    out: list[Candidate] = []
    spreads = {"fewest leaves": full, "half of each leaf": full // 2, "one per leaf": 1}
    for label, per_leaf in spreads.items():
        groups = _servers(leaves, count, per_leaf) if per_leaf else []
        if not groups or (label != "fewest leaves" and per_leaf == full):
            continue
        orders = {"leaf by leaf": [s for g in groups for s in g]}
        if len(groups) > 1:
            width = max(len(g) for g in groups)
            orders["round-robin"] = [g[i] for i in range(width) for g in groups if i < len(g)]
        for order, servers in orders.items():
            job = job_of(servers)
            n = job.ranks
            for algo in ("auto", "ring"):
                for qps in (1, 2, 4):
                    args = {"hccs": hccs, "algo": algo, "qps": qps, "router": router}
                    hashed = hccl.collective(fab, job, size, seeds=seeds, **args)
                    free = hccl.collective(fab, job, size, spread=True, **args)
                    bus = size / hashed.seconds / 1e9 * 2 * (n - 1) / n
                    ideal = float(size / free.seconds[0] / 1e9 * 2 * (n - 1) / n)
                    p5 = float(np.percentile(bus, 5))
                    out.append(
                        Candidate(
                            servers=label,
                            order=order,
                            algo=hashed.algo if algo == "auto" else "ring (HCCL_ALGO)",
                            qps=qps,
                            p5=round(p5, 2),
                            p50=round(float(np.median(bus)), 2),
                            free=round(ideal, 2),
                            loss=0.0,
                            first=tuple(servers[:4]),
                        )
                    )
    ref = out[0].free
    out = [replace(c, loss=round(1 - c.p5 / ref, 3) if ref else 0.0) for c in out]
    plain, rest = out[0], out[1:]
    return [plain, *sorted(rest, key=lambda c: (-c.p5, c.servers, c.order, c.algo, c.qps))]


def markdown(cards: int, candidates: list[Candidate]) -> str:
    plain = candidates[0]
    best = min(candidates, key=lambda c: c.loss)
    placed = min(
        (c for c in candidates if c.qps == 1 and "HCCL_ALGO" not in c.algo), key=lambda c: c.loss
    )

    def cut(c: Candidate) -> str:
        return f"{1 - c.loss / plain.loss:.0%} less" if plain.loss > 0 else "no loss to cut"

    lines = [
        f"# Placement advice: {cards} cards",
        "",
        f"Plain rank order (first row) loses {plain.loss:.1%} of its collision-free busbw"
        f" ({plain.free:g} GB/s) at p5 (worst case over hash seeds). Least loss found:"
        f" {best.loss:.1%} ({best.servers}, {best.order}, {best.algo}, {best.qps} QPs per rank"
        f" pair: {cut(best)}); with servers and rank order alone (HCCL defaults):"
        f" {placed.loss:.1%} ({placed.servers}, {placed.order}: {cut(placed)}), because each"
        " bulk-synchronous step waits for the worst of the hundreds of links the job crosses and"
        " per-flow hashing puts three or more flows on one of them somewhere in most draws;"
        " splitting each exchange over more QPs (HCCL_RDMA_QPS_PER_CONNECTION) evens that out."
        " Rows after the first: best p5 busbw first.",
        "",
        "| servers | rank order | level1 | QPs | busbw p5 | p50 | collision-free | loss |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    for c in candidates:
        lines.append(
            f"| {c.servers} | {c.order} | {c.algo} | {c.qps} | {c.p5:g} | {c.p50:g} |"
            f" {c.free:g} | {c.loss:.1%} |"
        )
    return "\n".join(lines) + "\n"
