"""The required flows: what must be able to talk to what, on which protocol and port.

One table drives the firewall policy (one rule per flow that crosses a zone), the switches'
management ACLs (the management pools) and the design review, and `wanka verify` proves every
row from the rendered files. Endpoint groups, as the inventory spells them:

- management-nodes: the management nodes' in-band addresses (controller, monitoring, bastion);
- switch-management: the management address of every switch, router and firewall (out-of-band);
- dhcp-relays: the out-of-band gateways relaying the switches' ZTP DHCP requests to the ZTP
  servers, from their own (Vlanif) addresses: a factory-default switch has no address yet;
- bmc: every host's BMC (out-of-band);
- npu-servers / storage-nodes: in-band addresses; npu-storage / storage-data: storage-plane ports;
- business-hosts: the NPU servers' business bonds; outside: beyond the border routers.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator.model import Flow
from generator.vocab import Plane

SSH, SNMP, SNMP_TRAP, NTP, SYSLOG, DHCP = 22, 161, 162, 123, 514, 67
REDFISH, IPMI = 443, 623
NPU_EXPORTER = 8082  # MindCluster NPU Exporter default (-port=8082)
DPC = 0  # any: the OceanStor DPC client's ports are not published per release [unconfirmed]

MGMT = (Plane.INBAND, Plane.OOB)
BACK = (Plane.OOB, Plane.INBAND)
FLOWS: tuple[Flow, ...] = (
    Flow(
        "ssh-switches",
        "management-nodes",
        "switch-management",
        "tcp",
        (SSH,),
        MGMT,
        "configure and deploy switches, routers and firewalls; the LLDP check",
    ),
    Flow(
        "snmp-poll",
        "management-nodes",
        "switch-management",
        "udp",
        (SNMP,),
        MGMT,
        "SNMPv3 polling (snmp_exporter on the monitoring nodes)",
    ),
    Flow(
        "snmp-trap",
        "switch-management",
        "management-nodes",
        "udp",
        (SNMP_TRAP,),
        BACK,
        "SNMPv3 traps to the monitoring nodes",
    ),
    Flow(
        "ntp",
        "switch-management",
        "management-nodes",
        "udp",
        (NTP,),
        BACK,
        "time from the controllers",
    ),
    Flow(
        "syslog",
        "switch-management",
        "management-nodes",
        "udp",
        (SYSLOG,),
        BACK,
        "logs to the monitoring nodes",
    ),
    Flow(
        "ztp",
        "dhcp-relays",
        "management-nodes",
        "udp",
        (DHCP,),
        BACK,
        "ZTP: DHCP (relayed by the out-of-band gateway) to the controllers",
    ),
    Flow(
        "ztp-files",
        "switch-management",
        "management-nodes",
        "tcp",
        (SSH,),
        BACK,
        "ZTP: day-0 files over SFTP from the controllers",
    ),
    Flow(
        "redfish",
        "management-nodes",
        "bmc",
        "tcp",
        (REDFISH,),
        MGMT,
        "BMC Redfish (power, firmware, console)",
    ),
    Flow("ipmi", "management-nodes", "bmc", "udp", (IPMI,), MGMT, "BMC IPMI over LAN"),
    Flow(
        "ssh-hosts",
        "management-nodes",
        "npu-servers",
        "tcp",
        (SSH,),
        ("", ""),
        "Ansible over the in-band plane",
    ),
    Flow(
        "npu-exporter",
        "management-nodes",
        "npu-servers",
        "tcp",
        (NPU_EXPORTER,),
        ("", ""),
        "Prometheus scraping the NPU exporters",
    ),
    Flow(
        "dpc",
        "npu-storage",
        "storage-data",
        "any",
        (DPC,),
        ("", ""),
        "training data over the storage plane (DPC)",
    ),
    Flow(
        "internet",
        "business-hosts",
        "outside",
        "any",
        (0,),
        ("business", "untrust"),
        "the hosts' default route through the business plane and the border",
    ),
)


def required_flows(bp: Mapping[str, Any]) -> tuple[Flow, ...]:
    """The table above; with storage shared on the business plane the DPC flow still stays
    inside one routing domain (the storage VLAN of the business spines)."""
    del bp  # every blueprint needs the same flows today; the groups resolve per cluster
    return FLOWS
