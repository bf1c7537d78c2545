"""The blueprint's keys, declared once: type, default, bounds and description of each setting.

Each Struct is one object of a wanka/v1 blueprint, field for field, with the blueprint's key
names; a field's `Meta` holds its description and limits, its Python default the value a
blueprint may leave out. generator/blueprint/schema.py writes wanka-v1.schema.json from these
declarations (validate() checks a blueprint against it and fills the defaults from it;
editors read it), so adding a setting is one field here. A field without a default is a
required key; a field defaulting to None is optional and None when the blueprint leaves it
out. An unknown key is an error (`forbid_unknown_fields`; the schema refuses it first, located).

`blueprint_spec(data)` builds the records once, after validate() has checked the schema,
filled its defaults and run the semantic checks: what expand, analysis and the pipeline read.
The catalog section stays the mapping the catalog package reads (`build_catalog`); its keys
are declared by the catalog's records (generator.catalog: CatalogSection, SwitchModel, ...). A YAML
path for a located error is still written as the blueprint's keys, e.g.
("networks", "storage", "pool").
"""

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from generator.catalog import CatalogSection
from generator.vocab import Check

# Values several settings share. `extra={"ref": name}` writes the type once under the
# schema's `$defs` (DEFS) and refers to it.
Cidr = Annotated[
    str,
    Meta(
        description="IPv4 prefix, e.g. 10.64.0.0/12",
        pattern=r"^([0-9]{1,3}\.){3}[0-9]{1,3}/([0-9]|[12][0-9]|3[0-2])$",
        extra_json_schema={"patternErrorMessage": "write an IPv4 prefix such as 10.64.0.0/12"},
        extra={"ref": "cidr"},
    ),
]
Version = Annotated[
    str,
    Meta(
        pattern=r"^[0-9A-Za-z][0-9A-Za-z._-]*$",
        extra_json_schema={
            "patternErrorMessage": "write a version such as \"8.0.0\" (letters, digits, '.', '_' and '-'), quoted",
            "quotingAdvice": "quote versions",
        },
        description="Version string, quoted (YAML reads 8.10 unquoted as the number 8.1)",
        extra={"ref": "version"},
    ),
]
DnsName = Annotated[
    str,
    Meta(
        pattern=r"^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$",
        extra_json_schema={
            "patternErrorMessage": "use lower-case letters, digits and '-' (not first or last), at most 63 characters, so it is safe as a folder name"
        },
    ),
]
ModelName = Annotated[
    str,
    Meta(
        pattern=r"^[a-z0-9][a-z0-9.-]*$",
        extra_json_schema={
            "patternErrorMessage": "a catalog model name has lower-case letters, digits, '.' and '-' (`wanka catalog` lists them)"
        },
    ),
]  # a catalog key
Split = Annotated[
    str,
    Meta(
        pattern=r"^(auto|none|[1-8]x[0-9]+GE)$",
        extra_json_schema={"patternErrorMessage": "use auto, none or a breakout such as 2x200GE"},
    ),
]
AbsolutePath = Annotated[
    str,
    Meta(
        pattern=r"^/[A-Za-z0-9_./-]*$",
        extra_json_schema={"patternErrorMessage": "use an absolute path such as /data"},
    ),
]
RoleName = Annotated[
    str,
    Meta(
        pattern=r"^[a-z][a-z0-9-]{0,30}$",
        extra_json_schema={
            "patternErrorMessage": "use a lower-case role name such as controller (letters, digits and '-', at most 31 characters)"
        },
    ),
]
HcclVariable = Annotated[
    str,
    Meta(
        pattern=r"^HCCL_[A-Z0-9_]+$",
        extra_json_schema={
            "patternErrorMessage": "HCCL variables are named HCCL_ and upper-case letters, digits or '_'"
        },
    ),
]
Oversubscription = Annotated[
    str,
    Meta(
        pattern=r"^[1-9][0-9]*:[1-9][0-9]*$",
        extra_json_schema={
            "patternErrorMessage": 'write a ratio such as "2:1", quoted',
            "quotingAdvice": "quote ratios",
        },
        description="Oversubscription downlink:uplink bandwidth, quoted (YAML reads 1:1 "
        "unquoted as the number 61)",
    ),
]
# A spine count: a number or "auto"
Count = Literal["auto"] | Annotated[int, Meta(ge=1, le=4096)]
SpineCount = Annotated[Count, Meta(description="`auto` or a number")]
# The schema's "number": a written 30 stays 30 (printed as written). msgspec bounds a union
# member by member, so a bounded number names its bounds on both.
Number = int | float
Positive = Annotated[int, Meta(gt=0)] | Annotated[float, Meta(gt=0)]
Share = Annotated[int, Meta(gt=0, le=1)] | Annotated[float, Meta(gt=0, le=1)]
NonNegative = Annotated[int, Meta(ge=0)] | Annotated[float, Meta(ge=0)]


def catalog_model(what: str) -> Meta:
    """The description of a key naming a catalog model."""
    return Meta(description=f"{what} (catalog model name; `wanka catalog` lists them)")


def filled(record: type) -> Any:
    """A default of a whole object: its members' defaults (the schema's `default: {}`)."""
    return msgspec.field(default_factory=record)


class Record(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A blueprint object: read-only, no key the blueprint schema lacks. A subclass with an
    optional field before a required one says kw_only=True again (msgspec does not inherit it)."""


# metadata, compute, growth


class Metadata(Record):
    name: Annotated[
        DnsName,
        Meta(
            description="Cluster name: lower-case letters, digits and '-', used as the output folder name"
        ),
    ]
    site: Annotated[str, Meta(min_length=1, max_length=64, description="Data-centre site")] = (
        "site-1"
    )
    description: Annotated[str, Meta(description="Free text")] = ""


class Supernode(Record):
    servers: Annotated[
        int,
        Meta(
            ge=1,
            le=1024,
            description="Servers per supernode (e.g. 48 for a 384-NPU Atlas 900 A3 SuperPoD)",
        ),
    ]


class Compute(Record, kw_only=True):
    server: Annotated[ModelName, catalog_model("NPU server")] = "atlas-800t-a2"
    cards: (
        Annotated[
            int,
            Meta(ge=1, le=1048576, description="Total NPU cards; a multiple of the server's NPUs"),
        ]
        | None
    ) = None
    servers: (
        Annotated[
            int, Meta(ge=1, le=131072, description="Number of NPU servers (instead of cards)")
        ]
        | None
    ) = None
    hostname: Annotated[
        str,
        Meta(
            pattern=r"^[a-z0-9{][a-z0-9{}:.-]*$",
            extra_json_schema={
                "patternErrorMessage": "use lower-case letters, digits, '-' and {index}, e.g. \"npu-{index:04d}\""
            },
            description="Hostname pattern, Python format with {index}",
        ),
    ] = "npu-{index:04d}"
    index_start: Annotated[int, Meta(ge=0, description="First index")] = 1
    supernode: (
        Annotated[Supernode, Meta(description="Group servers into supernodes (scale-up domains)")]
        | None
    ) = None


class GrowthPlan(Record):
    cards: Annotated[
        int,
        Meta(
            ge=1,
            le=1048576,
            description="NPU cards of the final build; a multiple of the server's NPUs. Above compute.cards to plan ahead; below it, generate warns what the larger build moves",
        ),
    ]


# zones


class TrainingRack(Record):
    servers: Annotated[int, Meta(ge=1, le=32, description="Servers per compute rack")] = 4
    power_kw: Annotated[Positive, Meta(description="Power budget per rack (kW)")] = 30
    cooling_kw: (
        Annotated[
            Positive, Meta(description="Heat the rack's cooling removes (kW); defaults to power_kw")
        ]
        | None
    ) = None
    height_u: Annotated[int, Meta(ge=1, le=60, description="Usable rack units")] = 42


class Row(Record):
    racks: Annotated[int, Meta(ge=1, le=64, description="Compute racks per row")] = 16


class CduSpec(Record):
    capacity_kw: Annotated[Positive, Meta(description="Cooling capacity of one CDU (kW)")] = 600


class NetworkRack(Record):
    power_kw: Annotated[Positive, Meta(description="Power budget per network rack (kW)")] = 30


class Training(Record):
    cooling: Annotated[Literal["liquid", "air"], Meta(description="Rack cooling")] = "liquid"
    airflow: Annotated[
        Literal["auto", "port-side-intake", "port-side-exhaust"],
        Meta(
            description="Airflow of the switches and firewalls the bill of materials orders (fixed-configuration boxes come in both: port-side intake takes cold air in at the port panel, port-side exhaust blows hot air out of it). auto: from the hot/cold-aisle layout, per rack: a switch in a compute rack faces its ports to the servers' network ports, at the rear in the hot aisle, so it exhausts on the port side; a switch in a network rack faces its ports to the front, the cold aisle where it is patched, so it takes air in on the port side [the servers' rear ports are unconfirmed per model]. A chassis has one airflow and no variant: the value names what to mount and which way."
        ),
    ] = "auto"
    rack: TrainingRack = filled(TrainingRack)
    row: Row = filled(Row)
    cdu: Annotated[
        CduSpec,
        Meta(
            description='Coolant distribution units feeding liquid-cooled racks. Design rule N+1: with any one CDU of the zone out, the others carry its load (the CDUs share the zone\'s secondary loop); wanka warns, with the CDU count that holds it, when the planned CDUs do not (Vertiv, How N+1 redundancy supports continuous data center cooling: "If your system needs four chillers or coolant distribution units (CDUs) to maintain performance, N+1 means installing five", https://www.vertiv.com/en-us/about/news-and-insights/articles/educational-articles/how-n1-redundancy-supports-continuous-data-center-cooling)'
        ),
    ] = filled(CduSpec)
    network_rack: NetworkRack = filled(NetworkRack)


class StorageNodes(Record):
    model: Annotated[ModelName, catalog_model("Storage node")] = "oceanstor-pacific-9550"
    count: Annotated[int, Meta(ge=0, le=4096, description="Storage nodes")] = 4


class StorageRack(Record):
    nodes: Annotated[int, Meta(ge=1, le=32, description="Storage nodes per rack")] = 6
    power_kw: Annotated[Positive, Meta(description="Power budget per rack (kW)")] = 15


class Filesystem(Record):
    name: Annotated[
        str,
        Meta(
            pattern=r"^[A-Za-z0-9_.-]+$",
            extra_json_schema={"patternErrorMessage": "use letters, digits, '_', '.' and '-'"},
            description="Storage file system / namespace",
        ),
    ]
    mountpoint: Annotated[AbsolutePath, Meta(description="Absolute mount point")]


class StorageZone(Record):
    nodes: StorageNodes = filled(StorageNodes)
    access: Annotated[
        Literal["dpc", "nfs"],
        Meta(
            description="How servers reach storage: dpc (OceanStor DPC client, recommended) or nfs (legacy)"
        ),
    ] = "dpc"
    rack: StorageRack = filled(StorageRack)
    filesystems: Annotated[
        tuple[Filesystem, ...], Meta(description="File systems mounted on every NPU server")
    ] = (Filesystem(name="train-data", mountpoint="/data"),)


class ManagementZone(Record):
    model: Annotated[ModelName, catalog_model("Management node")] = "taishan-200-2280"
    nodes: Annotated[
        dict[RoleName, Annotated[int, Meta(ge=0, le=64)]],
        Meta(description="Management nodes by role, e.g. {controller: 3}"),
    ] = msgspec.field(default_factory=lambda: {"controller": 3, "monitoring": 2, "bastion": 2})


class Router(Record):
    model: Annotated[ModelName, catalog_model("Border router")] = "ne8000-m8"
    pair: bool = True


class Firewall(Record):
    model: Annotated[ModelName, catalog_model("Firewall")] = "usg6000e"
    pair: bool = True


class Border(Record):
    router: Router = filled(Router)
    firewall: Firewall = filled(Firewall)
    pool: Annotated[
        Cidr,
        Meta(
            description="Links between the firewalls and the border routers (point-to-point /31s)"
        ),
    ] = "10.103.0.0/24"
    provider: Annotated[
        Cidr,
        Meta(
            description="The provider hand-off: one /31 per border router (router first, provider second); the provider's address is the routers' default route. The default is the RFC 5737 documentation range: set your provider's addresses"
        ),
    ] = "192.0.2.0/29"
    nat: (
        Annotated[
            Cidr,
            Meta(
                description="Source NAT pool: the business plane leaves through the provider with these addresses (one equal section per firewall; the border routers route each section back to its firewall). The provider must route the pool to the border routers. Default: the upper half of `provider` (its lower half holds the hand-offs)"
            ),
        ]
        | None
    ) = None


class Zones(Record):
    training: Training = filled(Training)
    storage: StorageZone = filled(StorageZone)
    management: ManagementZone = filled(ManagementZone)
    border: Annotated[
        Border,
        Meta(
            description="The only way in from outside: router + firewall, to the business plane and the management zone"
        ),
    ] = filled(Border)


# networks


class ParameterLeaf(Record):
    model: Annotated[ModelName, catalog_model("Parameter-plane leaf")] = "ce9860-4c-ei"
    split: Annotated[
        Split,
        Meta(
            description="Breakout of leaf ports toward servers, e.g. 2x200GE; `auto` derives it from the port speeds"
        ),
    ] = "auto"


class ParameterSpine(Record):
    model: Annotated[ModelName, catalog_model("Parameter-plane spine")] = "ce16816"
    count: SpineCount = "auto"


class ParameterCore(Record):
    model: Annotated[ModelName, catalog_model("Parameter-plane core (3 tiers)")] = "ce16816"


class Routing(Record):
    protocol: Literal["bgp", "ospf"] = "bgp"
    asn_base: Annotated[int, Meta(ge=1, le=4294967295, description="First private ASN")] = (
        4200000000
    )


class LosslessSpec(Record):
    priority: Annotated[
        int, Meta(ge=0, le=7, description="The one lossless priority (PFC, HCCL_RDMA_SL)")
    ] = 4
    dscp: Annotated[
        int, Meta(ge=0, le=63, description="DSCP of RoCE traffic (HCCL_RDMA_TC = 4 x DSCP)")
    ] = 33
    ecn: Annotated[
        Literal["ai-ecn", "static", "off"], Meta(description="ECN marking on the lossless queue")
    ] = "ai-ecn"
    cnp_dscp: Annotated[
        int,
        Meta(
            ge=0,
            le=63,
            description="DSCP of DCQCN congestion notification packets (NIC hccn_tool -dcqcn -s cnp_dscp; switches map it to cs6, scheduled strict priority)",
        ),
    ] = 48
    pfc: Annotated[
        bool,
        Meta(
            description="false: the plane has no lossless class (RoCE then runs lossy and the design check fails)"
        ),
    ] = True
    mtu: (
        Annotated[
            int,
            Meta(
                ge=68,
                le=9702,
                description="MTU of the plane's host NICs; default 4200 (RoCE's 4096-byte path MTU and its headers), or the NPU server model's hccn_tool limit when lower (catalog npu_nic.mtu_max: 4192 on the Atlas 900 A3 node)",
            ),
        ]
        | None
    ) = None


class ParameterNetwork(Record):
    rail: Annotated[
        Literal["single", "multi"],
        Meta(
            description="single: all NPU ports of a server on one leaf; multi: NPU i of every server in a rail group on rail leaf i"
        ),
    ] = "single"
    leaf: ParameterLeaf = filled(ParameterLeaf)
    spine: ParameterSpine = filled(ParameterSpine)
    core: ParameterCore = filled(ParameterCore)
    oversubscription: Oversubscription = "1:1"
    tiers: Annotated[
        Literal["auto", 2, 3],
        Meta(description="Clos tiers: auto picks 2 or 3 from the switch radices"),
    ] = "auto"
    pool: Annotated[
        Cidr, Meta(description="Address pool for NPU subnets, point-to-point links and loopbacks")
    ] = "10.64.0.0/12"
    routing: Routing = filled(Routing)
    lossless: LosslessSpec = filled(LosslessSpec)


class StorageLeaf(Record):
    model: Annotated[ModelName, catalog_model("Storage-plane leaf")] = "ce8851-32cq8dq-p"
    split: Annotated[Split, Meta(description="Breakout toward hosts")] = "auto"


class StorageSpine(Record):
    model: Annotated[ModelName, catalog_model("Storage-plane spine")] = "ce16804"
    count: SpineCount = "auto"


class StorageNetwork(Record):
    mode: Annotated[
        Literal["dedicated", "shared"],
        Meta(
            description="dedicated: own leaves/spines; shared: storage traffic rides the business plane (legacy, warned)"
        ),
    ] = "dedicated"
    leaf: StorageLeaf = filled(StorageLeaf)
    spine: StorageSpine = filled(StorageSpine)
    oversubscription: Oversubscription = "1:1"
    pool: Annotated[Cidr, Meta(description="Address pool of the storage plane")] = "10.96.0.0/14"
    lossless: Annotated[
        LosslessSpec,
        Meta(
            description="Lossless class of the storage plane: DPC runs over RoCE (the QCon 2025 Beijing talk 大模型在超大规模集群性能提升实践: 2 x 100G RoCE), so storage leaves, spines and the hosts' storage NICs carry PFC and ECN like the parameter plane"
        ),
    ] = filled(LosslessSpec)


class BusinessLeaf(Record):
    model: Annotated[ModelName, catalog_model("Business-plane leaf (M-LAG pair)")] = (
        "ce6865-48s8cq-ei"
    )
    mlag: Annotated[
        bool, Meta(description="Leaves in M-LAG pairs, servers bonded with LACP across the pair")
    ] = True


class BusinessSpine(Record):
    model: Annotated[ModelName, catalog_model("Business-plane spine")] = "ce8850-64cq-ei"
    count: SpineCount = 2


class BusinessNetwork(Record):
    leaf: BusinessLeaf = filled(BusinessLeaf)
    spine: BusinessSpine = filled(BusinessSpine)
    oversubscription: Oversubscription = "2:1"
    pool: Annotated[Cidr, Meta(description="Address pool of the business plane")] = "10.100.0.0/16"
    vlan: Annotated[int, Meta(ge=2, le=4094, description="Business VLAN")] = 100


class InbandAccess(Record):
    model: Annotated[ModelName, catalog_model("In-band access switch")] = "ce6881-48s6cq"


class InbandCore(Record):
    model: Annotated[ModelName, catalog_model("In-band core switch")] = "ce8850-64cq-ei"


class InbandPlane(Record):
    pool: Annotated[
        Cidr, Meta(description="In-band management addresses (host OS, switch management)")
    ] = "10.101.0.0/16"
    access: InbandAccess = filled(InbandAccess)
    core: InbandCore = filled(InbandCore)


class OobAccess(Record):
    model: Annotated[ModelName, catalog_model("Out-of-band access switch")] = "ce5882-48t4s"


class OobCore(Record):
    model: Annotated[ModelName, catalog_model("Out-of-band core switch")] = "ce6881-48s6cq"


class OobPlane(Record):
    pool: Annotated[Cidr, Meta(description="Out-of-band (BMC, switch MEth) addresses")] = (
        "10.102.0.0/16"
    )
    access: OobAccess = filled(OobAccess)
    core: OobCore = filled(OobCore)


class ManagementNetwork(Record):
    inband: InbandPlane = filled(InbandPlane)
    oob: OobPlane = filled(OobPlane)


class Networks(Record):
    parameter: ParameterNetwork = filled(ParameterNetwork)
    storage: StorageNetwork = filled(StorageNetwork)
    business: BusinessNetwork = filled(BusinessNetwork)
    management: ManagementNetwork = filled(ManagementNetwork)


# operations, acceptance, hccl, design, software, scheduler


class ThermalGuard(Record):
    enabled: Annotated[bool, Meta(description="Install the timer")] = True
    threshold_c: Annotated[
        int, Meta(ge=30, le=110, description="Temperature that triggers the power cap (degrees C)")
    ] = 85
    power_limit_w: Annotated[
        int, Meta(ge=50, le=1000, description="Power cap applied to a hot NPU (W)")
    ] = 300
    interval_s: Annotated[
        int, Meta(ge=5, le=3600, description="How often the timer checks (seconds)")
    ] = 60


class Operations(Record):
    npu_temperature_max_c: Annotated[
        int,
        Meta(
            ge=30, le=110, description="Preflight fails when an NPU is hotter than this (degrees C)"
        ),
    ] = 75
    thermal_guard: Annotated[
        ThermalGuard,
        Meta(description="A systemd timer that lowers NPU power when an NPU passes a temperature"),
    ] = filled(ThermalGuard)


class CompileCache(Record):
    paths: Annotated[
        tuple[AbsolutePath, ...],
        Meta(
            description="Cache directories to clean [U: CANN's cache locations vary by version and ASCEND_CACHE_PATH]"
        ),
    ] = ("/root/atc_data", "/root/ascend/kernel_meta")
    max_age_days: Annotated[
        int, Meta(ge=1, le=365, description="The cleanup timer removes cache files older than this")
    ] = 7
    max_gb: Annotated[
        Positive,
        Meta(description="The checklist fails a host whose caches hold more than this (GB)"),
    ] = 50


class Acceptance(Record):
    efficiency: Annotated[
        Share,
        Meta(
            description="Share of the topology's bus bandwidth a scope must reach (measured busbw >= efficiency x bound)"
        ),
    ] = 0.8
    min_bytes: Annotated[
        int, Meta(ge=1, description="HCCL Test -b: smallest data size per NPU (bytes)")
    ] = 8388608
    max_bytes: Annotated[
        int,
        Meta(
            ge=1,
            description="HCCL Test -e: largest data size per NPU (bytes); a run is judged at this size",
        ),
    ] = 1073741824
    iters: Annotated[int, Meta(ge=1, le=10000, description="HCCL Test -n: iterations per size")] = (
        20
    )
    warmup: Annotated[int, Meta(ge=0, le=1000, description="HCCL Test -w: warm-up iterations")] = 5
    batch: Annotated[
        int,
        Meta(
            ge=1,
            le=4096,
            description="How many independent runs (servers, leaves, leaf pairs) the role starts at once",
        ),
    ] = 16
    checkpoint_write_gbps: Annotated[
        Positive,
        Meta(
            description="Lowest sequential write throughput (GB/s) one server must reach on each DPC mount (the checkpoint path)"
        ),
    ] = 2.0
    idle_power_max_w: Annotated[
        int,
        Meta(
            ge=10,
            le=1000,
            description="An idle NPU (AI Core 0%) drawing more than this (W) fails the idle-power check; the idle-power timer caps idle NPUs at it",
        ),
    ] = 120
    compile_cache: Annotated[
        CompileCache,
        Meta(
            description="Compile-cache cleanup (the article 万卡集群不是堆显卡而是重构算力交付的底层逻辑 action 10)"
        ),
    ] = filled(CompileCache)


class Parallelism(Record):
    tp: Annotated[int, Meta(ge=1, le=65536, description="Tensor parallel size")] | None = None
    pp: Annotated[int, Meta(ge=1, le=65536, description="Pipeline parallel size")] | None = None
    dp: (
        Annotated[
            int, Meta(ge=1, le=1048576, description="Data parallel size (default: what is left)")
        ]
        | None
    ) = None
    sp: Annotated[int, Meta(ge=1, le=65536, description="Sequence parallel size")] | None = None
    ep: (
        Annotated[int, Meta(ge=1, le=65536, description="Expert parallel size (divides dp)")] | None
    ) = None


class Hccl(Record, kw_only=True):
    rank_table: Annotated[
        Literal["auto", "1.0", "1.2"],
        Meta(description="Rank table version; auto = 1.2 with supernodes, else 1.0 (quote it)"),
    ] = "auto"
    facts: (
        Annotated[
            str,
            Meta(
                min_length=1,
                description="NPU facts collected from the hardware by roles/npu_facts (A3 SDIDs and Super Pod IDs), relative to this blueprint; `wanka generate --facts` overrides it. Without it no 1.2 rank table is written",
            ),
        ]
        | None
    ) = None
    env: Annotated[
        dict[HcclVariable, str | int], Meta(description="Extra HCCL environment variables")
    ] = msgspec.field(
        default_factory=lambda: {"HCCL_CONNECT_TIMEOUT": 1200, "HCCL_EXEC_TIMEOUT": 1800}
    )
    if_base_port: Annotated[
        int,
        Meta(
            ge=1024,
            le=65503,
            description="HCCL_IF_BASE_PORT; 32 ports from here are reserved on hosts",
        ),
    ] = 60000
    parallelism: (
        Annotated[
            Parallelism,
            Meta(
                description="The training job's parallel layout over the whole cluster (tp fastest, then sp, dp, pp); design checks warn when tp, sp or ep groups leave the server or supernode. `wanka placement` uses these as defaults"
            ),
        ]
        | None
    ) = None


# The checks an acceptance may name: every check but `accept` (a stale acceptance stays seen), as
# the schema's enum (msgspec reads a Literal of strings, not of enum members), in Check's order
AcceptableCheck = Literal[tuple(c.value for c in Check if c != Check.ACCEPT)]


class Accept(Record):
    check: Annotated[
        AcceptableCheck,
        Meta(
            description="The check's name, as a finding shows it in brackets: [switch-capability]"
        ),
    ]
    reason: Annotated[
        str,
        Meta(
            pattern=r"\S",
            extra_json_schema={
                "patternErrorMessage": "write the reason in words: what was decided, and what would settle it"
            },
            min_length=10,
            description="Why the warning is accepted: what was decided and what would settle it (printed beside the warning and in the design review)",
        ),
    ]


class FailureRates(Record):
    rack: Annotated[
        NonNegative,
        Meta(
            description="Loss of a whole rack's power (both feeds, or a shared PDU) per rack per year [U]"
        ),
    ] = 0.01
    cdu: Annotated[
        NonNegative,
        Meta(
            description="Loss of one coolant distribution unit per CDU per year [U]; its racks shut down"
        ),
    ] = 0.1
    cable: Annotated[
        NonNegative, Meta(description="Failure of one cable with its optics per cable per year [U]")
    ] = 0.01


class Design(Record):
    max_failure_share: Annotated[
        Share,
        Meta(
            description="Warn when one failure (a switch, rack, CDU, cable) interrupts more than this share of the cards; failures no larger than one server are not counted"
        ),
    ] = 0.05
    accept: Annotated[
        tuple[Accept, ...],
        Meta(
            description="Warnings of the design checks accepted on purpose, each with the reason (as an AVD or netlab user states a known deviation): `--strict` passes an accepted check's warnings, and the design review (docs/README.md) lists each with its reason. Errors are never accepted"
        ),
    ] = ()
    failure_rates: Annotated[
        FailureRates,
        Meta(
            description="Failures per year of one unit, for the failure-domain review and the mean time between job interruptions [U]"
        ),
    ] = filled(FailureRates)


class Software(Record):
    driver: Annotated[Version, Meta(description="NPU driver version that preflight enforces")] = (
        "24.1.rc3"
    )
    firmware: Annotated[Version, Meta(description="NPU firmware version")] = "7.5.0.2.220"
    cann: Annotated[Version, Meta(description="CANN toolkit version")] = "8.0.0"


class Volcano(Record):
    mode: Annotated[
        Literal["hypernodes", "labels"],
        Meta(
            description="hypernodes: static HyperNode objects; labels: volcano.sh/tor|hypernode|hypercluster node labels plus the controller's label-discovery config (never both: Volcano must not mix hand-made and discovered HyperNodes)"
        ),
    ] = "hypernodes"
    namespace: Annotated[
        DnsName,
        Meta(
            description="Namespace Volcano runs in (holds volcano-controller-configmap in labels mode)"
        ),
    ] = "volcano-system"


class MindCluster(Record):
    namespace: Annotated[
        DnsName,
        Meta(
            description="Namespace of basic-tor-node-cm (kube-system for current MindCluster; old releases read volcano-system)"
        ),
    ] = "kube-system"
    tor_level: Annotated[
        Literal["auto", "single_layer", "double_layer"],
        Meta(
            description="Switch networking: auto = single_layer for a leaf-only plane, double_layer with spines (2 or 3 tiers)"
        ),
    ] = "auto"


class Scheduler(Record):
    volcano: Annotated[Volcano, Meta(description="Volcano network-topology-aware scheduling")] = (
        filled(Volcano)
    )
    mindcluster: Annotated[
        MindCluster,
        Meta(description="MindCluster switch-affinity input: the basic-tor-node-cm ConfigMap"),
    ] = filled(MindCluster)


class Blueprint(Record, kw_only=True, rename={"api_version": "apiVersion"}):
    api_version: Annotated[
        Literal["wanka/v1"], Meta(description="Blueprint format version: wanka/v1")
    ]
    kind: Annotated[Literal["Cluster"], Meta(description="Always Cluster")]
    metadata: Metadata
    catalog: Annotated[
        dict[str, Any],  # read by build_catalog
        Meta(
            description="Hardware catalog additions and overrides (merged over the shipped catalog)",
            extra={"as": CatalogSection},
        ),
    ] = {}
    compute: Annotated[
        Compute,
        Meta(
            description="The NPU servers",
            extra_json_schema={"oneOf": [{"required": ["cards"]}, {"required": ["servers"]}]},
        ),
    ]
    growth: (
        Annotated[
            GrowthPlan,
            Meta(
                description="Phased build-out: the planned final size. Spines, cores, network racks, rows, CDUs, pools, ASNs and ranks are laid out once for it, and compute.cards builds a stable prefix of that plan: growing inside it adds devices, cables and addresses without moving or renumbering existing ones"
            ),
        ]
        | None
    ) = None
    zones: Zones = filled(Zones)
    networks: Networks = filled(Networks)
    operations: Annotated[
        Operations,
        Meta(
            description="Thresholds the Ansible roles enforce on the hosts (the article 万卡集群不是堆显卡而是重构算力交付的底层逻辑 checklist)"
        ),
    ] = filled(Operations)
    acceptance: Annotated[
        Acceptance,
        Meta(
            description="Acceptance before training (files/acceptance/plan.yml, roles npu_acceptance and ops_checklist): HCCL Test runs per scope with an expected bus bandwidth, and the operations checklist thresholds (the article 万卡集群不是堆显卡而是重构算力交付的底层逻辑)"
        ),
    ] = filled(Acceptance)
    hccl: Hccl = filled(Hccl)
    design: Annotated[
        Design,
        Meta(
            description="Design-review settings: how large a failure domain may be, and failure rates of things the catalog does not hold (files/failure-domains.md)"
        ),
    ] = filled(Design)
    software: Software = filled(Software)
    scheduler: Annotated[
        Scheduler,
        Meta(
            description="How the parameter-plane topology is handed to the job schedulers (files/scheduler/)"
        ),
    ] = filled(Scheduler)


# The types and records the schema writes once under `$defs` and refers to
DEFS: dict[str, Any] = {"cidr": Cidr, "version": Version, "lossless": LosslessSpec}


def blueprint_spec(data: Any) -> Blueprint:
    """The typed blueprint from validate()'s data (schema-valid, defaults filled)."""
    return msgspec.convert(data, Blueprint)
