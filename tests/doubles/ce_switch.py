"""TEST DOUBLE of Huawei CloudEngine switches (VRP V200/V300) reached over SSH.

Not a switch: an asyncssh server on 127.0.0.1, one port per simulated switch, that the real
netmiko (`huawei_vrpv8`) and the real roles talk to. It keeps a running configuration and a
candidate (two-stage commit), and prints what Huawei documents:

- prompts `<name>` (user view), `[~name]` / `[*name]` (system view, committed / uncommitted
  changes), `[~name-100GE1/0/1]` in sub-views (CE V300R023C00 configuration guide, "Two-Stage
  Commit"; shared/domain.md §3.3);
- `system-view` answers "Enter system view, return user view with return command." and
  `screen-length 0 temporary` an Info line (as in the NE8000/CE session transcripts quoted in
  public Huawei documents);
- a rejected line (one outside the command table, such as plain `abort`, which V300R023C00 does
  not have, or one the test lists in `reject`) prints a caret under the first character of the
  command and `Error: Unrecognized command found at '^' position.` (captured CE6881 session in
  ansible-collections/community.network#323, tests/data/captures/ce-unrecognized-command.txt;
  no CE V300R023C00 page quotes the text);
- `display lldp neighbor brief` prints the V300 header and rule of the command reference example
  (tests/data/captures/ce-v300-display-lldp-neighbor-brief.txt), one row per cabled port;
- `display ai-ecn calculated state` prints the model version line, mode legend, header and rules
  of the configuration guide's example (CE6800/8800 V300R023C00 "Example for Configuring AI
  ECN"; tests/data/captures/ce-v300-display-ai-ecn-calculated-state.txt), one row per entry of
  `Switch.ai_ecn` with the example's thresholds, mode and model; [unconfirmed] that a switch
  where AI ECN does not run (no CE-LIC-AFRD licence) prints the same table with no rows;
- `display current-configuration` prints the running configuration in saved format (`#`
  between sections, `return` at the end), each line as its table entry's `display` says (below);
- `clear configuration candidate` (any view but the user view) discards the uncommitted
  changes (clear_configuration_candidate.json); `rollback configuration last 1` (user view) asks
  `... Continue? [Y/N]:`, waits for the answer and on `y` restores the configuration before the
  last commit (rollback_configuration.json, example "Continue? [Y/N]:y");
- `snmp-agent usm-user v3 U authentication-mode M` / `privacy-mode M` typed without a key ask
  "Please configure the authentication password (8-255)" (privacy: "privacy password"), "Enter
  Password:", "Confirm Password:", and the line is then displayed `... M cipher %+%#...%+%#`, with
  the user on a line of its own (`snmp-agent usm-user v3 U`) (CE6800/8800 V300R023C00
  configuration guide, "Example for Configuring a Device to Communicate with NMSs Using SNMPv3
  USM Users", step 5 and Configuration Scripts); the keys are not echoed, and the ones received
  are kept in `Switch.keys` for the tests. Two different keys, or one outside 8-255 characters
  (snmp-agent_usm-user.json: "a string of 8 to 255 characters in plaintext"), are refused with
  an error line whose text is [unconfirmed]. A startup file's keyless line sets no key (nobody
  answers the prompt; [unconfirmed] what a CE does with it), so `load` leaves it out.

What a line is, how it is displayed and what it asks come from the command table
(generator/catalog/commands.yaml, read with generator/analysis/command_table.py): a line typed in a
view is accepted when the table has its form for `huawei-ce` and that view (interface kind
included), and refused otherwise with the caret and the error above; `undo X` is accepted when X
starts with the command its form's page documents (the page's file name, e.g. ssh_server_cipher.json:
`undo ssh server cipher ...`; the pages list each command's `undo` CLI); a form with `enters` opens
its view. `display current-configuration` shows each line as its entry's `display` says (hidden
defaults such as `undo shutdown` and a physical port's `portswitch`, dotted masks, the trap host's
added `host-name __targetHost_<n>_<5 digits>`), and the lines its `adds` names (`snmp-agent
local-engineid <hex>` after `snmp-agent`); a line whose entry has `prompt` asks each question and
waits for the answer (SNMPv3 keys, the [Y/N] of `ssh server-source`). [unconfirmed] (no page
says): the 5 digits of an added host name (here a checksum of the switch and line), the engine ID's
MAC part (here from the switch's name), and that a trap host typed again without `host-name` is a
second host (as here).

How lines change the configuration is this double's simplification, not the device's: a line is
stored in the current view; `undo X` removes the lines equal to X or starting with "X ", and is
stored itself for the state toggles (`undo shutdown`, `undo portswitch`), whose positive form is
accepted where the table has the undo form (the same page documents both); a line in KEYED
replaces the earlier value of the same command.

Hostile-device hooks for the tests (not device behaviour): `Switch.replies` maps a command to the
text printed instead of its answer (a huge reply, a fake prompt inside a reply; the part after
PAUSE comes half a second later), and
`Switch.echo_keys` makes a refused SNMPv3 key come back inside the error line, and `Switch.greeting`
replaces the login's Info line and prompt (a greeting without a prompt).
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import threading
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath

import asyncssh

from generator.analysis.command_table import Command, compile_form, load_table

PLATFORM = "huawei-ce"
TABLE = load_table()
LLDP_HEADER = (
    "Local Interface         Exptime(s) Neighbor Interface      Neighbor Device     \n"
    + "-" * 74
    + "\n"
)
# CE error text and caret (under the first unknown character, after the prompt): captured CE6881
# session in ansible-collections/community.network#323, tests/data/captures/ce-unrecognized-command.txt
# (no CE V300R023C00 page quotes the text)
ERROR = "Error: Unrecognized command found at '^' position."
# Commands that hold one value: a new line replaces the old one (double's simplification of
# "configures the maximum length ..." (jumboframe_enable.json), "configures encryption
# algorithms" (ssh_server_cipher.json), an interface's one primary address).
KEYED = re.compile(
    r"^(jumboframe enable|mtu|description|ssh server cipher|ssh server dh-exchange min-len|"
    r"ip address(?!.* sub$)|snmp-agent usm-user v3 \S+ (?:authentication|privacy)-mode)\b"
)
TOGGLES = ("shutdown", "portswitch")
# SNMPv3 mode lines (snmp-agent_usm-user.json), without a key (asks for it) or as displayed
USM = re.compile(r"^(snmp-agent usm-user v3 \S+)(?: (authentication|privacy)-mode \S+( .+)?)?")
KEY_ERROR = "Error: The two passwords are different or out of range."  # [unconfirmed] text
ROLLBACK_PROMPT = (  # rollback_configuration.json, Examples
    "Warning: This operation will revert configuration changes to the previous status. During "
    "the rollback configuration process, some configurations involving differences may be "
    "temporarily invalid. Continue? [Y/N]:"
)
_TOKEN = re.compile(r"<([\w-]+)(?::\d+-\d+)?>")
PAUSE = "\0PAUSE\0"  # in a Switch.replies text: the part after it is sent half a second later


def command_name(c: Command) -> str:
    """The command a form's page documents, from the page's file name (`ssh_server_cipher.json`
    -> `ssh server cipher`, `description_(interface_view).json` -> `description`)."""
    stem = re.sub(r"_?\(.*\)$", "", PurePosixPath(c.source).stem)
    return stem.replace("_", " ")


def _display_forms() -> dict[str, list[tuple[re.Pattern[str], Command]]]:
    """view -> the displayed forms (display forms and added lines) a running configuration may
    hold beyond the typed forms, with the entry each belongs to."""
    out: dict[str, list[tuple[re.Pattern[str], Command]]] = {}
    for c in TABLE.commands[PLATFORM]:
        forms = list(c.adds)
        if c.display and not c.display.startswith("hidden"):
            forms.append(
                c.display.replace("<dotted>", "<mask>")
                .replace("<network>", "<ip>")
                .replace("<host-name>", "<word>")
            )
        for f in forms:
            out.setdefault(c.view, []).append((compile_form(f)[0], c))
    return out


DISPLAYED = _display_forms()


def displayed(c: Command, text: str, kind: str | None, host_name: Callable[[], str]):
    """(the line as `display current-configuration` shows it, hidden) for a typed line of entry
    `c` (its `display` fact)."""
    rule = c.display
    if not rule:
        return text, False
    if rule == "hidden":
        return text, True
    if rule.startswith("hidden on "):
        return text, kind in {k.strip() for k in rule[10:].split(",")}
    if rule.startswith("hidden when "):
        return text, text == rule[12:]
    pattern = compile_form(c.form)[0]
    m = pattern.fullmatch(text)
    if m is None:  # already in the displayed form
        return text, False
    values = [m[g] for g in sorted(pattern.groupindex, key=pattern.groupindex.get)]
    out, pos, i = [], 0, 0
    for t in _TOKEN.finditer(rule):
        out.append(rule[pos : t.start()])
        pos = t.end()
        if t[1] == "host-name":
            out.append(host_name())
            continue
        value = values[i]
        if t[1] == "dotted" and value.isdigit():
            value = str(ipaddress.ip_network(f"0.0.0.0/{value}").netmask)
        elif t[1] == "network":
            net = ipaddress.ip_network(f"{value}/{values[i + 1]}", strict=False)
            value = str(net.network_address)
        out.append(value)
        i += 1
    out.append(rule[pos:])
    return "".join(out), False


AI_ECN_RULE = "-" * 125
AI_ECN_HEADER = (
    "AI-ECN Model Version : 1.0.1\n"
    "Mode : NN - Model inference    BBR - Heuristic inference    STATIC - Static threshold\n"
    f"{AI_ECN_RULE}\n"
    "Interface       Queue   Low-Threshold   High-Threshold   Probability   Mode"
    "                Active model       Actived time\n"
    "                               (Byte)           (Byte)           (%)\n"
    f"{AI_ECN_RULE}\n"
)


@dataclass
class Node:
    text: str
    children: list[Node] = field(default_factory=list)
    hidden: bool = False  # a default: stored, not displayed

    def copy(self) -> Node:
        return Node(self.text, [c.copy() for c in self.children], self.hidden)


def parse(text: str) -> Node:
    """A saved-format configuration -> tree, by indentation (one space per level), as written."""
    root = Node("")
    stack: list[tuple[int, Node]] = [(-1, root)]
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith(("#", "!")) or line.strip() == "return":
            continue
        depth = len(line) - len(line.lstrip(" "))
        while stack[-1][0] >= depth:
            stack.pop()
        node = Node(line.strip())
        stack[-1][1].children.append(node)
        stack.append((depth, node))
    return root


def dump(root: Node, shown: bool = True) -> str:
    """The saved format; `shown`: only what `display current-configuration` shows."""
    out = ["!Software Version V300R023C00 (TEST DOUBLE)", "#"]

    def walk(node: Node, depth: int) -> None:
        for c in node.children:
            if shown and c.hidden:
                continue
            out.append(" " * depth + c.text)
            walk(c, depth + 1)

    for top in root.children:
        if shown and top.hidden:
            continue
        out.append(top.text)
        walk(top, 1)
        out.append("#")
    out.append("return")
    return "\n".join(out) + "\n"


def _toggle(text: str, view: str, kind: str | None) -> bool:
    """`shutdown` where the table has `undo shutdown`: the page documents both CLIs
    (shutdown.json: `shutdown`, `undo shutdown`); the generator emits only the undo form."""
    return text in TOGGLES and TABLE.match(PLATFORM, view, "undo " + text, kind)[0] is not None


def _undo(view: Node, what: str) -> None:
    view.children = [
        c for c in view.children if c.text != what and not c.text.startswith(what + " ")
    ]
    if what in TOGGLES:
        view.children.append(Node("undo " + what, hidden=what == "shutdown"))


def _store(view: Node, text: str, hidden: bool) -> Node:
    """Store a displayed line in `view`; the node (a view it opens is that node)."""
    if text in TOGGLES:
        view.children = [c for c in view.children if c.text != "undo " + text]
    key = KEYED.match(text)
    for c in view.children if key else []:
        old = KEYED.match(c.text)
        if old and old[1] == key[1]:
            c.text, c.hidden = text, hidden  # the new value, where the display puts that command
            return c
    for c in view.children:
        if c.text == text:
            return c
    node = Node(text, hidden=hidden)
    view.children.append(node)
    return node


@dataclass
class Switch:
    """One simulated switch: its running config, commit history, LLDP rows, rejected lines."""

    name: str
    running: Node = field(default_factory=lambda: Node(""))
    lldp: list[tuple[str, str, str]] = field(default_factory=list)  # (local, device, port)
    reject: list[str] = field(default_factory=list)  # regexes of lines the switch refuses
    ignore: list[str] = field(default_factory=list)  # regexes of lines accepted but not applied
    commits: list[Node] = field(default_factory=list)  # configuration before each commit
    log: list[str] = field(default_factory=list)  # every line received, for the tests
    ai_ecn: list[tuple[str, int]] = field(default_factory=list)  # (interface, queue) AI ECN runs on
    keys: dict[str, str] = field(default_factory=dict)  # "authentication"/"privacy" -> last key
    keyed: int = 0  # keys set at the prompts (each gets its own ciphertext)
    replies: dict[str, str] = field(default_factory=dict)  # hostile hook: command -> its reply
    echo_keys: bool = False  # hostile hook: a refused key is echoed in the error line
    greeting: str | None = None  # hostile hook: printed at login instead of the Info and prompt

    @property
    def engine_id(self) -> str:
        """800007DB (enterprise 2011) 03 (a MAC address follows), as the USM example's
        `800007DB03D0C65B951201`; the MAC part from the name [unconfirmed: the device's MAC]."""
        return f"800007DB03{zlib.crc32(self.name.encode()):08X}{len(self.name):04X}"

    def host_name(self, view: Node, text: str) -> str:
        """`__targetHost_<n>_<5 digits>` (USM example: `__targetHost_1_27466`), n the host's
        number; the 5 digits are [unconfirmed] (a checksum here)."""
        n = 1 + sum(c.text.startswith("snmp-agent target-host ") for c in view.children)
        return f"__targetHost_{n}_{10000 + zlib.crc32(f'{self.name} {text}'.encode()) % 90000}"

    def type_line(self, top: Node, view: Node, text: str, c: Command, kind: str | None) -> Node:
        """Apply an accepted line of entry `c` typed in `view`: displayed as the table says,
        with the lines it adds."""
        shown, hidden = displayed(c, text, kind, lambda: self.host_name(view, text))
        node = _store(view, shown, hidden)
        for added in c.adds:  # `snmp-agent local-engineid <word>`: the only `adds` fact
            head = added.split(" <", 1)[0]
            if not any(n.text.startswith(head + " ") for n in view.children):
                line = f"{head} {self.engine_id}"
                view.children.insert(view.children.index(node) + 1, Node(line))
        return node

    def load(self, text: str) -> None:
        """Boot from a saved-format configuration (a startup file, or a display edited by a test):
        each line a typed or displayed form of its view, else ValueError with its line number.
        A keyless SNMPv3 key line sets nothing (nobody answers its prompt at boot; [unconfirmed]
        what a CE does with it)."""
        root = Node("")
        stack: list[tuple[int, Node, str, str | None]] = [(-1, root, "system", None)]
        for number, line in enumerate(text.splitlines(), 1):
            body = line.strip()
            if not body or body.startswith(("#", "!")) or body == "return":
                continue
            depth = len(line) - len(line.lstrip(" "))
            while stack[-1][0] >= depth:
                stack.pop()
            _, view, vname, kind = stack[-1]
            if body.startswith("undo ") and body[5:] in TOGGLES:
                _undo(view, body[5:])
                continue
            if _toggle(body, vname, kind):
                _store(view, body, False)
                continue
            c, why = TABLE.match(PLATFORM, vname, body, kind)
            if c is None:
                c = next((c for rx, c in DISPLAYED.get(vname, ()) if rx.fullmatch(body)), None)
                if c is None:
                    raise ValueError(f"{self.name} line {number}: {body!r}: {why}")
                stack.append((depth, _store(view, body, False), vname, kind))
                continue
            if any(answer == "<key>" for _, answer in c.prompt):
                continue
            node = self.type_line(root, view, body, c, kind)
            stack.append((depth, node, c.enters or vname, TABLE.entered(c, body, kind)))
        self.running = root

    def config(self) -> str:
        """What `display current-configuration` prints (defaults hidden, as the table says)."""
        return dump(self.running)


class Session:
    def __init__(self, switch: Switch, process: asyncssh.SSHServerProcess) -> None:
        self.sw, self.p = switch, process
        self.candidate: Node | None = None  # system view when set
        self.views: list[tuple[Node, str, str | None]] = []  # (node, view name, interface kind)
        self.asking: str | None = None  # the command waiting for its rollback [Y/N] answer
        # a line whose entry asks (table `prompt`): line, entry, view, kind, answers so far
        self.pending: tuple[str, Command, Node, str | None, list[str]] | None = None

    def prompt(self) -> str:
        if self.candidate is None:
            return f"<{self.sw.name}>"
        mark = "*" if dump(self.candidate, False) != dump(self.sw.running, False) else "~"
        label = ""
        if self.views:
            top = self.views[0][0].text
            label = "-" + (top.split(" ", 1)[1] if top.startswith("interface ") else top.split()[0])
        return f"[{mark}{self.sw.name}{label}]"

    def write(self, text: str) -> None:
        self.p.stdout.write(text.replace("\n", "\r\n"))

    def display(self, cmd: str) -> str | None:
        if cmd in self.sw.replies:
            return self.sw.replies[cmd]
        if cmd in ("display current-configuration", "display current-configuration | no-more"):
            return self.sw.config()
        if cmd == "display lldp neighbor brief":
            rows = "".join(f"{a:<23} {101:<10} {p:<23} {d}\n" for a, d, p in sorted(self.sw.lldp))
            return LLDP_HEADER + rows
        if cmd == "display ai-ecn calculated state":
            rows = "".join(
                f"{i:<20}{q:>1}{204800:>16}{614400:>17}{5:>14}    NN    AI_ECN_DistributedStorage"
                "   2022-01-10 09:09:23\n"
                for i, q in self.sw.ai_ecn
            )
            return AI_ECN_HEADER + rows + AI_ECN_RULE + "\n"
        return None

    def reject(self) -> None:
        self.write(f"{' ' * len(self.prompt())}^\n{ERROR}\n")

    def handle(self, cmd: str) -> bool | None:
        """Run one line; False ends the session, None waits for an answer without a prompt."""
        if self.pending is not None:
            keyed = any(a == "<key>" for _, a in self.pending[1].prompt)
            self.sw.log.append("******" if keyed else cmd)
            return self.answer(cmd)
        self.sw.log.append(cmd)
        if self.asking is not None:  # the answer to "Continue? [Y/N]:"
            if cmd.lower() == "y" and self.sw.commits:
                self.sw.running = self.sw.commits.pop()
            self.asking = None
            return True
        if not cmd:
            return True
        shown = self.display(cmd)
        if shown is not None and PAUSE in shown:  # hostile hook: the rest a second later
            now, later = shown.split(PAUSE, 1)
            self.write(now)
            asyncio.get_running_loop().call_later(0.5, lambda: self.write(later + self.prompt()))
            return None
        if shown is not None:
            self.write(shown)
            return True
        if cmd == "screen-length 0 temporary":
            self.write(
                "Info: The configuration takes effect on the current user terminal interface only.\n"
            )
            return True
        if self.candidate is None:
            if cmd == "system-view":
                self.write("Enter system view, return user view with return command.\n")
                self.candidate = self.sw.running.copy()
                self.views = []
            elif cmd == "rollback configuration last 1" and self.sw.commits:
                self.write(ROLLBACK_PROMPT)
                self.asking = cmd
                return None  # no prompt: the switch waits for the answer
            elif cmd == "quit":
                return False
            else:
                self.reject()
            return True
        if any(re.search(r, cmd) for r in self.sw.reject):
            self.reject()
            return True
        if any(re.search(r, cmd) for r in self.sw.ignore):
            return True
        view, vname, kind = self.views[-1] if self.views else (self.candidate, "system", None)
        if cmd == "commit":
            self.sw.commits.append(self.sw.running)
            self.sw.running = self.candidate.copy()
        elif cmd == "clear configuration candidate":
            # the view after clearing is [unconfirmed] (the page's example is in the system view):
            # the double goes back to the system view
            self.candidate, self.views = self.sw.running.copy(), []
        elif cmd in ("return", "quit") and (cmd == "return" or not self.views):
            self.candidate, self.views = None, []
        elif cmd == "quit":
            self.views.pop()
        elif cmd.startswith("undo "):
            what = cmd[5:]
            names = {command_name(c) for c in TABLE.commands[PLATFORM] if c.view == vname}
            if not any(what == n or what.startswith(n + " ") for n in names):
                self.reject()
                return True
            _undo(view, what)
        elif _toggle(cmd, vname, kind):
            _store(view, cmd, False)
        else:
            c, _ = TABLE.match(PLATFORM, vname, cmd, kind)
            if c is None:
                self.reject()
                return True
            if c.prompt:
                self.write(c.prompt[0][0])
                self.pending = (cmd, c, view, kind, [])
                return None  # no prompt: the switch waits for the answer
            node = self.sw.type_line(self.candidate, view, cmd, c, kind)
            if c.enters:
                self.views.append((node, c.enters, TABLE.entered(c, cmd, kind)))
        return True

    def answer(self, text: str) -> bool | None:
        """An answer to the question of a line's `prompt` (a key is not echoed)."""
        line, c, view, kind, typed = self.pending
        typed.append(text)
        if len(typed) < len(c.prompt):
            self.write(c.prompt[len(typed)][0])
            return None
        self.pending = None
        answers = [a for _, a in c.prompt]
        if "<key>" in answers:  # the SNMPv3 key prompts
            kind_ = USM.match(line)[2]
            if typed[0] != typed[1] or not 8 <= len(text) <= 255:
                echo = f" ({text})" if self.sw.echo_keys else ""
                self.write(f"{KEY_ERROR}{echo}\n")
                return True
            self.sw.keys[kind_], self.sw.keyed = text, self.sw.keyed + 1
            _store(view, USM.match(line)[1], False)  # the user on a line of its own
            _store(view, f"{line} cipher %+%##DOUBLE-ENCRYPTED-{self.sw.keyed:04d}%+%#", False)
            return True
        if [t.lower() for t in typed] == [a.lower() for a in answers]:
            self.sw.type_line(self.candidate, view, line, c, kind)
        return True

    async def run(self) -> None:
        if self.sw.greeting is not None:
            self.write(self.sw.greeting)
        else:
            self.write(f"Info: The max number of VTY users is 21 (TEST DOUBLE).\n{self.prompt()}")
        try:
            while True:
                line = await self.p.stdin.readline()
                if not line:
                    break
                hidden = self.pending is not None and any(
                    a == "<key>" for _, a in self.pending[1].prompt
                )
                self.write("\n" if hidden else line.rstrip("\r\n") + "\n")  # the terminal's echo
                done = self.handle(line.strip())
                if done is False:
                    break
                if done:
                    self.write(self.prompt())
        except (asyncssh.BreakReceived, asyncssh.TerminalSizeChanged, ConnectionError):
            pass
        self.p.exit(0)


class _Server(asyncssh.SSHServer):
    def __init__(self, password: str) -> None:
        self.password = password

    def begin_auth(self, username: str) -> bool:
        return True

    def password_auth_supported(self) -> bool:
        return True

    def validate_password(self, username: str, password: str) -> bool:
        return username == "admin" and password == self.password


class Fleet:
    """Simulated switches on 127.0.0.1, served from a background thread until stop()."""

    def __init__(
        self, switches: list, password: str = "double-admin-pw", session: type | None = None
    ) -> None:
        self.switches = {s.name: s for s in switches}
        self.password = password
        self.session = session or Session  # what answers each device's SSH session
        self.ports: dict[str, int] = {}
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.servers: list[asyncssh.SSHAcceptor] = []

    def start(self) -> Fleet:
        self.thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self.loop).result(30)
        return self

    async def _start(self) -> None:
        key = asyncssh.generate_private_key("ssh-ed25519")
        for name, sw in self.switches.items():

            async def handler(process: asyncssh.SSHServerProcess, sw: Switch = sw) -> None:
                await self.session(sw, process).run()

            server = await asyncssh.create_server(
                lambda: _Server(self.password),
                "127.0.0.1",
                0,
                server_host_keys=[key],
                process_factory=handler,
                line_editor=False,  # echo is written in order with the answers
            )
            self.servers.append(server)
            self.ports[name] = server.sockets[0].getsockname()[1]

    def stop(self) -> None:
        async def close() -> None:
            for s in self.servers:
                s.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
