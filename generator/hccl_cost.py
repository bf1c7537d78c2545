"""HCCL's time for one collective as `wanka predict` models it, and the figure generate can afford.

One cost model, two users (issue #43): `generator/predict/hccl.py` times every phase at the
slowest flow's max-min rate over the rendered cabling and hash draws; the acceptance plan
(`generator/expand/acceptance.py`) times the same phases with every flow at the scope's
per-NIC bound (`collision_free`): the collision-free plateau, what the flow model gives with
every flow spread evenly over all its equal paths (`hccl.collective(..., spread=True)`) on a
fabric whose only limit is that bound. Generate takes that closed form (microseconds per scope)
instead of the flow model (the hashed prediction of wanka-10k's scopes takes seconds to
minutes). Pure Python, no numpy: generate imports it; the phase arithmetic works on floats and
numpy arrays alike, so both users compute each figure with the same operations.

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
"""

from __future__ import annotations

import math

LATENCY_S = 60e-6  # coll_alg_operator.cc LATENCY: HCCL's own per-step estimate
# RoCEv2 bytes on the wire per packet beyond its payload: inter-frame gap 12, preamble+SFD 8,
# Ethernet 14, IPv4 20, UDP 8, InfiniBand BTH 12, ICRC 4 + FCS 4 = 82 (the table of
# https://pingdo.net/ai-infrastructure/roce-v2-header-overhead/, a third-party page; IBTA's
# RoCEv2 annex itself is not in the corpus). RETH (16, first packet of a WRITE) left out.
WIRE_OVERHEAD = 82
IB_MTUS = (256, 512, 1024, 2048, 4096)  # InfiniBand path MTUs a RoCE QP may use

# The acceptance role's pass threshold: p5 x (1 - MARGIN) (`wanka predict --write`)
MARGIN = 0.10
MARGIN_REASON = (
    "the model's own error against the public figures it is held to: the collision-free"
    " plateau within 5 % of NCCL's 24 GB/s-per-200G rule and the ECMP/NSLB ratio within 10 % of"
    " Tolly's 0.65 (tests/unit/test_predict.py); it also leaves PFC/DCQCN, the RDMA WRITE"
    " header (RETH) and run-to-run spread out, so a run below p5 by more than that is the"
    " fabric's, not the model's [reasoned, not measured on Ascend hardware]"
)

# What every predicted figure leaves out or assumes (the prediction's files and the review)
LIMITS = (
    "flow level: no PFC, DCQCN, ECN or buffer dynamics; max-min fair sharing of line rates",
    "per-flow ECMP hash drawn uniformly per hop and seed: Huawei's hash function is not public",
    "the first N of more equal next hops than `maximum load-balancing N` [unconfirmed]",
    "HCCL level1 algorithm as coll_alg_operator.cc picks it for large data (ring for 2 servers,"
    " NHR above); the pipeline algorithm is not modelled (it overlaps level0 and level1)",
    "NHR exchange partners modelled as distance doubling [unconfirmed]",
    "AllGather level1 as half of AllReduce's [unconfirmed]",
    "RoCEv2 goodput = IB MTU / (IB MTU + 82 bytes of headers, preamble and gap; pingdo.net"
    " roce-v2-header-overhead table)",
    "intra-server HCCS busbw from the plan's server scope (catalog value, [unconfirmed] there)",
    "failures: each spine above, and each uplink of, the scope's first leaf (leaves are alike)",
)
NO_HCCS = (
    "no intra-server busbw in the plan: level0 (inside a server) costs nothing here, so"
    " every figure is an upper bound"
)

# Where each constant comes from (the design review lists them beside its figures)
SOURCES = (
    "HCCL's level0/level1 split, its algorithm choice and the 60 us step delay: cann-hccl"
    " coll_all_reduce_mesh_executor.cc and operator/coll_alg_operator.cc (open HCCL source)",
    "RoCEv2 headers, preamble and gap, 82 bytes a packet: pingdo.net roce-v2-header-overhead"
    " (third-party; IBTA's annex not read)",
    "NPU port speeds and leaf oversubscription: the rendered cabling; intra-server HCCS busbw:"
    " the catalog's host model (its source, or [unconfirmed] there)",
)


def goodput(mtu: int) -> float:
    """Payload share of the line rate at the largest IB MTU that fits the port MTU (the
    RoCE headers, 58 bytes inside the frame, must fit too)."""
    payload = max(m for m in IB_MTUS if m + 58 <= max(mtu, 314))
    return payload / (payload + WIRE_OVERHEAD)


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


def level1(m: int, algo: str, op: str) -> list[tuple[list[int], float, int]]:
    """The level1 phases of `op` (AllGather: half of AllReduce's [unconfirmed])."""
    plan = phases(m, algo)
    if op != "all_reduce":
        plan = [(offsets, share / 2, max(1, steps // 2)) for offsets, share, steps in plan]
    return plan


def level0_seconds(size: float, p: int, op: str, hccs: float) -> float:
    """The mesh inside each server over HCCS (0 with one NPU or no HCCS figure)."""
    if p > 1 and hccs:
        share = 2 * (p - 1) / p if op == "all_reduce" else (p - 1) / p
        steps = 2 * (p - 1) if op == "all_reduce" else p - 1
        return share * size / (hccs * 1e9) + steps * LATENCY_S
    return 0.0


def phase_seconds(share: float, slice_bytes: float, *, qps: int, rate, steps: int):
    """One level1 phase: its share of the slice over `qps` flows per pair at `rate` (10^9
    bytes/s of payload per flow; a float or an array of draws), plus HCCL's step delays."""
    return share * slice_bytes / qps / (rate * 1e9) + steps * LATENCY_S


def busbw(size: float, seconds, ranks: int, op: str):
    """NCCL-tests bus bandwidth (10^9 bytes/s): algbw x 2(n-1)/n (AllReduce), x (n-1)/n."""
    factor = 2 * (ranks - 1) / ranks if op == "all_reduce" else (ranks - 1) / ranks
    return size / seconds / 1e9 * factor


def collision_free(
    servers: int,
    per_server: int,
    size: int,
    *,
    op: str,
    hccs: float,
    nic_gbytes_s: float,
    mtu: int,
    algo: str = "auto",
) -> float:
    """Busbw (10^9 bytes/s, 2 decimals) of `op` over `servers` x `per_server` ranks with every
    level1 flow at `nic_gbytes_s` of line rate: the plateau no hash collision lowers."""
    rate = nic_gbytes_s * goodput(mtu)
    seconds = level0_seconds(size, per_server, op, hccs)
    network = 0.0
    for _offsets, share, steps in level1(servers, algorithm(servers, algo), op):
        network += phase_seconds(share, size / per_server, qps=1, rate=rate, steps=steps)
    return round(float(busbw(size, seconds + network, servers * per_server, op)), 2)


def threshold(p5: float, margin: float = MARGIN) -> float:
    """The acceptance role's pass mark from a prediction's p5."""
    return round(p5 * (1 - margin), 2)
