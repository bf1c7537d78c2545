"""A structured config (plain dicts, lists and scalars) as YAML: block mappings, one line per list
item as a JSON flow value, which any YAML parser reads. Small diffs, fast to write. Also the
one-line JSON writers every emitter uses (`flow` for YAML, `compact` for JSON files, `json_rows`
for large tables)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any


def json_line(item_separator: str = ", ", key_separator: str = ": ") -> Callable[[Any], str]:
    """A function writing a value on one line as JSON (ASCII), which YAML reads as a flow scalar,
    sequence or mapping: what json.dumps(value, separators=...) returns, faster.

    The C encoder is built once and reused (json.dumps builds a new one per call, which costs
    more than encoding one port); the pure-Python encoder is the fallback."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return json.JSONEncoder(separators=(item_separator, key_separator)).encode
    encoder = make(
        None,
        None,
        json.encoder.encode_basestring_ascii,
        None,
        key_separator,
        item_separator,
        False,
        False,
        True,
    )
    return lambda value: "".join(encoder(value, 0))


flow = json_line()  # {"a": 1, "b": [2, 3]}: YAML flow style, readable
compact = json_line(",", ":")  # {"a":1,"b":[2,3]}: machine-read JSON
quote = json.encoder.encode_basestring_ascii  # one string as both write it: "a\"b"


# what JSON (ASCII) writes inside a string unescaped (but the quote and backslash), and a line break
_PLAIN = bytes(range(0x20, 0x7F)) + b"\n"


def json_rows(rows: Sequence[tuple], form: str, encode: Callable[[tuple], str], sep: str) -> str:
    """`sep`.join(encode(row) for row in rows), made as `form % row` for each row: `form` is the
    row's JSON with its strings' quotes in place and `%s` for each value (unquoted ones take
    integers). That is a third of the encoder's instructions (callgrind), and the same JSON
    while no string needs an escape: the text is made by `encode` instead when it shows one
    would (more quotes than the forms', a backslash, a control or non-ASCII character, a line
    break more than the separators')."""
    text = sep.join([form % row for row in rows])
    n = len(rows)
    if (
        text.count('"') == n * form.count('"')
        and text.count("\n") == max(n - 1, 0) * sep.count("\n")
        and "\\" not in text
        and not text.encode().translate(None, _PLAIN)
    ):
        return text
    return sep.join(map(encode, rows))


def to_yaml(data: Mapping[str, Any], indent: str = "") -> str:
    """Block mappings, one line per list item: small diffs, and any YAML parser reads it."""
    lines = []
    for key, value in data.items():
        if type(value) is dict and value:
            lines.append(f"{indent}{key}:\n{to_yaml(value, indent + '  ')}")
        elif type(value) is list and value:
            item = f"\n{indent}  - "
            lines.append(f"{indent}{key}:{item}{_items(value, item)}")
        else:
            lines.append(f"{indent}{key}: {flow(value)}")
    return "\n".join(lines) + ("\n" if not indent else "")


def _items(value: list, item: str) -> str:
    """`item`.join(flow(v) for v in value), for a list of dicts written as one JSON array: the
    C encoder runs once instead of once per item (a switch has hundreds of ports). The items
    are then cut where one dict ends and the next begins: every item boundary is a `}, {`,
    and when the text holds no other (none inside a string, no nested list of dicts) those
    are exactly the boundaries."""
    if all(type(v) is dict for v in value):
        text = flow(value)[1:-1]
        if text.count("}, {") == len(value) - 1:
            return text.replace("}, {", "}" + item + "{")
    return item.join(map(flow, value))


def indented(value: Any, indent: str = "  ") -> str:
    """What json.dumps(value, indent=len(indent)) writes (ASCII, `,` ending lines, `: ` after
    keys), for dicts with string keys, lists, tuples and scalars: twice as fast, because
    json.dumps with an indent runs its pure-Python encoder; here scalars go through the C one."""
    out: list[str] = []
    add = out.append

    def walk(v: Any, pad: str) -> None:
        kind = type(v)
        if kind is dict:
            if not v:
                add("{}")
                return
            inner = pad + indent
            sep = "{" + inner
            for k, x in v.items():
                if type(k) is not str:
                    raise TypeError(f"indented() takes string keys only, not {k!r}")
                add(sep + quote(k) + ": ")
                walk(x, inner)
                sep = "," + inner
            add(pad + "}")
        elif kind is list or kind is tuple:
            if not v:
                add("[]")
                return
            inner = pad + indent
            sep = "[" + inner
            for x in v:
                add(sep)
                walk(x, inner)
                sep = "," + inner
            add(pad + "]")
        elif kind is str:
            add(quote(v))
        else:
            add(compact(v))

    walk(value, "\n")
    return "".join(out)
