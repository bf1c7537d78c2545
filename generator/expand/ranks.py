"""NPU servers as HCCL and the schedulers see them: rank order, rank ids, and the failure and
scheduling domains of each server, named once for every output."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from generator.catalog import HostModel
from generator.expand.addressing import PlaneAddresses
from generator.expand.planes import PLANE_CODE
from generator.model import Cdu, Device, Domain, Fabric, Link, Lossless, NpuDevice, NpuServer, Rack

CODE = PLANE_CODE["parameter"]


def supernode_name(index: int) -> str:
    return f"supernode-{index:03d}"


def npu_servers(
    devices: tuple[Device, ...],
    links: tuple[Link, ...],
    addrs: Mapping[str, PlaneAddresses],
    models: Mapping[str, HostModel],
) -> tuple[NpuServer, ...]:
    """NPU servers in rank order: supernode, pod, first leaf, server index (neighbouring ranks are
    close in the network); rank ids 0..N-1 in that order, device by device."""
    leaf_of = {
        (x.a_device, x.a_port): x.b_device
        for x in links
        if x.plane == "parameter" and x.kind == "host"
    }
    npu_addr: dict[str, list] = {}
    for a in addrs["parameter"].addresses if "parameter" in addrs else ():
        npu_addr.setdefault(a.device, []).append(a)
    inband = {a.device: a.ip for a in addrs["inband"].addresses}
    pod = {d.name: max(d.pod, 0) for d in devices if d.role == "leaf" and d.plane == "parameter"}
    leaf_index = {d.name: d.index for d in devices if d.role == "leaf" and d.plane == "parameter"}
    out = []
    for d in devices:
        if d.role != "npu-server":
            continue
        devs = tuple(
            NpuDevice(i, a.port, a.ip, a.prefix, a.gateway, leaf_of[(d.name, a.port)])
            for i, a in enumerate(npu_addr.get(d.name, ()))
        )
        leaves = tuple(dict.fromkeys(x.leaf for x in devs))
        m = models[d.name]
        out.append(
            NpuServer(
                d.name,
                inband.get(d.name, 0),
                pod[leaves[0]] if leaves else 0,
                d.supernode,
                leaves,
                devs,
                accelerator=m.accelerator,
                npus=m.npus,
                dies_per_npu=m.dies_per_npu,
            )
        )
    key = {
        s.name: (s.supernode, s.pod, leaf_index[s.leaves[0]] if s.leaves else 0, i)
        for i, s in enumerate(out)
    }
    ordered = sorted(out, key=lambda s: key[s.name])
    rank = 0
    ranked = []
    for s in ordered:
        devs = tuple(replace(x, rank=rank + i) for i, x in enumerate(s.devices))
        rank += len(devs)
        ranked.append(replace(s, devices=devs))
    return tuple(ranked)


def with_domains(
    servers: tuple[NpuServer, ...],
    devices: Mapping[str, Device],
    racks: tuple[Rack, ...],
    cdus: tuple[Cdu, ...],
    fabric: Fabric | None,
) -> tuple[NpuServer, ...]:
    """Each server's rack, CDU, access unit (its leaf, or the rail group of leaves it is cabled
    to, named first-last: par-leaf-0001-0008), pod (3 tiers, when all its leaves are in one),
    fabric (par-spines in 2 tiers, par-cores in 3) and supernode."""
    rack_ids = {
        r.name: Domain("rack", i, r.name)
        for i, r in enumerate(x for x in racks if x.zone == "training" and x.kind == "compute")
    }
    cdu_of = {r: Domain("cdu", i, c.name) for i, c in enumerate(cdus) for r in c.racks}
    tiers = fabric.tiers if fabric else 2
    top = None
    if tiers >= 2:
        top = Domain("fabric", 0, f"{CODE}-spines" if tiers == 2 else f"{CODE}-cores")
    units: dict[tuple[str, ...], tuple[Device, ...]] = {}
    for s in servers:
        if s.leaves not in units:
            units[s.leaves] = tuple(sorted((devices[n] for n in s.leaves), key=lambda x: x.index))
    unit_index = {
        k: i for i, k in enumerate(sorted(units, key=lambda k: units[k][0].index if k else 0))
    }
    out = []
    for s in servers:
        d = devices[s.name]
        found = []
        if d.rack in rack_ids:
            found.append(rack_ids[d.rack])
        if d.rack in cdu_of:
            found.append(cdu_of[d.rack])
        leaves = units[s.leaves]
        if leaves:
            name = leaves[0].name
            if len(leaves) > 1:
                name += "-" + leaves[-1].name.rsplit("-", 1)[-1]
            found.append(Domain("leaf", unit_index[s.leaves], name))
            pods = {leaf.pod for leaf in leaves}
            if tiers == 3 and len(pods) == 1:
                p = max(pods.pop(), 0)
                found.append(Domain("pod", p, f"{CODE}-pod{p + 1:02d}"))
        if top is not None:
            found.append(top)
        if s.supernode >= 0:
            found.append(Domain("supernode", s.supernode, supernode_name(s.supernode)))
        out.append(replace(s, domains=tuple(found)))
    return tuple(out)


def hccl_environment(bp: Mapping[str, Any], lossless: Lossless) -> tuple[tuple[str, str], ...]:
    """HCCL variables every NPU server shares: the blueprint's hccl.env, with the RDMA class and
    the socket base port derived from the one lossless class and hccl.if_base_port."""
    env = {k: str(v) for k, v in bp["hccl"]["env"].items()}
    env["HCCL_RDMA_SL"] = str(lossless.hccl_rdma_sl)
    env["HCCL_RDMA_TC"] = str(lossless.hccl_rdma_tc)
    env["HCCL_IF_BASE_PORT"] = str(bp["hccl"]["if_base_port"])
    return tuple(sorted(env.items()))


def rank_table_version(bp: Mapping[str, Any], servers: tuple[NpuServer, ...]) -> str:
    version = bp["hccl"]["rank_table"]
    if version == "auto":
        return "1.2" if any(s.supernode >= 0 for s in servers) else "1.0"
    return version
