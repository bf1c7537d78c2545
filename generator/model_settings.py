"""Cluster-wide settings and plans of the model (generator.model): management services,
routing and flows of the border, scheduler and host settings, the acceptance plan, growth and the
design-review settings. Records only; generator.model re-exports them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import msgspec

from generator.blueprint.spec import Design, Hccl, Networks, Zones
from generator.vocab import ScopeKind


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
class Route:
    """A static route on a switch, firewall or border router (the border and management routing,
    decided in expand/border.py). `advertise`: the device imports it into its plane's routing
    protocol, so the whole plane follows it."""

    device: str
    network: int
    prefix: int
    next_hop: int
    preference: int = 60  # VRP static route default; the second firewall is a floating backup
    vrf: str = ""
    advertise: bool = False


@dataclass(frozen=True, slots=True)
class Uplink:
    """A border router's hand-off to the provider (not cabled by us: the carrier's circuit)."""

    device: str
    port: str
    ip: int
    prefix: int
    gateway: int  # the provider's address: the router's default route


@dataclass(frozen=True, slots=True)
class BorderOspf:
    """OSPF area 0 on a firewall's or border router's links between the two (expand/border.py):
    a router advertises a default route only while its own static default toward the provider
    is active (`default-route-advertise` without `always`), so the firewalls stop sending to a
    router whose provider link is down. The firewalls' static defaults stay as floating backups
    (preference FLOATING_DEFAULT, above OSPF's external 150)."""

    device: str
    router_id: int
    networks: tuple[tuple[int, int], ...]  # (network, prefix) of its firewall-router links
    originate_default: bool  # a border router


@dataclass(frozen=True, slots=True)
class SourceNat:
    """Source NAT on a firewall toward the provider: what enters from zone `zones[0]` from the
    `sources` pools and leaves for `zones[1]` leaves with an address of this firewall's section
    (`network`/`prefix`) of the NAT pool (zones.border.nat), which the provider routes to the
    border routers and the routers route back to this firewall (expand/border.py)."""

    device: str
    network: int
    prefix: int
    sources: tuple[tuple[int, int], ...]  # (network, prefix) of the pools translated
    zones: tuple[str, str] = ("business", "untrust")


@dataclass(frozen=True, slots=True)
class Flow:
    """A flow that must exist: the table that drives firewall policy and that verify proves.

    source/destination are endpoint groups (management-nodes, switch-management, dhcp-relays, bmc,
    business-hosts, dpc-clients, storage-nodes, monitored-hosts, outside); `zones` the firewall
    zones it crosses ("" when it stays inside one plane)."""

    name: str
    source: str
    destination: str
    protocol: str  # tcp | udp | any
    ports: tuple[int, ...]
    zones: tuple[str, str]
    purpose: str


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

    kind: ScopeKind
    op: str  # all_reduce | all_gather (the HCCL Test binary is <op>_test)
    units: tuple[tuple[str, tuple[str, ...]], ...]  # (unit name, its leaves; server: its name)
    ranks: int  # ranks of the largest unit
    tiers: str  # what the traffic crosses, e.g. "HCCS", "leaf", "leaf, spine"
    bound_gbytes_s: float  # the topology's bus bandwidth per rank at this scope
    expected_busbw: float  # efficiency x bound: the pass mark
    formula: str  # the arithmetic, with the numbers
    # busbw of the first unit with every flow at the bound, none lost to ECMP hash collisions
    # (generator/hccl_cost.py: `wanka predict` reports the same figure); None: not judged
    collision_free: float | None = None

    @property
    def hash_free(self) -> bool:
        """Its traffic turns at one switch (inside the server, or at the unit's leaf, each NPU
        index of a unit on one switch): no ECMP choice, so `wanka predict`'s p5, p50 and p95
        all equal `collision_free` (tests/unit/test_acceptance_review.py holds the two)."""
        return self.tiers in ("HCCS", "leaf")  # vocabulary: the tiers text

    @property
    def name(self) -> str:
        """The scope's name in the plan, the prediction, the design review and the role's
        report."""
        pair = self.kind == ScopeKind.LEAF_PAIR
        across = pair and "core" in self.tiers  # vocabulary: the tiers text
        return f"{self.kind}/{self.op}" + ("/across-pods" if across else "")


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

    def command(self, scope: AcceptanceScope) -> str:
        """The scope's mpirun line (domain.md §2.5), in the plan and the design review;
        {hostfile}, {ranks} and {hccl_test_dir} are the npu_acceptance role's to fill in."""
        reduce = " -o sum" if scope.op == "all_reduce" else ""
        return (
            f"mpirun -f {{hostfile}} -n {{ranks}} {{hccl_test_dir}}/bin/{scope.op}_test"
            f" -p {self.ranks_per_server} -b {self.min_bytes} -e {self.max_bytes} -f 2 -d fp32"
            f"{reduce} -n {self.iters} -w {self.warmup} -c 1"
        )


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
    """What the design checks, the failure-domain analysis and the review read of the blueprint:
    a view over its typed records (generator.blueprint.spec), validated with every schema
    default filled in, so a setting is declared once, in the schema and its Struct, and read
    where it is used (`settings.design.max_failure_share`, `settings.networks.storage.mode`).
    Made by generator.expand.settings, with what the catalog adds."""

    design: Design  # design.max_failure_share, design.failure_rates (rack, cdu, cable per year)
    networks: Networks  # networks.parameter.rail, storage.mode, business.leaf.mlag, ...
    zones: Zones  # zones.storage.access, zones.border.router.pair, zones.border.firewall.pair
    hccl: Hccl  # hccl.parallelism
    model_failure_rates: Mapping[str, float] = field(default_factory=dict)  # catalog model -> /year
    # zones.training.cooling written in the blueprint (False: the schema default applied);
    # set by the pipeline from the loaded file's keys (pipeline._chosen)
    cooling_chosen: bool = True

    @property
    def accepted(self) -> dict[str, str]:
        """design.accept: a check's name -> the reason its warnings are accepted (--strict
        passes them)."""
        return {a.check: a.reason for a in self.design.accept}

    @property
    def parallelism(self) -> dict[str, int]:
        """hccl.parallelism's sizes the blueprint gives (tp, pp, ...), the others left out."""
        chosen = self.hccl.parallelism
        return (
            {k: v for k, v in msgspec.structs.asdict(chosen).items() if v is not None}
            if chosen
            else {}
        )
