"""The one reader of a rendered VRP configuration (CE, NE, USG), for verify and the twin (issue
#39 item 1): every line is read through the command table (generator/catalog/commands.yaml,
generator.analysis.command_table.steps) in the view it is typed in, as the device reads it:
- words are separated by any run of whitespace (`telnet  server enable` is one command);
- keywords are case-insensitive ("The keywords in the commands are case insensitive, and whether
  a command parameter is case sensitive depends on the parameter");
- a keyword may be given incomplete "as long as entered characters can match a unique keyword"
  (`dis cu` is `display current-configuration`);
- a line is at most MAX_LINE characters.
All from CE6800 V300R023C00 configuration guide, Basic Configuration > CLI Overview > How to Use
the CLI > Editing Command Lines ("Incomplete Keyword"), WheaterW/INTA-project
nassim-main/corpus/hw/hw_CE6800_V300R023C00/config_corpus/Configuration/Configuration_Guide/
Basic_Configuration/CLI_Overview_Configuration/How_to_Use_the_CLI/Editing_Command_Lines.md.
A keyword is expanded against the table's forms of its view only: the device knows more
keywords, so where the device finds a word ambiguous the table may still expand it.

A line that is no form of its view (a typo, a command of another view or platform, a value out
of range) is Unreadable at its file:line: verify and the twin stop there (exit 2), as the device
would refuse the line; nothing is read past.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from generator.analysis.command_table import TRANSLATED, load_table, steps
from generator.catalog import shipped_catalog
from generator.verify.safe import Damaged, file_text, rel

MAX_LINE = 3100  # characters in one command (Editing Command Lines, above)
TOO_LONG = (
    f"a command is at most {MAX_LINE} characters (CE6800 V300R023C00 Editing Command Lines: "
    "a longer one cannot be restored after the switch restarts)"
)

# Secrets in a VRP line: verify's rules fail them (rules.secrets_in), and a refused line is
# quoted with them masked
VAULT = re.compile(r"\{\{ vault_[a-z0-9_]+ \}\}")
SECRET = re.compile(
    r"\b(?:password|cipher)\s+(?!(?:irreversible-cipher|cipher|simple|plain)\b)"
    r"(\{\{ [^}]* \}\}|\S+)"
)
# VRP keywords after which a secret follows in clear (`simple`, `plain`), or a community
CLEAR = re.compile(r"\b(?:simple|plain)\s+\S+|\bcommunity\s+(?:read|write)?\s*\S+")
KNOWN_DEFAULTS = ("Admin@123", "Huawei@123", "Changeme_123", "Huawei12#$", "admin123")


def masked(line: str) -> str:
    """The line with each secret it holds replaced by ********, so that the finding, printed
    into a CI log, does not carry the secret on."""
    line = SECRET.sub(
        lambda m: m[0] if VAULT.fullmatch(m[1]) else m[0][: m.start(1) - m.start()] + "********",
        line,
    )
    if m := CLEAR.search(line):  # the keyword kept, the rest of the line hidden
        line = f"{line[: m.start()]}{m[0].split()[0]} ********"
    for default in KNOWN_DEFAULTS:
        line = line.replace(default, "********")
    return line


class Unreadable(Damaged):
    """A configuration line that is no form of the command table for its view: file:line, the
    line and why (verify and the twin stop; neither reads past a line it does not know)."""


@dataclass(slots=True)
class Line:
    number: int
    text: str  # as the device reads it: keywords in full, one space between words
    children: list[Line] = field(default_factory=list)

    def words(self) -> list[str]:
        return self.text.split()

    def descendants(self) -> list[Line]:
        """The lines under this one, in file order, at any depth."""
        out: list[Line] = []
        todo = self.children[::-1]
        while todo:
            line = todo.pop()
            out.append(line)
            todo += line.children[::-1]
        return out


def tree(text: str, platform: str, where: str, counts: Counter[str] | None = None) -> list[Line]:
    """The views of a VRP script: each top-level line with the lines indented under it, every
    line as the command table reads it; the framing lines (system-view, commit, quit, return,
    comments) move between views and are left out. `counts` gets one per line under its form's
    twin disposition. Damaged at a line longer than the device takes; Unreadable at a line the
    table does not know in its view (a blank line is skipped: the CLI takes it as nothing)."""
    raws = text.splitlines()
    if raws and max(map(len, raws)) > MAX_LINE:
        n, raw = next((n, raw) for n, raw in enumerate(raws, 1) if len(raw) > MAX_LINE)
        raise Damaged(f"{where}:{n}: {len(raw):,} characters; {TOO_LONG}")
    top: list[Line] = []
    stack: list[tuple[int, Line]] = []  # the lines a deeper line may be under, by depth
    for number, depth, body, _, (command, problem, canonical, _) in steps(
        text, platform, load_table()
    ):
        if not body:
            continue
        if command is None:
            raise Unreadable(f"{where}:{number}: {masked(body)!r}: {problem}")
        if counts is not None:
            counts[command.twin or TRANSLATED] += 1
        if command.twin == "framing":
            if not depth:
                stack.clear()
            continue
        line = Line(number, canonical)
        while stack and stack[-1][0] >= depth:
            stack.pop()
        (stack[-1][1].children if stack else top).append(line)
        stack.append((depth, line))
    return top


_PLATFORM = re.compile(r'^(platform|model): "?([\w.-]+)"?$', re.M)


def platform(folder: Path, path: Path) -> str:
    """A rendered configuration's platform (huawei-ce, huawei-ne, huawei-usg), from the
    structured config beside it: a switch's `platform`, a border device's catalog `model`."""
    beside = path.with_suffix(".yml")
    m = _PLATFORM.search(file_text(folder, beside))
    if m is None:
        raise Damaged(f"{rel(folder, beside)}: no `platform:` or `model:` line")
    key, value = m.groups()
    if key == "platform":
        return value
    model = shipped_catalog().switches.get(value)
    if model is None:
        raise Damaged(f"{rel(folder, beside)}: model {value!r} is not in the catalog")
    return model.platform


def read(folder: Path, path: Path, counts: Counter[str] | None = None) -> tuple[str, list[Line]]:
    """A rendered configuration's platform and its lines (tree)."""
    text = file_text(folder, path)  # the file itself first: a link or a non-file is named as such
    kind = platform(folder, path)
    return kind, tree(text, kind, rel(folder, path), counts)


def telnet_on(parts: tuple[str, ...]) -> bool:
    """A system-view command that turns the Telnet server on: `telnet server enable` (NE40E/USG
    VRP8) or `undo telnet server disable` (CE V300R023C00 telnet server disable: "The undo telnet
    server disable command enables the Telnet service")."""
    return parts[:3] == ("telnet", "server", "enable") or parts[:4] == _UNDO_DISABLE


_UNDO_DISABLE = ("undo", "telnet", "server", "disable")
CLEAR_VERSIONS = frozenset({"v1", "v2c", "all"})


def clear_snmp(parts: tuple[str, ...]) -> bool:
    """SNMP with a community in clear: a community, or v1/v2c (or all) enabled by
    `snmp-agent sys-info version {v1|v2c|v3|all}` (CE6800 V300R023C00 snmp-agent sys-info
    version; its `... disable` form turns them off)."""
    if parts[:1] != ("snmp-agent",):
        return False
    if parts[1:2] == ("community",):
        return True
    rest = parts[3:]
    return (
        parts[1:3] == ("sys-info", "version")
        and "disable" not in rest
        and any(v in CLEAR_VERSIONS for v in rest)
    )


def vlan_list(text: str) -> set[int]:
    """The VLANs of a VLAN list (`10 to 20 30`) of `vlan batch` or a `port ... vlan` command."""
    out: set[int] = set()
    words = text.split()
    i = 0
    while i < len(words):
        if not words[i].isdigit():
            i += 1
            continue
        low = high = int(words[i])
        if i + 2 < len(words) and words[i + 1] == "to" and words[i + 2].isdigit():
            high = int(words[i + 2])
            i += 2
        if not 1 <= low <= high <= 4094:  # a VLAN ID is 1-4094 (IEEE 802.1Q: 0, 4095 reserved)
            raise ValueError(f"VLAN {low} to {high} is not within 1-4094")
        out |= set(range(low, high + 1))
        i += 1
    return out
