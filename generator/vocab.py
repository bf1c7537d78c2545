"""The closed vocabularies of the model: planes, device roles, link kinds, floor zones, rack
kinds, domain kinds, tiers (scheduler levels), host port roles, acceptance scopes, the twin's
namespace kinds and the design checks' names, each named once.

Members are `StrEnum`s: they compare equal to, hash as and print as their strings, so the model's
fields, the blueprint's keys and every output spell them as before. tests/unit/test_vocabulary.py
refuses a second spelling of a name in `generator/` (after NetBox `dcim/choices.py`: one choice
set per field).

Loops over every link or device read the members they compare with once, into a local name or a
module frozenset: on Python 3.11 a member read from its class (`Plane.PARAMETER`) takes the slow
attribute path of a metaclass with `__getattr__` (EnumType's; gone in 3.12), about 5x a local name
(timeit: 64 ns against 13), and `Role(x)` is a Python call (EnumType.__call__, 230 ns).
"""

from __future__ import annotations

from enum import StrEnum


class Plane(StrEnum):
    """A network plane: the blueprint's `networks.<plane>` (inband and oob under
    `networks.management`), `zones.border` for the border routers' side of the firewalls and
    `zones.border.provider` for the provider hand-off pool. In the order the outputs list them."""

    PARAMETER = "parameter"  # NPU-to-NPU RoCE (HCCL)
    STORAGE = "storage"  # hosts to the storage nodes (dedicated, or shared with business)
    BUSINESS = "business"  # the servers' bonded service network
    INBAND = "inband"  # in-band management (SSH, Ansible)
    OOB = "oob"  # out-of-band: BMCs and switch management ports
    BORDER = "border"  # firewalls to the border routers
    PROVIDER = "provider"  # border routers' provider hand-off: a pool only, no switches

    @property
    def is_management(self) -> bool:
        return self in _MANAGEMENT

    @property
    def has_hosts(self) -> bool:
        """Host ports are cabled to it (an address per host port)."""
        return self in _HOST_PLANES

    @property
    def is_jumbo(self) -> bool:
        """RoCE planes built with a jumbo MTU (the NIC's MTU from the blueprint)."""
        return self in _JUMBO


class Role(StrEnum):
    """What a device is: `Device.role`, the catalog servers' `kind` for hosts."""

    NPU_SERVER = "npu-server"
    STORAGE_NODE = "storage-node"
    MANAGEMENT_NODE = "management-node"
    LEAF = "leaf"
    SPINE = "spine"
    CORE = "core"
    ACCESS = "access"  # the management planes' lower tier
    BORDER_ROUTER = "border-router"
    FIREWALL = "firewall"

    @property
    def is_host(self) -> bool:
        return self in _HOSTS

    @property
    def is_switch(self) -> bool:
        """Every network device: leaves, spines, cores, access switches, border routers and
        firewalls."""
        return self not in _HOSTS

    @property
    def is_lower(self) -> bool:
        """The switches hosts are cabled to."""
        return self in _LOWER

    @property
    def is_upper(self) -> bool:
        """The switches above the leaves or access switches."""
        return self in _UPPER

    @property
    def is_border(self) -> bool:
        return self in _BORDER


class LinkKind(StrEnum):
    """What a cable connects (`Link.kind`)."""

    HOST = "host"  # a host port to its leaf or access switch
    UPLINK = "uplink"  # a switch to the tier above (or a firewall to the planes it faces)
    PEER_LINK = "peer-link"  # the two members of an M-LAG pair
    MGMT = "mgmt"  # a switch's management port to the out-of-band access switch


class Zone(StrEnum):
    """A floor zone (`Rack.zone`): the blueprint's `zones.<zone>` that holds racks, in floor order.
    `zones.border` holds no racks: the border routers and firewalls stand in the management
    zone's network racks (expand/devices.py `Placer.border`)."""

    TRAINING = "training"  # rows of compute racks, and the parameter/storage spine row
    STORAGE = "storage"  # the storage nodes' racks
    MANAGEMENT = "management"  # the management nodes' racks, the cores and the border


class RackKind(StrEnum):
    """What a rack holds (`Rack.kind`); each kind's power budget is one blueprint setting
    (analysis/checks.py `rack_budget`)."""

    COMPUTE = "compute"  # NPU servers (and a top-of-rack parameter leaf), training zone only
    STORAGE = "storage"  # storage nodes, storage zone only
    MANAGEMENT = "management"  # management nodes, management zone only
    NETWORK = "network"  # switches, routers and firewalls, in any zone (A and B sides)


class Airflow(StrEnum):
    """Which way a network device moves air, as Huawei orders fixed-configuration switches
    (`Device.airflow`; blueprint zones.training.airflow, `auto` from the rack: expand/hardware.py)."""

    PORT_SIDE_INTAKE = "port-side-intake"  # cold air in at the port panel (ports to the cold aisle)
    PORT_SIDE_EXHAUST = (
        "port-side-exhaust"  # hot air out at the port panel (ports to the hot aisle)
    )


class DomainKind(StrEnum):
    """What a server's failure/scheduling domain is (`Domain.kind`, expand/ranks.py): every
    output that groups servers spells these."""

    RACK = "rack"
    CDU = "cdu"
    LEAF = "leaf"  # the access unit: a leaf, or a multi-rail group of leaves named first-last
    POD = "pod"  # a pod of a 3-tier parameter plane
    FABRIC = "fabric"  # everything above the leaves
    SUPERNODE = "supernode"
    CLUSTER = "cluster"  # every server: the failure review's widest job domain


class Tier(StrEnum):
    """How far apart servers are in the parameter plane: the scheduler's levels
    (topology.Level.tier_name: supernode, leaf, spine, core) and the widest tier a parallel
    group crosses (placement.tier_of, which also says server)."""

    SERVER = "server"
    SUPERNODE = "supernode"
    LEAF = "leaf"
    SPINE = "spine"
    CORE = "core"


class HostPort(StrEnum):
    """A server's port role: the catalog's `ports.<role>` of a host model (servers.yaml), each
    cabled to its plane (expand/devices.py `host_endpoints`). Several are spelled as their plane,
    but a role is not a plane: the NPU ports (npu0, npu1, ...) are the parameter plane's, the BMC
    port the out-of-band plane's."""

    NPU = "npu"  # one port per NPU die, the parameter plane
    STORAGE = "storage"
    BUSINESS = "business"  # bonded (host_vars business_bond)
    INBAND = "inband"  # in-band management: HCCL_IF_IP, the rank table's host_ip
    BMC = "bmc"  # the BMC's port, on the out-of-band plane


class ScopeKind(StrEnum):
    """What one HCCL Test acceptance scope runs across (`AcceptanceScope.kind`, expand/acceptance.py),
    smallest first; files/acceptance/plan.yml and the prediction spell these."""

    SERVER = "server"  # inside one server (HCCS)
    LEAF = "leaf"  # the servers of one leaf
    POD = "pod"  # the leaves of one pod
    SUPERNODE = "supernode"  # the servers of one supernode
    CLUSTER = "cluster"  # every leaf
    LEAF_PAIR = "leaf-pair"  # two neighbouring leaves, in one pod or across pods


class NsKind(StrEnum):
    """What a twin network namespace stands for (twin/plan.py `Netns.kind`)."""

    SWITCH = "switch"  # a CE switch's FRR
    ROUTER = "router"  # a border router (NE) or its management VPN
    FIREWALL = "firewall"  # a USG firewall
    HOST = "host"  # a server's or node's OS, from its keyfiles
    NPU = "npu"  # a server's NPU NICs (hccn)
    BMC = "bmc"  # a server's BMC
    OUTSIDE = "outside"  # the provider side beyond the border routers

    @property
    def routes(self) -> bool:
        """Runs FRR: the switches, border routers and firewalls."""
        return self in _ROUTERS


class Check(StrEnum):
    """The design checks by the name a finding shows (`[provider]`) and a blueprint's
    `design.accept[].check` names: the blueprint's `Accept.check` is built from this list
    (generator/blueprint/spec.py), every member but `accept`."""

    ACCEPT = "accept"  # an acceptance (design.accept) whose check raised no warning; not acceptable
    BUSINESS_SPOF = "business-spof"
    CDU_CAPACITY = "cdu-capacity"
    COOLING = "cooling"
    ECMP = "ecmp"
    FAILURE_DOMAIN = "failure-domain"
    FIREWALL_SYMMETRY = "firewall-symmetry"
    GROWTH = "growth"
    LOSSLESS = "lossless"
    MLAG_DAD = "mlag-dad"
    MULTI_RAIL = "multi-rail"
    NFS_ACCESS = "nfs-access"
    NPU_FACTS = "npu-facts"
    NPU_NIC = "npu-nic"
    OPTIC_REACH = "optic-reach"
    OVERSUBSCRIPTION = "oversubscription"
    PARALLELISM = "parallelism"
    POOL_USAGE = "pool-usage"
    PORTS_LEFT = "ports-left"
    PROVIDER = "provider"
    RACK_POWER = "rack-power"
    SHARED_STORAGE_PLANE = "shared-storage-plane"
    SPLIT_PORTS = "split-ports"
    SWITCH_CAPABILITY = "switch-capability"
    SWITCH_MTU = "switch-mtu"


_MANAGEMENT = frozenset({Plane.INBAND, Plane.OOB})
_HOST_PLANES = frozenset({Plane.PARAMETER, Plane.STORAGE, Plane.BUSINESS, Plane.INBAND, Plane.OOB})
_JUMBO = frozenset({Plane.PARAMETER, Plane.STORAGE})
_HOSTS = frozenset({Role.NPU_SERVER, Role.STORAGE_NODE, Role.MANAGEMENT_NODE})
_LOWER = frozenset({Role.LEAF, Role.ACCESS})
_UPPER = frozenset({Role.SPINE, Role.CORE})
_BORDER = frozenset({Role.BORDER_ROUTER, Role.FIREWALL})
_ROUTERS = frozenset({NsKind.SWITCH, NsKind.ROUTER, NsKind.FIREWALL})
