"""Validate a loaded blueprint: JSON Schema, then cross-field checks; return it with defaults.

Every problem found is reported at once, each at the YAML path (and so the line) it concerns.
Schema problems come first: when the shape is wrong the cross-field checks in
`generator.blueprint.semantic` would only guess, so they run once the schema is satisfied.

Catalog entries in the blueprint are merged over the shipped models of the same name (as
`generator.catalog.merged_data` does) *before* validation, so a partial override such as
`catalog.servers.atlas-800t-a2: {power_w: 6000}` is valid, and an override that breaks a model is
reported at the override's path. The returned data holds the merged entries.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError, best_match

from generator.blueprint.defaults import Schema, fill_defaults, resolve
from generator.blueprint.load import LoadedBlueprint
from generator.blueprint.semantic import semantic_problems
from generator.blueprint.text import string_problems
from generator.catalog import merged_data
from generator.errors import BlueprintError, Problem, YamlPath

SCHEMA: dict[str, Any] = json.loads(
    resources.files(__package__).joinpath("wanka-v1.schema.json").read_text(encoding="utf-8")
)

CATALOG_SECTIONS = ("switches", "servers")  # the blueprint's catalog: sections merged_data knows

_BOUNDS: Mapping[str, str] = {
    "minimum": "{subject} is below the minimum {limit}",
    "maximum": "{subject} is above the maximum {limit}",
    "exclusiveMinimum": "{subject} must be more than {limit}",
    "exclusiveMaximum": "{subject} must be less than {limit}",
    "minLength": "{subject} is too short: at least {limit} characters",
    "maxLength": "{subject} is too long: at most {limit} characters",
    "minItems": "needs at least {limit} item(s)",
    "maxItems": "allows at most {limit} item(s)",
}
_TYPE_WORDS: Mapping[str, str] = {
    "string": "a string",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "object": "a mapping",
    "array": "a list",
    "null": "null",
}


def validate(loaded: LoadedBlueprint) -> dict[str, Any]:
    """The blueprint's data with every schema default filled in, or BlueprintError listing
    every problem, each located in the file."""
    data = with_merged_catalog(loaded.data)
    problems = string_problems(loaded.data) + schema_problems(data, loaded.plain_scalars)
    if version := [p for p in problems if p.path[:1] == ("apiVersion",)]:
        problems = version  # another version's document: the rest is read against v1's schema
    if not problems:
        data = fill_defaults(data, SCHEMA)
        problems = semantic_problems(data)
    if problems:
        raise _located(problems, loaded)
    return data


def with_merged_catalog(data: Mapping[str, Any]) -> dict[str, Any]:
    """`data` with each `catalog.<section>.<model>` mapping replaced by the whole model it makes
    when merged over the shipped one; anything malformed is left for the schema to report."""
    section = data.get("catalog")
    if not isinstance(section, dict):
        return dict(data)
    overrides = {
        kind: {name: entry for name, entry in models.items() if isinstance(entry, dict)}
        for kind, models in section.items()
        if kind in CATALOG_SECTIONS and isinstance(models, dict)
    }
    merged = merged_data(overrides)
    catalog = dict(section)
    for kind, models in overrides.items():
        catalog[kind] = {
            name: merged[kind][name] if name in models else entry
            for name, entry in section[kind].items()
        }
    return {**data, "catalog": catalog}


def schema_problems(data: Any, plain_scalars: Mapping[YamlPath, str]) -> list[Problem]:
    """Every JSON Schema violation, in words."""
    return [
        problem
        for error in _validator().iter_errors(data)
        for problem in _describe(error, plain_scalars)
    ]


def _is_integer(_checker: Any, instance: Any) -> bool:
    """JSON Schema counts 100.0 as an integer; a blueprint does not (`vlan: 100.0` would be
    rendered as `interface Vlanif100.0`), nor true/false."""
    return isinstance(instance, int) and not isinstance(instance, bool)


_StrictValidator = validators.extend(
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine("integer", _is_integer),
)


@cache
def _validator() -> Draft202012Validator:
    return _StrictValidator(SCHEMA)


def _located(problems: Sequence[Problem], loaded: LoadedBlueprint) -> BlueprintError:
    unique = list(dict.fromkeys(problems))
    located = BlueprintError(unique).locate(loaded.file, loaded.positions).problems
    located.sort(key=lambda p: (p.line or 0, p.column or 0))
    return BlueprintError(located, loaded.file)


def _describe(error: ValidationError, plain_scalars: Mapping[YamlPath, str]) -> list[Problem]:
    """One schema error as problems a person can act on."""
    path: YamlPath = tuple(error.absolute_path)
    value = error.instance
    schema = error.schema if isinstance(error.schema, Mapping) else {}
    kind = error.validator
    if kind == "additionalProperties":
        return _unknown_keys(path, value, schema)
    if kind == "required":
        return _missing_keys(path, value, schema)
    if kind in ("oneOf", "anyOf"):
        return _choice(error, plain_scalars)
    subject = repr(value) if isinstance(value, str) else _got(value)
    if _names_a_key(error):
        path, subject = (*path, value), f"key {value!r}"
    if kind == "type":
        return [_wrong_type(path, value, schema, plain_scalars)]
    if kind in ("enum", "const"):
        allowed = list(error.validator_value) if kind == "enum" else [error.validator_value]
        return [_not_allowed(path, subject, value, allowed)]
    if kind == "pattern":
        meaning = schema.get("patternErrorMessage")  # declared beside the pattern (spec.py)
        meaning = meaning or f"it must match the pattern {error.validator_value}"
        return [Problem(path, f"{subject} is not valid here: {meaning}")]
    return [Problem(path, _out_of_bounds(kind, subject, error.validator_value, error.message))]


def _names_a_key(error: ValidationError) -> bool:
    """Errors from `propertyNames` are about a mapping key, which is the error's instance."""
    schema_path = error.absolute_schema_path
    return len(schema_path) >= 2 and schema_path[-2] == "propertyNames"


def _unknown_keys(path: YamlPath, value: Mapping[str, Any], schema: Schema) -> list[Problem]:
    allowed = list(schema.get("properties", {}))
    return [
        Problem((*path, key), f"unknown key '{key}'", _suggest(key, allowed, "allowed keys"))
        for key in value
        if key not in allowed
    ]


def _missing_keys(path: YamlPath, value: Mapping[str, Any], schema: Schema) -> list[Problem]:
    properties = schema.get("properties", {})
    return [
        Problem(path, f"missing required key '{key}'", _description(properties.get(key)))
        for key in schema.get("required", ())
        if key not in value
    ]


def _description(schema: Any) -> str:
    return schema.get("description", "") if isinstance(schema, Mapping) else ""


def _choice(error: ValidationError, plain_scalars: Mapping[YamlPath, str]) -> list[Problem]:
    """oneOf/anyOf: "exactly one of these keys", else the most specific sub-error, else the
    alternatives in words."""
    path: YamlPath = tuple(error.absolute_path)
    branches = [b for b in error.validator_value if isinstance(b, Mapping)]
    if branches and all(set(b) == {"required"} for b in branches):
        if not isinstance(error.instance, Mapping):
            return []  # `required` holds for anything else; the type error says what is wrong
        names = [key for b in branches for key in b["required"]]
        given = [key for key in names if key in error.instance]
        hint = "none is given" if not given else " and ".join(f"`{k}`" for k in given) + " given"
        return [Problem(path, "give exactly one of " + " or ".join(f"`{k}`" for k in names), hint)]
    best = best_match([error])
    if best is not error:
        return _describe(best, plain_scalars)
    alternatives = [resolve(b, SCHEMA) for b in branches]
    expected = " or ".join(_alternative(b) for b in alternatives)
    allowed = [b["const"] for b in alternatives if "const" in b]
    message = f"expected {expected}, got {_got(error.instance)}"
    return [Problem(path, message, _suggest(error.instance, allowed))]


def _alternative(schema: Schema) -> str:
    """One oneOf/anyOf branch in words: `'auto'`, `a whole number from 1 to 4096`."""
    if "const" in schema:
        return _show(schema["const"])
    if "enum" in schema:
        return " or ".join(_show(v) for v in schema["enum"])
    words = _type_words(schema.get("type"))
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None:
        return f"{words} from {low} to {high}"
    return words or "a different value"


def _wrong_type(
    path: YamlPath, value: Any, schema: Schema, plain_scalars: Mapping[YamlPath, str]
) -> Problem:
    expected = _types(schema.get("type"))
    message = f"expected {_type_words(expected)}, got {_got(value)}"
    written = plain_scalars.get(path)
    if "string" in expected and written is not None:
        advice = schema.get("quotingAdvice", "quote it")  # declared beside the pattern (spec.py)
        return Problem(
            path, message, f'YAML reads {written} as {_got(value)}; {advice}: write "{written}"'
        )
    if isinstance(value, str) and {"integer", "number"} & set(expected) and _is_number(value):
        return Problem(path, message, f"remove the quotes: {value}")
    if isinstance(value, float) and "integer" in expected and value.is_integer():
        return Problem(path, message, f"write {int(value)}, without a decimal point")
    return Problem(path, message)


def _not_allowed(path: YamlPath, subject: str, value: Any, allowed: list[Any]) -> Problem:
    if len(allowed) == 1:
        return Problem(path, f"{subject} is not allowed here: it must be {_show(allowed[0])}")
    choices = ", ".join(_show(v) for v in allowed)
    return Problem(path, f"{subject} is not one of {choices}", _suggest(value, allowed))


def _out_of_bounds(kind: str, subject: str, limit: Any, fallback: str) -> str:
    template = _BOUNDS.get(kind)
    return template.format(subject=subject, limit=limit) if template else fallback


def _suggest(word: Any, choices: Iterable[Any], listing: str = "") -> str:
    """`did you mean 'x'?` for a misspelt string, else (when `listing` names them) the choices."""
    names = [c for c in choices if isinstance(c, str)]
    close = difflib.get_close_matches(word, names, n=1) if isinstance(word, str) else []
    if close:
        return f"did you mean '{close[0]}'?"
    return f"{listing}: {', '.join(names)}" if listing and names else ""


def _types(expected: Any) -> list[str]:
    """A schema `type` (one name or a list) as a list."""
    return [expected] if isinstance(expected, str) else list(expected or ())


def _type_words(expected: Any) -> str:
    return " or ".join(_TYPE_WORDS.get(t, t) for t in _types(expected))


def _show(value: Any) -> str:
    """A value as the user would write it in YAML."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    return repr(value)


def _got(value: Any) -> str:
    if isinstance(value, bool) or value is None:
        return _show(value)
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        return f"the string {value!r}"
    return "a mapping" if isinstance(value, Mapping) else "a list"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
