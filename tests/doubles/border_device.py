"""TEST DOUBLE of the border devices: Huawei NetEngine 8000 routers (VRP8) and HiSecEngine
USG6000E firewalls, reached over SSH.

Not a router: an asyncssh server on 127.0.0.1, one port per device, that the real netmiko and the
real role (roles/border_deploy) talk to. What it does, and where that is documented:

- it accepts a configuration line only when generator/catalog/commands.yaml has its form for the
  platform and the current view (each form cites its NE40E V800R012C10 page, or says
  [unconfirmed] for the USG), and answers any other line with the VRP error
  `Error: Unrecognized command found at '^' position.` under a caret; a line whose form opens a
  view (`enters`) enters it, `quit` leaves it;
- NE8000: two-stage commit, prompts `[~name]` / `[*name]` (uncommitted changes), `commit`,
  `clear configuration candidate` ("The uncommitted configuration will be deleted, and the
  system view will be displayed", NE40E Disard(CFGOM) page); USG6000E: every line takes effect
  at once, prompt `[name]` ([unconfirmed]: the USG6000E V600 session format);
- `snmp-agent usm-user v3 U authentication-mode M` / `privacy-mode M` ask "Please configure the
  authentication password (8-255)" (privacy: "privacy password"), "Enter Password:", "Confirm
  Password:", and save `... cipher %#%#...%#%#` (NE40E SNMPUSMUser page example; configuration
  guide "Example for Configuring a Device to Communicate with an NMS Through a USM SNMPv3 User"
  for the privacy prompt and the saved form); the keys received are kept for the tests;
- `display current-configuration` prints the saved format: `ip address A LEN` as the dotted mask,
  passwords as ciphertext (that example's Configuration Files), and no `undo telnet server
  enable`, the default (NE40E telnet-server-enable page); `ip route-static [vpn-instance V] D LEN
  ...` with D cut to its network and the dotted mask (CE V300R023C00 VRP8, Example for
  Configuring IPv4 Layer 3 Multicast over VXLAN (Inter-AS); NE40E Example for Configuring FRR
  for IPv4 Static Routes on the Public Network, Device C; the USG: [unconfirmed], the same
  rule); the USG's `source-address|destination-address A LEN` as `... A mask <dotted mask>`
  ([unconfirmed]: the form the USG CLI source-address-exclude page documents besides the length;
  no USG display example found); on the NE8000, after `snmp-agent`, the engine ID line
  `snmp-agent local-engineid ...` and a bare `snmp-agent usm-user v3 U` line for each USM user
  (NE40E USM SNMPv3 user example, Configuration Files: lines the plan does not own);
- what it hides and asks comes from the table's `display` and `prompt` facts of the NE and USG
  forms (DEFAULTS, ASKS, each with its page): the USG's `default action {permit|deny}` asks the
  USG CLI default action (security policy view) page's Example question, "Warning: ... Are you
  sure you want to continue? [Y/N]", and the next line is the answer: `y` sets it, anything else leaves the action as it was
  ([unconfirmed] what the USG does with an answer other than Y or N); `deny`, "The default action
  of the default security policy is deny", is then not displayed (the VRP rule for defaults,
  [unconfirmed] on the USG);
- `save` asks "Are you sure to continue?[Y/N]" and saves on `y` (NE40E SaveCfgFile page).
How a line changes the configuration is this double's simplification: it is stored once in its
view; `undo X` is not modelled (the role never sends it).

`Device.hostile` makes it misbehave on purpose, for the module's tests (none of it is a device
fact): `flood` (the display never ends), `flood_login` (nor the greeting), `pause_after` (strings after which a reply stops for a
moment, so the module reads it in two parts), `say` (line -> text printed before the prompt),
`reject` (lines answered with the VRP error), `ask` (lines that ask an undocumented "[Y/N]"),
`echo_key` (a rejected key whose error quotes it).
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
from dataclasses import dataclass, field

import asyncssh

from generator.analysis.command_table import interface_kind, load_table
from tests.doubles import ce_switch

ERROR = "Error: Unrecognized command found at '^' position."
KEYED = re.compile(r"^snmp-agent usm-user v3 \S+ (authentication|privacy)-mode \S+$")
SECRET = re.compile(r"^(.*\b(?:irreversible-cipher|cipher)) \S+$")
MASK = re.compile(r"^(ip address \S+) (\d+)$")
ROUTE = re.compile(r"^(ip route-static(?: vpn-instance \S+)?) ([\d.]+) (\d{1,2})((?: .*)?)$")
POLICY = re.compile(r"^((?:source|destination)-address) ([\d.]+) (\d{1,2})$")
CIPHER = "%#%#DOUBLE-ENCRYPTED%#%#"
# NE40E USM SNMPv3 user example, Configuration Files: "snmp-agent local-engineid 800007DB03360102101100"
ENGINE_ID = "snmp-agent local-engineid 800007DB03360102101100"
USM_USER = re.compile(r"^snmp-agent usm-user v3 (\S+) ")
PAUSE = "\x00PAUSE\x00"  # in the output queue: flush and wait (Device.hostile pause_after)
TABLE = load_table()
BORDER = [c for platform in ("huawei-ne", "huawei-usg") for c in TABLE.commands[platform]]


def _undone_by(c) -> str:
    """The line that sets the other value of a form whose line is the default: `X` for
    `undo X`, else the form of its view that differs in the last word (`default action
    permit` for `default action deny`)."""
    if c.form.startswith("undo "):
        return c.form.removeprefix("undo ")
    head = c.form.rsplit(" ", 1)[0]
    return next(
        o.form
        for o in TABLE.commands[c.platform]
        if o is not c and o.view == c.view and o.form.rsplit(" ", 1)[0] == head
    )


# Defaults (the table's `display: hidden`, with its page): typed, not displayed; the line that
# sets the other value is removed.
DEFAULTS = {c.form: _undone_by(c) for c in BORDER if c.display == "hidden"}
# Lines that ask before they take effect (the table's `prompt`, with its page): the question.
ASKS = {c.form: c.prompt[0][0] for c in BORDER if c.prompt and c.prompt[0][1] == "y"}


@dataclass
class Device:
    name: str
    platform: str  # huawei-ne or huawei-usg
    running: dict = field(default_factory=dict)  # line -> {child line -> {...}}, in order
    keys: dict[str, str] = field(default_factory=dict)  # "authentication"/"privacy" -> key
    log: list[str] = field(default_factory=list)
    saved: int = 0
    commits: int = 0
    hostile: dict = field(default_factory=dict)  # see the module docstring

    def config(self) -> str:
        out = ["!Software Version (TEST DOUBLE)", "#"]
        ne = self.platform == "huawei-ne"

        def walk(node: dict, depth: int) -> None:
            for text, children in node.items():
                out.append(" " * depth + text)
                if ne and depth == 0 and text == "snmp-agent":
                    out.append(ENGINE_ID)
                if ne and depth == 0 and (m := USM_USER.match(text)) and "group" in text:
                    out.append(f"snmp-agent usm-user v3 {m[1]}")
                walk(children, depth + 1)
                if depth == 0:
                    out.append("#")

        walk(self.running, 0)
        return "\n".join([*out, "return"]) + "\n"


def _copy(node: dict) -> dict:
    return {k: _copy(v) for k, v in node.items()}


def _saved(line: str) -> str:
    if m := MASK.match(line):
        return f"{m.group(1)} {ipaddress.ip_network(f'0.0.0.0/{m.group(2)}').netmask}"
    if m := ROUTE.match(line):
        net = ipaddress.ip_network(f"{m[2]}/{m[3]}", strict=False)
        return f"{m[1]} {net.network_address} {net.netmask}{m[4]}"
    if m := POLICY.match(line):
        return f"{m[1]} {m[2]} mask {ipaddress.ip_network(f'0.0.0.0/{m[3]}').netmask}"
    if m := SECRET.match(line):
        return f"{m.group(1)} {CIPHER}"
    return line


class Session:
    def __init__(self, dev: Device, process: asyncssh.SSHServerProcess) -> None:
        self.dev, self.p = dev, process
        self.candidate: dict | None = None  # the system view when set
        self.views: list[tuple[str, str, dict, str | None]] = []  # (view, line, node, kind)
        self.pending: tuple[str, str, list[str]] | None = None  # a keyed line being answered
        self.pending_save = False  # `save` asked [Y/N]
        self.question: str | None = None  # a line that asked [Y/N], answered by the next line
        self.out: list[str] = []  # what to write after this line (PAUSE: flush and wait)

    @property
    def two_stage(self) -> bool:
        return self.dev.platform == "huawei-ne"

    @property
    def waiting(self) -> bool:
        """The last output ended in a question, not in the prompt."""
        return self.pending is not None or self.pending_save or self.question is not None

    def prompt(self) -> str:
        """The running `sysname` names the prompt: on the NE8000 from its commit on (NE40E
        V800R012C10 configuration guide, e.g. Example for Configuring APN6 in an L3VPNv4 over
        SRv6 TE Policy Scenario: `[~HUAWEI] sysname PE1`, `[*HUAWEI] commit`, `[~PE1] ...`), on
        the USG at once (every line takes effect at once)."""
        name = next((k[8:] for k in self.dev.running if k.startswith("sysname ")), self.dev.name)
        if self.candidate is None:
            return f"<{name}>"
        label = "-" + self.views[-1][1].split()[-1] if self.views else ""
        if not self.two_stage:
            return f"[{name}{label}]"
        mark = "*" if self.candidate != self.dev.running else "~"
        return f"[{mark}{name}{label}]"

    def write(self, text: str) -> None:
        for part in self.dev.hostile.get("pause_after", ()):
            text = text.replace(part, part + PAUSE)
        self.out.append(text.replace("\n", "\r\n"))

    def error(self) -> None:
        self.write(f"{' ' * (len(self.prompt()) + 1)}^\n{ERROR}\n")

    def store(self, line: str) -> dict:
        node = self.views[-1][2] if self.views else self.candidate
        if line.startswith("sysname ") and not self.views:  # one name: the new one replaces it
            for old in [k for k in node if k.startswith("sysname ")]:
                del node[old]
        node = node.setdefault(_saved(line), {})
        if not self.two_stage:
            self.dev.running = self.candidate
        return node

    def forget(self, line: str) -> None:
        node = self.views[-1][2] if self.views else self.candidate
        node.pop(line, None)
        if not self.two_stage:
            self.dev.running = self.candidate

    def answer(self, text: str) -> None:
        """A key typed at "Enter Password:" / "Confirm Password:"."""
        line, kind, typed = self.pending
        typed.append(text)
        if len(typed) == 1:
            self.write("Confirm Password:")
            return
        self.pending = None
        if "echo_key" in self.dev.hostile:
            self.write(f"Error: The password {typed[0]} is too weak.\n")
            return
        if typed[0] != typed[1] or not 8 <= len(typed[0]) <= 255:
            self.write("Error: The two passwords are different or out of range.\n")  # [unconfirmed]
            return
        self.dev.keys[kind] = typed[0]
        self.store(f"{line} cipher {typed[0]}")

    def handle(self, cmd: str) -> bool:
        """One line; False ends the session."""
        self.dev.log.append("******" if self.pending else cmd)
        if self.pending:
            self.answer(cmd)
            return True
        if self.question is not None:
            line, self.question = self.question, None
            if cmd.lower() == "y":
                self.set_default(line)
            return True
        if cmd in self.dev.hostile.get("say", {}):
            self.write(self.dev.hostile["say"][cmd])
        if not cmd:
            return True
        if cmd in self.dev.hostile.get("ask", ()):
            self.write("Warning: This operation may affect services. Continue? [Y/N]:")
            self.question = "(hostile)"
            return True
        if cmd in self.dev.hostile.get("reject", ()):
            self.error()
            return True
        if cmd in ("display current-configuration", "display current-configuration | no-more"):
            self.write(self.dev.config())
        elif cmd == "screen-length 0 temporary":
            self.write("Info: The configuration takes effect on the current user terminal.\n")
        elif self.candidate is None:
            return self.user_view(cmd)
        else:
            self.system_view(cmd)
        return True

    def set_default(self, line: str) -> None:
        """A line that sets a default (DEFAULTS): not displayed; the other value removed."""
        if line in DEFAULTS:
            self.forget(DEFAULTS[line])
        elif line != "(hostile)":
            self.store(line)

    def user_view(self, cmd: str) -> bool:
        if cmd == "system-view":
            self.write("Enter system view, return user view with return command.\n")
            self.candidate, self.views = _copy(self.dev.running), []
        elif cmd == "save":
            self.write("Warning: all configuration will be written to the device.\n")
            self.write("Are you sure to continue?[Y/N]")
            self.pending_save = True
        elif cmd.lower() == "y" and self.pending_save:
            self.pending_save = False
            self.dev.saved += 1
            self.write("Info: Save the configuration successfully.\n")
        elif cmd == "quit":
            return False
        else:
            self.pending_save = False
            self.error()
        return True

    def system_view(self, cmd: str) -> None:
        if cmd == "commit" and self.two_stage:
            self.dev.running, self.dev.commits = _copy(self.candidate), self.dev.commits + 1
        elif cmd == "clear configuration candidate" and self.two_stage:
            self.candidate, self.views = _copy(self.dev.running), []
        elif cmd == "return" or (cmd == "quit" and not self.views):
            self.candidate, self.views = None, []
        elif cmd == "quit":
            self.views.pop()
        elif cmd in ASKS and not self.two_stage:
            if self.match(cmd) is not None:
                self.write(ASKS[cmd])
                self.question = cmd
        elif cmd in DEFAULTS:
            if self.match(cmd) is not None:
                self.set_default(cmd)
        elif m := KEYED.match(cmd):
            if self.match(cmd) is None:
                return
            kind = m.group(1)
            self.write(f"Please configure the {kind} password (8-255)\nEnter Password:")
            self.pending = (cmd, kind, [])
        elif (c := self.match(cmd)) is not None:
            node = self.store(cmd)
            if c.enters:
                kind = None
                if c.enters == "interface":
                    kind = interface_kind(cmd.split()[1])
                self.views.append((c.enters, cmd, node, kind))

    def match(self, cmd: str):
        view, kind = (self.views[-1][0], self.views[-1][3]) if self.views else ("system", None)
        c, _ = TABLE.match(self.dev.platform, view, cmd, kind)
        if c is None:
            self.error()
        return c

    async def flush(self) -> None:
        text, self.out = "".join(self.out), []
        for i, part in enumerate(text.split(PAUSE)):
            if i:
                await self.p.stdout.drain()
                await asyncio.sleep(0.1)
            self.p.stdout.write(part)

    async def flood(self) -> None:
        """`display current-configuration` that never ends (Device.hostile flood)."""
        chunk = " description the display goes on and on\r\n" * 1600
        while True:
            self.p.stdout.write(chunk)
            await self.p.stdout.drain()

    async def run(self) -> None:
        self.write(f"Info: The max number of VTY users is 21 (TEST DOUBLE).\n{self.prompt()}")
        try:
            if self.dev.hostile.get("flood_login"):
                await self.flood()
            await self.flush()
            while True:
                line = await self.p.stdin.readline()
                if not line:
                    break
                hidden = self.pending is not None
                self.write("\n" if hidden else line.rstrip("\r\n") + "\n")  # keys are not echoed
                cmd = line.strip()
                if self.dev.hostile.get("flood") and cmd.startswith("display current"):
                    await self.flush()
                    await self.flood()
                if not self.handle(cmd):
                    break
                if not self.waiting:
                    self.write(self.prompt())
                await self.flush()
        except (asyncssh.BreakReceived, asyncssh.TerminalSizeChanged, ConnectionError):
            pass
        self.p.exit(0)


class Fleet(ce_switch.Fleet):
    """Border doubles on 127.0.0.1 (the CE double's SSH server, this module's sessions)."""

    def __init__(self, devices: list[Device], password: str) -> None:
        super().__init__(devices, password, session=Session)

    @property
    def devices(self) -> dict[str, Device]:
        return self.switches
