"""The Cluster model: the single source of truth every artifact is derived from.

Plain frozen records and tuples. Addresses are kept as integers (fast to allocate and compare);
`ip()` formats them. Every stage after `expand` reads this model and never recomputes it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from generator.model_cabling import Trunk  # re-exported: one model namespace
from generator.model_hardware import Hardware, Licence, Part  # noqa: F401  (re-exported)
from generator.model_hosts import (  # noqa: F401  (re-exported: one model namespace)
    NIC_COMMANDS,
    Domain,
    Lossless,
    NpuDevice,
    NpuNicLimits,
    NpuServer,
    StorageNic,
    SwitchMtu,
)
from generator.model_settings import (  # noqa: F401  (re-exported: one model namespace)
    Acceptance,
    AcceptanceScope,
    BorderOspf,
    Flow,
    Growth,
    HostSettings,
    Route,
    SchedulerSettings,
    Services,
    Settings,
    SourceNat,
    Uplink,
)
from generator.records import Record
from generator.vocab import (  # the names the model spells (re-exported)
    LinkKind,
    Plane,
    RackKind,
    Role,
    Zone,
)

# Switch platforms wanka renders a switch configuration for (files/switches/, templates/switches/
# <platform>/): `Device.configured`. Border routers and firewalls get files/border/ instead.
CONFIGURED_PLATFORMS = ("huawei-ce",)
MGMT_VRF = "_management_vpn_"  # the VRF MEth0/0/0 lives in on CE V300 (present by default)


_OCTETS = tuple(map(str, range(256)))


def ip(value: int) -> str:
    """Integer IPv4 address (0 .. 2**32-1, as the model holds them) -> dotted quad, each octet's
    text looked up (every output prints many addresses)."""
    o = _OCTETS
    return f"{o[value >> 24]}.{o[(value >> 16) & 255]}.{o[(value >> 8) & 255]}.{o[value & 255]}"


def network_of(address: int, prefix: int) -> int:
    """The network address of `address` in a /`prefix`."""
    return address & (0xFFFFFFFF << (32 - prefix)) & 0xFFFFFFFF


_DIGITS = re.compile(r"(\d+)")


def port_sort_key(name: str) -> tuple:
    """Natural order of interface names: 400GE1/0/2 before 400GE1/0/10."""
    return tuple(int(x) if x.isdigit() else x for x in _DIGITS.split(name))


def netmask(prefix: int) -> str:
    """Prefix length -> dotted netmask (hccn.conf and VRP want masks, not lengths)."""
    return ip((0xFFFFFFFF << (32 - prefix)) & 0xFFFFFFFF)


FIREWALL_LINK_GROUP = 1  # the link-group id on each firewall of a pair (Cluster.link_group)


class Rack(Record, kw_only=True):
    name: str  # e.g. T01-05
    zone: Zone
    row: int
    position: int  # 1-based position in its row
    kind: RackKind
    x_m: float  # floor coordinates of the rack front, metres
    y_m: float
    height_u: int
    power_kw: float  # budget
    cooling_kw: float  # heat the rack's cooling can remove
    cooling: str  # liquid | air
    cdu: str = ""  # CDU feeding a liquid-cooled rack
    load_kw: float = 0.0  # nameplate power of the devices in it (expand/racks.py rack_loads)


class Device(Record, kw_only=True):
    name: str
    role: Role
    plane: Plane | str  # switches: their plane; host devices: ""
    model: str
    rack: str
    u: int  # lowest rack unit occupied
    height_u: int
    power_w: float
    index: int = 0  # 0-based index within its role and plane
    pod: int | None = None  # parameter/storage plane pod (3 tiers), None outside pods
    supernode: int | None = None  # NPU servers in supernodes: its index, else None
    asn: int = 0  # BGP AS number (switches of a plane routed with BGP), else 0
    loopback: int = 0  # loopback address as integer (0 = none)
    splits: tuple[tuple[str, str], ...] = ()  # (parent port, split type) on switches
    platform: str = ""  # switches: the catalog platform (config templates), e.g. huawei-ce
    mgmt: Management | None = None  # how the device is reached for management
    ecmp_paths: int = 0  # routed switches: equal-cost paths it must install (generator.expand.ecmp)
    # switches, from the cabled links (generator.expand.devices link_facts): Gb/s toward lower tiers
    # (hosts, lower switches, management ports) and toward upper tiers; the M-LAG peer (the switch
    # at the other end of its peer-link), None without one
    down_gbps: int = 0
    up_gbps: int = 0
    mlag_peer: str | None = None
    configured: bool = False  # wanka renders its configuration (files/switches/<name>.cfg)
    licences: tuple[Licence, ...] = ()  # switches: what their configuration needs licensed
    airflow: str = ""  # network devices: vocab.Airflow, as ordered and mounted; hosts ""

    @property
    def is_host(self) -> bool:
        return self.role.is_host

    @property
    def is_switch(self) -> bool:
        """Every network device (border routers and firewalls too), not a host."""
        return self.role.is_switch


class Management(Record, kw_only=True):
    """Where a device is managed: Ansible's `ansible_host`, SNMP target, the config's source.

    Hosts: their in-band address. Switches: the out-of-band address of their management port in
    the management VRF; the out-of-band switches themselves: their loopback on that plane."""

    ip: int
    prefix: int
    interface: str  # MEth0/0/0, LoopBack0, or the host's in-band port
    vrf: str  # MGMT_VRF on switch management ports, "" otherwise
    gateway: int = 0  # next hop toward the management pools (0: routed in the global table)
    # hosts: the networks their in-band port routes via `gateway` (network, prefix): the in-band
    # pool; management nodes also the out-of-band pool (switch management, BMCs: SSH, SNMP,
    # Redfish through the firewalls). Switches: () (their routes are Services.pools)
    routes: tuple[tuple[int, int], ...] = ()


class Link(Record, kw_only=True):
    """One cabled connection between two ports; the legs of a breakout cable share a cable_id,
    the patch cords of a structured run (Trunk) a trunk_id."""

    cable_id: str
    plane: Plane
    kind: LinkKind
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
    optic: str = ""  # transceiver at each end (optical media), e.g. 400GBASE-SR8; "" otherwise
    reach_m: int = 0  # the optic's reach on this fibre (catalog cables.yaml), 0 without optic
    # a leg of a structured run (Trunk): the trunk's id, and the cassette port its patch cord
    # leaves from (the leg's lane); "" and 0 for a direct cable or a breakout harness
    trunk_id: str = ""
    cassette_port: int = 0


class Subnet(Record, kw_only=True):
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
    # DHCP servers the gateway relays to, from its own address: on the out-of-band subnets the
    # ZTP servers (a factory-default switch asks from its MEth port); () elsewhere
    dhcp_relay: tuple[int, ...] = ()

    @classmethod
    def on_vlan(cls, plane: str, owners: tuple[str, ...], network: int, prefix: int, vlan: int):
        """A subnet whose gateway is the first address, on the owners' Vlanif of `vlan`."""
        return cls(
            plane=plane,
            name=f"{ip(network)}/{prefix}",
            owners=owners,
            network=network,
            prefix=prefix,
            gateway=network + 1,
            vlan=vlan,
            gateway_interface=f"Vlanif{vlan}",
        )


class Address(Record, kw_only=True):
    """An address on a host port (NPU NIC, storage NIC, business bond, in-band, BMC)."""

    device: str
    port: str  # port name, or bond name for bonded ports
    plane: str
    ip: int
    prefix: int
    gateway: int
    subnet: str  # Subnet.name


class Pool(Record, kw_only=True):
    plane: str
    network: int
    prefix: int
    used: int  # addresses allocated (subnets count whole)

    @property
    def size(self) -> int:
        return 1 << (32 - self.prefix)


class Fabric(Record, kw_only=True):
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


class SwitchFacts(Record, kw_only=True):
    """What a switch model can do, from the catalog (each fact cited there or unconfirmed):
    its release, the most equal-cost paths it installs, the ECN it has, its CLI families."""

    model: str
    release: str
    ecmp_max: int
    ecn: str  # ai-ecn | static | none
    command_families: tuple[str, ...]
    release_confirmed: bool = False  # the release's command reference covers this model
    families_confirmed: bool = False  # command_families cite a source (e.g. checked on the box)


class Cdu(Record, kw_only=True):
    name: str
    capacity_kw: float
    racks: tuple[str, ...]
    load_kw: float


@dataclass(frozen=True, slots=True)
class Cluster:
    name: str
    site: str
    racks: tuple[Rack, ...]
    devices: tuple[Device, ...]
    links: tuple[Link, ...]
    subnets: tuple[Subnet, ...]
    addresses: tuple[Address, ...]
    pools: tuple[Pool, ...]
    fabrics: tuple[Fabric, ...]
    cdus: tuple[Cdu, ...]
    lossless: tuple[Lossless, ...]  # per RoCE plane that keeps PFC on: parameter, storage
    npu_servers: tuple[NpuServer, ...]  # rank order: supernode, pod, leaf, server
    hccl_env: tuple[tuple[str, str], ...]  # HCCL variables shared by every NPU server, sorted
    settings: Settings  # design-review settings: a view over the blueprint's records
    services: Services = field(default_factory=Services)
    routes: tuple[Route, ...] = ()  # static routes of the border and management routing
    uplinks: tuple[Uplink, ...] = ()  # border routers' provider hand-offs
    source_nat: tuple[SourceNat, ...] = ()  # per firewall: the business plane's way out
    border_ospf: tuple[BorderOspf, ...] = ()  # firewalls and routers: OSPF between them
    flows: tuple[Flow, ...] = ()  # required flows (expand/flows.py)
    roce_planes: tuple[str, ...] = ()  # planes whose hosts speak RoCE (each needs a lossless class)
    switch_facts: tuple[SwitchFacts, ...] = ()  # per switch model in use, sorted by model
    npu_nic_limits: tuple[NpuNicLimits, ...] = ()  # per NPU server model in use, sorted by model
    # NPU servers whose hardware facts (A3 SDIDs, Super Pod ID) a 1.2 rank table needs and no
    # facts file gave; the rank table is then not written (files/hccl/rank_table.MISSING.md)
    missing_facts: tuple[str, ...] = ()
    facts_file: str = ""  # the NPU facts file read, "" when none
    trunks: tuple[Trunk, ...] = ()  # structured runs that replace breakout cables (Link.trunk_id)
    scheduler: SchedulerSettings = field(default_factory=SchedulerSettings)
    host_settings: HostSettings = field(default_factory=HostSettings)
    growth: Growth = field(default_factory=lambda: Growth())
    acceptance: Acceptance = field(default_factory=Acceptance)
    storage_nics: tuple[StorageNic, ...] = ()  # per host model in use that names one, by model
    # switches between the ZTP relays and the ZTP servers (name, relay | server-gateway | transit),
    # in device order (expand/services.py ztp_path): ZTP cannot build them; console first
    ztp_path: tuple[tuple[str, str], ...] = ()
    switch_mtus: tuple[SwitchMtu, ...] = ()  # per jumbo plane built (parameter, storage)
    hardware: tuple[Hardware, ...] = ()  # per device model in use, by model: source, parts
    # (plane, role, blueprint key, value) per switch role over its model's ecmp_max: what
    # settles it (expand/remedies.py; value "" when nothing found does), the ECMP check's hint
    ecmp_options: tuple[tuple[str, str, str, str], ...] = ()
    standard_lengths_m: tuple[int, ...] = ()  # catalog cables.yaml: the lengths cables are cut to
    device_by_name: Mapping[str, Device] = field(init=False, repr=False, compare=False)
    rack_by_name: Mapping[str, Rack] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "device_by_name", {d.name: d for d in self.devices})
        object.__setattr__(self, "rack_by_name", {r.name: r for r in self.racks})

    @property
    def cards(self) -> int:
        """NPU cards (an A3 card holds two dies: `dies` and `ranks` count those)."""
        return sum(s.npus for s in self.npu_servers)

    @property
    def dies(self) -> int:
        return sum(s.dies for s in self.npu_servers)

    @property
    def ranks(self) -> int:
        """HCCL ranks: the rank table's devices."""
        return sum(s.ranks for s in self.npu_servers)

    @property
    def cards_per_server(self) -> int:
        """The NPU cards of one server (every NPU server of a cluster is one model), 0 without."""
        return self.npu_servers[0].npus if self.npu_servers else 0

    @property
    def cables(self) -> int:
        """Cables of the cabling plan: one per cable id (a breakout harness once, whatever its
        legs) and one per structured run's trunk."""
        return len({x.cable_id for x in self.links}) + len(self.trunks)

    @property
    def power_kw(self) -> float:
        """IT power, nameplate: every rack's load."""
        return sum(r.load_kw for r in self.racks)

    def switch_mtu_of(self, plane: str) -> SwitchMtu | None:
        return next((m for m in self.switch_mtus if m.plane == plane), None)

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

    def storage_nic_of(self, model: str) -> StorageNic | None:
        return next((n for n in self.storage_nics if n.model == model), None)

    def hardware_of(self, model: str) -> Hardware | None:
        return next((h for h in self.hardware if h.model == model), None)

    def facts_of(self, model: str) -> SwitchFacts | None:
        return next((f for f in self.switch_facts if f.model == model), None)

    def ecn_of(self, dev: Device) -> str:
        """ECN on a switch's lossless queue: the plane's choice, with AI ECN only where the
        model has it (catalog `ecn`); elsewhere static ECN (drop profile on the queue)."""
        cls = self.lossless_of(dev.plane)
        if cls is None:
            return "off"
        facts = self.facts_of(dev.model)
        if cls.ecn == "ai-ecn" and facts is not None and facts.ecn != "ai-ecn":
            return "static"
        return cls.ecn

    def isolated(self, link: Link) -> bool:
        """The out-of-band access port of `link` is in the layer 2 isolation group: a host's BMC
        port only. Switch, router and firewall management ports stay outside it, so the M-LAG
        pairs' dual-active detection between their MEth ports passes (CE V300R023C00, Example for
        Enabling Layer 2 Port Isolation: isolated PC1 and PC2 still reach PC3, which is not in
        the group; Configuring a DAD Link: the DAD link "can be set up between Ethernet
        management interfaces" and the two devices must reach each other)."""
        return (
            link.kind == LinkKind.MGMT
            and link.plane == Plane.OOB
            and self.device_by_name[link.a_device].role.is_host
        )

    def link_group(self, dev: Device) -> int:
        """The USG link-group a firewall of a pair binds its border links into (0: none). "If one
        interface in the logical group is faulty, the system changes the status of the other
        interfaces to Down" (USG admin guide, Configuring Link-Group Using the CLI,
        usg.zrnko.cz/resources/admin/sec_admin_linkgroup_0003.html): one core-to-firewall link
        down takes the whole firewall off every plane's routes, so both directions of a flow
        float to the partner together instead of crossing two stateful firewalls."""
        pair = sum(1 for d in self.devices if d.role == Role.FIREWALL) > 1
        return FIREWALL_LINK_GROUP if pair and dev.role == Role.FIREWALL else 0
