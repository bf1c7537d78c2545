"""Filter for the site_check role: which required site variables are still empty."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _set(value: Any) -> bool:
    """A value is set when it is not None, "", an empty list or mapping; a mapping whose every
    value is unset (an identity {esn: ""}) is not."""
    if isinstance(value, Mapping):
        return any(_set(v) for v in value.values())
    if isinstance(value, str):
        return bool(value.strip())
    return value is not None and value != []


def wanka_site_missing(required: list[str], values: Mapping[str, Any]) -> list[str]:
    """The entries of `required` (a variable name, or name.key.key into its mappings) whose value
    is undefined or unset, in the order given; `values` holds each variable by name."""
    missing = []
    for path in required:
        name, *keys = str(path).split(".")
        value = values.get(name)
        for key in keys:
            value = value.get(key) if isinstance(value, Mapping) else None
        if not _set(value):
            missing.append(str(path))
    return missing


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {"wanka_site_missing": wanka_site_missing}
