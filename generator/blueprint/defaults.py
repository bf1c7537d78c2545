"""Fill JSON Schema `default` annotations into data: the one place blueprint defaults come from."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

Schema = Mapping[str, Any]


def resolve(schema: Schema, root: Schema) -> Schema:
    """Follow local `$ref`s (`#/$defs/...`); keywords beside a `$ref` win over the target's."""
    while "$ref" in schema:
        target: Any = root
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        schema = {**target, **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def fill_defaults(instance: Any, schema: Schema, root: Schema | None = None) -> Any:
    """A deep copy of `instance` with every missing key that has a `default` filled in.

    Walks `properties`, `additionalProperties`, `items` and local `$ref`s; a filled default is
    itself filled, so `default: {}` on an object yields its members' defaults.
    """
    root = schema if root is None else root
    schema = resolve(schema, root)
    if isinstance(instance, dict):
        return _fill_object(instance, schema, root)
    if isinstance(instance, list):
        items = schema.get("items")
        return [_fill_member(item, items, root) for item in instance]
    return copy.deepcopy(instance)


def _fill_object(instance: dict[str, Any], schema: Schema, root: Schema) -> dict[str, Any]:
    properties: Mapping[str, Schema] = schema.get("properties", {})
    others = schema.get("additionalProperties")
    out = {
        key: _fill_member(value, properties.get(key, others), root)
        for key, value in instance.items()
    }
    for key, member in properties.items():
        member = resolve(member, root)
        if key not in out and "default" in member:
            out[key] = fill_defaults(member["default"], member, root)
    return out


def _fill_member(value: Any, schema: Any, root: Schema) -> Any:
    """Fill a member whose schema may be absent or a boolean (`additionalProperties: false`)."""
    if isinstance(schema, Mapping):
        return fill_defaults(value, schema, root)
    return copy.deepcopy(value)
