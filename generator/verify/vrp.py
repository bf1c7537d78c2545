"""A VRP configuration line read as the switch's command line reads it (issue #31 item 6).

verify matches commands against the canonical spelling of a line, so text the CLI accepts in
another spelling cannot slip past it:
- words are separated by any run of whitespace (`telnet  server enable` is one command);
- keywords are case-insensitive ("The keywords in the commands are case insensitive, and whether
  a command parameter is case sensitive depends on the parameter");
- a keyword may be given incomplete "as long as entered characters can match a unique keyword"
  (`dis cu` is `display current-configuration`, `d c` is refused as ambiguous).
Both quotations: CE6800 V300R023C00 configuration guide, Basic Configuration > CLI Overview >
How to Use the CLI > Editing Command Lines ("Incomplete Keyword"), WheaterW/INTA-project
nassim-main/corpus/hw/hw_CE6800_V300R023C00/config_corpus/Configuration/Configuration_Guide/
Basic_Configuration/CLI_Overview_Configuration/How_to_Use_the_CLI/Editing_Command_Lines.md.
The same page sets the longest command at 3100 characters (MAX_LINE).

An incomplete keyword is expanded when it is the prefix of exactly one keyword verify knows at
that position of the commands in VIEWS; the switch knows more keywords, so where the switch
finds a word ambiguous verify may still expand it (and judge a command the switch would
refuse), never the other way round: a word the switch expands to a keyword verify knows is a
prefix of no other keyword verify knows at that position. Parameters keep their spelling.
The command forms are the ones verify judges (read.py), from the CE6800 V300R023C00 and
NE40E/USG command references cited in generator/catalog/commands.yaml.

The one VRP configuration parser (issue #33 item 5) for verify and the tests: `sections` splits
a config into top-level commands and the lines indented under them, as hier_config's Huawei VRP
driver reads a config (its `per_line_sub` rule `^\\s*[#!].*` empties comment lines, so `#`
separates nothing; indentation alone nests a line), and `tree` builds hier_config's HConfig
(driver Platform.HUAWEI_VRP) from those sections for the tests. verify reads the sections
without the tree, whose nodes cost more than the rest of `wanka verify` (figures in the commit
that made this), and only `tree` imports hier_config (which loads pydantic).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from generator.verify.safe import Damaged

if TYPE_CHECKING:
    from hier_config import HConfig

MAX_LINE = 3100  # characters in one command (Editing Command Lines, above)
TOO_LONG = (
    f"a command is at most {MAX_LINE} characters (CE6800 V300R023C00 Editing Command Lines: "
    "a longer one cannot be restored after the switch restarts)"
)

# the initials of a comment line: hier_config's Huawei VRP driver (hier_config 3.7,
# platforms/huawei_vrp/driver.py) empties every line matching `^\s*[#!].*` (a test checks this
# stays the driver's rule) [unconfirmed: how the CE itself reads a `#` or `!` line when it
# loads a config; the CLI pages cited above do not say]
COMMENT_INITIALS = "#!"


@dataclass(slots=True)
class Section:
    """A command typed at the top level (a view, or a system-view command) at line `n`, and
    the lines after it up to the next one: those indented under it, and blank and comment
    lines, which `words` reads as no words (body[k] is line n + 1 + k)."""

    n: int
    text: str
    body: list[str] = field(default_factory=list)


def sections(text: str, where: str) -> list[Section]:
    """The config's top-level commands in order, each with the lines under it; an indented
    line before any top-level one is a section of its own. Damaged at a line longer than the
    switch takes."""
    lines = text.splitlines()
    if lines and max(map(len, lines)) > MAX_LINE:
        n, raw = next((n, raw) for n, raw in enumerate(lines, 1) if len(raw) > MAX_LINE)
        raise Damaged(f"{where}:{n}: {len(raw):,} characters; {TOO_LONG}")
    tops = [
        i
        for i, raw in enumerate(lines)
        if raw and not raw[0].isspace() and raw[0] not in COMMENT_INITIALS
    ]
    first = tops[0] if tops else len(lines)
    out = [Section(i + 1, lines[i]) for i in range(first) if not comment(lines[i])]
    for i, end in zip(tops, [*tops[1:], len(lines)], strict=True):
        out.append(Section(i + 1, lines[i], lines[i + 1 : end]))
    return out


def comment(line: str) -> bool:
    """A blank or comment line (the driver's rule, COMMENT_INITIALS)."""
    first = line.lstrip()[:1]
    return not first or first in COMMENT_INITIALS


def tree(text: str, where: str = "config") -> HConfig:
    """The config as hier_config's HConfig under its Huawei VRP driver (`undo` negation, `quit`
    closing a view), built from `sections`: each top-level command a child of the root, the
    lines under it nested by their indentation as hier_config's loader nests them, every word
    run of whitespace one space, the line number in `facts["line"]`. A repeated command is
    kept each time: a CLI script types `system-view` and `commit` twice, which hier_config's
    own loader refuses as a duplicate section. Needs hier_config (the test or switches extra);
    verify itself never builds the tree."""
    from hier_config import HConfig, Platform, get_hconfig_driver

    root = HConfig(get_hconfig_driver(Platform.HUAWEI_VRP))
    for section in sections(text, where):
        last = view = _add(root, section.n, section.text)
        last.real_indent_level = 0
        for n, raw in enumerate(section.body, section.n + 1):
            if comment(raw):
                continue
            indent = len(raw) - len(raw.lstrip())
            while indent <= view.real_indent_level:
                view = view.parent
            if indent > last.real_indent_level:
                view = last
            last = _add(view, n, raw)
            last.real_indent_level = indent
    return root


def _add(parent, n: int, raw: str):
    child = parent.add_child(" ".join(raw.split()), check_if_present=False)
    child.facts["line"] = n
    return child


@dataclass(eq=False)
class _Node:
    """One position in the commands of a view: the keywords that may come next, and where a
    parameter leads (`arg`; the node itself where the rest of the line is free words)."""

    keywords: dict[str, _Node] = field(default_factory=dict)
    arg: _Node | None = None


def _view(forms: str) -> _Node:
    """A view's commands, one form a line: keywords, `*` for one parameter, `...` for any
    words from there on, then `{a|b}` for keywords recognised among those words."""
    root = _Node()
    for form in forms.strip().splitlines():
        node = root
        for word in form.split():
            if word == "*":
                node.arg = node.arg or _Node()
                node = node.arg
            elif word == "...":
                node.arg = node
            elif word.startswith("{"):
                node.keywords.update(dict.fromkeys(word.strip("{}").split("|"), node))
            else:
                node = node.keywords.setdefault(word, _Node())
    return root


_VLANS = "... {to|all}"  # a VLAN list: `10 to 20 30`, or `all`
VIEWS: dict[str, _Node] = {
    "system": _view(
        f"""
interface *
vlan batch {_VLANS}
ip route-static vpn-instance * ... {{preference}}
ip route-static ... {{preference}}
acl number *
acl name *
acl *
user-interface vty ...
bgp ...
ospf ...
firewall zone name *
firewall zone *
security-policy
nat-policy
ssh server acl *
snmp-agent acl *
snmp-agent community ...
snmp-agent sys-info version ... {{v1|v2c|v3|all|disable}}
snmp-agent * ...
telnet server enable
telnet server disable
"""
    ),
    # ACL rules: rule [id] {{permit|deny}} [protocol] [source {{address wildcard|any}}] ... (CE6800
    # V300R023C00 rule (basic ACL view), rule (advanced ACL view)): the keywords are recognised
    # anywhere after `rule`, so an option cannot hide `permit` or `source`
    "acl": _view("rule ... {permit|deny|source|destination|any|vpn-instance|time-range|logging}"),
    "vty": _view("acl * inbound\nacl * outbound"),
    "routing": _view("peer * as-number *\ndefault-route-advertise ...\nimport-route static ..."),
    "zone": _view("add interface *"),
    "policy": _view(
        """
rule name *
source-zone *
destination-zone *
source-address ...
destination-address ...
service protocol ...
action ... {permit|deny|source-nat}
"""
    ),
    "interface": _view(
        f"""
ip binding vpn-instance *
ip address ... {{sub}}
eth-trunk *
port default vlan {_VLANS}
port hybrid untagged vlan {_VLANS}
port hybrid tagged vlan {_VLANS}
port trunk allow-pass vlan {_VLANS}
port trunk pvid vlan *
port vlan exclude {_VLANS}
dhcp select relay
"""
    ),
}
VIEWS["system"].keywords["undo"] = VIEWS["system"]  # `undo` + any system-view command


_SEEN: dict[tuple[str, str | None], tuple[tuple[str, ...], bool]] = {}
_SEEN_MAX = 500_000  # lines remembered: a 10,240-card output repeats 116k distinct ones 6 times


def words(text: str, view: str | None = "system") -> tuple[tuple[str, ...], bool]:
    """The words of one line with each keyword in full and lower case, and whether its first
    word is a command of `view` (None: an unknown view, whose words are only split); no words
    for a blank or comment line."""
    key = (text, view)
    seen = _SEEN.get(key)
    if seen is None:
        if len(_SEEN) >= _SEEN_MAX:
            _SEEN.clear()
        seen = _SEEN[key] = _words(text, view)
    return seen


def _words(text: str, view: str | None) -> tuple[tuple[str, ...], bool]:
    parts = text.split()
    if not parts or parts[0][0] in COMMENT_INITIALS:
        return (), True
    node = VIEWS.get(view) if view else None
    if node is None:
        return tuple(parts), False
    for i, word in enumerate(parts):
        low = word.lower()
        nxt = node.keywords.get(low)
        if nxt is None:
            found = [k for k in node.keywords if k.startswith(low)]
            if len(found) == 1:
                low, nxt = found[0], node.keywords[found[0]]
        if nxt is not None:
            parts[i] = low
        elif node.arg is not None:
            nxt = node.arg
        else:
            return tuple(parts), i > 0
        node = nxt
    return tuple(parts), True


def telnet_on(parts: tuple[str, ...]) -> bool:
    """A system-view command that turns the Telnet server on: `telnet server enable` (NE40E/USG
    VRP8) or `undo telnet server disable` (CE V300R023C00 telnet server disable: "The undo telnet
    server disable command enables the Telnet service")."""
    return parts[:3] == ("telnet", "server", "enable") or parts[:4] == _UNDO_DISABLE


BREACHES = frozenset({"telnet", "snmp-agent", "undo"})  # first words of telnet_on, clear_snmp
BREACH_INITIALS = "tTsSuU"  # their initials: an incomplete keyword keeps its first letter
_UNDO_DISABLE = ("undo", "telnet", "server", "disable")
CLEAR_VERSIONS = frozenset({"v1", "v2c", "all"})


def clear_snmp(parts: tuple[str, ...]) -> bool:
    """SNMP with a community in clear: a community, or v1/v2c (or all) enabled by
    `snmp-agent sys-info version {v1|v2c|v3}* | all` (CE6800 V300R023C00 snmp-agent sys-info
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
