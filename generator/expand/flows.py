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

from generator.blueprint.spec import Blueprint
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
        name="ssh-switches",
        source="management-nodes",
        destination="switch-management",
        protocol="tcp",
        ports=(SSH,),
        zones=MGMT,
        purpose="configure and deploy switches, routers and firewalls; the LLDP check",
    ),
    Flow(
        name="snmp-poll",
        source="management-nodes",
        destination="switch-management",
        protocol="udp",
        ports=(SNMP,),
        zones=MGMT,
        purpose="SNMPv3 polling (snmp_exporter on the monitoring nodes)",
    ),
    Flow(
        name="snmp-trap",
        source="switch-management",
        destination="management-nodes",
        protocol="udp",
        ports=(SNMP_TRAP,),
        zones=BACK,
        purpose="SNMPv3 traps to the monitoring nodes",
    ),
    Flow(
        name="ntp",
        source="switch-management",
        destination="management-nodes",
        protocol="udp",
        ports=(NTP,),
        zones=BACK,
        purpose="time from the controllers",
    ),
    Flow(
        name="syslog",
        source="switch-management",
        destination="management-nodes",
        protocol="udp",
        ports=(SYSLOG,),
        zones=BACK,
        purpose="logs to the monitoring nodes",
    ),
    Flow(
        name="ztp",
        source="dhcp-relays",
        destination="management-nodes",
        protocol="udp",
        ports=(DHCP,),
        zones=BACK,
        purpose="ZTP: DHCP (relayed by the out-of-band gateway) to the controllers",
    ),
    Flow(
        name="ztp-files",
        source="switch-management",
        destination="management-nodes",
        protocol="tcp",
        ports=(SSH,),
        zones=BACK,
        purpose="ZTP: day-0 files over SFTP from the controllers",
    ),
    Flow(
        name="redfish",
        source="management-nodes",
        destination="bmc",
        protocol="tcp",
        ports=(REDFISH,),
        zones=MGMT,
        purpose="BMC Redfish (power, firmware, console)",
    ),
    Flow(
        name="ipmi",
        source="management-nodes",
        destination="bmc",
        protocol="udp",
        ports=(IPMI,),
        zones=MGMT,
        purpose="BMC IPMI over LAN",
    ),
    Flow(
        name="ssh-hosts",
        source="management-nodes",
        destination="npu-servers",
        protocol="tcp",
        ports=(SSH,),
        zones=("", ""),
        purpose="Ansible over the in-band plane",
    ),
    Flow(
        name="npu-exporter",
        source="management-nodes",
        destination="npu-servers",
        protocol="tcp",
        ports=(NPU_EXPORTER,),
        zones=("", ""),
        purpose="Prometheus scraping the NPU exporters",
    ),
    Flow(
        name="dpc",
        source="npu-storage",
        destination="storage-data",
        protocol="any",
        ports=(DPC,),
        zones=("", ""),
        purpose="training data over the storage plane (DPC)",
    ),
    Flow(
        name="internet",
        source="business-hosts",
        destination="outside",
        protocol="any",
        ports=(0,),
        zones=("business", "untrust"),
        purpose="the hosts' default route through the business plane and the border",
    ),
)


def required_flows(bp: Blueprint) -> tuple[Flow, ...]:
    """The table above; with storage shared on the business plane the DPC flow still stays
    inside one routing domain (the storage VLAN of the business spines)."""
    del bp  # every blueprint needs the same flows today; the groups resolve per cluster
    return FLOWS
