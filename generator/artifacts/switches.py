"""files/switches/<name>.cfg and <name>.yml: a complete configuration for every switch.

Each switch gets a *structured config*: plain dicts and lists of str/int/bool, built from the
Cluster model by the pure functions below, one per feature area (system, management, lossless,
layer 2, interfaces, routing). It is written as files/switches/<name>.yml for reviews and tools,
and rendered by the platform's Jinja2 templates (generator/templates/switches/<platform>/) to
files/switches/<name>.cfg. Every port the cabling plan puts on a switch is configured, up and
described after its far end; no other port is touched.

files/ztp/configs/<name>.cfg: the same in saved format, the startup configuration ZTP loads.

The .cfg files are CLI scripts for VRP V200/V300 two-stage commit: a first `system-view` session
sets the host name and the port splits and commits (split sub-ports exist only once the split is
committed), a second session configures everything else and commits. Secrets never appear: they
are Ansible Vault variable references (`{{ vault_... }}`) that the deploying role fills in, except
the SNMPv3 keys, which no configuration carries: roles/switch_deploy types them at the switch's
password prompts.

Every fact comes from the model (management address and VRF, routing protocol, ASNs, host
VLAN and gateway interface, service addresses); what is computed here is only how the platform
spells it (`server_trunks`); ECMP width is the model's `Device.ecmp_paths` and the ECN mode
`Cluster.ecn_of`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from generator import render
from generator.artifacts import OutputFile, emitter
from generator.artifacts.switch_ports import (
    PLATFORMS,
    Context,
    End,
    context,
    meth,
    server_trunks,
)
from generator.artifacts.switch_routing import monitor_link, routing, wildcard
from generator.model import MGMT_VRF, Cluster, Device, Lossless, Subnet, ip
from generator.structured_yaml import to_yaml
from generator.vocab import LinkKind, Plane

Config = dict[str, Any]


# Management: ACL on the VTY/SNMP, local users; the VRF and addresses come from the model.
MGMT_ACL = 2000
USERS = (("admin", 3, "vault_switch_admin_password"),)  # (name, privilege level, vault variable)
# Out-of-band access ports of BMCs isolated from each other at layer 2, one group per switch (CE
# V300R023C00 configuration guide, port isolation example: `port-isolate enable group 1` in the
# interface view of a portswitch port; ports of one group do not exchange frames, each still reaches
# the Vlanif and the ports outside the group). Which ports: Cluster.isolated (switch management
# ports stay outside, the M-LAG dual-active detection runs between them).
ISOLATE_GROUP = 1
# M-LAG peers authenticate their DFS packets (CE V300R023C00 M-LAG configuration examples, DFS group
# view: `authentication-mode hmac-sha256 password <password>` in plaintext, as typed there)
DFS_KEY = "vault_dfs_password"

# Lossless class: DiffServ domain, PHB of each 802.1p priority (= queue), AI ECN model per plane,
# the CE default PFC priority (its profile starts with it enabled), static ECN thresholds [U].
DS_DOMAIN = "wanka-lossless"
PHB = ("be", "af1", "af2", "af3", "af4", "ef", "cs6", "cs7")
AI_ECN_MODEL = {Plane.PARAMETER: "ai_ecn_hpc", Plane.STORAGE: "ai_ecn_distributedfilestorage"}
CE_DEFAULT_PFC_PRIORITY = 3
PFC_TURN_OFF_THRESHOLD = 20  # deadlocks within 20 s before PFC is turned off on a port
ECN_PROFILE = "wanka-ecn"
# CNPs (DCQCN congestion notifications) in cs6 = queue 6, left strict priority; queues 0-5 share
# by DRR, the lossless queue with the larger weight instead of the default PQ on every queue
# ([CE] qos pq/drr: "By default ... PQ"; Example for Configuring AI ECN maps CNPs to cs6).
CNP_PHB = "cs6"
DRR_QUEUES = (0, 5)
LOSSLESS_DRR_WEIGHT = 50  # [U] share of the DRR queues for the lossless class; tune on site
STATIC_ECN = {"low": 20, "high": 80, "percent": 10}  # % of queue buffer; assumption, tune on site

# M-LAG pairs: DFS group, peer-link Eth-Trunk, server Eth-Trunks from 10, the virtual gateway MAC
# both members answer with (Huawei's dual-active gateway example uses the VRRP range).
DFS_GROUP = 1
PEER_LINK_TRUNK = 1
SERVER_TRUNK_BASE = 10
GATEWAY_MAC = "0000-5e00-0101"
DFS_PRIORITY = (150, 120)  # (peer-link a side, b side)

# ---------------------------------------------------------------------------------------------
# Feature areas

BMC = "bmc"  # vocabulary: output key (the BMC ports' interface profile)


def system(dev: Device, cx: Context) -> Config:
    return {
        "hostname": dev.name,
        "platform": cx.platform[dev.name],
        "model": dev.model,
        "role": dev.role,
        "plane": dev.plane,
        "splits": [{"port": port, "type": split.replace("x", "*")} for port, split in dev.splits],
    }


def management(dev: Device, cx: Context) -> Config:
    """The model's management address: in the management VRF on MEth0/0/0, or (switches of the
    out-of-band plane itself) the loopback. NTP, syslog, SNMPv3 and SSH are sourced there and
    reach only the management pools."""
    m, svc = dev.mgmt, cx.cluster.services
    routes = []
    if m is not None and m.vrf:
        routes = [
            {"network": ip(net), "prefix": prefix, "next_hop": ip(m.gateway)}
            for net, prefix in svc.pools
        ]
    rules = [
        {"id": 5 * (i + 1), "action": "permit", "source": ip(net), "wildcard": wildcard(prefix)}
        for i, (net, prefix) in enumerate(svc.pools)
    ]
    rules.append({"id": 100, "action": "deny"})
    return {
        "vrf": m.vrf if m else "",
        "interface": m.interface if m else "LoopBack0",
        "address": ip(m.ip if m else dev.loopback),
        "routes": routes,
        "acl": {"number": MGMT_ACL, "rules": rules},
        "users": [
            {"name": name, "level": level, "password": f"{{{{ {var} }}}}"}
            for name, level, var in USERS
        ],
        "ntp": [{"address": ip(a), "preferred": n == 0} for n, a in enumerate(svc.ntp)],
        "syslog": [ip(a) for a in svc.syslog],
        "snmp": {
            "user": svc.snmp_user,
            "group": svc.snmp_group,
            "view": svc.snmp_view,
            # the modes without keys: roles/switch_deploy types the keys at the switch's
            # prompts (the configuration never carries them, see services.j2)
            "auth": svc.snmp_auth,
            "priv": svc.snmp_priv,
            "targets": [ip(a) for a in svc.snmp],
        },
    }


def lossless(dev: Device, cx: Context) -> Config | None:
    """The plane's one lossless class, from the same record the NICs and HCCL are set from."""
    cls: Lossless | None = cx.cluster.lossless_of(dev.plane)
    if cls is None:
        return None
    facts = cx.cluster.facts_of(dev.model)
    families = facts.command_families if facts else ()
    out: Config = {
        "priority": cls.priority,
        "dscp": cls.dscp,
        "queue": cls.queue,
        "phb": PHB[cls.priority],
        "domain": DS_DOMAIN,
        "undo_default_priority": cls.priority != CE_DEFAULT_PFC_PRIORITY,
        "default_priority": CE_DEFAULT_PFC_PRIORITY,
        # PFC deadlock protection only where the model has it (catalog command_families)
        "turn_off_threshold": PFC_TURN_OFF_THRESHOLD if "pfc-deadlock" in families else 0,
        "ecn": (ecn := cx.cluster.ecn_of(dev)),
        "cnp_dscp": cls.cnp_dscp,
        "cnp_phb": CNP_PHB,
        "drr": {"first": DRR_QUEUES[0], "last": DRR_QUEUES[1], "weight": LOSSLESS_DRR_WEIGHT},
    }
    if ecn == "ai-ecn":
        out["ai_ecn_model"] = AI_ECN_MODEL[dev.plane]
    elif ecn == "static":
        out["ecn_profile"] = {"name": ECN_PROFILE, **STATIC_ECN}
    return out


def layer2(dev: Device, cx: Context, ports: Config) -> Config:
    """VLANs, spanning tree (edge ports and BPDU protection; V-STP on M-LAG pairs), M-LAG."""
    profiles = ports["port_profiles"].values()
    ifaces = ports["interfaces"]
    vlans = sorted(
        {p["vlan"] for p in profiles if "vlan" in p}
        | {i["vlan"] for i in ifaces if i.get("mode") == "eth-trunk" and "vlan" in i}
    )
    edge = any("edge" in p for p in profiles) or any("edge" in i for i in ifaces)
    pair = cx.mlag_peer.get(dev.name)
    mlag = None
    stp = None
    if pair is not None:
        other, a_side = pair
        mine, theirs = meth(dev), meth(cx.devices[other])
        mlag = {
            "dfs_group": DFS_GROUP,
            "peer": other,
            "priority": DFS_PRIORITY[0 if a_side else 1],
            "source": ip(mine.ip if mine else dev.loopback),
            "peer_address": ip(theirs.ip if theirs else cx.devices[other].loopback),
            "vrf": MGMT_VRF if mine and theirs else "",
            "password": f"{{{{ {DFS_KEY} }}}}",
        }
        stp = {"mode": "rstp", "v_stp": True, "bpdu_protection": edge}
    elif edge:
        stp = {"mode": "", "v_stp": False, "bpdu_protection": True}
    return {"vlans": vlans, "stp": stp, "mlag": mlag}


def port_profiles(dev: Device, cx: Context) -> dict[str, Config]:
    """The settings ports share, by purpose; every port names one (`profile`).

    host: access port in the leaf's host VLAN (NICs, BMCs, management ports); fabric: routed
    point-to-point link of the plane; unaddressed: routed link the model has no addresses for
    (firewalls, storage nodes on a shared plane); lag-member: Eth-Trunk member."""
    plane = dev.plane
    jumbo = cx.cluster.switch_mtu_of(plane)  # the model's, from the plane's NIC MTU
    lossless_plane = cx.cluster.lossless_of(plane) is not None
    subnet = cx.subnet.get(dev.name)
    host: Config = {"mode": "access", "vlan": subnet.vlan if subnet else 0, "edge": True}
    fabric: Config = {"mode": "routed"}
    if jumbo:
        fabric["mtu"] = jumbo.ip_mtu
    if cx.cluster.routing(plane) == "ospf":
        fabric["ospf_p2p"] = True
    for p in (host, fabric):
        if jumbo:
            p["jumbo"] = jumbo.jumbo_frame
        if lossless_plane:
            p["lossless"] = True
    out = {
        "fabric": fabric,
        "border": {"mode": "routed"},
        "unaddressed": {"mode": "routed"},
        "lag-member": {"mode": "lag-member"},
    }
    if subnet is not None:
        # one access profile per host subnet (A3: a subnet per die position, VLAN per subnet)
        extra = {_host_profile(s, subnet): {**host, "vlan": s.vlan} for s in cx.subnets[dev.name]}
        others = {k: v for k, v in extra.items() if k != "host"}  # vocabulary: output key
        out = {"host": host, **others, **out}  # vocabulary: output key
        if plane == Plane.OOB:  # BMCs share the VLAN with the management ports: each BMC reaches
            # the gateway and the switches, never another BMC (review 1 finding 16, review 3 #2)
            out[BMC] = {**host, "isolate_group": ISOLATE_GROUP}
    return out


def _host_profile(sn: Subnet, first: Subnet) -> str:
    return "host" if sn.vlan == first.vlan else f"host-vlan{sn.vlan}"  # vocabulary: output key


def interfaces(dev: Device, cx: Context) -> Config:
    """`interfaces` in the order the switch lists them: Vlanif gateway, Eth-Trunks, MEth0/0/0,
    every cabled port, LoopBack0. A cabled port names its far end (`peer`: device and port, as
    the cabling plan has it) and its profile; logical interfaces carry a `mode`."""
    profiles = port_profiles(dev, cx)
    subnet = cx.subnet.get(dev.name)
    mlag = dev.name in cx.mlag_peer
    vlan = subnet.vlan if subnet else 0
    logical: list[Config] = []
    mgmt: list[Config] = []
    ports: list[Config] = []
    trunk_hosts: list[End] = []
    business = dev.plane == Plane.BUSINESS
    # the members every end is compared with, read once (vocab.py)
    mgmt_link, peer_link, uplink = LinkKind.MGMT, LinkKind.PEER_LINK, LinkKind.UPLINK
    host, border = LinkKind.HOST, Plane.BORDER
    for e in cx.ends.get(dev.name, ()):
        link = e.link
        kind = link.kind
        peer = {"device": e.far, "port": e.far_port}
        if kind == mgmt_link and e.lower:  # this switch's own management port
            address = meth(dev)
            m: Config = {"name": e.port, "mode": "management", "peer": peer}
            if address is not None:
                m.update(vrf=address.vrf, address=ip(address.ip), prefix=address.prefix)
            mgmt.append(m)
        elif kind == peer_link:
            ports.append(
                {
                    "name": e.port,
                    "peer": peer,
                    "profile": "lag-member",
                    "eth_trunk": PEER_LINK_TRUNK,
                }
            )
        elif business and kind == host and link.plane == dev.plane:
            trunk_hosts.append(e)
        elif kind != uplink and subnet is not None:
            sn = cx.host_subnet.get((e.far, e.far_port), subnet)
            profile = BMC if cx.cluster.isolated(link) else _host_profile(sn, subnet)
            ports.append({"name": e.port, "peer": peer, "profile": profile})
        elif e.local_ip and link.plane == border:  # toward a firewall, statically routed
            ports.append(
                {
                    "name": e.port,
                    "peer": peer,
                    "profile": "border",
                    "address": ip(e.local_ip),
                    "prefix": link.prefix,
                }
            )
        elif e.local_ip and link.plane == dev.plane:
            ports.append(
                {
                    "name": e.port,
                    "peer": peer,
                    "profile": "fabric",
                    "address": ip(e.local_ip),
                    "prefix": link.prefix,
                }
            )
        else:
            ports.append({"name": e.port, "peer": peer, "profile": "unaddressed"})

    for sn in cx.subnets.get(dev.name, ()):
        vif: Config = {
            "name": sn.gateway_interface,
            "mode": "vlanif",
            "description": f"gateway {ip(sn.network)}/{sn.prefix}",
            "vlan": sn.vlan,
            "address": ip(sn.gateway),
            "prefix": sn.prefix,
        }
        if mtu := cx.cluster.switch_mtu_of(dev.plane):
            vif["mtu"] = mtu.ip_mtu
        if mlag:
            vif["mac"] = GATEWAY_MAC
        if sn.dhcp_relay:
            vif["dhcp_relay"] = [ip(a) for a in sn.dhcp_relay]
        logical.append(vif)
    if mlag:
        logical.append(
            {
                "name": f"Eth-Trunk{PEER_LINK_TRUNK}",
                "mode": "eth-trunk",
                "description": f"peer-link to {cx.mlag_peer[dev.name][0]}",
                "peer_link": DFS_GROUP,
            }
        )
    for i, (host, members) in enumerate(server_trunks(trunk_hosts, cx.port_key)):
        tid = SERVER_TRUNK_BASE + i
        trunk: Config = {
            "name": f"Eth-Trunk{tid}",
            "mode": "eth-trunk",
            "description": f"to {host} {cx.bond.get(host, 'bond')}",
            "vlan": vlan,
            "edge": True,
        }
        if mlag:
            trunk["mlag"] = tid
        logical.append(trunk)
        ports.extend(
            {
                "name": e.port,
                "peer": {"device": e.far, "port": e.far_port},
                "profile": "lag-member",
                "eth_trunk": tid,
            }
            for e in members
        )
    ports.sort(key=lambda p: cx.port_key(p["name"]))
    out = logical + mgmt + ports
    if dev.loopback:
        out.append(
            {
                "name": "LoopBack0",
                "mode": "loopback",
                "description": "router ID and management source",
                "address": ip(dev.loopback),
                "prefix": 32,
            }
        )
    used = {p["profile"] for p in ports}
    return {
        "dhcp": any("dhcp_relay" in i for i in logical),  # `dhcp enable` before any relay
        "port_profiles": {k: v for k, v in profiles.items() if k in used},
        "interfaces": out,
    }


def structured_config(dev: Device, cx: Context) -> Config:
    ports = interfaces(dev, cx)
    return {
        **system(dev, cx),
        "management": management(dev, cx),
        "lossless": lossless(dev, cx),
        **layer2(dev, cx, ports),
        **ports,
        "monitor_link": monitor_link(dev, cx, ports),
        "routing": routing(dev, cx, ports),
    }


# ---------------------------------------------------------------------------------------------
# Output


TEMPLATES = ("config.j2", "switch.cfg.j2", "startup.cfg.j2")  # body, CLI script, startup config


def units(cluster: Cluster) -> Sequence[Device]:
    """What `emit` renders one by one (generator.parallel splits them across its workers)."""
    return cluster.devices


def emit_units(cluster: Cluster, mine: Sequence[Device]) -> Iterator[OutputFile]:
    """`emit`'s files for the devices `mine` only (those that get a configuration)."""
    cx = context(cluster, mine)
    templates = {p: [render.template(f"switches/{p}/{t}") for t in TEMPLATES] for p in PLATFORMS}
    for dev in mine:
        if (platform := cx.platform.get(dev.name)) not in templates:
            continue
        cfg = structured_config(dev, cx)
        body, script, startup = templates[platform]
        text = {**cfg, "body": body.render(cfg)}
        yield OutputFile(f"files/switches/{dev.name}.yml", to_yaml(cfg).encode())
        yield OutputFile(f"files/switches/{dev.name}.cfg", script.render(text).encode())
        yield OutputFile(f"files/ztp/configs/{dev.name}.cfg", startup.render(text).encode())


@emitter(parts=2, units=units, emit_units=emit_units)  # half of all emit work at 10,240 cards
def emit(cluster: Cluster, analysis: object = None) -> Iterator[OutputFile]:
    """Per switch: structured config, CLI script, startup config (one body rendered, wrapped
    twice)."""
    return emit_units(cluster, units(cluster))
