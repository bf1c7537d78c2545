#!/usr/bin/python
"""Converge a CloudEngine switch's running configuration to the intended one, in one commit."""

from __future__ import annotations

import ipaddress
import re

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.wanka.cluster.plugins.module_utils.ce_session import (
    SESSION_SPEC,
    connect,
    discard,
    rejected,
    save_backup,
    type_key,
)

DOCUMENTATION = r"""
module: wanka_ce_config
short_description: Converge a Huawei CloudEngine switch to its intended configuration
description:
  - Reads C(display current-configuration) over SSH with netmiko (device type C(huawei_vrpv8),
    VRP V200/V300 two-stage commit), computes the remediation from running to intended with
    hier_config (C(Platform.HUAWEI_VRP), C(undo) negation, C(quit) to leave a view), writes a
    backup of the running configuration, enters the remediation in one system-view session and
    commits it once.
  - The intended text is first put into the form the switch displays (masks dotted, documented
    defaults left out), so a converged switch shows no difference.
  - A line the switch rejects leaves the session with C(clear configuration candidate) and
    C(return), so the uncommitted candidate is discarded and nothing reaches the running
    configuration. If the configuration read back after the commit still differs from the intended
    one, C(rollback configuration last 1) (answered C(y) at its C([Y/N]) prompt) restores the
    configuration from before the commit (VRP8 configuration rollback).
  - Lines that carry secrets (a password or key argument, as in C(local-user ... password
    irreversible-cipher), C(snmp-agent usm-user ... cipher), DFS/OSPF C(authentication-mode ...),
    BGP C(peer ... password cipher)) are left out of the comparison, because the switch prints them
    encrypted; they are set by zero-touch provisioning or with O(secrets=true). Other lines with
    the word cipher (C(ssh server cipher ...)) are compared like any other.
  - SNMPv3 keys are never typed as C(cipher <key>) (that takes device-encrypted text). The intended
    configuration names C(snmp-agent usm-user v3 U authentication-mode M) and C(privacy-mode M)
    without a key; after the remediation, in the same commit, each such line is typed and the key
    (O(snmp_auth_key), O(snmp_priv_key)) answered at "Enter Password:" and "Confirm Password:"
    (CE V300R023C00 configuration guide, Example for Configuring a Device to Communicate with NMSs
    Using SNMPv3 USM Users, step 5) when the switch shows no key of that mode for the user, or for
    every such line with O(snmp_rotate=true). These lines (keyless or C(... cipher %+%#...%+%#)
    as the switch displays them) are never part of the hier_config comparison.
  - In check mode the remediation is returned (and shown with --diff) and nothing is changed.
options:
  host: {type: str, required: true, description: Management address of the switch.}
  port: {type: int, default: 22, description: SSH port.}
  username: {type: str, required: true, description: Local user with privilege level 3.}
  password: {type: str, required: true, no_log: true, description: Its password.}
  device_type: {type: str, default: huawei_vrpv8, description: netmiko device type.}
  timeout: {type: int, default: 60, description: Seconds to wait for the session and each answer.}
  intended: {type: str, required: true, description: Intended configuration, saved format.}
  backup: {type: path, required: true, description: File the running configuration is saved to.}
  secrets: {type: bool, default: false, description: Also converge lines that carry secrets.}
  snmp_auth_key: {type: str, no_log: true, description: SNMPv3 authentication key (8-255).}
  snmp_priv_key: {type: str, no_log: true, description: SNMPv3 privacy key (8-255).}
  snmp_rotate: {type: bool, default: false, description: Type the SNMPv3 keys even if set.}
"""


# A secret is the argument after a password/key keyword, never the word cipher alone (`ssh server
# cipher aes128_ctr ...` lists algorithms: CE V300R023C00 cmd ref ssh_server_cipher.json). Forms:
# `local-user <u> password irreversible-cipher <p>` (local-user_password*.json), `peer <ip> password
# {cipher|simple} <p>` (peer_password_*.json), `snmp-agent usm-user v3 <u> authentication-mode|
# privacy-mode <proto> [localized-configuration] cipher <key>` (snmp-agent_usm-user.json),
# `authentication-mode hmac-sha256 password <p>` (authentication-mode_(DFS_group_view).json),
# `authentication-mode {md5|hmac-md5|hmac-sha256} <key-id> [cipher] <p>` and `authentication-mode
# simple [cipher] <p>` (authentication-mode_(OSPF_area_view).json).
SECRET = re.compile(
    r"\b(password (?:irreversible-cipher|cipher|simple)"
    r"|(?:authentication-mode|privacy-mode) \S+(?: \S+)? (?:cipher|password|plain))\s+\S+"
)


# An SNMPv3 key line: intended without a key (the plaintext form, "the password is delivered in
# interactive mode", snmp-agent_usm-user.json <authKey>), displayed `... <mode> cipher %+%#...%+%#`
# (configuration guide, Example for Configuring a Device to Communicate with NMSs Using SNMPv3 USM
# Users, Configuration Scripts). Neither goes through hier_config: set_keys types them.
USM_KEY = re.compile(
    r"^\s*snmp-agent usm-user v3 (?P<user>\S+) (?P<kind>authentication|privacy)-mode (?P<mode>\S+)"
    r"(?P<key> .+)?$"
)


# How `display current-configuration` prints a line (CE V300R023C00):
# - `ip address A <len>` is shown `ip address A <dotted mask>`: configuration guide, Example for
#   Configuring Intermediate File-based ZTP (entered `ip address 10.1.1.1 24`, Configuration Scripts
#   `ip address 10.1.1.1 255.255.255.0`); the guide's configuration scripts print 1,448 interface
#   addresses with dotted masks against 12 with a length (ip_address_(interface_view).json takes
#   `{ <mask> | <mask-length> }`).
# - `ip route-static [vpn-instance V] D <len> ...` is shown with a dotted mask and D cut to its
#   network: Example for Configuring IPv4 Layer 3 Multicast over VXLAN (Inter-AS) (entered
#   `ip route-static vpn-instance mcast1 192.168.40.1 24 100ge 1/0/3`, script `... 192.168.40.0
#   255.255.255.0 100GE1/0/3`); ip_route-static_vpn-instance.json `{ <mask> | <mask-length> }`.
# - BGP `network A <len>` is shown `network A <dotted mask>`: Example for Configuring BGP
#   Hierarchical Routing (entered `network 2.2.2.2 32`, script `network 2.2.2.2 255.255.255.255`).
#   OSPF `network A <wildcard>` is always dotted and does not match (one or two digits only).
MASKED = (
    re.compile(r"^(?P<head>\s*ip address [\d.]+) (?P<len>\d{1,2})(?P<tail>(?: .*)?)$"),
    re.compile(
        r"^(?P<head>\s*ip route-static(?: vpn-instance \S+)?) (?P<dest>[\d.]+) (?P<len>\d{1,2})"
        r"(?P<tail> .*)$"
    ),
    re.compile(r"^(?P<head>\s*network [\d.]+) (?P<len>\d{1,2})(?P<tail>(?: .*)?)$"),
)
# "This command does not display parameters that use default settings."
# (display_current-configuration_(All_views).json). Defaults the reference documents:
DEFAULTS = {
    "jumboframe enable 9216",  # jumboframe_enable.json: "By default, ... 9216 bytes"
    "ssh server dh-exchange min-len 3072",  # ssh_server_dh-exchange_min-len.json: "3072 bits"
}


def device_form(text: str) -> str:
    """The configuration as the switch displays it: masks dotted, documented defaults left out."""
    out = []
    for line in text.splitlines():
        if line.strip() in DEFAULTS:
            continue
        for rx in MASKED:
            m = rx.match(line)
            if m:
                net = ipaddress.ip_network(
                    f"{m.groupdict().get('dest', '0.0.0.0')}/{m['len']}", False
                )
                dest = f"{net.network_address} " if "dest" in rx.groupindex else ""
                line = f"{m['head']} {dest}{net.netmask}{m['tail']}"
                break
        out.append(line)
    return "\n".join(out) + "\n"


def _config(text: str, secrets: bool):
    from hier_config import Platform, get_hconfig

    lines = [
        line
        for line in device_form(text).splitlines()
        if line.strip()
        and line.strip() != "return"
        and (secrets or not SECRET.search(line))
        and not USM_KEY.match(line)
    ]
    return get_hconfig(Platform.HUAWEI_VRP, "\n".join(lines))


PHYSICAL = re.compile(
    r"^interface ((\d+)?GE|MEth)\S+$"
)  # ports that exist whether configured or not


def remediation(running: str, intended: str, secrets: bool) -> list[str]:
    """Lines that take the running configuration to the intended one. A physical port the plan
    does not use is cleared (its lines undone), never deleted: `undo interface` is for logical
    interfaces only."""
    from hier_config import WorkflowRemediation

    have, want = _config(running, secrets), _config(intended, secrets)
    for section in have.children:
        if PHYSICAL.match(section.text) and want.get_child(equals=section.text) is None:
            want.add_child(section.text)
    wf = WorkflowRemediation(have, want)
    return list(wf.remediation_config.dump_simple(sectional_exiting=True))


def key_lines(running: str, intended: str, rotate: bool) -> list[tuple[str, str]]:
    """(line, authentication|privacy): the intended keyless SNMPv3 mode lines to type, those the
    switch shows with no key of that mode for the user (all of them when rotating)."""
    keyed = {
        (m["user"], m["kind"], m["mode"])
        for m in map(USM_KEY.match, running.splitlines())
        if m and m["key"]
    }
    return [
        (m[0].strip(), m["kind"])
        for m in map(USM_KEY.match, intended.splitlines())
        if m and not m["key"] and (rotate or (m["user"], m["kind"], m["mode"]) not in keyed)
    ]


def _masked(lines: list[str]) -> str:
    return "".join(SECRET.sub(r"\1 ******", line) + "\n" for line in lines)


def _discard(conn) -> None:
    """Drop the uncommitted candidate (ce_session.discard) and go back to the user view."""
    discard(conn)
    conn.send_command("return", expect_string=r">")


def _rollback(conn) -> None:
    """`rollback configuration last 1` in the user view asks "... Continue? [Y/N]:" and waits
    for the answer (rollback_configuration.json, examples: "Continue? [Y/N]:y")."""
    conn.send_command("rollback configuration last 1", expect_string=r"\[Y/N\]")
    conn.send_command("y", expect_string=r">", cmd_verify=False)


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            **SESSION_SPEC,
            "intended": {"type": "str", "required": True},
            "backup": {"type": "path", "required": True},
            "secrets": {"type": "bool", "default": False},
            "snmp_auth_key": {"type": "str", "no_log": True},
            "snmp_priv_key": {"type": "str", "no_log": True},
            "snmp_rotate": {"type": "bool", "default": False},
        },
        supports_check_mode=True,
    )
    p = module.params
    conn = connect(module)
    try:
        running = conn.send_command("display current-configuration")
        lines = remediation(running, p["intended"], p["secrets"])
        keys = key_lines(running, p["intended"], p["snmp_rotate"])
        shown = _masked(lines) + "".join(f"{line}  (key typed at the prompt)\n" for line, _ in keys)
        result = {"changed": bool(lines or keys), "commands": shown.splitlines()}
        if lines or keys:
            result["diff"] = {"prepared": shown}
        if not (lines or keys) or module.check_mode:
            module.exit_json(**result)
        secret = {"authentication": p["snmp_auth_key"], "privacy": p["snmp_priv_key"]}
        absent = [f"snmp_{k[:4]}_key" for _, k in keys if not secret[k]]
        if absent:
            module.fail_json(msg=f"SNMPv3 keys to set and no {', '.join(absent)}", **result)

        save_backup(p["backup"], running)
        result["backup"] = p["backup"]

        commands = [line.strip() for line in lines]
        output = conn.send_config_set(commands, exit_config_mode=False)
        output += "".join(type_key(conn, line, secret[kind]) for line, kind in keys)
        errors = rejected(output, lambda line: _masked([line]))
        if errors:
            _discard(conn)
            after = conn.send_command("display current-configuration")
            state = "unchanged" if after == running else "CHANGED, check it"
            module.fail_json(
                msg=f"{p['host']} rejected a line; the uncommitted change was discarded (clear "
                f"configuration candidate), running configuration {state}: " + "; ".join(errors),
                rolled_back=True,
                **result,
            )
        try:
            conn.commit()
        except ValueError as exc:
            _discard(conn)
            module.fail_json(msg=f"commit failed, change discarded: {exc}", **result)

        after = conn.send_command("display current-configuration")
        left = remediation(after, p["intended"], p["secrets"])
        left += [f"{line} (no key shown)" for line, _ in key_lines(after, p["intended"], False)]
        if left:
            _rollback(conn)
            after = conn.send_command("display current-configuration")
            state = "restored" if after == running else "NOT restored, check it"
            module.fail_json(
                msg="after the commit the switch still differs from the intended configuration; "
                f"rolled back to the configuration before the commit ({state}): "
                + "; ".join(_masked(left[:5]).splitlines()),
                rolled_back=True,
                **result,
            )
        module.exit_json(**result)
    finally:
        conn.disconnect()


if __name__ == "__main__":
    main()
