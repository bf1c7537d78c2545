#!/usr/bin/python
"""Apply a border router's or firewall's generated configuration script, and its SNMPv3 keys at
the device's prompts."""

from __future__ import annotations

import codecs
import contextlib
import ipaddress
import re
import time

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.wanka.cluster.plugins.module_utils.ce_session import (
    SESSION_SPEC,
    connect,
    discard,
    save_backup,
)

DOCUMENTATION = r"""
module: wanka_border_config
short_description: Apply a NetEngine 8000 or USG6000E configuration script, SNMPv3 keys included
description:
  - Reads C(display current-configuration) over SSH (netmiko logs in: C(huawei_vrpv8) for the
    NE8000, VRP8 two-stage commit; C(huawei) for the USG6000E), and enters the lines of the
    generated script (files/border/<name>.cfg) the running configuration lacks, each in its
    view, one at a time, then C(commit) (VRP8) and C(save). Both texts are nested by hier_config
    (C(Platform.HUAWEI_VRP)), as wanka_ce_config reads them; lines are compared in the form the
    device displays (dotted masks; see C(shown)). Lines the device has that the script lacks are
    reported in C(extra), never removed.
  - C(snmp-agent usm-user v3 U authentication-mode M) and C(privacy-mode M) are typed in the
    confirmation mode and the key answered at "Enter Password:" and "Confirm Password:" (NE40E
    V800R012C10 SNMPUSMUser page and configuration guide "Example for Configuring a Device to
    Communicate with an NMS Through a USM SNMPv3 User"); the device saves them as
    C(... cipher %#%#...%#%#), which counts as present. Keys are not rotated by a second run.
  - Against a device that misbehaves, every reply is read up to C(max_output) characters and
    C(timeout) seconds; a prompt, a password prompt or a C([Y/N]) question counts only as the
    last line of what the device sent; only the documented questions are answered C(y) (any
    other is answered C(n) and fails); the first line the device rejects stops the run (the
    uncommitted change is discarded on the NE8000, C(clear configuration candidate), NE40E
    Disard(CFGOM) page; on the USG the lines before it have taken effect) and nothing after it
    is sent; no message carries a password or key (they are replaced by C(********)).
  - In check mode the missing lines are returned only.
options:
  intended:
    description: The script with its Vault placeholders filled (it holds the admin password).
  max_output:
    description: The most characters one reply may hold (the display of the running
      configuration included); more fails the run.
"""

SCRIPT_ONLY = {"system-view", "commit", "return", "quit"}
# Saved as encrypted text: compared up to the keyword (NE40E local-user page, SNMPUSMUser page).
SECRET = re.compile(r"^(.*\b(?:irreversible-cipher|cipher))\s+(\S+)$")
KEYED = re.compile(r"^snmp-agent usm-user v3 \S+ (authentication|privacy)-mode \S+$")
# Typed although they are the factory default, so not displayed ("does not display parameters
# that use default settings", CE V300R023C00 display_current-configuration_(All_views).json; the
# VRP rule taken for the NE8000 and the USG): each counts as present unless the device shows the
# line that undoes it, in the same view. The same facts are the `display`/`prompt` fields of the
# NE and USG entries of generator/catalog/commands.yaml (which this module, running under
# Ansible, cannot import); tests/consumers/test_tool_doubles.py checks that they agree, and the
# border double reads the table.
# - `undo telnet server enable`: NE40E telnet-server-enable page, "If the default configuration
#   file is used, the Telnet service is disabled";
# - `default action deny`: USG CLI default action (security policy view) page, "The default
#   action of the default security policy is deny" (not emitted since 005f22c; kept for a script
#   that types it). That the USG hides it is [unconfirmed].
DEFAULTS = {
    "undo telnet server enable": "telnet server enable",
    "default action deny": "default action permit",
}
# Lines that ask before they take effect, and the answer: the USG CLI default action (security
# policy view) page's Example, "Are you sure you want to continue? [Y/N]y". Any other question
# is answered `n` and fails the run.
QUESTIONS = (re.compile(r"^default action (?:permit|deny)$"),)
# Lines that open a view although the script types nothing in it: `ipv4-family` enters the VPN
# instance IPv4 address family view (NE40E ipv4-family-unicast(L3VPNOM) page; generator/catalog/
# commands.yaml `enters`), so one more `quit` leaves it.
OPENS_EMPTY = {"ipv4-family"}

# How `display current-configuration` prints a line typed with a mask length; both sides are put
# in this form before they are compared, so a device that prints the length as typed compares
# equal too (one rule: whatever the notation, an address with its mask).
# - `ip address A <len>` -> `ip address A <dotted mask>`: NE40E V800R012C10 configuration guide,
#   Example for Configuring a Device to Communicate with an NMS Through a USM SNMPv3 User,
#   Configuration Files ("ip address 1.1.2.1 255.255.255.0").
# - `ip route-static [vpn-instance V] D <len> ...` -> D cut to its network and the dotted mask:
#   CE V300R023C00 (VRP8), Example for Configuring IPv4 Layer 3 Multicast over VXLAN (Inter-AS)
#   (typed `... 192.168.40.1 24 ...`, shown `... 192.168.40.0 255.255.255.0 ...`, as in
#   wanka_ce_config.device_form); NE40E V800R012C10: Example for Configuring FRR for IPv4 Static
#   Routes on the Public Network types `ip route-static 192.168.10.0 24 ...` on Device C and its
#   Configuration Files show `192.168.10.0 255.255.255.0` (other lines of that file keep `24`);
#   the NE40E guide's configuration files hold 832 dotted `ip route-static` masks against 67
#   lengths. The USG6000E: [unconfirmed], the same rule.
# - USG `source-address|destination-address A <len>` (security policy and NAT rule views) ->
#   `... A mask <dotted mask>`: the USG CLI source-address-exclude (security policy rule view)
#   page documents `ipv4-address { ipv4-mask-length | mask mask-address | wildcard }`; which of
#   them the USG displays is [unconfirmed] (no USG display example found), the same rule.
ADDRESS = re.compile(r"^(ip address) ([\d.]+) ([\d.]+|\d{1,2})((?: sub)?)$")
ROUTE = re.compile(r"^(ip route-static(?: vpn-instance \S+)?) ([\d.]+) ([\d.]+|\d{1,2})((?: .*)?)$")
POLICY = re.compile(r"^((?:source|destination)-address) ([\d.]+) (?:mask )?([\d.]+|\d{1,2})$")

# A VRP prompt is a line of its own at the end of what the device sent: `<name>` in the user
# view, `[name]`, `[~name]`, `[*name]` (VRP8 two-stage commit) or `[name-view]` below (CE
# V300R023C00 configuration guide, "Two-Stage Commit"; NE40E V800R012C10 likewise; USG examples
# `[sysname-policy-security]`); a USG in hot standby prefixes `HRP_M`/`HRP_S` (netmiko's
# HuaweiBase.set_base_prompt strips it).
ENTER_KEY = re.compile(r"\nEnter Password:[ \t]*\Z")
CONFIRM_KEY = re.compile(r"\nConfirm Password:[ \t]*\Z")
QUESTION = re.compile(r"\n[^\n]*\[Y/N\]:?[ \t]*\Z")
ERROR = re.compile(r"^\s*Error:")
SYSNAME = re.compile(r"^sysname (\S+)$")
MASK = "********"


def _dotted(address: str, mask: str, network: bool) -> tuple[str, str] | None:
    try:
        net = ipaddress.ip_network(f"{address}/{mask}", strict=False)
    except ValueError:
        return None
    return (str(net.network_address) if network else address), str(net.netmask)


def shown(line: str) -> str:
    """A line as the device displays it (for comparing): whitespace runs as one space, masks
    dotted, secrets as their keyword."""
    line = " ".join(line.split())
    if (m := ADDRESS.match(line)) and (d := _dotted(m[2], m[3], False)):
        return f"{m[1]} {d[0]} {d[1]}{m[4]}"
    if (m := ROUTE.match(line)) and (d := _dotted(m[2], m[3], True)):
        return f"{m[1]} {d[0]} {d[1]}{m[4]}"
    if (m := POLICY.match(line)) and (d := _dotted(m[2], m[3], False)):
        return f"{m[1]} {d[0]} mask {d[1]}"
    if KEYED.match(line):
        return line + " cipher *"
    if m := SECRET.match(line):
        return m.group(1) + " *"
    return line


def tree(text: str, script: bool) -> list[tuple[tuple[str, ...], str]]:
    """(path of the views it is typed in, line) for every configuration line, nested by
    hier_config's loader under its Huawei VRP driver, the parser wanka_ce_config compares with
    (comment lines, the script's framing and `return` left out first)."""
    from hier_config import Platform, get_hconfig

    lines = [
        raw
        for raw in text.splitlines()
        if (line := raw.strip())
        and not line.startswith(("#", "!"))
        and line != "return"
        and not (script and line in SCRIPT_ONLY)
    ]
    config = get_hconfig(Platform.HUAWEI_VRP, "\n".join(lines))
    return [(tuple(node.path())[:-1], node.text) for node in config.all_children()]


def _keyed(path: tuple[str, ...], line: str) -> tuple[tuple[str, ...], str]:
    return tuple(shown(p) for p in path), shown(line)


def missing(running: str, intended: str) -> list[tuple[tuple[str, ...], str]]:
    """The intended lines the running configuration does not show, in the script's order."""
    have = {_keyed(path, line) for path, line in tree(running, False)}
    out = []
    for path, line in tree(intended, True):
        key = _keyed(path, line)
        undo = DEFAULTS.get(key[1])
        if undo is not None:
            if (key[0], undo) in have:
                out.append((path, line))
        elif key not in have:
            out.append((path, line))
    return out


def extra(running: str, intended: str) -> list[str]:
    """Lines the device shows that the script lacks (secrets left out), sorted."""
    want = {shown(line) for _, line in tree(intended, True)}
    return sorted(
        {
            line
            for _, line in tree(running, False)
            if shown(line) not in want and not SECRET.match(line)
        }
    )


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


def secrets_of(intended: str, *keys: str) -> list[str]:
    """Every secret the run may type: the keys given and each `cipher`/`irreversible-cipher`
    value of the script (the admin password filled from the Vault), longest first."""
    found = {m.group(2) for m in map(SECRET.match, intended.splitlines()) if m}
    found |= {k for k in keys if k}
    return sorted(found, key=len, reverse=True)


def scrub(text: str, secrets: list[str]) -> str:
    for s in secrets:
        text = text.replace(s, MASK)
    return text


class DeviceError(Exception):
    """The device did not answer as documented (no prompt, too much output, a question)."""


class Session:
    """Line-by-line exchanges over netmiko's logged-in channel: each reply read until the
    device's prompt, a password prompt or a [Y/N] question is the last line, at most `limit`
    characters and `timeout` seconds."""

    def __init__(self, conn, limit: int, timeout: float) -> None:
        self.conn, self.limit, self.timeout = conn, limit, timeout
        # Read from the SSH channel itself: netmiko's read_channel joins everything ready into
        # one string by repeated `+=` (quadratic: 4 MiB took 13 s here) before any bound applies.
        self.channel = conn.remote_conn
        self.decode = codecs.getincrementaldecoder("utf-8")("replace").decode
        self.names: list[str] = []
        self.rename(conn.base_prompt)

    def rename(self, name: str) -> None:
        """Accept `name` in the prompt too (`sysname` changes the prompt: the one netmiko read at
        login, and each name the script types, are prompts)."""
        self.names.append(re.escape(name))
        names = "|".join(self.names)
        self.prompt = re.compile(
            rf"\n(?:HRP_.)?(?:<(?:{names})>|\[[~*]?(?:{names})(?:-[^\n\]]*)?\])[ \t]*\Z"
        )

    def read(self, until: dict[str, re.Pattern]) -> tuple[str, str]:
        """(name of the pattern that matched, what was read)."""
        parts: list[str] = []
        size, tail = 0, "\n"
        deadline = time.monotonic() + self.timeout
        while True:
            chunk = self.decode(self.channel.recv(65536)) if self.channel.recv_ready() else ""
            if chunk:
                size += len(chunk)
                if size > self.limit:
                    raise DeviceError(
                        f"the device sent more than {self.limit} characters without a prompt"
                    )
                parts.append(chunk)
                tail = self._plain(tail + chunk)[-4096:]
                for name, rx in until.items():
                    if rx.search(tail):
                        return name, self._plain("".join(parts))
            elif time.monotonic() > deadline:
                raise DeviceError(f"no prompt within {self.timeout:g} s")
            else:
                time.sleep(0.005)

    def _plain(self, text: str) -> str:
        """Without carriage returns and terminal escape codes (netmiko's Huawei list)."""
        return self.conn.strip_ansi_escape_codes(text).replace("\r", "")

    def send(self, line: str, **until: re.Pattern) -> tuple[str, str]:
        self.conn.write_channel(line + "\n")
        return self.read({"prompt": self.prompt, **until})

    def command(self, line: str) -> str:
        """A display command's output without its echo and the prompt after it."""
        _, out = self.send(line)
        return "\n".join(out.split("\n")[1:-1]) + "\n"


def type_line(s: Session, line: str, key: str | None) -> tuple[list[str], str]:
    """Type one configuration line, answering its documented prompts; (the device's errors,
    everything it printed)."""
    asks = {"key": ENTER_KEY, "question": QUESTION}
    what, out = s.send(line, **asks)
    if what == "key" and key is not None:
        what, more = s.send(key, confirm=CONFIRM_KEY)
        out += more
        if what == "confirm":
            what, more = s.send(key, **asks)
            out += more
    elif what == "question" and any(q.match(line) for q in QUESTIONS):
        what, more = s.send("y", **asks)
        out += more
    errors = [x.strip() for x in out.splitlines() if ERROR.match(x)]
    if what != "prompt":
        asked = out.rstrip().rsplit("\n", 1)[-1].strip()
        # an undocumented question gets `n`; an unexpected password prompt an empty line
        for _ in range(3):
            what, more = s.send("n" if what == "question" else "", **asks)
            out += more
            if what == "prompt":
                break
        else:
            raise DeviceError(f"{line!r}: the device keeps asking {asked!r}")
        errors.append(f"asked {asked!r}, which the module does not answer (answered no)")
    return errors, out


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            **SESSION_SPEC,
            "intended": {"type": "str", "required": True, "no_log": True},
            "backup": {"type": "path", "required": True},
            "snmp_auth_key": {"type": "str", "required": True, "no_log": True},
            "snmp_priv_key": {"type": "str", "required": True, "no_log": True},
            "max_output": {"type": "int", "default": 16 * 1024 * 1024},
        },
        supports_check_mode=True,
    )
    p = module.params
    keys = {"authentication": p["snmp_auth_key"], "privacy": p["snmp_priv_key"]}
    hidden = secrets_of(p["intended"], p["password"], *keys.values())
    module.no_log_values.update(hidden)
    two_stage = p["device_type"] == "huawei_vrpv8"
    result: dict = {"changed": False}

    def fail(msg: str) -> None:
        module.fail_json(msg=scrub(f"{p['host']}: {msg}", hidden), **result)

    def leave(s: Session, drop: bool) -> None:
        """Back to the user view after a failure, dropping the uncommitted change (VRP8:
        ce_session.discard)."""
        try:
            if drop:
                discard(conn)
            what, _ = s.send("return", question=QUESTION)
            if what == "question":
                s.send("n", question=QUESTION)
        except Exception:  # the failure being reported matters more than this one
            pass

    try:
        conn = connect(module)  # netmiko's login: its reads end at the timeout, not at a size
    except Exception as exc:  # netmiko's ReadTimeout, an SSH error: one located line, no trace
        first = (str(exc).strip().splitlines() or [""])[0]
        fail(f"logging in over SSH (port {p['port']}) failed: {type(exc).__name__}: {first}")
    try:
        s = Session(conn, p["max_output"], p["timeout"])
        s.send("")
        running = s.command("display current-configuration")
        todo = missing(running, p["intended"])
        typed = commands(todo, views(p["intended"]))
        listed = [shown(line) if SECRET.match(line) else line for line in typed]
        result.update(changed=bool(todo), commands=listed, extra=extra(running, p["intended"]))
        if todo:
            result["diff"] = {"prepared": "".join(line + "\n" for line in listed)}
        if not todo or module.check_mode:
            module.exit_json(**result)

        save_backup(p["backup"], running)
        result["backup"] = p["backup"]
        s.send("system-view")
        for line, show in zip(typed, listed, strict=True):
            if m := SYSNAME.match(line):
                s.rename(m.group(1))
            m = KEYED.match(line)
            errors, _ = type_line(s, line, keys[m.group(1)] if m else None)
            if errors:
                leave(s, two_stage)
                fail(
                    f"rejected {show!r}: {'; '.join(errors)}; nothing after it was sent"
                    + (
                        ", the uncommitted change was discarded"
                        if two_stage
                        else " (the lines before it have taken effect: the USG has no commit)"
                    )
                )
        if two_stage:
            errors, _ = type_line(s, "commit", None)
            if errors:
                leave(s, True)
                fail(f"commit failed: {'; '.join(errors)}; the change was discarded")
        s.send("return")
        # `save` asks "Are you sure to continue?[Y/N]" (NE40E SaveCfgFile page); answered y
        what, out = s.send("save", question=QUESTION)
        if what == "question":
            what, more = s.send("y")
            out += more
        if errors := [x.strip() for x in out.splitlines() if ERROR.match(x)]:
            fail(f"save failed: {'; '.join(errors)}")
        left = missing(s.command("display current-configuration"), p["intended"])
        if left:
            fail(
                "after the change the device still lacks: "
                + "; ".join(shown(line) for _, line in left[:5])
            )
        module.exit_json(**result)
    except DeviceError as exc:
        fail(str(exc))
    finally:
        with contextlib.suppress(Exception):  # the result is given; a device gone is no news
            conn.disconnect()


if __name__ == "__main__":
    main()
