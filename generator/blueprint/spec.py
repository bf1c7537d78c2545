"""The validated blueprint as typed records: what expand, analysis and the pipeline read.

`blueprint_spec(data)` builds them once, after validate() has checked the schema
(wanka-v1.schema.json), filled its defaults and run the semantic checks: each Struct mirrors
one schema object, field for field, with the schema's key names. A key with a schema default
is a required field (validate filled it: the defaults stay in the schema alone); an optional
key without one is None when the blueprint leaves it out. An unknown key is an
error (`forbid_unknown_fields`): the schema refuses it first, so one here means a Struct and
the schema disagree (tests/unit/test_blueprint_spec.py checks them against each other).

The catalog section stays the mapping the catalog package reads (`build_catalog`); its models
are typed there (generator.catalog). A YAML path for a located error is still written as the
schema's keys, e.g. ("networks", "storage", "pool").
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

Count = int | Literal["auto"]  # a spine count: a number or "auto"
Number = int | float  # the schema's "number": a written 30 stays 30 (printed as written)


class Record(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A blueprint object: read-only, no key the schema lacks. A subclass with an optional
    field before a required one says kw_only=True again (msgspec does not inherit it)."""


# metadata, compute, growth


class Metadata(Record):
    name: str
    site: str
    description: str


class Supernode(Record):
    servers: int


class Compute(Record, kw_only=True):
    server: str
    cards: int | None = None  # exactly one of cards and servers (the schema's oneOf)
    servers: int | None = None
    hostname: str
    index_start: int
    supernode: Supernode | None = None


class GrowthPlan(Record):
    cards: int


# zones


class TrainingRack(Record, kw_only=True):
    servers: int
    power_kw: Number
    cooling_kw: Number | None = None  # None: as power_kw
    height_u: int


class Row(Record):
    racks: int


class CduSpec(Record):
    capacity_kw: Number


class NetworkRack(Record):
    power_kw: Number


class Training(Record):
    cooling: Literal["liquid", "air"]
    airflow: Literal["auto", "port-side-intake", "port-side-exhaust"]
    rack: TrainingRack
    row: Row
    cdu: CduSpec
    network_rack: NetworkRack


class StorageNodes(Record):
    model: str
    count: int


class StorageRack(Record):
    nodes: int
    power_kw: Number


class Filesystem(Record):
    name: str
    mountpoint: str


class StorageZone(Record):
    nodes: StorageNodes
    access: Literal["dpc", "nfs"]
    rack: StorageRack
    filesystems: tuple[Filesystem, ...]


class ManagementZone(Record):
    model: str
    nodes: dict[str, int]


class Box(Record):
    """A border router or firewall: its model, and whether there are two."""

    model: str
    pair: bool


class Border(Record):
    router: Box
    firewall: Box
    pool: str
    provider: str
    nat: str | None = None  # None: the firewalls translate to the provider block


class Zones(Record):
    training: Training
    storage: StorageZone
    management: ManagementZone
    border: Border


# networks


class Switch(Record):
    """A switch layer by model (a spine or core, an access switch)."""

    model: str


class Leaf(Record):
    model: str
    split: str


class Spine(Record):
    model: str
    count: Count


class Routing(Record):
    protocol: Literal["bgp", "ospf"]
    asn_base: int


class LosslessSpec(Record):
    priority: int
    dscp: int
    ecn: Literal["ai-ecn", "static", "off"]
    cnp_dscp: int
    pfc: bool
    mtu: int | None = None  # None: the host MTU within the NPU NIC's limit


class ParameterNetwork(Record):
    rail: Literal["single", "multi"]
    leaf: Leaf
    spine: Spine
    core: Switch
    oversubscription: str
    tiers: Literal["auto", 2, 3]
    pool: str
    routing: Routing
    lossless: LosslessSpec


class StorageNetwork(Record):
    mode: Literal["dedicated", "shared"]
    leaf: Leaf
    spine: Spine
    oversubscription: str
    pool: str
    lossless: LosslessSpec


class BusinessLeaf(Record):
    model: str
    mlag: bool


class BusinessNetwork(Record):
    leaf: BusinessLeaf
    spine: Spine
    oversubscription: str
    pool: str
    vlan: int


class ManagementPlane(Record):
    pool: str
    access: Switch
    core: Switch


class ManagementNetwork(Record):
    inband: ManagementPlane
    oob: ManagementPlane


class Networks(Record):
    parameter: ParameterNetwork
    storage: StorageNetwork
    business: BusinessNetwork
    management: ManagementNetwork


# operations, acceptance, hccl, design, software, scheduler


class ThermalGuard(Record):
    enabled: bool
    threshold_c: int
    power_limit_w: int
    interval_s: int


class Operations(Record):
    npu_temperature_max_c: int
    thermal_guard: ThermalGuard


class CompileCache(Record):
    paths: tuple[str, ...]
    max_age_days: int
    max_gb: Number


class Acceptance(Record):
    efficiency: Number
    min_bytes: int
    max_bytes: int
    iters: int
    warmup: int
    batch: int
    checkpoint_write_gbps: Number
    idle_power_max_w: int
    compile_cache: CompileCache


class Parallelism(Record):
    tp: int | None = None
    pp: int | None = None
    dp: int | None = None
    sp: int | None = None
    ep: int | None = None


class Hccl(Record, kw_only=True):
    rank_table: Literal["auto", "1.0", "1.2"]
    facts: str | None = None  # relative to the blueprint's folder
    env: dict[str, str | int]
    if_base_port: int
    parallelism: Parallelism | None = None


class FailureRates(Record):
    rack: Number
    cdu: Number
    cable: Number


class Accept(Record):
    check: str  # a design check's name (the schema's enum: analysis.finding.Check)
    reason: str


class Design(Record):
    max_failure_share: Number
    accept: tuple[Accept, ...]
    failure_rates: FailureRates


class Software(Record):
    driver: str
    firmware: str
    cann: str


class Volcano(Record):
    mode: Literal["hypernodes", "labels"]
    namespace: str


class MindCluster(Record):
    namespace: str
    tor_level: Literal["auto", "single_layer", "double_layer"]


class Scheduler(Record):
    volcano: Volcano
    mindcluster: MindCluster


class Blueprint(Record, kw_only=True, rename={"api_version": "apiVersion"}):
    api_version: Literal["wanka/v1"]
    kind: Literal["Cluster"]
    metadata: Metadata
    catalog: dict[str, Any]  # read by build_catalog
    compute: Compute
    growth: GrowthPlan | None = None  # None: no plan beyond the build now
    zones: Zones
    networks: Networks
    operations: Operations
    acceptance: Acceptance
    hccl: Hccl
    design: Design
    software: Software
    scheduler: Scheduler


def blueprint_spec(data: Any) -> Blueprint:
    """The typed blueprint from validate()'s data (schema-valid, defaults filled)."""
    return msgspec.convert(data, Blueprint)
