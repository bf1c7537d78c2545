"""A structured config (plain dicts, lists and scalars) as YAML: block mappings, one line per list
item as a JSON flow value, which any YAML parser reads. Small diffs, fast to write."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any


def _json_line() -> Callable[[Any], str]:
    """A value on one line as JSON, which YAML reads as a flow scalar, sequence or mapping.

    The C encoder is built once and reused (json.dumps builds a new one per call, which costs
    more than encoding one port); the pure-Python encoder is the fallback."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return json.JSONEncoder(separators=(", ", ": ")).encode
    encoder = make(
        None, None, json.encoder.encode_basestring_ascii, None, ": ", ", ", False, False, True
    )
    return lambda value: "".join(encoder(value, 0))


_flow = _json_line()


def to_yaml(data: Mapping[str, Any], indent: str = "") -> str:
    """Block mappings, one line per list item: small diffs, and any YAML parser reads it."""
    lines = []
    for key, value in data.items():
        if type(value) is dict and value:
            lines.append(f"{indent}{key}:\n{to_yaml(value, indent + '  ')}")
        elif type(value) is list and value:
            item = f"\n{indent}  - "
            lines.append(f"{indent}{key}:{item}{item.join(map(_flow, value))}")
        else:
            lines.append(f"{indent}{key}: {_flow(value)}")
    return "\n".join(lines) + ("\n" if not indent else "")
