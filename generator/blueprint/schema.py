"""wanka-v1.schema.json written from the blueprint's records: a setting is declared once.

Each blueprint key is a field of a Struct in `generator.blueprint.spec`, declared there with
its type, its default and a msgspec `Meta` (description, bounds, pattern); this module walks
those declarations (msgspec.inspect) and writes the JSON Schema that validate() checks a
blueprint against, fill_defaults() fills it from and editors read (yaml-language-server). The
committed file is this module's output: `python -m generator.blueprint.schema --write`
rewrites it, and tests/unit/test_blueprint_schema.py fails when it is stale.

How a declaration becomes schema:
- a Struct: an object with `additionalProperties: false`; its fields in order as
  `properties`; a field without a default is `required`; a field defaulting to None is
  optional with no default (the key may be left out, never written as null); a field whose
  default is a Struct has `default: {}` (fill_defaults fills its members);
- `Meta(description=, ge=, le=, gt=, pattern=, min_length=, ...)`: `description`,
  `minimum`, `maximum`, `exclusiveMinimum`, `pattern`, `minLength`, ...;
  `Meta(extra_json_schema=...)` adds what msgspec cannot declare (`oneOf`, `uniqueItems`,
  `patternErrorMessage`: what a value failing the field's pattern should be, in words, which
  validate() prints; tests/unit/test_blueprint_schema.py wants one beside every pattern;
  `quotingAdvice`: what validate() advises when YAML read an unquoted value of a text field
  as a number, e.g. "quote ratios" for 2:1, "quote it" when a field declares none);
- `int | float`: one `number`; a union with a Literal: `oneOf` its branches; other unions of
  scalars: a list of types; a Literal: `const` or `enum`;
- `Meta(extra={"ref": name})` on a type alias, or a record in DEFS: a `$ref` to a definition
  of that name (written once under `$defs`, with the alias's own Meta);
- the catalog's records (generator.catalog, reached through `catalog`, with SCHEMA_DEFS):
  `extra={"as": Record}` on a mapping the records keep as a mapping writes the keys of the
  record it holds; `extra={"from_key": True}`: filled from the entry's key, not a YAML key;
  `extra={"fill": False}`: no schema default (the record's own applies when the model is
  read); `extra_json_schema={"default": ...}`: the default validate() fills into a
  blueprint's model where it differs from the record's.
"""

from __future__ import annotations

import argparse
import json
import sys
import typing
from pathlib import Path
from typing import Any, Literal

import msgspec
import msgspec.inspect as mi

from generator import catalog
from generator.blueprint import spec

FILE = Path(__file__).with_name("wanka-v1.schema.json")
HEAD = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$id": "urn:wanka:schema:blueprint:v1",
    "title": "wanka blueprint v1",
    "description": "One Ascend NPU training cluster: compute, zones and networks. "
    "Everything but metadata.name has a default.",
}
_BOUNDS = {
    "ge": "minimum",
    "le": "maximum",
    "gt": "exclusiveMinimum",
    "lt": "exclusiveMaximum",
    "multiple_of": "multipleOf",
}
_LENGTHS = {"min_length": "minLength", "max_length": "maxLength"}
_ITEMS = {"min_length": "minItems", "max_length": "maxItems"}
DEFS: dict[str, Any] = {**spec.DEFS, **catalog.SCHEMA_DEFS}  # name -> what `$defs` holds
DEF_OF = {v: k for k, v in DEFS.items() if isinstance(v, type)}  # records referred to
_SCALARS: dict[type, str] = {
    mi.StrType: "string",
    mi.IntType: "integer",
    mi.FloatType: "number",
    mi.BoolType: "boolean",
}


class _Writer:
    """Walks type_info nodes into schema nodes, collecting the `$defs` they refer to."""

    def __init__(self) -> None:
        self.defs: dict[str, Any] = {}
        self.written: list[Any] = []  # the Literal values of the field being written, in order

    def node(self, t: mi.Type, inline: bool = False) -> dict[str, Any]:
        """The schema of `t`; `inline`: a definition's own body, not a `$ref` to it."""
        extra: dict[str, Any] = {}
        info: dict[str, Any] = {}
        if isinstance(t, mi.Metadata):
            extra, info, t = dict(t.extra_json_schema or {}), dict(t.extra or {}), t.type
        name = info.get("ref") or (isinstance(t, mi.StructType) and DEF_OF.get(t.cls))
        if name and not inline:  # what the definition says already is not repeated
            own = mi.type_info(DEFS[name])
            own_extra = own.extra_json_schema or {} if isinstance(own, mi.Metadata) else {}
            extra = {k: v for k, v in extra.items() if own_extra.get(k, ...) != v}
            return {"$ref": self.ref(name), **extra}
        if "as" in info:  # a mapping the records keep, written as the record it holds
            return {**self.node(mi.type_info(info["as"])), **extra}
        return {**self.shape(t), **extra}

    def ref(self, name: str) -> str:
        if name not in self.defs:
            self.defs[name] = {}  # a definition that refers to itself ends here
            self.defs[name] = _described_first(self.node(mi.type_info(DEFS[name]), True))
        return f"#/$defs/{name}"

    def shape(self, t: mi.Type) -> dict[str, Any]:
        if isinstance(t, mi.StructType):
            return self.struct(t)
        if isinstance(t, mi.UnionType):
            return self.union([x for x in t.types if not isinstance(x, mi.NoneType)])
        if isinstance(t, mi.LiteralType):
            values = sorted(t.values, key=self.written.index)  # msgspec sorts them
            return {"const": values[0]} if len(values) == 1 else {"enum": values}
        if isinstance(t, mi.VarTupleType | mi.ListType):
            node = {"type": "array", "items": self.node(t.item_type)}
            return node | _limits(t, _ITEMS)
        if isinstance(t, mi.DictType):
            node = {"type": "object"}
            key, words = t.key_type, {}
            if isinstance(key, mi.Metadata):
                key, words = key.type, dict(key.extra_json_schema or {})
            if isinstance(key, mi.StrType) and key.pattern is not None:
                node["propertyNames"] = {"pattern": key.pattern, **words}
            if isinstance(key, mi.LiteralType):
                node["propertyNames"] = self.shape(key)
            return node | {"additionalProperties": self.node(t.value_type)}
        if isinstance(t, mi.AnyType):
            return {}
        if type(t) in _SCALARS:
            node = {"type": _SCALARS[type(t)]} | _limits(t, _BOUNDS) | _limits(t, _LENGTHS)
            pattern = getattr(t, "pattern", None)
            return node | ({"pattern": pattern} if pattern is not None else {})
        raise TypeError(f"no JSON Schema for {t!r}: declare it in generator/blueprint/schema.py")

    def union(self, types: list[mi.Type]) -> dict[str, Any]:
        if len(types) == 1:
            return self.node(types[0])
        kinds = {type(x) for x in types}
        if kinds == {mi.IntType, mi.FloatType}:  # a number, kept as written (30 stays 30)
            return {"type": "number"} | _limits(types[0], _BOUNDS)
        if mi.LiteralType in kinds:
            return {"oneOf": [self.node(x) for x in types]}
        return {"type": [self.shape(x)["type"] for x in types]}

    def struct(self, t: mi.StructType) -> dict[str, Any]:
        properties: dict[str, Any] = {}
        required = []
        hints = typing.get_type_hints(t.cls, include_extras=True)
        for field in t.fields:
            info = (field.type.extra or {}) if isinstance(field.type, mi.Metadata) else {}
            if info.get("from_key"):
                continue
            self.written = _literals(hints[field.name])
            member = self.node(field.type)
            if field.required:
                required.append(field.encode_name)
            elif "default" not in member and info.get("fill", True):
                member |= _default(field)
            properties[field.encode_name] = _described_first(member)
        node: dict[str, Any] = {"type": "object", "additionalProperties": False}
        node["properties"] = properties
        return node | ({"required": required} if required else {})


def _literals(hint: Any) -> list[Any]:
    """The Literal values in a type hint, in the order written."""
    if typing.get_origin(hint) is Literal:
        return list(typing.get_args(hint))
    return [v for arg in typing.get_args(hint) for v in _literals(arg)]


def _limits(t: mi.Type, names: dict[str, str]) -> dict[str, Any]:
    return {key: v for attr, key in names.items() if (v := getattr(t, attr, None)) is not None}


def _default(field: mi.Field) -> dict[str, Any]:
    """The schema default of a field: none for None (left out), {} for a record (its members
    are filled in turn), else the value as YAML would write it."""
    factory = field.default_factory
    if isinstance(factory, type) and issubclass(factory, msgspec.Struct):
        return {"default": {}}
    if factory is not msgspec.NODEFAULT:
        return {"default": _plain(factory())}
    return {} if field.default is None else {"default": _plain(field.default)}


def _plain(value: Any) -> Any:
    """A value as JSON holds it (a tuple as a list, a record as a mapping)."""
    return msgspec.json.decode(msgspec.json.encode(value))


def _described_first(node: dict[str, Any]) -> dict[str, Any]:
    """The description first, as a reader of the file looks for it."""
    first = {k: node[k] for k in ("$ref", "description") if k in node}
    return first | {k: v for k, v in node.items() if k not in first}


def blueprint_schema() -> dict[str, Any]:
    """The JSON Schema of a wanka/v1 blueprint, from spec.Blueprint's declarations."""
    writer = _Writer()
    body = writer.node(mi.type_info(spec.Blueprint))
    defs = dict(sorted(writer.defs.items()))
    return {**HEAD, **{k: v for k, v in body.items() if k != "description"}, "$defs": defs}


def schema_text() -> str:
    """The schema file's text: what `--write` writes and the test compares."""
    return json.dumps(blueprint_schema(), indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--write", action="store_true", help=f"rewrite {FILE.name}")
    args = ap.parse_args(argv)
    text = schema_text()
    if args.write:
        tmp = FILE.with_suffix(".tmp")
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(FILE)
        return 0
    if FILE.read_text(encoding="utf-8") != text:
        print(f"{FILE.name} is stale: run python -m generator.blueprint.schema --write")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
