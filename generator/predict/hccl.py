"""What HCCL sends for one collective on Atlas A2 servers, and how long it takes on the fabric.

Sources (cann-hccl, the open HCCL source; copies at github zhuxy-USTC/HCCL):
- coll_all_reduce_mesh_executor.cc (CollAllReduceMeshExecutor::KernelRun, 910B): AllReduce is
  level0 mesh ReduceScatter inside each server (over HCCS), then a level1 AllReduce of each
  1/p slice among the NPUs of the same local rank across servers (ring, NHR, NB or RHD), then a
  level0 mesh AllGather. So each NPU's NIC carries 1/p of the data, in p parallel planes.
- operator/coll_alg_operator.cc (SelectAlgoTypeForAllReduce): without HCCL_ALGO, level1 is
  chosen by an alpha-beta cost with a static delay LATENCY = 60 us per step ("静态时延 60 us"):
  ring 2(m-1) steps, NHR 2*ceil(log2 m), HD 2*log2 m (power of 2; RHD otherwise moves
  2(2m-1)/m of the data); ties keep ring, then NHR. For large sizes that is ring for m <= 2
  servers and NHR above. The pipeline algorithm (HCCL_ALGO docs, envref_07_0079) overlaps
  level0 and level1 and is not modelled: its prediction would be higher.
- docs/Ring.md, docs/RHD.md, docs/Mesh.md of cann-hccl: AllReduce costs 2(p-1)/p of the data
  per rank (ring, power-of-2 HD); mesh steps (p-1) alpha each.
- NHR's exchange partners are not in any page found: modelled as distance-doubling exchanges
  (rank i sends to i + 2^k) whose volumes sum to NHR's 2(m-1)/m [unconfirmed].
- HCCL_RDMA_QPS_PER_CONNECTION (CANN envref_07_0094): default 1 QP per rank pair; with N the
  data is split evenly over N QPs, each its own flow (and hash).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from generator.predict import flows
from generator.predict.fabric import Fabric

LATENCY_S = 60e-6  # coll_alg_operator.cc LATENCY: HCCL's own per-step estimate
# RoCEv2 bytes on the wire per packet beyond its payload: inter-frame gap 12, preamble+SFD 8,
# Ethernet 14, IPv4 20, UDP 8, InfiniBand BTH 12, ICRC 4 + FCS 4 = 82 (the table of
# https://pingdo.net/ai-infrastructure/roce-v2-header-overhead/, a third-party page; IBTA's
# RoCEv2 annex itself is not in the corpus). RETH (16, first packet of a WRITE) left out.
WIRE_OVERHEAD = 82
IB_MTUS = (256, 512, 1024, 2048, 4096)  # InfiniBand path MTUs a RoCE QP may use


def goodput(mtu: int) -> float:
    """Payload share of the line rate at the largest IB MTU that fits the port MTU (the
    RoCE headers, 58 bytes inside the frame, must fit too)."""
    payload = max(m for m in IB_MTUS if m + 58 <= max(mtu, 314))
    return payload / (payload + WIRE_OVERHEAD)


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


def algorithm(m: int, choice: str = "auto") -> str:
    """HCCL's level1 AllReduce algorithm for m servers (coll_alg_operator.cc, large data)."""
    if choice != "auto":
        return choice
    return "ring" if m <= 2 else "nhr"


def phases(m: int, algo: str) -> list[tuple[list[int], float, int]]:
    """Level1 AllReduce as (partner offset of each position, share of the slice each flow
    carries in that phase over all its steps, steps); position i sends to (i + offset) % m
    (HD: i XOR offset)."""
    if m <= 1:
        return []
    if algo == "ring":
        return [([1] * m, 2 * (m - 1) / m, 2 * (m - 1))]
    k = math.ceil(math.log2(m))
    if algo == "hd" and m & (m - 1) == 0:
        return [([-(1 << j)] * m, 2 / (1 << (j + 1)), 2) for j in range(k)]
    norm = (m - 1) / m / sum(1 / (1 << (j + 1)) for j in range(k))
    if algo == "hd":  # RHD off a power of two moves 2(2m-1)/m (coll_alg_operator.cc)
        norm = (2 * m - 1) / m / sum(1 / (1 << (j + 1)) for j in range(k))
    return [([1 << j] * m, 2 * norm / (1 << (j + 1)), 2) for j in range(k)]


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
    level0 = 0.0
    if p > 1 and hccs:
        share = 2 * (p - 1) / p if op == "all_reduce" else (p - 1) / p
        steps = 2 * (p - 1) if op == "all_reduce" else p - 1
        level0 = share * size / (hccs * 1e9) + steps * LATENCY_S
    level1 = np.zeros(draws)
    eff = goodput(fabric.mtu)
    plan = phases(m, chosen)
    if op != "all_reduce":  # AllGather: half of AllReduce's level1 [unconfirmed]
        plan = [(offsets, share / 2, max(1, steps // 2)) for offsets, share, steps in plan]
    for offsets, share, steps in plan:
        pairs = _pairs(job, offsets)
        rates = _rates(fabric, router, pairs, draws=draws, qps=qps, spread=spread) * eff
        level1 += share * slice_bytes / qps / (rates * 1e9) + steps * LATENCY_S
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
