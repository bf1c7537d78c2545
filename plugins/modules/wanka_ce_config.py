#!/usr/bin/python
"""Converge a CloudEngine switch's running configuration to the intended one, in one commit."""

from __future__ import annotations

import ipaddress
import re

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.wanka.cluster.plugins.module_utils.ce_session import (
    ASK_YN,
    MAX_REPLY,
    SESSION_SPEC,
    Channel,
    Refused,
    SessionError,
    connect,
    errors,
    save_backup,
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
  - The comparison is made in the form the switch displays, as the CE V300R023C00 pages document
    it (the `display` facts of generator/catalog/commands.yaml, restated in DISPLAY) - documented
    defaults hidden (C(undo shutdown), C(portswitch) on a physical port, C(jumboframe enable 9216),
    C(ssh server dh-exchange min-len 3072)), masks dotted, a trap host compared without the
    C(host-name) the switch gives it - and lines the switch adds that the plan does not own
    (C(snmp-agent local-engineid)) are left alone. A trap host the plan does not have is undone by
    that name.
  - Lines are typed one at a time; the first line the switch rejects ends the typing (nothing
    after it is sent), and C(clear configuration candidate) and C(return) discard the uncommitted
    change. A line that asks C([Y/N]) (C(ssh server-source), ssh_server-source.json) is answered
    C(y). If the configuration read back after the commit still differs from the intended one,
    C(rollback configuration last 1) (answered C(y) at its C([Y/N]) prompt) restores the
    configuration from before that commit.
  - Every answer is read up to a prompt that is the last line received (C(<name>), C([~name...]),
    C([*name...])), or a question the line is known to ask, at most O(max_reply) bytes and
    O(timeout) seconds; keys and the password never appear in a message.
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
    as the switch displays them) are never part of the hier_config comparison. The keys are
    typed in a commit of their own (before the configuration change when their user exists, after
    it otherwise), so no rollback of a configuration change removes them.
  - In check mode the remediation is returned (and shown with --diff) and nothing is changed.
options:
  host: {type: str, required: true, description: Management address of the switch.}
  port: {type: int, default: 22, description: SSH port.}
  username: {type: str, required: true, description: Local user with privilege level 3.}
  password: {type: str, required: true, no_log: true, description: Its password.}
  device_type: {type: str, default: huawei_vrpv8, description: netmiko device type.}
  timeout: {type: int, default: 60, description: Seconds to wait for the session and each answer.}
  intended:
    type: str
    required: true
    no_log: true
    description: Intended configuration, saved format, its Vault values filled in (never returned).
  backup: {type: path, required: true, description: File the running configuration is saved to.}
  secrets: {type: bool, default: false, description: Also converge lines that carry secrets.}
  snmp_auth_key: {type: str, no_log: true, description: SNMPv3 authentication key (8-255).}
  snmp_priv_key: {type: str, no_log: true, description: SNMPv3 privacy key (8-255).}
  snmp_rotate: {type: bool, default: false, description: Type the SNMPv3 keys even if set.}
  max_reply: {type: int, default: 16777216, description: Bytes one answer of the switch may have.}
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


# How `display current-configuration` shows a line (CE V300R023C00). The same facts, with the same
# pages, are the `display` / `adds` fields of these huawei-ce entries of
# generator/catalog/commands.yaml (which this module, running under Ansible, cannot import);
# tests/consumers/test_tool_doubles.py checks that DISPLAY and ADDS equal the table's and that
# device_form/shown agree with the CE double, which reads the table.
# - hidden, "This command does not display parameters that use default settings"
#   (display_current-configuration_(All_views).json):
#   `undo shutdown`: shutdown.json "By default, physical interfaces are initialized and started";
#   `portswitch` on a physical port: portswitch.json "By default, an Ethernet interface works in
#   Layer 2 mode" (an Eth-Trunk shows it: Example for Configuring an Eth-Trunk Interface to Work in
#   Manual Mode, Configuration Scripts); `jumboframe enable 9216` (jumboframe_enable.json: 9216);
#   `ssh server dh-exchange min-len 3072` (ssh_server_dh-exchange_min-len.json: 3072 bits).
# - dotted masks: `ip address A <len>` shown `ip address A <dotted mask>`: Example for Configuring
#   Intermediate File-based ZTP (typed `ip address 10.1.1.1 24`, Configuration Scripts
#   `ip address 10.1.1.1 255.255.255.0`); `ip route-static [vpn-instance V] D <len> ...` with a
#   dotted mask and D cut to its network: Example for Configuring IPv4 Layer 3 Multicast over VXLAN
#   (Inter-AS) (`... 192.168.40.1 24 100ge 1/0/3` shown `... 192.168.40.0 255.255.255.0
#   100GE1/0/3`); BGP `network A <len>`: Example for Configuring BGP Hierarchical Routing
#   (`network 2.2.2.2 32` shown `network 2.2.2.2 255.255.255.255`). OSPF `network A <wildcard>` is
#   always dotted and does not match (one or two digits only).
# - a trap host typed without `host-name` is shown with the name the device gives it,
#   `snmp-agent target-host host-name __targetHost_1_27466 trap ...` (Example for Configuring a
#   Device to Communicate with NMSs Using SNMPv3 USM Users, step 6 and Configuration Scripts;
#   snmp-agent_target-host.json: "By default, the device automatically generates a host name").
# - `snmp-agent` adds `snmp-agent local-engineid <id>` to the display (same example's Configuration
#   Scripts; snmp-agent_local-engineid.json: "the system uses an internal algorithm to
#   automatically generate an engine ID"): a line the plan does not own, left alone.
DISPLAY = {
    "undo shutdown": "hidden",
    "portswitch": "hidden on ethernet",
    "jumboframe enable <int:1518-9500>": "hidden when jumboframe enable 9216",
    "ssh server dh-exchange min-len {1024|2048|3072|4096}": (
        "hidden when ssh server dh-exchange min-len 3072"
    ),
    "ip address <ip> <mask>": "ip address <ip> <dotted>",
    "ip route-static <ip> <mask> <ip>": "ip route-static <network> <dotted> <ip>",
    "ip route-static <ip> <mask> <ip> preference <int:1-255>": (
        "ip route-static <network> <dotted> <ip> preference <int>"
    ),
    "ip route-static vpn-instance <word> <ip> <mask> <ip>": (
        "ip route-static vpn-instance <word> <network> <dotted> <ip>"
    ),
    "network <ip> <mask>": "network <ip> <dotted>",
    "snmp-agent target-host trap address udp-domain <ip> params securityname <word> v3 privacy": (
        "snmp-agent target-host host-name <host-name> trap address udp-domain <ip> params "
        "securityname <word> v3 privacy"
    ),
    "snmp-agent target-host trap address udp-domain <ip> vpn-instance <word> params securityname "
    "<word> v3 privacy": (
        "snmp-agent target-host host-name <host-name> trap address udp-domain <ip> vpn-instance "
        "<word> params securityname <word> v3 privacy"
    ),
}
ADDS = {"snmp-agent": ("snmp-agent local-engineid <word>",)}
# The questions a line raises and the answer typed (table `prompt`; the SNMPv3 key prompts are
# answered by set_keys): ssh_server-source.json, Examples: "Warning: SSH server source
# configuration will take effect in the next login. Continue? [Y/N]:y".
ASKS = {
    "ssh server-source -i <if>": (
        "Warning: SSH server source configuration will take effect in the next login. "
        "Continue? [Y/N]:",
        "y",
    )
}
ASKED = {re.compile(r"^ssh server-source -i \S+$"): "y"}

HIDDEN = re.compile(
    r"^(?:undo shutdown|jumboframe enable 9216|ssh server dh-exchange min-len 3072)$"
)
MASKED = (
    re.compile(r"^(?P<head>\s*ip address [\d.]+) (?P<len>\d{1,2})(?P<tail>(?: .*)?)$"),
    re.compile(
        r"^(?P<head>\s*ip route-static(?: vpn-instance \S+)?) (?P<dest>[\d.]+) (?P<len>\d{1,2})"
        r"(?P<tail> .*)$"
    ),
    re.compile(r"^(?P<head>\s*network [\d.]+) (?P<len>\d{1,2})(?P<tail>(?: .*)?)$"),
)
# the name a trap host is given when none is typed (`__targetHost_<n>_<digits>`)
AUTO_HOST = re.compile(r"^(snmp-agent target-host) host-name (__targetHost_\d+_\d+) (trap .*)$")
ADDED = re.compile(r"^snmp-agent local-engineid \S+$")
LOGICAL = ("Eth-Trunk", "Vlanif", "LoopBack", "MEth", "NULL", "Tunnel", "Vbdif")


def device_form(text: str) -> str:
    """The intended configuration as the switch displays it (DISPLAY): documented defaults left
    out, masks dotted. A trap host is compared without the name the switch adds (shown)."""
    out, section = [], ""
    for line in text.splitlines():
        body = line.strip()
        if line and not line[0].isspace():
            section = body
        if HIDDEN.match(body):
            continue
        physical = section.startswith("interface ") and not section[10:].startswith(LOGICAL)
        if body == "portswitch" and line[0].isspace() and physical:
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


def shown(running: str, intended: str) -> tuple[str, dict[str, str]]:
    """The running configuration as compared: the name the switch gave a trap host left out
    (its name kept to undo it by), and the lines the switch adds that the plan does not own
    (ADDED, unless the intended configuration has one) dropped. Also the map from a trap host
    line without its name to `undo snmp-agent target-host host-name <name>`."""
    owned = any(ADDED.match(line.strip()) for line in intended.splitlines())
    out, names = [], {}
    for line in running.splitlines():
        if ADDED.match(line.strip()) and not owned:
            continue
        m = AUTO_HOST.match(line)
        if m:
            line = f"{m[1]} {m[3]}"
            names[line] = f"undo {m[1]} host-name {m[2]}"
        out.append(line)
    return "\n".join(out) + "\n", names


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
    """Lines that take the running configuration to the intended one, compared in the form the
    switch displays (device_form, shown). A physical port the plan does not use is cleared (its
    lines undone), never deleted: `undo interface` is for logical interfaces only. A trap host
    the plan does not have is undone by the name the switch gave it."""
    from hier_config import WorkflowRemediation

    running, names = shown(running, intended)
    have, want = _config(running, secrets), _config(intended, secrets)
    for section in have.children:
        if PHYSICAL.match(section.text) and want.get_child(equals=section.text) is None:
            want.add_child(section.text)
    wf = WorkflowRemediation(have, want)
    lines = list(wf.remediation_config.dump_simple(sectional_exiting=True))
    return [names.get(line.removeprefix("undo "), line) for line in lines]


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


def _type(ch: Channel, line: str) -> None:
    """Type one configuration line (answering the question it raises, ASKED); Refused at the
    first error."""
    asks = [ASK_YN] if any(rx.match(line) for rx in ASKED) else []
    out, asked = ch.send(line, asks)
    if asked is not None:
        answer = next(a for rx, a in ASKED.items() if rx.match(line))
        more, _ = ch.send(answer)
        out += more
    if found := errors(out, _masked([line]).strip()):
        raise Refused("; ".join(found))


def _commit(ch: Channel, typing) -> None:
    """system-view, `typing(ch)`, commit, return; a refused line or commit discards the change
    (nothing after the refused line is sent) and raises Refused."""
    out, _ = ch.send("system-view")
    if not out.rstrip().endswith("]"):
        raise SessionError("no system view prompt after system-view")
    try:
        typing(ch)
        out, _ = ch.send("commit")
        if found := errors(out, "commit"):
            raise Refused("; ".join(found))
    except Refused:
        ch.discard()
        raise
    ch.send("return")


def _rollback(ch: Channel) -> bool:
    """`rollback configuration last 1` in the user view asks "... Continue? [Y/N]:" and waits
    for the answer (rollback_configuration.json, examples: "Continue? [Y/N]:y")."""
    _, asked = ch.send("rollback configuration last 1", [ASK_YN])
    if asked is None:
        return False
    ch.send("y")
    return True


def _running(ch: Channel) -> str:
    """`display current-configuration`, whole: the saved format ends with `return` (the
    configuration guide's Configuration Scripts, e.g. the SNMPv3 USM example's), so an answer cut
    short by a prompt-like line inside it is refused, never compared."""
    text = ch.display("display current-configuration")
    last = text.rstrip().rsplit("\n", 1)[-1].strip()
    if last != "return":
        raise SessionError(
            "display current-configuration ended before its `return` line (last line "
            f"{ch.mask(last[:80])!r}): not compared"
        )
    return text


def _users(running: str) -> set[str]:
    return set(re.findall(r"(?m)^snmp-agent usm-user v3 (\S+) group \S+$", running))


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            **SESSION_SPEC,
            # the Vault values are filled in: never returned (the invocation Ansible prints at -v
            # and on failure would quote them)
            "intended": {"type": "str", "required": True, "no_log": True},
            "backup": {"type": "path", "required": True},
            "secrets": {"type": "bool", "default": False},
            "snmp_auth_key": {"type": "str", "no_log": True},
            "snmp_priv_key": {"type": "str", "no_log": True},
            "snmp_rotate": {"type": "bool", "default": False},
            "max_reply": {"type": "int", "default": MAX_REPLY},
        },
        supports_check_mode=True,
    )
    p = module.params
    secret = {"authentication": p["snmp_auth_key"], "privacy": p["snmp_priv_key"]}
    try:
        conn = connect(module)
    except Exception as exc:  # a login that fails (no greeting end, SSH error): a message
        module.fail_json(msg=f"{p['host']}:{p['port']}: login failed: {type(exc).__name__}: {exc}")
    ch = Channel(conn, p["timeout"], p["max_reply"], [*secret.values(), p["password"]])
    try:
        conn.clear_buffer()
        _converge(module, ch, secret)
    except SessionError as exc:
        module.fail_json(msg=f"{p['host']}: {ch.mask(str(exc))}")
    except Exception as exc:  # a session that broke another way: a message, no traceback
        module.fail_json(msg=f"{p['host']}: {type(exc).__name__}: {ch.mask(str(exc))}")
    finally:
        conn.disconnect()


def _converge(module, ch: Channel, secret: dict) -> None:
    p = module.params
    running = _running(ch)
    lines = remediation(running, p["intended"], p["secrets"])
    keys = key_lines(running, p["intended"], p["snmp_rotate"])
    listed = _masked(lines) + "".join(f"{line}  (key typed at the prompt)\n" for line, _ in keys)
    result = {"changed": bool(lines or keys), "commands": listed.splitlines()}
    if lines or keys:
        result["diff"] = {"prepared": listed}
    if not (lines or keys) or module.check_mode:
        module.exit_json(**result)
    absent = [f"snmp_{k[:4]}_key" for _, k in keys if not secret[k]]
    if absent:
        module.fail_json(msg=f"SNMPv3 keys to set and no {', '.join(absent)}", **result)
    save_backup(p["backup"], running)
    result["backup"] = p["backup"]

    def set_keys() -> None:
        """The keys in a commit of their own, so that no rollback of a configuration change
        (rollback configuration last 1 undoes one commit) removes them."""
        try:
            _commit(ch, lambda ch: [ch.type_key(line, secret[kind]) for line, kind in keys])
        except Refused as exc:
            module.fail_json(
                msg=f"{p['host']} rejected an SNMPv3 key line; that uncommitted change was "
                f"discarded (clear configuration candidate): {ch.mask(str(exc))}",
                **result,
            )

    # keys first when their users exist (a switch fresh from ZTP): a configuration change that
    # fails later cannot take them; otherwise after the change that creates the users
    first = keys and {line.split()[3] for line, _ in keys} <= _users(running)
    if first:
        set_keys()
    if lines:
        before = _running(ch)
        try:
            _commit(ch, lambda ch: [_type(ch, line.strip()) for line in lines])
        except Refused as exc:
            after = _running(ch)
            state = "unchanged" if after == before else "CHANGED, check it"
            module.fail_json(
                msg=f"{p['host']} rejected a line; the uncommitted change was discarded (clear "
                f"configuration candidate), nothing after it was sent, running configuration "
                f"{state}: {ch.mask(str(exc))}",
                rolled_back=True,
                **result,
            )
        after = _running(ch)
        left = remediation(after, p["intended"], p["secrets"])
        if left:
            done = _rollback(ch)
            after = _running(ch)
            state = "restored" if done and after == before else "NOT restored, check it"
            module.fail_json(
                msg="after the commit the switch still differs from the intended configuration; "
                f"rolled back to the configuration before the commit ({state}): "
                + "; ".join(_masked(left[:5]).splitlines()),
                rolled_back=True,
                **result,
            )
    if keys and not first:
        set_keys()
    if keys:
        after = _running(ch)
        unset = [f"{line} (no key shown)" for line, _ in key_lines(after, p["intended"], False)]
        if unset:
            module.fail_json(msg="after the key commit: " + "; ".join(unset), **result)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
