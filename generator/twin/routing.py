"""The routing and filtering a rendered config asks for, as FRR configuration and nftables.

Translations (CE/NE/USG V300R023C00 / V800R012C10 keyword -> FRR 8.4 / nftables):
- `bgp AS`, `router-id`, `peer X as-number N`, `ipv4-family unicast` > `network`,
  `import-route static`, `maximum load-balancing N` -> `router bgp`, `neighbor X remote-as N`,
  `network`, `redistribute static`, `maximum-paths N` (and `maximum-paths ibgp N`). A CE applies
  no import/export policy by default, so FRR's `bgp ebgp-requires-policy` is off.
- `ospf 1 router-id`, `area A` > `network N W`, `silent-interface`, `import-route static`,
  `default-route-advertise`, `maximum load-balancing`, `ospf network-type p2p` -> `router ospf`,
  `network N/len area A`, `passive-interface`, `redistribute static`, `default-information
  originate` (both advertise a default only while one is in the routing table), `maximum-paths`,
  `ip ospf network point-to-point`.
- `ip route-static [vpn-instance V] N M NH [preference P]` -> `ip route N/len NH P` in FRR, or a
  kernel route with metric P where the namespace runs no routing protocol (a route over a link
  without carrier is ignored: net.ipv4.conf.all.ignore_routes_with_linkdown=1).
- USG `firewall zone` / `security-policy` / `nat-policy` -> nftables: a forward chain with
  policy drop (the USG's `default action deny`; an interface in no zone forwards nothing),
  replies of permitted sessions accepted (the USG is stateful), one rule per `rule name`, and
  source NAT in a postrouting chain.
- USG local zone: the firewall's own traffic on an interface of a VPN instance (its management
  port; in no zone it passes nothing) -> input accepts what the interface's `service-manage
  ssh|snmp permit` or a rule from its zone to `local` permits, output what a rule from `local` to its zone permits,
  replies of accepted sessions pass, the rest is dropped [unconfirmed: whether service-manage
  alone admits a packet the security policy denies; the configs set both].
- `ssh server acl`, `snmp-agent acl`, `user-interface vty` > `acl N inbound` -> an input chain in
  every namespace of the device: TCP 22 / UDP 161 accepted from what the ACL's rules permit for
  that namespace's VPN instance, in rule order;
  a rule without `vpn-instance` matches only the public network [unconfirmed reading of the CE
  ACL reference], and what no rule permits is refused.
"""

from __future__ import annotations

from generator.twin import vrp
from generator.twin.instance import ns_name
from generator.twin.intake import ifname
from generator.twin.plan import Plan

# VRP's ConnectRetry default, "By default, the ConnectRetry interval is 32s" (CE6800 V300R023C00
# command reference, peer timer connect-retry); FRR's own default is 120 s
CONNECT_RETRY = 32


def apply(p: Plan) -> None:
    """Fill in FRR configs, kernel routes and nftables rulesets of the plan's device namespaces."""
    for dev in p.devices.values():
        for vpn in dev.vpns or [vrp.PUBLIC]:
            ns = p.namespaces[ns_name(dev.name, vpn)]
            statics = [r for r in dev.statics if r.vpn == vpn]
            dynamic = vpn == vrp.PUBLIC and (dev.bgp or dev.ospf)
            if dynamic:
                ns.frr = frr_config(dev, statics)
                ns.daemons = (
                    ("zebra", "staticd") + ("bgpd",) * bool(dev.bgp) + ("ospfd",) * bool(dev.ospf)
                )
            else:
                ns.commands += [
                    f"route append {r.network} via {r.next_hop} metric {r.preference}"
                    for r in statics
                ]
            rules = service_rules(dev, vpn)
            if dev.zones and vpn == vrp.PUBLIC:
                rules += firewall_rules(dev)
            rules += local_zone_rules(dev, vpn)
            if rules:
                ns.nft = "\n".join(rules) + "\n"


def frr_config(dev: vrp.Device, statics: list[vrp.Static]) -> str:
    out = ["frr defaults traditional", f"hostname {dev.name}", "!"]
    out += [f"ip route {r.network} {r.next_hop} {r.preference}" for r in statics]
    out += [f"ip route {n} blackhole" for n in (dev.bgp.stand_in if dev.bgp else ())]
    if dev.ospf:
        for iface in dev.interfaces.values():
            if iface.ospf_p2p:
                out += [f"interface {ifname(iface.name)}", " ip ospf network point-to-point", "!"]
        o = dev.ospf
        out += ["router ospf"] + [f" ospf router-id {o.router_id}"] * bool(o.router_id)
        out += [f" maximum-paths {o.maximum_paths}"]
        out += [" redistribute static"] * o.import_static
        out += [" default-information originate"] * o.default_route
        out += [f" passive-interface {ifname(s)}" for s in o.silent]
        out += [f" network {net} area {area}" for net, area in o.networks]
        out.append("!")
    if dev.bgp:
        b = dev.bgp
        out += [f"router bgp {b.asn}"] + [f" bgp router-id {b.router_id}"] * bool(b.router_id)
        out += [" no bgp ebgp-requires-policy", " no bgp default ipv4-unicast"]
        out += [f" neighbor {peer} remote-as {asn}" for peer, asn, _ in b.peers]
        out += [f" neighbor {peer} timers connect {CONNECT_RETRY}" for peer, _, _ in b.peers]
        out += [" address-family ipv4 unicast"]
        out += [f"  neighbor {peer} activate" for peer, _, _ in b.peers]
        out += [f"  network {net}" for net in b.networks + b.stand_in]
        out += ["  redistribute static"] * b.import_static
        out += [f"  maximum-paths {b.maximum_paths}", f"  maximum-paths ibgp {b.maximum_paths}"]
        out += [" exit-address-family", "!"]
    return "\n".join(out) + "\n"


SSH, SNMP = ("tcp", 22), ("udp", 161)
SERVICE_MANAGE = {"ssh": SSH, "snmp": SNMP}


def _acl_rules(dev: vrp.Device, acl: str, vpn: str, service: str, line: int) -> list[str]:
    """ACL `acl` (bound to `service` at `line`) in the namespace of VPN `vpn`: its rules in
    rule-ID order, then a drop for what no rule permits. Each rule counts its packets and names
    its line, so that a probe's failure names the rule that decided it (twin.explain.decided)."""
    out = []
    for rule in dev.acls.get(acl, []):
        if (rule.vpn is not None and rule.vpn != vpn) or (rule.vpn is None and vpn != vrp.PUBLIC):
            continue
        match = f"ip saddr {rule.source} " if rule.source else ""
        verdict = "return" if rule.action == "permit" else "drop"
        where = f"{dev.path}:{rule.line} rule {rule.number} {rule.action} of ACL {acl}"
        out.append(f'{match}counter {verdict} comment "{where}"')
    where = f"{dev.path}:{line} {service} ACL {acl}: no rule of it permits"
    return [*out, f'counter drop comment "{where}"']


# Where a CE answers SSH and SNMP: on its source interface only, and nowhere without one: "an
# SSH server does not accept login requests from any interface by default ... run this command
# to specify the source interface of the SSH server" (CE6800 V300R023C00 ssh_server-source.json);
# "By default, no source interface is specified for SNMP to receive and respond to requests from
# an NMS. The function that allows all interfaces ... is not enabled"
# (snmp-agent_protocol_source-interface.json). A VRP8 router answers SSH on every interface by
# default (NE40E V800R012C10 server-source-interf(SSHS).json, "The SSH server receives login
# requests from all interfaces"); the same is taken for its SNMP and for the USG [unconfirmed].
SOURCE_BOUND = frozenset({"huawei-ce"})


def _answers(dev: vrp.Device, vpn: str, service: str, source: tuple[str, int] | None) -> list[str]:
    """The nftables input rule that drops a service's requests to any address but its source
    interface's (in VPN `vpn`'s namespace), or none where the device answers on every one."""
    proto, port = SSH if service == "ssh" else SNMP
    if source is None:
        if dev.platform not in SOURCE_BOUND:
            return []
        return [
            f'    {proto} dport {port} counter drop comment "{dev.path}: no {service} source interface"'
        ]
    name, line = source
    iface = dev.interfaces.get(name)
    mine = [str(a.ip) for a in iface.addresses] if iface is not None and iface.vpn == vpn else []
    where = f'comment "{dev.path}:{line} {service} source {name}"'
    if not mine:
        return [f"    {proto} dport {port} counter drop {where}"]
    return [f"    {proto} dport {port} ip daddr != {_set(mine)} counter drop {where}"]


def service_rules(dev: vrp.Device, vpn: str) -> list[str]:
    """nftables input filtering in the namespace of VPN `vpn`: SSH and SNMP answered on their
    source interface only (_answers); SSH must pass both `ssh server acl` and the VTY ACL, SNMP
    `snmp-agent acl`; a permit returns to the next check, a deny or the end of an ACL drops."""
    chains: list[str] = []
    jumps = _answers(dev, vpn, "ssh", dev.ssh_source)
    jumps += _answers(dev, vpn, "snmp", dev.snmp_source)
    for name, (proto, port) in (("ssh", SSH), ("vty", SSH), ("snmp", SNMP)):
        if name in dev.service_acls:
            acl, line = dev.service_acls[name]
            chains += [f"  chain {name}_acl {{"]
            chains += [f"    {r}" for r in _acl_rules(dev, acl, vpn, service=name, line=line)] + [
                "  }"
            ]
            jumps.append(f"    {proto} dport {port} jump {name}_acl")
    if not jumps:
        return []
    head = ["table inet twin_acl {"]
    return (
        head
        + chains
        + ["  chain input {", "    type filter hook input priority 0; policy accept;"]
        + jumps
        + ["  }", "}"]
    )


def _set(items) -> str:
    items = list(items)
    return "{ " + ", ".join(items) + " }"


def _matches(rule: vrp.Policy) -> list[str]:
    """A security-policy rule's addresses and services as nftables matches: one per `service`
    line (the rule matches any of them), one without a service match when it has none."""
    match = []
    if rule.sources:
        match.append(f"ip saddr {_set(map(str, rule.sources))}")
    if rule.destinations:
        match.append(f"ip daddr {_set(map(str, rule.destinations))}")
    out = []
    for protocol, port in rule.services or [("", None)]:
        service = f"meta l4proto {protocol}" if protocol else ""
        if port is not None:
            service = f"{protocol} dport {port}"
        out.append(" ".join(filter(None, (*match, service))))
    return out


def local_zone_rules(dev: vrp.Device, vpn: str) -> list[str]:
    """The USG's local zone on the interfaces of VPN `vpn` (the module docstring)."""
    zone_of = {i: z for z, ifs in dev.zones.items() for i in ifs}
    mine = [i for i in dev.interfaces.values() if i.vpn == vpn]
    if vpn == vrp.PUBLIC or not dev.zones or not mine:
        return []
    inbound, outbound = [], []
    for i in mine:  # an interface in no zone passes nothing
        name, zone = f'"{ifname(i.name)}"', zone_of.get(i.name)
        for s in [s for s in i.service_manage if s in SERVICE_MANAGE] if zone else ():
            proto, port = SERVICE_MANAGE[s]
            where = f"{dev.path}:{i.line} service-manage {s} permit"
            inbound.append(f'    iifname {name} {proto} dport {port} accept comment "{where}"')
        for rule in dev.policies if zone else ():
            if rule.action != "permit":
                continue
            where = f'comment "{dev.path}:{rule.line} {rule.name}"'
            for match in _matches(rule):
                if zone in rule.source_zones and "local" in rule.destination_zones:
                    inbound.append(
                        " ".join(filter(None, ("    iifname", name, match, "accept", where)))
                    )
                if "local" in rule.source_zones and zone in rule.destination_zones:
                    outbound.append(
                        " ".join(filter(None, ("    oifname", name, match, "accept", where)))
                    )
        where = f"{dev.path}:{i.line} {i.name}: no rule of the local zone permits"
        inbound.append(f'    iifname {name} counter drop comment "{where}"')
        outbound.append(f'    oifname {name} counter drop comment "{where}"')
    text = ["table inet twin_local {"]
    for chain, hook, lines in (("input", "input", inbound), ("output", "output", outbound)):
        text += [f"  chain {chain} {{", f"    type filter hook {hook} priority 10; policy accept;"]
        text += ["    ct state established,related accept", *lines, "  }"]
    return [*text, "}"]


def firewall_rules(dev: vrp.Device) -> list[str]:
    """The USG's zones, security policy and NAT policy: the rules in their order, each permit
    or deny (first match), then traffic inside one zone permitted and the rest given the
    default action ("this command takes effect only for all the interzone ... traffic
    forwarding, but not for intrazone traffic forwarding. The default action for intrazone
    traffic is permit": USG CLI default_action_secpolicy.html)."""
    zone_ifs = {z: [f'"{ifname(i)}"' for i in ifs] for z, ifs in dev.zones.items()}
    default = "accept" if dev.default_action == "permit" else "drop"
    text = ["table inet twin_fw {", "  chain forward {"]
    text += [f"    type filter hook forward priority 0; policy {default};"]
    text += ["    ct state established,related accept"]
    for rule in dev.policies:
        zones = []
        for key, names in (("iifname", rule.source_zones), ("oifname", rule.destination_zones)):
            ifs = [i for z in names for i in zone_ifs.get(z, [])]
            zones.append(f"{key} {_set(ifs)}" if ifs else f'{key} "-none-"')
        verdict = "accept" if rule.action == "permit" else "drop"
        where = f'comment "{dev.path}:{rule.line} {rule.name}"'
        for match in _matches(rule):
            text.append(" ".join(filter(None, ("   ", *zones, match, "counter", verdict, where))))
    for ifs in zone_ifs.values():
        if ifs and any(ifs):
            text.append(
                f'    iifname {_set(ifs)} oifname {_set(ifs)} counter accept comment "intrazone"'
            )
    where = f"{dev.path}:{dev.default_line} default action {dev.default_action}"
    if not dev.default_line:
        where = f"{dev.path}:{dev.policy_line} security-policy: default action deny, the default"
    text.append(f'    counter {default} comment "{where}"')
    text += ["  }", "}"]
    if dev.nat:
        text += ["table ip twin_nat {", "  chain postrouting {"]
        text += ["    type nat hook postrouting priority srcnat; policy accept;"]
        for rule in dev.nat:
            match = []  # the zones a NAT rule names, as a security rule's: in and out interfaces
            for key, zones in (("iifname", rule.source_zones), ("oifname", rule.destination_zones)):
                ifs = [i for z in zones for i in zone_ifs.get(z, [])]
                match += [f"{key} {_set(ifs)}" if ifs else f'{key} "-none-"'] if zones else []
            if rule.sources:
                match.append(f"ip saddr {_set(map(str, rule.sources))}")
            if rule.nat == "easy-ip":
                action = "masquerade"
            elif rule.nat in dev.address_groups:
                pool = dev.address_groups[rule.nat]
                action = f"snat to {pool[0]}-{pool[-1]}" if len(pool) > 1 else f"snat to {pool[0]}"
            else:
                continue
            text.append(
                f'    {" ".join(match)} {action} comment "{dev.path}:{rule.line} {rule.name}"'
            )
        text += ["  }", "}"]
    return text
