"""`wanka predict`: the HCCL bandwidth a rendered cluster should reach, before anyone tests it.

Reads only the rendered folder (fabric.py): files/acceptance/plan.yml for the scopes, their
units and the HCCS bound; files/cabling.csv, the switch configs, files/hccn and a rank table
for the flows. For each acceptance scope (or one job rank table) it models HCCL's traffic
(hccl.py), routes every flow over the ECMP paths with per-flow hashing drawn over seeds, shares
links max-min fairly (flows.py) and reports algbw and busbw as p5/p50/p95, with no failure and
under each single spine and single uplink failure of the scope's first leaf (every leaf of a
rendered Clos is cabled alike, so its first leaf stands for all [assumption]).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from generator import hccl_cost
from generator.predict import fabric as fabric_mod
from generator.predict import flows, hccl
from generator.verify import safe
from generator.vocab import ScopeKind

PERCENTILES = (5, 50, 95)


@dataclass(slots=True)
class Result:
    """One scope (or job) and condition: busbw/algbw p5, p50, p95 in 10^9 bytes/s."""

    scope: str
    condition: str
    ranks: int
    algo: str
    busbw: tuple[float, float, float]
    algbw: tuple[float, float, float]
    network: tuple[float, float, float]  # level1 busbw per NIC
    units: int = 1
    # busbw with every flow at the scope's per-NIC bound (hccl_cost.collision_free: the figure
    # the design review shows; as built only, None under a failure)
    collision_free: float | None = None


@dataclass(slots=True)
class Prediction:
    folder: str
    size: int
    seeds: int
    qps: int
    mtu: int
    goodput: float
    hccs: float
    results: list[Result] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _pct(values: np.ndarray) -> tuple[float, float, float]:
    p = np.percentile(values, PERCENTILES)
    return (round(float(p[0]), 2), round(float(p[1]), 2), round(float(p[2]), 2))


@safe.located("files/acceptance/plan.yml")
def _plan(folder: Path) -> dict:
    where = "files/acceptance/plan.yml"
    if not safe.is_file(folder, where):
        raise safe.NotAnOutput(f"{folder}: no {where}: not a wanka output folder")
    data = safe.file_yaml(folder, folder / where) or {}
    for scope in data.get("scopes", []):
        if isinstance(scope.get("units"), list):
            scope["units"] = [
                u if isinstance(u, dict) else safe.yaml_text(where, u) for u in scope["units"]
            ]
    return data


def _hccs(plan: dict) -> float:
    """The intra-server busbw bound the plan states for the `server` scope (catalog value,
    [unconfirmed] there); 0 when the plan has none (level0 then costs nothing here)."""
    for scope in plan.get("scopes", []):
        if scope.get("kind") == ScopeKind.SERVER:
            return float(scope.get("bound_gbytes_s") or 0)
    return 0.0


def _job(fab: fabric_mod.Fabric, servers: list[str]) -> hccl.Job:
    per_host: dict[str, dict[int, str]] = {}
    for ip, (host, i) in fab.host_of.items():
        per_host.setdefault(host, {})[i] = ip
    return hccl.Job(
        tuple(
            tuple(per_host[s][i] for i in sorted(per_host[s]) if per_host[s][i] in fab.nic)
            for s in servers
            if s in per_host
        )
    )


def _ranktable_job(fab: fabric_mod.Fabric, ips: list[tuple[str, str]], folder) -> hccl.Job:
    order: dict[str, list[str]] = {}
    for ip, where in ips:
        if ip not in fab.host_of or ip not in fab.nic:
            raise fabric_mod.RankTableError(
                f"{where}: {ip} is no cabled NPU port of {folder} (hint: a rank table of this"
                f" cluster: `wanka ranktable` of its blueprint, or files/hccl/rank_table.json)"
            )
        order.setdefault(fab.host_of[ip][0], []).append(ip)
    return hccl.Job(tuple(tuple(v) for v in order.values()))


def failures(fab: fabric_mod.Fabric, job: hccl.Job) -> list[tuple[str, frozenset[int], int]]:
    """(name, cables down, switch gone) for each spine above the job's first leaf and each of
    that leaf's uplinks."""
    leaf = fab.nic[job.servers[0][0]][0]
    name = fab.switches[leaf]
    out = []
    spines = sorted({fab.switches[v] for v, _ in fab.up.get(name, ())})
    for spine in spines:
        out.append((f"spine {spine} down", frozenset(), fab.index[spine]))
    for _v, link in fab.up.get(name, ()):
        a, pa, b, pb = fab.ends[link // 2]
        out.append((f"uplink {a} {pa} - {b} {pb} down", frozenset({link // 2}), -1))
    return out


def _measure(fab, jobs, *, size, op, hccs, algo, seeds, qps, router) -> tuple:
    """Every unit's timings pooled: (seconds, network busbw) over units x seeds."""
    secs, net, algos = [], [], set()
    for job in jobs:
        t = hccl.collective(
            fab, job, size, op=op, hccs=hccs, algo=algo, seeds=seeds, qps=qps, router=router
        )
        secs.append(t.seconds)
        net.append(t.network_gbytes_s)
        algos.add(t.algo)
    return np.concatenate(secs), np.concatenate(net), "/".join(sorted(algos))


def _result(scope, condition, *, n, size, op, secs, net, algo, units, free=None) -> Result:
    alg = size / secs / 1e9  # nccl-tests: size is the buffer (AllGather: its output)
    return Result(
        scope=scope,
        condition=condition,
        ranks=n,
        algo=algo,
        busbw=_pct(hccl_cost.busbw(size, secs, n, op)),
        algbw=_pct(alg),
        network=_pct(net),
        units=units,
        collision_free=free,
    )


def _collision_free(scope: dict | None, job: hccl.Job, *, size, hccs, mtu, algo) -> float | None:
    """The design review's figure for a scope (hccl_cost.collision_free over its first unit at
    the plan's per-NIC bound, the server scope's at its HCCS bound); None for a job rank table
    or where the plan judges nothing (no bound)."""
    bound = float(scope.get("bound_gbytes_s") or 0) if scope else 0.0
    if not bound:
        return None
    return hccl_cost.collision_free(
        len(job.servers), job.per_server, size, op=scope["op"], hccs=hccs,
        nic_gbytes_s=bound, mtu=mtu, algo=algo,
    )  # fmt: skip


def predict(
    folder: Path,
    *,
    scopes: tuple[str, ...] = (),
    ranktable: Path | None = None,
    size: int | None = None,
    seeds: int = 32,
    failure_seeds: int = 8,
    qps: int = 1,
    algo: str = "auto",
    with_failures: bool = True,
    max_units: int = 8,
) -> Prediction:
    """The prediction for a rendered folder (NotAnOutput/Damaged for one wanka did not write)."""
    folder = Path(folder)
    with safe.opened(folder):
        plan = _plan(folder)
        fab = fabric_mod.load(folder)
        job_ips = fabric_mod.ranks(folder, ranktable) if ranktable else None
    size = size or int(plan.get("judged_at_bytes") or 1 << 30)
    hccs = _hccs(plan)
    out = Prediction(
        folder=folder.name,
        size=size,
        seeds=seeds,
        qps=qps,
        mtu=fab.mtu,
        goodput=round(hccl_cost.goodput(fab.mtu), 4),
        hccs=hccs,
    )
    leaves = plan.get("leaves", {})
    work: list[tuple[str, str, list[hccl.Job], int, dict | None]] = []
    if job_ips is not None:
        work.append(("job", "all_reduce", [_ranktable_job(fab, job_ips, folder)], 1, None))
    for scope in plan.get("scopes", []):
        name = scope["name"]
        if scopes and name not in scopes and scope["kind"] not in scopes:
            continue
        # the plan's own reason: HCCS across the SuperPoD
        if scope["kind"] == ScopeKind.SUPERNODE:
            out.notes.append(f"{name}: not predicted: its NPUs talk over the supernode's HCCS")
            continue
        units = scope["units"]
        if not isinstance(units, list):  # `every server`: one stands for all (same cabling)
            first = next(iter(leaves.values()))[0]
            jobs = [_job(fab, [first])]
            count = sum(len(v) for v in leaves.values())
        else:
            jobs = [_job(fab, [s for leaf in u["leaves"] for s in leaves[leaf]]) for u in units]
            count = len(jobs)
            jobs = jobs[:max_units]
        work.append((name, scope["op"], [j for j in jobs if j.servers], count, scope))
    if not hccs:
        out.notes.append(hccl_cost.NO_HCCS)
    base = flows.Router(fab)
    for name, op, jobs, count, scope in work:
        if not jobs or (len(jobs[0].servers) < 2 and not hccs):
            continue  # one server and no HCCS figure: measured, not predicted (as the plan)
        n = jobs[0].ranks
        common = {"size": size, "op": op, "hccs": hccs, "algo": algo, "qps": qps}
        secs, net, used = _measure(fab, jobs, seeds=seeds, router=base, **common)
        got = {"n": n, "size": size, "op": op, "secs": secs, "net": net, "algo": used}
        free = _collision_free(scope, jobs[0], size=size, hccs=hccs, mtu=fab.mtu, algo=algo)
        out.results.append(_result(name, "as built", units=count, free=free, **got))
        one_leaf = len({fab.nic[s[0]][0] for s in jobs[0].servers}) < 2
        if not with_failures or one_leaf or op != "all_reduce":
            continue
        for cond, down, gone in failures(fab, jobs[0]):
            router = flows.Router(fab, down=down, gone=gone)
            try:
                secs, net, used = _measure(
                    fab, jobs[:1], seeds=failure_seeds, router=router, **common
                )
            except flows.Unreachable:
                secs, net = np.full(1, np.inf), np.zeros(1)
            got = {"n": n, "size": size, "op": op, "secs": secs, "net": net, "algo": used}
            out.results.append(_result(name, cond, units=1, **got))
    return out


def advise_placement(folder: Path, cards: int, *, size: int | None = None, seeds: int = 32):
    """Placement advice for a job of `cards` NPUs (placement.py), plain rank order first."""
    import generator.predict.placement as advice

    folder = Path(folder)
    with safe.opened(folder):
        plan = _plan(folder)
        fab = fabric_mod.load(folder)
    leaves = plan.get("leaves", {})
    hosts = {h for h, _ in fab.host_of.values()}
    available = len(fab.nic) if hosts else 0
    if cards <= 0 or cards > available:
        raise safe.NotAnOutput(f"{folder}: --placement {cards}: the folder has {available} cards")
    return advice.advise(
        fab,
        leaves,
        lambda servers: _job(fab, servers),
        cards=cards,
        size=size or int(plan.get("judged_at_bytes") or 1 << 30),
        hccs=_hccs(plan),
        seeds=seeds,
    )
