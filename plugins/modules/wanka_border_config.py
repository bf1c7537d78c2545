#!/usr/bin/python
"""Apply a border router's or firewall's generated configuration script, and its SNMPv3 keys at
the device's prompts."""

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
module: wanka_border_config
short_description: Apply a NetEngine 8000 or USG6000E configuration script, SNMPv3 keys included
description:
  - Reads C(display current-configuration) over SSH with netmiko (C(huawei_vrpv8) for the NE8000,
    VRP8 two-stage commit; C(huawei) for the USG6000E), and enters the lines of the generated
    script (files/border/<name>.cfg) the running configuration lacks, each in its view, then
    C(commit) (VRP8) and C(save). Lines the device has that the script lacks are reported in
    C(extra), never removed.
  - C(snmp-agent usm-user v3 U authentication-mode M) and C(privacy-mode M) are typed in the
    confirmation mode and the key answered at "Enter Password:" and "Confirm Password:" (NE40E
    V800R012C10 SNMPUSMUser page and configuration guide "Example for Configuring a Device to
    Communicate with an NMS Through a USM SNMPv3 User"); the device saves them as
    C(... cipher %#%#...%#%#), which counts as present. Keys are not rotated by a second run.
  - A line the device rejects discards the uncommitted change (C(clear configuration candidate),
    NE40E Disard(CFGOM) page) and fails. In check mode the missing lines are returned only.
"""

SCRIPT_ONLY = {"system-view", "commit", "return", "quit"}
# Saved as encrypted text: compared up to the keyword (NE40E local-user page, SNMPUSMUser page).
SECRET = re.compile(r"^(.*\b(?:irreversible-cipher|cipher))\s+\S+$")
KEYED = re.compile(r"^snmp-agent usm-user v3 \S+ (authentication|privacy)-mode \S+$")
# Typed with a mask length, saved with the dotted mask (the USM SNMPv3 example's Configuration
# Files: "ip address 1.1.2.1 255.255.255.0").
MASK_LENGTH = re.compile(r"^(ip address \S+) (\d+)$")
# Typed although it is the default, so not saved (NE40E telnet-server-enable page: "If the
# default configuration file is used, the Telnet service is disabled").
DEFAULTS = {"undo telnet server enable"}
# Lines that open a view although the script types nothing in it: `ipv4-family` enters the VPN
# instance IPv4 address family view (NE40E ipv4-family-unicast(L3VPNOM) page; generator/catalog/
# commands.yaml `enters`), so one more `quit` leaves it.
OPENS_EMPTY = {"ipv4-family"}


def _shown(line: str) -> str:
    """A line as the device saves it (for comparing)."""
    if m := MASK_LENGTH.match(line):
        return f"{m.group(1)} {ipaddress.ip_network(f'0.0.0.0/{m.group(2)}').netmask}"
    if KEYED.match(line):
        return line + " cipher *"
    if m := SECRET.match(line):
        return m.group(1) + " *"
    return line


def tree(text: str, script: bool) -> list[tuple[tuple[str, ...], str]]:
    """(path of the views it is typed in, line) for every configuration line, by indentation."""
    out, stack = [], []  # stack: (depth, line)
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "!")) or (script and line in SCRIPT_ONLY):
            continue
        if line == "return":
            continue
        depth = len(raw) - len(raw.lstrip(" "))
        while stack and stack[-1][0] >= depth:
            stack.pop()
        out.append((tuple(s for _, s in stack), line))
        stack.append((depth, line))
    return out


def missing(running: str, intended: str) -> list[tuple[tuple[str, ...], str]]:
    have = {(tuple(_shown(p) for p in path), _shown(line)) for path, line in tree(running, False)}
    return [
        (path, line)
        for path, line in tree(intended, True)
        if line not in DEFAULTS and (tuple(_shown(p) for p in path), _shown(line)) not in have
    ]


def commands(lines: list[tuple[tuple[str, ...], str]], opens: set[tuple[str, ...]]) -> list[str]:
    """The lines with the view lines that enter them and `quit` to leave, from the system view.
    `opens`: the views of the script (a line with lines indented under it opens one)."""
    out: list[str] = []
    here: tuple[str, ...] = ()
    for path, line in lines:
        common = 0
        while common < min(len(here), len(path)) and here[common] == path[common]:
            common += 1
        out += ["quit"] * (len(here) - common) + list(path[common:]) + [line]
        here = (*path, line) if (*path, line) in opens or line in OPENS_EMPTY else path
    return out + ["quit"] * len(here)


def views(intended: str) -> set[tuple[str, ...]]:
    return {path[: i + 1] for path, _ in tree(intended, True) for i in range(len(path))}


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            **SESSION_SPEC,
            "intended": {"type": "str", "required": True},
            "backup": {"type": "path", "required": True},
            "snmp_auth_key": {"type": "str", "required": True, "no_log": True},
            "snmp_priv_key": {"type": "str", "required": True, "no_log": True},
        },
        supports_check_mode=True,
    )
    p = module.params
    two_stage = p["device_type"] == "huawei_vrpv8"
    conn = connect(module)
    try:
        running = conn.send_command("display current-configuration")
        todo = missing(running, p["intended"])
        have = {line for _, line in tree(running, False)}
        want = {_shown(line) for _, line in tree(p["intended"], True)}
        extra = sorted(line for line in have if line not in want and not SECRET.match(line))
        opens = views(p["intended"])
        typed = commands(todo, opens)
        shown = [_shown(line) if SECRET.match(line) else line for line in typed]
        result = {"changed": bool(todo), "commands": shown, "extra": extra}
        if todo:
            result["diff"] = {"prepared": "".join(line + "\n" for line in shown)}
        if not todo or module.check_mode:
            module.exit_json(**result)

        save_backup(p["backup"], running)
        result["backup"] = p["backup"]

        keys = {"authentication": p["snmp_auth_key"], "privacy": p["snmp_priv_key"]}
        conn.config_mode()
        output, plain = "", []
        for line in typed:
            if not (m := KEYED.match(line)):
                plain.append(line)
                continue
            output += conn.send_config_set(plain, enter_config_mode=False, exit_config_mode=False)
            plain = []
            output += type_key(conn, line, keys[m.group(1)])
        output += conn.send_config_set(plain, enter_config_mode=False, exit_config_mode=False)
        errors = rejected(output, _shown)
        if errors:
            if two_stage:
                discard(conn)
            conn.exit_config_mode()
            module.fail_json(
                msg=f"{p['host']} rejected a line"
                + ("; the uncommitted change was discarded: " if two_stage else ": ")
                + "; ".join(errors),
                **result,
            )
        if two_stage:
            conn.commit()
        conn.exit_config_mode()
        conn.save_config()
        left = missing(conn.send_command("display current-configuration"), p["intended"])
        if left:
            module.fail_json(
                msg="after the change the device still lacks: "
                + "; ".join(_shown(line) for _, line in left[:5]),
                **result,
            )
        module.exit_json(**result)
    finally:
        conn.disconnect()


if __name__ == "__main__":
    main()
