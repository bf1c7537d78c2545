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
NE40E/USG command references cited in generator/catalog/commands.yaml. Issue #33 wants one VRP
parser for verify and the tests; this module is meant to become it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

MAX_LINE = 3100  # characters in one command (Editing Command Lines, above)
TOO_LONG = (
    f"a command is at most {MAX_LINE} characters (CE6800 V300R023C00 Editing Command Lines: "
    "a longer one cannot be restored after the switch restarts)"
)


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
    word is a command of `view` (None: an unknown view, whose words are only split)."""
    key = (text, view)
    seen = _SEEN.get(key)
    if seen is None:
        if len(_SEEN) >= _SEEN_MAX:
            _SEEN.clear()
        seen = _SEEN[key] = _words(text, view)
    return seen


def _words(text: str, view: str | None) -> tuple[tuple[str, ...], bool]:
    parts = text.split()
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
