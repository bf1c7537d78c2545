"""What HCCL sends for one collective on Atlas A2 servers, and how long it takes on the fabric.

The cost model (HCCL's algorithms, its per-step delay, RoCEv2 goodput and their sources) is
generator/hccl_cost.py, shared with the acceptance plan's collision-free figure; this module
routes each phase's flows over the rendered fabric and times the phase at its slowest flow.
- HCCL_RDMA_QPS_PER_CONNECTION (CANN envref_07_0094): default 1 QP per rank pair; with N the
  data is split evenly over N QPs, each its own flow (and hash).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from generator import hccl_cost
from generator.hccl_cost import algorithm, goodput
from generator.predict import flows
from generator.predict.fabric import Fabric


@dataclass(frozen=True, slots=True)
class Job:
    """Ranks of one collective: device IPs grouped per server, in rank order."""

    servers: tuple[tuple[str, ...], ...]

    @property
    def ranks(self) -> int:
        return sum(len(s) for s in self.servers)

    @property
    def per_server(self) -> int:
        return max(len(s) for s in self.servers)


def _pairs(job: Job, offsets: list[int]) -> list[tuple[str, str]]:
    out = []
    m = len(job.servers)
    for plane in range(job.per_server):
        column = [s[plane] for s in job.servers if plane < len(s)]
        for i, src in enumerate(column):
            off = offsets[i]
            j = (i ^ -off) if off < 0 else (i + off) % m
            if j < len(column) and j != i:
                out.append((src, column[j]))
    return out


@dataclass(slots=True)
class Timing:
    seconds: np.ndarray  # per seed
    network_gbytes_s: np.ndarray  # level1 busbw of one plane per seed (per NIC)
    algo: str


def collective(
    fabric: Fabric,
    job: Job,
    size: int,
    *,
    op: str = "all_reduce",
    hccs: float = 0.0,
    algo: str = "auto",
    seeds: int = 32,
    qps: int = 1,
    spread: bool = False,
    router: flows.Router | None = None,
) -> Timing:
    """Time of one collective of `size` bytes per rank over `seeds` hash draws."""
    router = router or flows.Router(fabric)
    m, p = len(job.servers), job.per_server
    chosen = algorithm(m, algo)
    draws = 1 if spread else seeds
    slice_bytes = size / p
    level0 = hccl_cost.level0_seconds(size, p, op, hccs)
    level1 = np.zeros(draws)
    eff = goodput(fabric.mtu)
    for offsets, share, steps in hccl_cost.level1(m, chosen, op):
        pairs = _pairs(job, offsets)
        rates = _rates(fabric, router, pairs, draws=draws, qps=qps, spread=spread) * eff
        level1 += hccl_cost.phase_seconds(share, slice_bytes, qps=qps, rate=rates, steps=steps)
    total = level0 + level1
    moved = 2 * (m - 1) / m if op == "all_reduce" else (m - 1) / m
    network = moved * slice_bytes / np.maximum(level1, 1e-30) / 1e9 if m > 1 else level1
    return Timing(seconds=total, network_gbytes_s=network, algo=chosen if m > 1 else "mesh")


def _rates(fabric: Fabric, router, pairs, *, draws: int, qps: int, spread: bool) -> np.ndarray:
    """The slowest flow's max-min fair rate (10^9 bytes/s of line rate) per draw: a phase is
    bulk-synchronous (each step waits for its slowest exchange), so that rate sets its time."""
    pairs = [pair for pair in pairs for _ in range(qps)]
    f = len(pairs)
    src = np.array([fabric.nic[a][0] for a, _ in pairs], dtype=np.int64)
    dst = np.array([fabric.nic[b][0] for _, b in pairs], dtype=np.int64)
    out_nic = np.array([fabric.nic[a][1] for a, _ in pairs], dtype=np.int64)
    in_nic = np.array([fabric.nic[b][2] for _, b in pairs], dtype=np.int64)
    if spread:
        rows, links, weights = router.spread(src, dst)
    else:
        rows, links, weights = router.hashed(src, dst, draws)
    every = np.arange(f * draws)
    rows = np.concatenate([rows, every, every])
    links = np.concatenate([links, np.tile(out_nic, draws), np.tile(in_nic, draws)])
    weights = np.concatenate([weights, np.ones(2 * f * draws)])
    return flows.slowest(rows, links, weights, fabric.cap, flows=f, groups=draws)
