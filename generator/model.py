"""The Cluster model: the single source of truth every artifact is derived from.

Plain frozen records and tuples. Addresses are kept as integers (fast to allocate and compare);
`ip()` formats them. Every stage after `expand` reads this model and never recomputes it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

PLANES = ("parameter", "storage", "business", "inband", "oob", "border")
MGMT_VRF = "_management_vpn_"  # the VRF MEth0/0/0 lives in on CE V300 (present by default)


def ip(value: int) -> str:
    """Integer IPv4 address -> dotted quad."""
    return f"{value >> 24 & 255}.{value >> 16 & 255}.{value >> 8 & 255}.{value & 255}"


def network_of(address: int, prefix: int) -> int:
    """The network address of `address` in a /`prefix`."""
    return address & (0xFFFFFFFF << (32 - prefix)) & 0xFFFFFFFF


def port_sort_key(name: str) -> tuple:
    """Natural order of interface names: 400GE1/0/2 before 400GE1/0/10."""
    return tuple(int(x) if x.isdigit() else x for x in re.split(r"(\d+)", name))


def netmask(prefix: int) -> str:
    """Prefix length -> dotted netmask (hccn.conf and VRP want masks, not lengths)."""
    return ip((0xFFFFFFFF << (32 - prefix)) & 0xFFFFFFFF)


@dataclass(frozen=True, slots=True)
class Rack:
    name: str  # e.g. T01-05
    zone: str  # training | storage | management
    row: int
    position: int  # 1-based position in its row
    kind: str  # compute | storage | management | network
    x_m: float  # floor coordinates of the rack front, metres
    y_m: float
    height_u: int
    power_kw: float  # budget
    cooling_kw: float  # heat the rack's cooling can remove
    cooling: str  # liquid | air
    cdu: str = ""  # CDU feeding a liquid-cooled rack


@dataclass(frozen=True, slots=True)
class Device:
    name: str
    role: str  # npu-server | storage-node | management-node | leaf | spine | core | access | border-router | firewall
    plane: (
        str  # host devices: "" ; switches: parameter | storage | business | inband | oob | border
    )
    model: str
    rack: str
    u: int  # lowest rack unit occupied
    height_u: int
    power_w: float
    index: int = 0  # 0-based index within its role and plane
    pod: int = -1  # parameter/storage plane pod (3 tiers) or -1
    supernode: int = -1  # NPU servers in supernodes
    asn: int = 0  # BGP AS number (switches of a plane routed with BGP), else 0
    loopback: int = 0  # loopback address as integer (0 = none)
    splits: tuple[tuple[str, str], ...] = ()  # (parent port, split type) on switches
    platform: str = ""  # switches: the catalog platform (config templates), e.g. huawei-ce
    mgmt: Management | None = None  # how the device is reached for management


@dataclass(frozen=True, slots=True)
class Management:
    """Where a device is managed: Ansible's `ansible_host`, SNMP target, the config's source.

    Hosts: their in-band address. Switches: the out-of-band address of their management port in
    the management VRF; the out-of-band switches themselves: their loopback on that plane."""

    ip: int
    prefix: int
    interface: str  # MEth0/0/0, LoopBack0, or the host's in-band port
    vrf: str  # MGMT_VRF on switch management ports, "" otherwise
    gateway: int = 0  # next hop toward the management pools (0: routed in the global table)


@dataclass(frozen=True, slots=True)
class Link:
    """One cabled connection between two ports; breakout legs share a cable_id."""

    cable_id: str
    plane: str
    kind: str  # host | uplink | peer-link | mgmt
    a_device: str  # lower tier (host or lower switch)
    a_port: str
    b_device: str  # upper tier
    b_port: str
    speed: int  # Gb/s of this leg
    media: str
    length_m: int
    a_ip: int = 0  # point-to-point addresses (routed uplinks), 0 when not routed
    b_ip: int = 0
    prefix: int = 0


@dataclass(frozen=True, slots=True)
class Subnet:
    """A host subnet and where its gateway lives: on `gateway_interface` of every owner (one
    leaf, or both members of an M-LAG pair answering on the same address)."""

    plane: str
    name: str  # the subnet itself, "10.0.0.0/26" (Address.subnet refers to it)
    owners: tuple[str, ...]  # switch, or the M-LAG pair, that is the gateway
    network: int
    prefix: int
    gateway: int
    vlan: int  # host-facing VLAN on the owners
    gateway_interface: str  # e.g. Vlanif10

    @classmethod
    def on_vlan(cls, plane: str, owners: tuple[str, ...], network: int, prefix: int, vlan: int):
        """A subnet whose gateway is the first address, on the owners' Vlanif of `vlan`."""
        return cls(
            plane, f"{ip(network)}/{prefix}", owners, network, prefix, network + 1, vlan,
            f"Vlanif{vlan}",
        )  # fmt: skip


@dataclass(frozen=True, slots=True)
class Address:
    """An address on a host port (NPU NIC, storage NIC, business bond, in-band, BMC)."""

    device: str
    port: str  # port name, or bond name for bonded ports
    plane: str
    ip: int
    prefix: int
    gateway: int
    subnet: str  # Subnet.name


@dataclass(frozen=True, slots=True)
class Pool:
    plane: str
    network: int
    prefix: int
    used: int  # addresses allocated (subnets count whole)

    @property
    def size(self) -> int:
        return 1 << (32 - self.prefix)


@dataclass(frozen=True, slots=True)
class Fabric:
    """How a plane's switching was sized (for checks and the design review)."""

    plane: str
    routing: str  # bgp | ospf: the protocol the plane's switches route with
    tiers: int  # 1 = access only, 2 = leaf/spine, 3 = leaf/spine/core
    rails: int  # leaves per access group (1 single-rail, 8 multi-rail, 2 dual-homed / M-LAG)
    hosts_per_group: int
    leaf_model: str
    spine_model: str
    core_model: str
    split: str  # breakout used toward hosts, or "none"
    down_lanes: int  # host-facing lanes per leaf (capacity)
    down_speed: int
    uplinks: int  # uplinks per leaf
    up_speed: int
    spines_per_pod: int
    leaves_per_pod: int
    pods: int
    cores_per_plane: int
    oversubscription: str  # requested leaf ratio, e.g. "1:1"


@dataclass(frozen=True, slots=True)
class Cdu:
    name: str
    capacity_kw: float
    racks: tuple[str, ...]
    load_kw: float


@dataclass(frozen=True, slots=True)
class Lossless:
    """The one lossless class of a plane, and every setting derived from it.

    NIC PFC bitmap, NIC priority->TC and DSCP->TC maps, HCCL_RDMA_SL/TC and the switches'
    `dcb pfc` priority and DSCP->PHB mapping all come from these values, never set twice.
    """

    plane: str
    priority: int  # PFC priority, = HCCL_RDMA_SL
    dscp: int  # RoCE DSCP, HCCL_RDMA_TC = 4 * dscp
    tc: int  # NIC traffic class of the lossless priority (NIC TCs are 0..3)
    ecn: str  # ai-ecn | static | off
    mtu: int  # NIC MTU

    @property
    def pfc_bitmap(self) -> str:
        """hccn_tool -pfc bitmap: one 0/1 per priority 0..7."""
        return ",".join("1" if p == self.priority else "0" for p in range(8))

    @property
    def prio_tc(self) -> str:
        """hccn_tool -prio_tc map: the lossless priority in its TC, the rest in TC 0."""
        return ",".join(str(self.tc) if p == self.priority else "0" for p in range(8))

    @property
    def dscp_tc(self) -> str:
        """/etc/hccn.conf dscp_tc value: `<dscp>:<tc>,`."""
        return f"{self.dscp}:{self.tc},"

    @property
    def hccl_rdma_tc(self) -> int:
        return self.dscp * 4

    @property
    def hccl_rdma_sl(self) -> int:
        return self.priority

    @property
    def queue(self) -> int:
        """Switch queue (= priority) the lossless class is scheduled in."""
        return self.priority


@dataclass(frozen=True, slots=True)
class NpuDevice:
    device_id: int  # /dev/davinciN, = NPU port index on the server
    port: str  # parameter-plane port the device's NIC is cabled from
    ip: int
    prefix: int
    gateway: int
    leaf: str  # parameter leaf the port is cabled to
    rank: int = -1  # cluster rank id (rank table, placement, diff), 0..N-1 in rank order


@dataclass(frozen=True, slots=True)
class Domain:
    """A failure/scheduling domain a server is in, spelled one way in every output.

    kind: rack | cdu | leaf (the access unit: a leaf, or a multi-rail group named first-last) |
    pod (3-tier parameter plane) | fabric (everything above the leaves) | supernode.
    index: 0-based in floor / rank order (the rank table's super_pod_id is the supernode's)."""

    kind: str
    index: int
    name: str


@dataclass(frozen=True, slots=True)
class NpuServer:
    """An NPU server as HCCL and schedulers see it; `Cluster.npu_servers` is in rank order."""

    name: str
    host_ip: int  # in-band address (HCCL_IF_IP, rank table host_ip)
    pod: int  # parameter-plane pod (3 tiers), else 0
    supernode: int  # -1 without supernodes
    leaves: tuple[str, ...]  # parameter leaves its NPU ports reach, in device order, deduplicated
    devices: tuple[NpuDevice, ...]
    domains: tuple[Domain, ...] = ()  # rack, cdu, leaf, pod, fabric, supernode (those it has)
    accelerator: str = ""  # catalog accelerator, e.g. ascend-910b
    npus: int = 0  # NPU cards (devices counts dies on multi-die cards)
    dies_per_npu: int = 1

    def domain(self, kind: str) -> Domain | None:
        return next((d for d in self.domains if d.kind == kind), None)


@dataclass(frozen=True, slots=True)
class Services:
    """Management services every device is pointed at (switch configs and inventory alike):
    each list holds the management nodes of that role, or every management node when the
    blueprint has none of that role. Addresses are the nodes' in-band addresses."""

    ntp: tuple[int, ...] = ()
    syslog: tuple[int, ...] = ()
    snmp: tuple[int, ...] = ()  # SNMP managers (the monitoring nodes)
    ztp: tuple[int, ...] = ()  # where switches fetch their day-0 files
    pools: tuple[tuple[int, int], ...] = ()  # management pools (in-band, oob): network, prefix
    snmp_user: str = "wanka-nms"
    snmp_group: str = "wanka-nms"
    snmp_view: str = "iso-view"
    snmp_auth: str = "sha2-256"
    snmp_priv: str = "aes256"


@dataclass(frozen=True, slots=True)
class SchedulerSettings:
    """scheduler: from the blueprint, defaults and `auto` resolved."""

    volcano_mode: str = "hypernodes"  # hypernodes | labels
    volcano_namespace: str = "volcano-system"
    mindcluster_namespace: str = "kube-system"
    tor_level: str = "double_layer"  # single_layer | double_layer


@dataclass(frozen=True, slots=True)
class HostSettings:
    """What every host's configuration shares, from the blueprint (group_vars/all.yml)."""

    software_versions: tuple[tuple[str, Any], ...] = ()
    storage_access: str = ""
    dpc_filesystems: tuple[Mapping[str, Any], ...] = ()
    npu_temperature_max_c: float = 0
    thermal_guard: Mapping[str, Any] = field(default_factory=dict)
    rank_table_version: str = "1.0"


@dataclass(frozen=True, slots=True)
class AcceptanceScope:
    """One HCCL Test at one scope of the topology, run once per unit (a server, a leaf, a pod,
    a leaf pair, the cluster). Bus bandwidths in GB/s (10^9 bytes), NCCL-tests convention."""

    kind: str  # server | leaf | pod | supernode | cluster | leaf-pair
    op: str  # all_reduce | all_gather (the HCCL Test binary is <op>_test)
    units: tuple[tuple[str, tuple[str, ...]], ...]  # (unit name, its leaves; server: its name)
    ranks: int  # ranks of the largest unit
    tiers: str  # what the traffic crosses, e.g. "HCCS", "leaf", "leaf, spine"
    bound_gbytes_s: float  # the topology's bus bandwidth per rank at this scope
    expected_busbw: float  # efficiency x bound: the pass mark
    formula: str  # the arithmetic, with the numbers


@dataclass(frozen=True, slots=True)
class Acceptance:
    """The acceptance plan and the operations checklist thresholds (blueprint `acceptance`)."""

    efficiency: float = 0.8
    min_bytes: int = 8388608
    max_bytes: int = 1073741824
    iters: int = 20
    warmup: int = 5
    batch: int = 16
    ranks_per_server: int = 8
    leaves: tuple[tuple[str, tuple[str, ...]], ...] = ()  # access unit -> its servers, rank order
    scopes: tuple[AcceptanceScope, ...] = ()  # topology order: server, leaf, pod, cluster, pairs
    checkpoint_write_gbps: float = 0.0
    idle_power_max_w: int = 0
    compile_cache: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Cluster:
    name: str
    site: str
    blueprint: Mapping[str, Any]  # validated blueprint, defaults filled
    racks: tuple[Rack, ...]
    devices: tuple[Device, ...]
    links: tuple[Link, ...]
    subnets: tuple[Subnet, ...]
    addresses: tuple[Address, ...]
    pools: tuple[Pool, ...]
    fabrics: tuple[Fabric, ...]
    cdus: tuple[Cdu, ...]
    lossless: tuple[Lossless, ...]  # parameter plane first; storage plane when it has one
    npu_servers: tuple[NpuServer, ...]  # rank order: supernode, pod, leaf, server
    hccl_env: tuple[tuple[str, str], ...]  # HCCL variables shared by every NPU server, sorted
    services: Services = Services()
    scheduler: SchedulerSettings = SchedulerSettings()
    host_settings: HostSettings = HostSettings()
    settings: Settings = field(default_factory=lambda: Settings())  # design-review settings
    growth: Growth = field(default_factory=lambda: Growth())
    acceptance: Acceptance = Acceptance()
    device_by_name: Mapping[str, Device] = field(init=False, repr=False, compare=False)
    rack_by_name: Mapping[str, Rack] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "device_by_name", {d.name: d for d in self.devices})
        object.__setattr__(self, "rack_by_name", {r.name: r for r in self.racks})

    def devices_with(self, role: str, plane: str = "") -> tuple[Device, ...]:
        return tuple(d for d in self.devices if d.role == role and (not plane or d.plane == plane))

    def fabric(self, plane: str) -> Fabric | None:
        return next((f for f in self.fabrics if f.plane == plane), None)

    def routing(self, plane: str) -> str:
        """bgp | ospf for a built plane, "" for a plane without routed switches."""
        f = self.fabric(plane)
        return f.routing if f else ""

    def lossless_of(self, plane: str) -> Lossless | None:
        return next((x for x in self.lossless if x.plane == plane), None)


@dataclass(frozen=True, slots=True)
class Growth:
    """The planned final size (blueprint `growth.cards`) against what is built now.

    Inside the plan the cluster is a stable prefix of the planned build; beyond it, `moved`
    lists the devices of the planned build that the larger build places elsewhere."""

    planned_servers: int = 0  # 0: no plan given
    servers: int = 0  # NPU servers built now
    moved: tuple[str, ...] = ()  # "name rack Uu -> rack Uu", beyond the plan only

    @property
    def beyond(self) -> bool:
        return 0 < self.planned_servers < self.servers


@dataclass(frozen=True, slots=True)
class Settings:
    """What the design checks, the failure-domain analysis and the review read from the
    blueprint and catalog, resolved once by generator.expand.settings from the validated blueprint, whose
    schema defaults are already filled in. The defaults here are not the schema's: they mean
    "nothing set" (no failure rates, no limit, nothing to warn about) for a Cluster built
    without a blueprint."""

    max_failure_share: float = 1.0  # design.max_failure_share
    rack_failure_rate: float = 0.0  # design.failure_rates.rack, per rack per year
    cdu_failure_rate: float = 0.0  # design.failure_rates.cdu, per CDU per year
    cable_failure_rate: float = 0.0  # design.failure_rates.cable, per cable per year
    model_failure_rates: Mapping[str, float] = field(default_factory=dict)  # catalog model -> /year
    parallelism: Mapping[str, int] = field(default_factory=dict)  # hccl.parallelism (tp, pp, ...)
    parameter_rail: str = ""  # networks.parameter.rail (single | multi)
    storage_mode: str = ""  # networks.storage.mode (dedicated | shared)
    storage_access: str = ""  # zones.storage.access (dpc | nfs)
    business_leaf_mlag: bool = True  # networks.business.leaf.mlag (True: no single leaf)
    border_router_pair: bool = True  # zones.border.router.pair
    firewall_pair: bool = True  # zones.border.firewall.pair
