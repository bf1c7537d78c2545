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
- a rejected line prints a caret line and `Error: Unrecognized command found at '^' position.`
  (the VRP error format);
- `display lldp neighbor brief` prints the V300 header and rule of the command reference example
  (tests/data/captures/ce-v300-display-lldp-neighbor-brief.txt), one row per cabled port;
- `display ai-ecn calculated state` prints the model version line, mode legend, header and rules
  of the configuration guide's example (CE6800/8800 V300R023C00 "Example for Configuring AI
  ECN"; tests/data/captures/ce-v300-display-ai-ecn-calculated-state.txt), one row per entry of
  `Switch.ai_ecn` with the example's thresholds, mode and model; [unconfirmed] that a switch
  where AI ECN does not run (no CE-LIC-AFRD licence) prints the same table with no rows;
- `display current-configuration` prints the running configuration in saved format (`#`
  between sections, `return` at the end);
- `abort` leaves the system view discarding uncommitted changes; `rollback configuration last 1`
  (user view) restores the configuration before the last commit (VRP8 configuration rollback).

How lines change the configuration is this double's simplification, not the device's: a line is
stored in the current view; `undo X` removes the lines equal to X or starting with "X ", and is
stored itself for the state toggles (`undo shutdown`, `undo portswitch`). Which commands open a
view is the list VIEWS below (the views the generated configurations use).
"""

from __future__ import annotations

import asyncio
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
ERROR = "Error: Unrecognized command found at '^' position."
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
        node = Node(line.strip())
        stack[-1][1].children.append(node)
        stack.append((depth, node))
    return root


def dump(root: Node) -> str:
    out = ["!Software Version V300R023C00 (TEST DOUBLE)", "#"]

    def walk(node: Node, depth: int) -> None:
        for c in node.children:
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
    if text in TOGGLES:
        view.children = [c for c in view.children if c.text != "undo " + text]
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

    def load(self, text: str) -> None:
        self.running = parse(text)

    def config(self) -> str:
        return dump(self.running)


class Session:
    def __init__(self, switch: Switch, process: asyncssh.SSHServerProcess) -> None:
        self.sw, self.p = switch, process
        self.candidate: Node | None = None  # system view when set
        self.views: list[Node] = []

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

    def handle(self, cmd: str) -> bool:
        """Run one line; False ends the session."""
        self.sw.log.append(cmd)
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
                self.sw.running = self.sw.commits.pop()
                self.write("Info: Rollback succeeded.\n")
            elif cmd == "quit":
                return False
            else:
                self.write(f"{' ' * (len(self.prompt()) + 1)}^\n{ERROR}\n")
            return True
        if any(re.search(r, cmd) for r in self.sw.reject):
            self.write(f"{' ' * (len(self.prompt()) + 1)}^\n{ERROR}\n")
            return True
        if any(re.search(r, cmd) for r in self.sw.ignore):
            return True
        if cmd == "commit":
            self.sw.commits.append(self.sw.running)
            self.sw.running = self.candidate.copy()
        elif cmd == "abort" or (cmd in ("return", "quit") and (cmd == "return" or not self.views)):
            self.candidate, self.views = None, []
        elif cmd == "quit":
            self.views.pop()
        else:
            view = self.views[-1] if self.views else self.candidate
            opened = apply(view, cmd)
            depth = len(self.views)
            if opened is not None and depth in VIEWS and VIEWS[depth].match(cmd):
                self.views.append(opened)
        return True

    async def run(self) -> None:
        self.write(f"Info: The max number of VTY users is 21 (TEST DOUBLE).\n{self.prompt()}")
        try:
            while True:
                line = await self.p.stdin.readline()
                if not line:
                    break
                self.write(line.rstrip("\r\n") + "\n")  # the terminal's echo, line by line
                if not self.handle(line.strip()):
                    break
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

    def __init__(self, switches: list[Switch], password: str = "double-admin-pw") -> None:
        self.switches = {s.name: s for s in switches}
        self.password = password
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
                await Session(sw, process).run()

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
