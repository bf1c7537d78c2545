"""A structured config (plain dicts, lists and scalars) as YAML: block mappings, one line per list
item as a JSON flow value, which any YAML parser reads. Small diffs, fast to write. Also the
one-line JSON writers every emitter uses (`flow` for YAML, `compact` for JSON files, `json_rows`
for large tables)."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import yaml


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


# Ansible variable files. Ansible templates every string of a variable it reads (a `{{ lookup('pipe',
# ...) }}` in a site name would run on the controller), except what the YAML tag `!unsafe` marks:
# ansible-core docs, "Advanced playbook syntax: Unsafe or raw strings" (playbook_guide/
# playbooks_advanced_syntax.html). On a mapping or sequence the tag covers everything inside it:
# ansible-core 2.19 _internal/_yaml/_constructor.py construct_yaml_unsafe() builds the node's
# children with the trust off; 2.17/2.18 parsing/yaml/constructor.py wraps the built value with
# wrap_var(), which recurses. Every value with a string is written tagged, whatever its origin;
# only a `Template` (an expression the generator writes on purpose) stays templated.
UNSAFE = "!unsafe"


class Template(str):
    """A Jinja2 expression the generator itself writes into an Ansible variable (`{{ inventory_dir
    }}/files`): the one kind of string a variable file leaves for Ansible to template."""


def _holds_text(value: Any) -> bool:
    """A string anywhere in `value` (a non-empty mapping's keys are strings)."""
    kind = type(value)
    if kind is dict:
        return bool(value)
    if kind is list or kind is tuple:
        return any(map(_holds_text, value))
    return isinstance(value, str)


def inert(value: Any) -> str:
    """`value` as one YAML flow value of an Ansible variable: `!unsafe "..."` (or `!unsafe {...}`)
    when it holds a string, a Template's text as it is, numbers and booleans plain (the tag
    would turn a scalar into a string in ansible-core before 2.19)."""
    if type(value) is Template:
        return flow(str(value))
    return f"{UNSAFE} {flow(value)}" if _holds_text(value) else flow(value)


def variables_file(title: str, values: Mapping[str, Any]) -> bytes:
    """An Ansible variable file (host_vars/, group_vars/): a comment, then one line per key, or
    one line per item of a non-empty list, each value `inert`. The keys are the generator's."""
    lines = [f"# {title}, generated by wanka; do not edit.", "---"]
    for key, value in values.items():
        if type(value) is list and value:
            lines.append(f"{key}:")
            lines += [f"  - {inert(item)}" for item in value]
        else:
            lines.append(f"{key}: {inert(value)}")
    return ("\n".join(lines) + "\n").encode()


def _construct_unsafe(loader: yaml.SafeLoader, node: yaml.Node) -> Any:
    """What Ansible reads under `!unsafe`, as plain data (the tag only matters to Ansible)."""
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


class VariablesLoader(yaml.SafeLoader):
    """yaml.SafeLoader reading `!unsafe` as Ansible does, for what variables_file writes."""


class FastVariablesLoader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """The same on libyaml, when it is there."""


for _loader in (VariablesLoader, FastVariablesLoader):
    _loader.add_constructor(UNSAFE, _construct_unsafe)
