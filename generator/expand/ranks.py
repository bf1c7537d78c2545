"""NPU servers as HCCL and the schedulers see them: rank order, rank ids, and the failure and
scheduling domains of each server, named once for every output."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from generator.blueprint.facts import NpuFacts
from generator.blueprint.spec import Blueprint
from generator.catalog import HostModel
from generator.expand.addressing import PlaneAddresses
from generator.expand.planes import PLANE_CODE
from generator.model import (
    NIC_COMMANDS,
    Cdu,
    Device,
    Domain,
    Fabric,
    Link,
    Lossless,
    NpuDevice,
    NpuNicLimits,
    NpuServer,
    Rack,
)
from generator.records import replace
from generator.vocab import DomainKind, LinkKind, Plane, RackKind, Role, Zone

CODE = PLANE_CODE[Plane.PARAMETER]


def supernode_name(index: int) -> str:
    return f"supernode-{index:03d}"


def npu_servers(
    devices: tuple[Device, ...],
    links: tuple[Link, ...],
    addrs: Mapping[str, PlaneAddresses],
    models: Mapping[str, HostModel],
    domains: Callable[[Device, tuple[str, ...]], tuple[Domain, ...]],
) -> tuple[NpuServer, ...]:
    """NPU servers in rank order: supernode, pod, first leaf, server index (neighbouring ranks are
    close in the network); rank ids 0..N-1 in that order, device by device."""
    parameter, host, leaf = Plane.PARAMETER, LinkKind.HOST, Role.LEAF  # read once (vocab.py)
    leaf_of = {
        (x.a_device, x.a_port): x.b_device for x in links if x.plane == parameter and x.kind == host
    }
    npu_addr: dict[str, list] = {}
    for a in addrs[Plane.PARAMETER].addresses if Plane.PARAMETER in addrs else ():
        npu_addr.setdefault(a.device, []).append(a)
    inband = {a.device: a.ip for a in addrs[Plane.INBAND].addresses}
    pod = {d.name: d.pod or 0 for d in devices if d.role == leaf and d.plane == parameter}
    leaf_index = {d.name: d.index for d in devices if d.role == leaf and d.plane == parameter}
    found = []
    npu_server = Role.NPU_SERVER
    for i, d in enumerate(x for x in devices if x.role == npu_server):
        ports = npu_addr.get(d.name, ())
        leaves = tuple(dict.fromkeys(leaf_of[(d.name, a.port)] for a in ports))
        p = pod[leaves[0]] if leaves else 0
        first_leaf = leaf_index[leaves[0]] if leaves else 0
        key = (
            d.supernode is not None,
            d.supernode or 0,
            p,
            first_leaf,
            i,
        )  # servers outside supernodes first
        found.append((key, d, ports, leaves))
    found.sort(key=lambda f: f[0])
    out = []
    rank = 0
    for (_, _, p, _, _), d, ports, leaves in found:
        devs = tuple(
            NpuDevice(
                device_id=k,
                port=a.port,
                ip=a.ip,
                prefix=a.prefix,
                gateway=a.gateway,
                leaf=leaf_of[(d.name, a.port)],
                rank=rank + k,
            )
            for k, a in enumerate(ports)
        )
        rank += len(devs)
        m = models[d.name]
        out.append(
            NpuServer(
                name=d.name,
                host_ip=inband.get(d.name, 0),
                pod=p,
                supernode=d.supernode,
                leaves=leaves,
                devices=devs,
                domains=domains(d, leaves),
                accelerator=m.accelerator,
                npus=m.npus,
                dies_per_npu=m.dies_per_npu,
                super_pod_id=d.supernode,  # the planned supernode until the hardware's Super Pod ID is read
            )
        )
    return tuple(out)


def domain_namer(
    devices: Mapping[str, Device],
    racks: tuple[Rack, ...],
    cdus: tuple[Cdu, ...],
    fabric: Fabric | None,
) -> Callable[[Device, tuple[str, ...]], tuple[Domain, ...]]:
    """A server's domains from its device record and parameter leaves: rack, CDU, access unit
    (its leaf, or the rail group of leaves it is cabled to, named first-last:
    par-leaf-0001-0008), pod (3 tiers, when all its leaves are in one), fabric (par-spines in 2
    tiers, par-cores in 3) and supernode. Indexes: racks and CDUs in floor order, access units
    by their first leaf's index, pods and supernodes by the model's numbers."""
    rack_ids = {
        r.name: Domain(kind=DomainKind.RACK, index=i, name=r.name)
        for i, r in enumerate(
            x for x in racks if x.zone == Zone.TRAINING and x.kind == RackKind.COMPUTE
        )
    }
    cdu_of = {
        r: Domain(kind=DomainKind.CDU, index=i, name=c.name)
        for i, c in enumerate(cdus)
        for r in c.racks
    }
    tiers = fabric.tiers if fabric else 2
    top = None
    if tiers >= 2:
        top = Domain(
            kind=DomainKind.FABRIC,
            index=0,
            name=f"{CODE}-spines" if tiers == 2 else f"{CODE}-cores",
        )
    units: dict[tuple[str, ...], tuple[Domain, ...]] = {}

    def unit(leaf_names: tuple[str, ...]) -> tuple[Domain, ...]:
        leaves = sorted((devices[n] for n in leaf_names), key=lambda x: x.index)
        name = leaves[0].name
        if len(leaves) > 1:
            name += "-" + leaves[-1].name.rsplit("-", 1)[-1]
        leaf = Domain(kind=DomainKind.LEAF, index=leaves[0].index, name=name)
        out = [leaf]
        pods = {leaf.pod for leaf in leaves}
        if tiers == 3 and len(pods) == 1:
            p = pods.pop() or 0
            out.append(Domain(kind=DomainKind.POD, index=p, name=f"{CODE}-pod{p + 1:02d}"))
        return tuple(out)

    def domains(d: Device, leaf_names: tuple[str, ...]) -> tuple[Domain, ...]:
        out = [x for x in (rack_ids.get(d.rack), cdu_of.get(d.rack)) if x is not None]
        if leaf_names:
            if leaf_names not in units:
                units[leaf_names] = unit(leaf_names)
            out += units[leaf_names]
        if top is not None:
            out.append(top)
        if d.supernode is not None:
            out.append(
                Domain(
                    kind=DomainKind.SUPERNODE, index=d.supernode, name=supernode_name(d.supernode)
                )
            )
        return tuple(out)

    return domains


def hccl_environment(bp: Blueprint, lossless: Lossless) -> tuple[tuple[str, str], ...]:
    """HCCL variables every NPU server shares: the blueprint's hccl.env, with the RDMA class and
    the socket base port derived from the one lossless class and hccl.if_base_port."""
    env = {k: str(v) for k, v in bp.hccl.env.items()}
    env["HCCL_RDMA_SL"] = str(lossless.hccl_rdma_sl)
    env["HCCL_RDMA_TC"] = str(lossless.hccl_rdma_tc)
    env["HCCL_IF_BASE_PORT"] = str(bp.hccl.if_base_port)
    return tuple(sorted(env.items()))


def rank_table_version(bp: Blueprint, servers: tuple[NpuServer, ...]) -> str:
    version = bp.hccl.rank_table
    if version == "auto":
        return "1.2" if any(s.supernode is not None for s in servers) else "1.0"
    return version


def apply_facts(
    servers: tuple[NpuServer, ...], facts: NpuFacts | None, version: str
) -> tuple[tuple[NpuServer, ...], tuple[str, ...]]:
    """Each server's SDIDs and Super Pod ID from the collected facts; the servers a 1.2 rank
    table needs facts for and has none (in rank order). Facts that contradict the model (die
    count, device, NPU and chip ids, Super Pod IDs against the supernodes) are errors located
    in the facts file (NpuFacts.check)."""
    if version != "1.2":
        return servers, ()
    if facts is not None:
        facts.check(servers)
    hosts = facts.hosts if facts else {}
    out, missing = [], []
    for s in servers:
        dies = hosts.get(s.name)
        if dies is None:
            missing.append(s.name)
            out.append(s)
            continue
        sdid = {d.device_id: d.sdid for d in dies}
        devs = tuple(replace(d, sdid=sdid[d.device_id]) for d in s.devices)
        out.append(replace(s, devices=devs, super_pod_id=dies[0].super_pod_id))
    return tuple(out), tuple(missing)


def npu_nic_limits(models: Iterable[HostModel]) -> tuple[NpuNicLimits, ...]:
    """What hccn_tool accepts on each NPU server model in use (catalog `npu_nic`)."""
    out = {}
    for m in models:
        if m.kind == Role.NPU_SERVER:
            nic = m.npu_nic
            out[m.name] = NpuNicLimits(
                model=m.name,
                mtu_max=int(nic.get("mtu_max", 9702)),
                refused=tuple(nic.get("refused_networks", ())),
                confirmed=bool(nic.get("confirmed", True)),
                source=str(nic.get("source", "")),
                commands=tuple(c for c in NIC_COMMANDS if c in nic.get("commands", NIC_COMMANDS)),
                commands_source=str(nic.get("commands_source", "")),
            )
    return tuple(out[name] for name in sorted(out))
