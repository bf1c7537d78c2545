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
- a rejected line (one the test lists in `reject`, or a control command a CE V300R023C00 does
  not have, such as plain `abort`) prints a caret under the first character of the command and
  `Error: Unrecognized command found at '^' position.` (captured CE6881 session,
  tests/data/captures/ce-unrecognized-command.txt);
- `display lldp neighbor brief` prints the V300 header and rule of the command reference example
  (tests/data/captures/ce-v300-display-lldp-neighbor-brief.txt), one row per cabled port;
- `display ai-ecn calculated state` prints the model version line, mode legend, header and rules
  of the configuration guide's example (CE6800/8800 V300R023C00 "Example for Configuring AI
  ECN"; tests/data/captures/ce-v300-display-ai-ecn-calculated-state.txt), one row per entry of
  `Switch.ai_ecn` with the example's thresholds, mode and model; [unconfirmed] that a switch
  where AI ECN does not run (no CE-LIC-AFRD licence) prints the same table with no rows;
- `display current-configuration` prints the running configuration in saved format (`#`
  between sections, `return` at the end), masks dotted and defaults left out (see DISPLAY);
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

How lines change the configuration is this double's simplification, not the device's: a line is
stored in the current view; `undo X` removes the lines equal to X or starting with "X ", and is
stored itself for the state toggles (`undo shutdown`, `undo portswitch`); a line in KEYED
replaces the earlier value of the same command. Which commands open a view is the list VIEWS
below (the views the generated configurations use). Configuration lines are not checked against
the command reference (the double has no grammar); only the control commands are.
"""

from __future__ import annotations

import asyncio
import ipaddress
import re
import threading
from dataclasses import dataclass, field

import asyncssh

VIEWS = {  # depth -> commands that open a view at that depth
    0: re.compile(
        r"^(interface \S+|bgp \d+|ospf \d+.*|aaa|user-interface .+|acl number \d+|dcb pfc|"
        r"diffserv domain \S+|drop-profile \S+|dfs-group \d+|ip vpn-instance \S+|"
        r"monitor-link group \d+|ai-service)$"
    ),
    1: re.compile(r"^(ipv4-family.*|area \S+|ai-ecn)$"),
}
TOGGLES = ("shutdown", "portswitch")
LLDP_HEADER = (
    "Local Interface         Exptime(s) Neighbor Interface      Neighbor Device     \n"
    + "-" * 74
    + "\n"
)
# CE error text and caret (under the first unknown character, after the prompt): captured CE6881
# session in ansible-collections/community.network#323, tests/data/captures/ce-unrecognized-command.txt
ERROR = "Error: Unrecognized command found at '^' position."
# TEST DOUBLE of how a CE V300R023C00 stores and displays lines (CE6800/8800 V300R023C00 command
# reference and configuration guide, WheaterW/INTA-project nassim-main/corpus/hw/):
# - `ip address A <len>` -> `ip address A <dotted>`: Example for Configuring Intermediate
#   File-based ZTP (entered `ip address 10.1.1.1 24`, Configuration Scripts `... 255.255.255.0`);
# - `ip route-static [vpn-instance V] D <len> ...` -> dotted mask, D cut to its network: Example for
#   Configuring IPv4 Layer 3 Multicast over VXLAN (Inter-AS) (`... 192.168.40.1 24 100ge 1/0/3`
#   shown `... 192.168.40.0 255.255.255.0 100GE1/0/3`);
# - BGP `network A <len>` -> dotted: Example for Configuring BGP Hierarchical Routing
#   (`network 2.2.2.2 32` shown `network 2.2.2.2 255.255.255.255`).
MASKED = (
    re.compile(r"^(ip address [\d.]+) (\d{1,2})((?: .*)?)$"),
    re.compile(r"^(ip route-static(?: vpn-instance \S+)?) ([\d.]+) (\d{1,2})( .*)$"),
    re.compile(r"^(network [\d.]+) (\d{1,2})((?: .*)?)$"),
)
# display current-configuration "does not display parameters that use default settings"
# (display_current-configuration_(All_views).json); the defaults the reference documents:
DISPLAY_HIDES = {
    "jumboframe enable 9216",  # jumboframe_enable.json: "By default ... 9216 bytes"
    "ssh server dh-exchange min-len 3072",  # ssh_server_dh-exchange_min-len.json: "3072 bits"
}
# Commands that hold one value: a new line replaces the old one (double's simplification of
# "configures the maximum length ..." (jumboframe_enable.json), "configures encryption
# algorithms" (ssh_server_cipher.json), an interface's one primary address).
KEYED = re.compile(
    r"^(jumboframe enable|mtu|description|ssh server cipher|ssh server dh-exchange min-len|"
    r"ip address(?!.* sub$)|snmp-agent usm-user v3 \S+ (?:authentication|privacy)-mode)\b"
)
# SNMPv3 mode lines (snmp-agent_usm-user.json), without a key (asks for it) or as displayed
USM = re.compile(r"^(snmp-agent usm-user v3 \S+)(?: (authentication|privacy)-mode \S+( .+)?)?")
KEY_PROMPT = "Please configure the {kind} password (8-255)\nEnter Password:"
KEY_ERROR = "Error: The two passwords are different or out of range."  # [unconfirmed] text
ROLLBACK_PROMPT = (  # rollback_configuration.json, Examples
    "Warning: This operation will revert configuration changes to the previous status. During "
    "the rollback configuration process, some configurations involving differences may be "
    "temporarily invalid. Continue? [Y/N]:"
)


def stored(text: str) -> str:
    """A configuration line as the switch stores it (masks dotted, see MASKED)."""
    for i, rx in enumerate(MASKED):
        m = rx.match(text)
        if not m:
            continue
        if i == 1:
            net = ipaddress.ip_network(f"{m[2]}/{m[3]}", strict=False)
            return f"{m[1]} {net.network_address} {net.netmask}{m[4]}"
        net = ipaddress.ip_network(f"0.0.0.0/{m[2]}")
        return f"{m[1]} {net.netmask}{m[3]}"
    return text


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

    def copy(self) -> Node:
        return Node(self.text, [c.copy() for c in self.children])


def parse(text: str) -> Node:
    """A saved-format configuration -> tree, by indentation (one space per level)."""
    root = Node("")
    stack: list[tuple[int, Node]] = [(-1, root)]
    for line in text.splitlines():
        if not line.strip() or line.lstrip().startswith(("#", "!")) or line.strip() == "return":
            continue
        depth = len(line) - len(line.lstrip(" "))
        while stack[-1][0] >= depth:
            stack.pop()
        node = Node(stored(line.strip()))
        stack[-1][1].children.append(node)
        stack.append((depth, node))
    return root


def dump(root: Node, hide: set[str] = frozenset()) -> str:
    out = ["!Software Version V300R023C00 (TEST DOUBLE)", "#"]

    def walk(node: Node, depth: int) -> None:
        for c in node.children:
            if c.text in hide:
                continue
            out.append(" " * depth + c.text)
            walk(c, depth + 1)

    for top in root.children:
        out.append(top.text)
        walk(top, 1)
        out.append("#")
    out.append("return")
    return "\n".join(out) + "\n"


def apply(view: Node, text: str) -> Node | None:
    """Apply one configuration line in `view`; the view it opens, if any."""
    if text.startswith("undo "):
        what = text[5:]
        view.children = [
            c for c in view.children if c.text != what and not c.text.startswith(what + " ")
        ]
        if what in TOGGLES and text not in [c.text for c in view.children]:
            view.children.append(Node(text))
        return None
    text = stored(text)
    if text in TOGGLES:
        view.children = [c for c in view.children if c.text != "undo " + text]
    key = KEYED.match(text)
    for c in view.children if key else []:
        old = KEYED.match(c.text)
        if old and old[1] == key[1]:
            c.text = text  # the new value, where the display puts that command
            return c
    for c in view.children:
        if c.text == text:
            return c
    node = Node(text)
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

    def load(self, text: str) -> None:
        self.running = parse(text)
        self.running.children = [
            c for c in self.running.children if not ((m := USM.match(c.text)) and m[2] and not m[3])
        ]

    def config(self) -> str:
        """What `display current-configuration` prints (documented defaults left out)."""
        return dump(self.running, DISPLAY_HIDES)


class Session:
    def __init__(self, switch: Switch, process: asyncssh.SSHServerProcess) -> None:
        self.sw, self.p = switch, process
        self.candidate: Node | None = None  # system view when set
        self.views: list[Node] = []
        self.asking: str | None = None  # the command waiting for its [Y/N] answer
        self.pending: tuple[str, str, list[str]] | None = None  # a keyless SNMPv3 line, its keys

    def prompt(self) -> str:
        if self.candidate is None:
            return f"<{self.sw.name}>"
        mark = "*" if dump(self.candidate) != dump(self.sw.running) else "~"
        label = ""
        if self.views:
            top = self.views[0].text
            label = "-" + (top.split(" ", 1)[1] if top.startswith("interface ") else top.split()[0])
        return f"[{mark}{self.sw.name}{label}]"

    def write(self, text: str) -> None:
        self.p.stdout.write(text.replace("\n", "\r\n"))

    def display(self, cmd: str) -> str | None:
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
            self.sw.log.append("******")
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
        if cmd == "abort" or any(re.search(r, cmd) for r in self.sw.reject):
            self.reject()  # plain `abort` is no V300R023C00 command (abort_trial.json: `abort trial`)
            return True
        if any(re.search(r, cmd) for r in self.sw.ignore):
            return True
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
        elif not self.views and (m := USM.match(cmd)) and m[2] and not m[3]:
            self.write(KEY_PROMPT.format(kind=m[2]))
            self.pending = (cmd, m[2], [])
            return None  # no prompt: the switch waits for the key
        else:
            view = self.views[-1] if self.views else self.candidate
            if (m := USM.match(cmd)) and cmd != m[1]:
                apply(view, m[1])  # the user's own line, displayed before its settings
            opened = apply(view, cmd)
            depth = len(self.views)
            if opened is not None and depth in VIEWS and VIEWS[depth].match(cmd):
                self.views.append(opened)
        return True

    def answer(self, key: str) -> bool | None:
        """A key typed at "Enter Password:" / "Confirm Password:"."""
        line, kind, typed = self.pending
        typed.append(key)
        if len(typed) == 1:
            self.write("Confirm Password:")
            return None
        self.pending = None
        if typed[0] != typed[1] or not 8 <= len(key) <= 255:
            self.write(f"{KEY_ERROR}\n")
            return True
        self.sw.keys[kind], self.sw.keyed = key, self.sw.keyed + 1
        apply(self.candidate, USM.match(line)[1])
        apply(self.candidate, f"{line} cipher %+%##DOUBLE-ENCRYPTED-{self.sw.keyed:04d}%+%#")
        return True

    async def run(self) -> None:
        self.write(f"Info: The max number of VTY users is 21 (TEST DOUBLE).\n{self.prompt()}")
        try:
            while True:
                line = await self.p.stdin.readline()
                if not line:
                    break
                hidden = self.pending is not None  # a key is not echoed
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
