"""What differs between planes, read once from the blueprint: switch models, sizing, routing,
host VLAN, and the lossless class."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from generator.blueprint.spec import Blueprint, LosslessSpec
from generator.errors import YamlPath
from generator.expand.fabric import parse_ratio
from generator.model import Lossless, SwitchMtu
from generator.vocab import Plane, Role, Zone

PLANE_CODE = {
    Plane.PARAMETER: "par",
    Plane.STORAGE: "sto",
    Plane.BUSINESS: "biz",
    Plane.INBAND: "inb",
    Plane.OOB: "oob",
    Plane.BORDER: "brd",
}
# Host-facing VLAN of the routed leaves whose plane names none (the business plane's comes from
# the blueprint). The VLAN is local to one leaf (every leaf routes), so one number per plane.
HOST_VLAN = {
    Plane.PARAMETER: 10,
    Plane.STORAGE: 20,
    Plane.BUSINESS: 30,
    Plane.INBAND: 40,
    Plane.OOB: 50,
}
NIC_LOSSLESS_TC = 3  # assumption: the highest of the NIC's four TCs carries the lossless class


@dataclass(frozen=True, slots=True)
class PlaneSpec:
    """Everything that differs between planes, read once from the blueprint."""

    plane: str
    where: YamlPath
    leaf: str
    spine: str
    core: str
    ratio: tuple[int, int] | None
    oversubscription: str
    split: str
    tiers: str | int
    spine_count: str | int
    pool: str
    routing: str  # bgp | ospf
    leaf_role: Role = Role.LEAF
    upper_role: Role = Role.SPINE
    multi_rail: bool = False
    dual_homed: bool = True  # hosts with N ports on this plane use N leaves (pair / rails)
    peer_links: int = 0
    uplinks: int | None = None
    subnet_per_group: bool = False
    bond: str = ""
    vlan: int = 0
    upper_zone: Zone = Zone.MANAGEMENT


def plane_specs(bp: Blueprint) -> dict[str, PlaneSpec]:
    """Routing: the blueprint's choice on the parameter plane, BGP on a dedicated storage plane,
    OSPF on the business and management planes."""
    nets = bp.networks
    pn, sn, bn, mn = nets.parameter, nets.storage, nets.business, nets.management
    specs = {
        Plane.PARAMETER: PlaneSpec(
            plane=Plane.PARAMETER,
            where=("networks", "parameter"),
            leaf=pn.leaf.model,
            spine=pn.spine.model,
            core=pn.core.model,
            ratio=parse_ratio(pn.oversubscription),
            oversubscription=pn.oversubscription,
            split=pn.leaf.split,
            tiers=pn.tiers,
            spine_count=pn.spine.count,
            pool=pn.pool,
            routing=pn.routing.protocol,
            multi_rail=pn.rail == "multi",
            dual_homed=False,
            upper_zone=Zone.TRAINING,
            vlan=HOST_VLAN[Plane.PARAMETER],
        ),
        Plane.STORAGE: PlaneSpec(
            plane=Plane.STORAGE,
            where=("networks", "storage"),
            leaf=sn.leaf.model,
            spine=sn.spine.model,
            core=sn.spine.model,
            ratio=parse_ratio(sn.oversubscription),
            oversubscription=sn.oversubscription,
            split=sn.leaf.split,
            tiers="auto",
            spine_count=sn.spine.count,
            pool=sn.pool,
            routing="bgp",
            upper_zone=Zone.TRAINING,
            vlan=HOST_VLAN[Plane.STORAGE],
        ),
        Plane.BUSINESS: PlaneSpec(
            plane=Plane.BUSINESS,
            where=("networks", "business"),
            leaf=bn.leaf.model,
            spine=bn.spine.model,
            core=bn.spine.model,
            ratio=parse_ratio(bn.oversubscription),
            oversubscription=bn.oversubscription,
            split="auto",
            tiers=2,
            spine_count=bn.spine.count,
            pool=bn.pool,
            routing="ospf",
            dual_homed=bn.leaf.mlag,
            peer_links=2 if bn.leaf.mlag else 0,
            subnet_per_group=True,
            bond="bond0",
            vlan=bn.vlan or HOST_VLAN[Plane.BUSINESS],
        ),
    }
    for plane in (Plane.INBAND, Plane.OOB):
        m = mn.inband if plane == Plane.INBAND else mn.oob
        specs[plane] = PlaneSpec(
            plane=plane,
            where=("networks", "management", plane),
            leaf=m.access.model,
            spine=m.core.model,
            core=m.core.model,
            ratio=None,
            oversubscription="",
            split="auto",
            tiers=2,
            spine_count="auto",
            pool=m.pool,
            routing="ospf",
            leaf_role=Role.ACCESS,
            upper_role=Role.CORE,
            dual_homed=False,
            uplinks=2,
            vlan=HOST_VLAN[plane],
        )
    if sn.mode == "shared":
        del specs[Plane.STORAGE]
    return specs


def roce_planes(bp: Blueprint) -> tuple[str, ...]:
    """Planes whose hosts speak RoCE: the parameter plane (HCCL), and a dedicated storage plane
    (DPC over 2 x 100G RoCE, the QCon 2025 Beijing talk 大模型在超大规模集群性能提升实践). A shared storage plane rides the business network."""
    dedicated = bp.networks.storage.mode == "dedicated"
    return (Plane.PARAMETER, Plane.STORAGE) if dedicated else (Plane.PARAMETER,)


# A RoCE NIC's MTU unless the blueprint sets one: RoCE's 4096-byte path MTU and its headers
HOST_MTU = 4200


def lossless_of(plane: str, cfg: LosslessSpec, mtu_limit: int = HOST_MTU) -> Lossless:
    """A plane's lossless class; its MTU is the blueprint's, else HOST_MTU or, when lower, the
    highest the plane's NICs accept (`mtu_limit`: the NPU NIC limit of the parameter plane)."""
    return Lossless(
        plane=plane,
        priority=cfg.priority,
        dscp=cfg.dscp,
        tc=NIC_LOSSLESS_TC,
        ecn=cfg.ecn,
        mtu=min(HOST_MTU, mtu_limit) if cfg.mtu is None else cfg.mtu,
        cnp_dscp=cfg.cnp_dscp,
    )


def lossless_classes(bp: Blueprint, npu_mtu_limit: int) -> tuple[Lossless, ...]:
    """The lossless class of every RoCE plane whose blueprint keeps PFC on (`pfc: false` drops
    it, and the design check then fails the plane)."""
    cfgs = {
        Plane.PARAMETER: bp.networks.parameter.lossless,
        Plane.STORAGE: bp.networks.storage.lossless,
    }
    return tuple(
        lossless_of(plane, cfgs[plane], npu_mtu_limit if plane == Plane.PARAMETER else HOST_MTU)
        for plane in roce_planes(bp)
        if cfgs[plane].pfc
    )


# Planes whose switches carry jumbo frames (the RoCE planes' data; hccn.conf and the storage NICs
# set the NIC MTU above 1500)


def switch_mtus(planes: Iterable[str], lossless: Iterable[Lossless]) -> tuple[SwitchMtu, ...]:
    """The switch MTUs of every jumbo plane built, from its hosts' NIC MTU: the lossless class's,
    HOST_MTU on a plane without one."""
    nic = {c.plane: c.mtu for c in lossless}
    return tuple(SwitchMtu.of(p, nic.get(p, HOST_MTU)) for p in Plane if p.is_jumbo and p in planes)
