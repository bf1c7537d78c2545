"""The SSH session to a Huawei VRP device that the wanka.cluster modules share (netmiko on the
controller): the connection options, the backup of the running configuration, the SNMPv3 key
typed at the device's password prompts, the scan for rejected lines and the discard of an
uncommitted change. Used by wanka_ce_config and wanka_ce_display (CloudEngine, VRP V200/V300) and
wanka_border_config (NetEngine 8000, VRP8; USG6000E)."""

from __future__ import annotations

import os
import re

# The options every session module takes (merged into its argument_spec).
SESSION_SPEC = {
    "host": {"type": "str", "required": True},
    "port": {"type": "int", "default": 22},
    "username": {"type": "str", "required": True},
    "password": {"type": "str", "required": True, "no_log": True},
    "device_type": {"type": "str", "default": "huawei_vrpv8"},
    "timeout": {"type": "int", "default": 60},
}

# The prompts after a keyless `snmp-agent usm-user v3 U authentication-mode|privacy-mode M` line;
# the key is not echoed. CE V300R023C00 configuration guide, Example for Configuring a Device to
# Communicate with NMSs Using SNMPv3 USM Users, step 5 ("Please configure the authentication
# password (8-255)" / "Enter Password:" / "Confirm Password:"); NE40E V800R012C10 SNMPUSMUser page
# and its configuration guide's USM SNMPv3 user example.
PROMPTS = ("Enter Password:", "Confirm Password:")

# VRP prints the typed line after the view prompt `[~HUAWEI-view]`, a caret under the fault, then
# `Error: ...`.
ERROR = re.compile(r"^\s*Error:")


class _PromptCheck:
    """Whether the session is in the system view (or a view below it), read up to the prompt.

    netmiko's BaseConnection.check_config_mode, without a pattern (HuaweiBase.check_config_mode
    passes none), reads until the channel has been silent for 2 s; config_mode, exit_config_mode
    and cleanup call it twice each, so every session spent about 11 s waiting. A VRP prompt ends
    in `]` in the system view and below (`[~HUAWEI]`, `[*HUAWEI-100GE1/0/1]`) and in `>` in the
    user view (`<HUAWEI>`) (CE V300R023C00 configuration guide, "Two-Stage Commit"; NE40E
    V800R012C10 likewise), whatever the sysname, so the read stops at the prompt."""

    def check_config_mode(self, check_string="]", pattern="", force_regex=False):
        self.write_channel(self.RETURN)
        return check_string in self.read_until_pattern(pattern=r"[>\]]\s*$")


def connect(module):
    """A netmiko session with the module's session options; every wait is the module's timeout."""
    try:
        from netmiko.ssh_dispatcher import CLASS_MAPPER
    except ImportError as exc:
        module.fail_json(msg=f"netmiko is needed on the controller: {exc}")
    p = module.params
    base = CLASS_MAPPER.get(p["device_type"])
    if base is None:
        module.fail_json(msg=f"netmiko has no device_type {p['device_type']!r}")
    session = type(base.__name__, (_PromptCheck, base), {})
    keys = ("device_type", "host", "port", "username", "password")
    waits = ("conn_timeout", "auth_timeout", "banner_timeout", "read_timeout_override")
    return session(**{k: p[k] for k in keys}, **dict.fromkeys(waits, p["timeout"]))


def save_backup(path: str, running: str) -> None:
    """The running configuration written to `path`, readable by its owner only (it holds the
    device's encrypted secrets)."""
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(running)


def type_key(conn, line: str, key: str) -> str:
    """Type a keyless SNMPv3 mode line and answer its two password prompts with `key`. A line the
    device rejects prints an error (or the view prompt) instead of the first prompt: the key is
    then not sent."""
    asked = conn.send_command(line, expect_string=rf"{PROMPTS[0]}|\]")
    if PROMPTS[0] not in asked:
        return asked
    asked += conn.send_command(key, expect_string=PROMPTS[1], cmd_verify=False)
    return asked + conn.send_command(key, expect_string=r"\]", cmd_verify=False)


def rejected(output: str, mask=lambda line: line) -> list[str]:
    """`'<line>': Error: ...` for each line the device answered with an error; `mask` hides the
    secrets of the line shown."""
    out, last = [], ""
    for line in output.splitlines():
        if ERROR.match(line):
            out.append(f"{mask(last).strip()!r}: {line.strip()}")
        elif "]" in line and not line.strip().startswith("^"):
            last = line.split("]", 1)[1].strip()
    return out


def discard(conn) -> None:
    """Drop the uncommitted candidate of a two-stage-commit device (VRP8), staying in the system
    view. `clear configuration candidate` "clears an uncommitted configuration" in all views
    except the user view (CE V300R023C00 clear_configuration_candidate.json; configuration guide,
    Selecting a Mode for the Configuration to Take Effect; NE40E V800R012C10 Disard(CFGOM) page).
    Plain `abort` is no V300R023C00 command: only `abort trial`, which ends a `commit trial`
    (abort_trial.json)."""
    conn.send_command("clear configuration candidate", expect_string=r"\]")


# A hostile or broken device (issue #40 item 4): what is read is bounded, a prompt is matched only
# as the last line received, a key never appears in what is returned or raised.
MAX_REPLY = 16 * 1024 * 1024  # bytes one answer may have (a generated CE config is < 200 KB)
# VRP prompts: `<name>` (user view), `[~name]` / `[*name]` and `[~name-view]` below the system view
# (CE V300R023C00 configuration guide, "Two-Stage Commit"), on a line of their own, last.
PROMPT = re.compile(r"\n(?:<[^<>\s]+>|\[[~*][^\[\]\s]+\])[ \t]*$")
# A question the device waits on, as the last (unterminated) line: "... Continue? [Y/N]:"
# (rollback_configuration.json, ssh_server-source.json examples) or the key prompts (PROMPTS).
ASK_YN = re.compile(r"\n[^\n]*\[Y/N\]:?[ \t]*$")
ASK_KEY = re.compile(r"\n(?:Enter|Confirm) Password:[ \t]*$")


class SessionError(Exception):
    """The device did not answer as a VRP device does (too much, too late, or no prompt)."""


class Refused(Exception):
    """The device answered a line with an error (the message names the line, keys masked)."""


class Channel:
    """Line-by-line talk with a VRP device over a netmiko session's channel: each line is sent,
    then the answer is read until a prompt (or one of the questions asked for) is the last line
    received, at most `limit` bytes and `timeout` seconds. `secrets` are replaced by ****** in
    every answer returned and every error raised."""

    def __init__(self, conn, timeout: float, limit: int = MAX_REPLY, secrets=()) -> None:
        import codecs

        self.conn, self.timeout, self.limit = conn, timeout, limit
        self.secrets = [s for s in secrets if s]
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def mask(self, text: str) -> str:
        for s in self.secrets:
            text = text.replace(s, "******")
        return text

    def send(self, line: str, asks=()) -> tuple[str, re.Pattern | None]:
        """(the answer without `\\r`, the question in `asks` it ends with, or None: a prompt)."""
        import time

        self.conn.write_channel(line + "\n")
        chan = self.conn.remote_conn
        parts, size, tail = [], 0, "\n"
        deadline = time.monotonic() + self.timeout
        while True:
            if chan.recv_ready():
                chunk = self.decoder.decode(chan.recv(65536)).replace("\r", "")
                size += len(chunk)
                if size > self.limit:
                    raise SessionError(
                        f"the answer to {self.mask(line)!r} is longer than {self.limit} bytes "
                        "(not read further)"
                    )
                parts.append(chunk)
                tail = (tail + chunk)[-1024:]
                for ask in asks:
                    if ask.search(tail):
                        return self.mask("".join(parts)), ask
                if PROMPT.search(tail):
                    return self.mask("".join(parts)), None
            elif chan.closed or chan.exit_status_ready():
                raise SessionError(f"the device closed the session after {self.mask(line)!r}")
            elif time.monotonic() > deadline:
                raise SessionError(
                    f"no prompt within {self.timeout} s after {self.mask(line)!r} "
                    f"(last received: {self.mask(tail.strip()[-80:])!r})"
                )
            else:
                time.sleep(0.005)

    def type_key(self, line: str, key: str) -> None:
        """A keyless SNMPv3 mode line and its key at "Enter Password:" and "Confirm Password:"
        (PROMPTS), each sent only after that exact question is the last line received; Refused
        when the device answers otherwise."""
        out, asked = self.send(line, [ASK_KEY])
        if asked is None:
            raise Refused("; ".join(errors(out, line)) or f"{line!r}: no password prompt")
        out, asked = self.send(key, [ASK_KEY])
        if asked is None:
            raise Refused("; ".join(errors(out, line)) or f"{line!r}: no confirmation prompt")
        out, _ = self.send(key)
        if found := errors(out, line):
            raise Refused("; ".join(found))

    def discard(self) -> None:
        """Drop the uncommitted candidate (as discard() below) and go back to the user view."""
        self.send("clear configuration candidate")
        self.send("return")

    def display(self, command: str) -> str:
        """The output of a display command: the lines between its echo and the prompt."""
        out, _ = self.send(command)
        lines = out.split("\n")
        return "\n".join(lines[1:-1]) + "\n"


def errors(answer: str, line: str) -> list[str]:
    """`'<line>': Error: ...` for each error line in the answer to `line` (already masked)."""
    return [f"{line!r}: {x.strip()}" for x in answer.split("\n") if ERROR.match(x)]
