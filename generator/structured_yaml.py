"""A structured config (plain dicts, lists and scalars) as YAML: block mappings, one line per list
item as a JSON flow value, which any YAML parser reads. Small diffs, fast to write. Also the JSON
writers every emitter uses: `line` (one line, for YAML flow values and JSON files), `indented`
(json.dumps(indent=2) layout)."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

import msgspec
import orjson
import yaml

_OPTIONS = orjson.OPT_NON_STR_KEYS  # keys as json.dumps writes them ({1: x} -> {"1": x})
# what YAML 1.1 (PyYAML, libyaml: Ansible) reads as a line break (U+0085, U+2028, U+2029) or
# refuses unescaped (DEL, C1 controls, U+FEFF, U+FFFE, U+FFFF), written as \\uXXXX, which JSON
# and YAML double-quoted strings read alike
_ESCAPE = re.compile("[\x7f-\x9f\u2028\u2029\ufeff\ufffe\uffff]")


def _escaped(match: re.Match[str]) -> str:
    return f"\\u{ord(match[0]):04x}"


def _text(value: Any) -> str:
    """A str subclass the encoder does not know (a Template) as its text."""
    if isinstance(value, str):
        return str(value)
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


# msgspec's JSON encoder (jcristharif.com/msgspec/api.html, msgspec.json.Encoder): compact, UTF-8,
# int keys written as strings, StrEnum members as their values in C (orjson reads an Enum's
# `value` through its Python property: 1 us a list of 10 planes against 0.15)
_ENCODER = msgspec.json.Encoder(enc_hook=_text)
_REFUSED = (TypeError, ValueError, UnicodeEncodeError)  # 65-bit integers, bool keys, surrogates


def line(value: Any) -> str:
    """`value` as one line of compact JSON (`{"a":1,"b":[2,3]}`, UTF-8), which YAML also reads
    as a flow value; a msgspec Struct as the object of its fields. What the encoder refuses (an
    integer past 64 bits, a bool or None key, a lone surrogate) is written by the json module,
    `\\u`-escaped."""
    try:
        text = _ENCODER.encode(value).decode()
    except _REFUSED:
        return json.dumps(msgspec.to_builtins(value, enc_hook=_text), separators=(",", ":"))
    return _ESCAPE.sub(_escaped, text) if _ESCAPE.search(text) else text


def indented(value: Any) -> str:
    """`value` in json.dumps(value, indent=2)'s layout, strings as `line` writes them."""
    try:
        text = orjson.dumps(value, option=_OPTIONS | orjson.OPT_INDENT_2).decode()
    except orjson.JSONEncodeError:
        return json.dumps(value, indent=2)
    return _ESCAPE.sub(_escaped, text) if _ESCAPE.search(text) else text


def to_yaml(data: Mapping[str, Any], indent: str = "") -> str:
    """Block mappings, one line per list item: small diffs, and any YAML parser reads it."""
    lines = []
    for key, value in data.items():
        if type(value) is dict and value:
            lines.append(f"{indent}{key}:\n{to_yaml(value, indent + '  ')}")
        elif type(value) is list and value:
            lines += [f"{indent}{key}:", *(f"{indent}  - {line(v)}" for v in value)]
        else:
            lines.append(f"{indent}{key}: {line(value)}")
    return "\n".join(lines) + ("\n" if not indent else "")


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
        return line(str(value))
    return f"{UNSAFE} {line(value)}" if _holds_text(value) else line(value)


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
