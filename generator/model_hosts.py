"""The model's records of NPU servers, their NICs, and the lossless class with the switch MTU
derived from it (re-exported by generator.model: one model namespace)."""

from __future__ import annotations

from generator.records import Record
from generator.vocab import DomainKind

# The switch side of a jumbo plane (parameter, storage), from the CE V300R023C00 command reference
# (WheaterW/INTA-project nassim-main/corpus/hw/hw_CE6800_V300R023C00/cmd_corpus_json/src/References/
# Command_Reference/Command_Reference/Interface_Management/):
# - `mtu <mtu>` (Interface_Basic_Configuration_Commands/mtu_(interface_view).json): the IPv4 MTU
#   of an interface, Vlanif included, "an integer ranging from 46 to 9600" (default 1500);
# - `jumboframe enable <value>` (Ethernet_Interface_Configuration_Commands/jumboframe_enable.json):
#   the longest frame a port accepts, default 9216 ("A frame whose length is less than or equal to
#   1518 bytes is a non-jumbo frame": the length counts the 14-byte header and 4-byte FCS of a
#   1500-byte MTU), "1518 to 9500" on the CE8851-32CQ8DQ-P, CE8850-SAN/HAM, CE8855, CE6866 and
#   CE6885 families; the page lists larger ranges for others and none for the CE8850-64CQ-EI,
#   CE6865, CE9860 or CE16800 [unconfirmed: `jumboframe enable ?` on those models], so 9500 holds.
SWITCH_IP_MTU = 9000  # the routed MTU wanka sets on a jumbo plane unless the NIC MTU is higher
SWITCH_MTU_MAX = 9600
JUMBO_FRAME = 9216  # the CE default; raised when the IP MTU needs more
JUMBO_FRAME_MAX = 9500
# A frame of an IP MTU: 14-byte Ethernet header, 4-byte 802.1Q tag (the peer-link and trunks carry
# tagged VLANs) and 4-byte FCS (IEEE 802.3 / 802.1Q framing)
FRAME_OVERHEAD = 22


class SwitchMtu(Record, kw_only=True):
    """A jumbo plane's MTUs, each derived from the NIC MTU of the plane's hosts (the lossless
    class's `mtu`): the switches route an IP MTU no smaller than the NIC's and accept frames that
    carry it. The design check (analysis.hardware.switch_mtu) fails a NIC MTU above what the
    switch carries."""

    plane: str
    nic_mtu: int  # the hosts' NIC MTU (hccn.conf, the storage NICs)
    ip_mtu: int  # switch `mtu` on routed ports and Vlanifs
    jumbo_frame: int  # switch `jumboframe enable` on the plane's ports

    @classmethod
    def of(cls, plane: str, nic_mtu: int) -> SwitchMtu:
        ip_mtu = max(SWITCH_IP_MTU, nic_mtu)
        return cls(
            plane=plane,
            nic_mtu=nic_mtu,
            ip_mtu=ip_mtu,
            jumbo_frame=max(JUMBO_FRAME, ip_mtu + FRAME_OVERHEAD),
        )

    @property
    def carried(self) -> bool:
        """The switches accept these values (`mtu` and `jumboframe enable` ranges above)."""
        return self.ip_mtu <= SWITCH_MTU_MAX and self.jumbo_frame <= JUMBO_FRAME_MAX

    @property
    def nic_mtu_max(self) -> int:
        """The highest NIC MTU the switches carry."""
        return min(SWITCH_MTU_MAX, JUMBO_FRAME_MAX - FRAME_OVERHEAD)


# Every hccn_tool setting the NIC script knows (artifacts/hccn.py), in the order it sets them.
NIC_COMMANDS = ("ip", "gateway", "netdetect", "mtu", "pfc", "prio_tc", "dscp_to_tc", "send_arp",
                "dcqcn")  # fmt: skip


class NpuNicLimits(Record, kw_only=True):
    """What the NPU NIC tool (hccn_tool) of a server model accepts, from the catalog (cited
    there): the highest MTU, and the networks it refuses as an NPU address (CIDR)."""

    model: str
    mtu_max: int
    refused: tuple[str, ...]
    confirmed: bool
    source: str
    # the hccn_tool settings a public source shows for the model (catalog `npu_nic.commands`);
    # the NIC script and hccn.conf hold no other
    commands: tuple[str, ...] = NIC_COMMANDS
    commands_source: str = ""


class Lossless(Record, kw_only=True):
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
    cnp_dscp: int = 48  # DCQCN CNP DSCP (NIC -dcqcn cnp_dscp; switch DSCP -> cs6)

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
    def tos(self) -> int:
        """RoCE TOS byte: the DSCP in its upper six bits, ECN bits 0 (HCCL_RDMA_TC; the storage
        NICs' rdma_cm default_roce_tos)."""
        return self.dscp * 4

    @property
    def hccl_rdma_tc(self) -> int:
        return self.tos

    @property
    def hccl_rdma_sl(self) -> int:
        return self.priority

    @property
    def queue(self) -> int:
        """Switch queue (= priority) the lossless class is scheduled in."""
        return self.priority


class StorageNic(Record, kw_only=True):
    """The storage-plane NIC of a host model, from the catalog (`storage_nic`, cited there or
    unconfirmed): the Linux driver its ports report (`ethtool -i`), which decides whether
    roles/storage_nic_qos can configure it."""

    model: str  # host model (catalog name)
    nic: str  # NIC model, e.g. ConnectX-6 Dx
    driver: str  # kernel driver of its ports, e.g. mlx5_core
    confirmed: bool
    source: str


class NpuDevice(Record, kw_only=True):
    device_id: int  # /dev/davinciN, = NPU port index on the server
    port: str  # parameter-plane port the device's NIC is cabled from
    ip: int
    prefix: int
    gateway: int
    leaf: str  # parameter leaf the port is cabled to
    rank: int = -1  # cluster rank id (rank table, placement, diff), 0..N-1 in rank order
    sdid: int = -1  # A3: SDID read from the hardware (rank table super_device_id); -1 unknown


class Domain(Record, kw_only=True):
    """A failure/scheduling domain a server is in, spelled one way in every output.

    kind: rack | cdu | leaf (the access unit: a leaf, or a multi-rail group named first-last) |
    pod (3-tier parameter plane) | fabric (everything above the leaves) | supernode.
    index: 0-based in floor / rank order (the rank table's super_pod_id is the supernode's)."""

    kind: DomainKind
    index: int
    name: str


class NpuServer(Record, kw_only=True):
    """An NPU server as HCCL and schedulers see it; `Cluster.npu_servers` is in rank order."""

    name: str
    host_ip: int  # in-band address (HCCL_IF_IP, rank table host_ip)
    pod: int  # parameter-plane pod (3 tiers), else 0
    supernode: int | None  # None without supernodes
    leaves: tuple[str, ...]  # parameter leaves its NPU ports reach, in device order, deduplicated
    devices: tuple[NpuDevice, ...]
    domains: tuple[Domain, ...] = ()  # rack, cdu, leaf, pod, fabric, supernode (those it has)
    accelerator: str = ""  # catalog accelerator, e.g. ascend-910b
    npus: int = 0  # NPU cards (`dies` and `ranks` count dies on multi-die cards)
    dies_per_npu: int = 1
    # Supernode servers: the Super Pod ID read from the hardware (NPU facts), else the planned
    # supernode index; rank table super_pod_id and the scheduler's superpodid label. None: none
    super_pod_id: int | None = None

    @property
    def dies(self) -> int:
        """NPU dies: the cards times the dies on a card (A3: 2 per card)."""
        return self.npus * self.dies_per_npu

    @property
    def ranks(self) -> int:
        """HCCL ranks: one per NPU device the OS shows (/dev/davinciN), a die on A3."""
        return len(self.devices)

    def domain(self, kind: str) -> Domain | None:
        return next((d for d in self.domains if d.kind == kind), None)
