"""How a device reads the words of a command line, by the keywords of the forms of the view it
is typed in (generator/catalog/commands.yaml, read by generator.analysis.command_table).

The CE CLI splits a line at any run of whitespace, takes keywords in any case ("The keywords in
the commands are case insensitive") and an incomplete keyword "as long as entered characters can
match a unique keyword" (CE6800 V300R023C00 configuration guide, Basic Configuration > CLI
Overview > How to Use the CLI > Editing Command Lines). Parameters keep their spelling.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

# a placeholder of a form (<name>, <name:LO-HI>) or a choice of keywords ({a|b})
TOKEN = re.compile(r"<([\w-]+)(?::(\d+)-(\d+))?>|\{([^{}]+)\}")


@dataclass(eq=False)
class Node:
    """A position in the forms of a view: the keywords that may come next (by their lower-case
    spelling, `spelling` the table's), where a parameter leads, and whether the rest of the line
    is free text (<text>)."""

    keywords: dict[str, Node] = field(default_factory=dict)
    spelling: dict[str, str] = field(default_factory=dict)
    arg: Node | None = None
    rest: bool = False


def grammar(forms: Iterable[str]) -> Node:
    """The keywords of a view's forms as a tree, for read(). A form whose word
    mixes a keyword and a placeholder (`!<text>`) adds nothing past that word."""
    root = Node()
    for form in forms:
        node = root
        for word in form.split():
            whole = TOKEN.fullmatch(word)
            if whole is None and TOKEN.search(word):
                break
            if whole is not None and whole.group(4):
                nxt = Node()
                for alt in whole.group(4).split("|"):
                    nxt = node.keywords.setdefault(alt.lower(), nxt)
                    node.spelling[alt.lower()] = alt
                node = nxt
            elif whole is not None and whole.group(1) == "text":
                node.rest = True
                break
            elif whole is not None:
                node.arg = node.arg or Node()
                if whole.group(1) == "ints":
                    node.arg.arg = node.arg
                node = node.arg
            else:
                node.spelling[word.lower()] = word
                node = node.keywords.setdefault(word.lower(), Node())
    return root


def read(node: Node, text: str) -> str:
    """A line with each keyword in the table's spelling when it is given in another case or
    incomplete but matches exactly one keyword at its position; words past what the forms know
    stay as typed (so the line then matches no form and is refused)."""
    parts = text.split()
    for i, word in enumerate(parts):
        low = word.lower()
        nxt = node.keywords.get(low)
        if nxt is None:
            found = [k for k in node.keywords if k.startswith(low)]
            if len(found) == 1:
                nxt = node.keywords[found[0]]
                low = found[0]
        if nxt is not None:
            parts[i] = node.spelling[low]
        elif node.rest:
            break
        elif node.arg is not None:
            nxt = node.arg
        else:
            break
        node = nxt
    return " ".join(parts)
