"""The validated blueprint as typed records (generator/blueprint/spec.py, issue #33 item 7).

The records hold what validate() filled in (the schema is written from them:
tests/unit/test_blueprint_schema.py) and are what generator/expand reads: no blueprint section
is read there by a string key any more.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import msgspec
import pytest

from generator.blueprint.load import load_blueprint, load_text
from generator.blueprint.spec import blueprint_spec
from generator.blueprint.validate import SCHEMA, validate

ROOT = Path(__file__).resolve().parents[2]
BLUEPRINTS = sorted((ROOT / "blueprints").glob("*.yaml"))
TOP = set(SCHEMA["properties"])  # metadata, compute, zones, networks, ...


def _without_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_none(v) for k, v in value.items() if v is not None}
    if isinstance(value, list | tuple):
        return [_without_none(v) for v in value]
    return value


@pytest.mark.parametrize("path", BLUEPRINTS, ids=lambda p: p.stem)
def test_the_records_hold_what_validate_filled(path):
    data = validate(load_blueprint(path))
    typed = blueprint_spec(data)
    assert _without_none(msgspec.to_builtins(typed)) == data


def test_written_values_are_typed_and_unwritten_optional_ones_none():
    typed = blueprint_spec(
        validate(
            load_text(
                "apiVersion: wanka/v1\nkind: Cluster\nmetadata: {name: t}\n"
                "compute: {servers: 4}\nnetworks: {parameter: {spine: {count: 2}}}\n",
                "t.yaml",
            )
        )
    )
    assert typed.compute.servers == 4 and typed.compute.cards is None
    assert typed.networks.parameter.spine.count == 2
    assert typed.networks.storage.spine.count == "auto"  # the schema's default
    assert typed.zones.training.rack.power_kw == 30 and typed.zones.border.nat is None
    assert typed.growth is None and typed.hccl.parallelism is None


def test_a_key_the_records_lack_is_refused():
    data = validate(load_blueprint(BLUEPRINTS[0]))
    with pytest.raises(msgspec.ValidationError, match="unknown field `spares`"):
        blueprint_spec({**data, "compute": {**data["compute"], "spares": 2}})


def _string_key_reads(source: str) -> list[tuple[int, str]]:
    """(line, key) of every `x["<section>"]` and `x.get("<section>")` with a blueprint
    top-level section as the key."""
    found = []
    for n in ast.walk(ast.parse(source)):
        key = None
        if isinstance(n, ast.Subscript) and isinstance(n.slice, ast.Constant):
            key = n.slice.value
        elif (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr == "get"
            and n.args
            and isinstance(n.args[0], ast.Constant)
        ):
            key = n.args[0].value
        if isinstance(key, str) and key in TOP:
            found.append((n.lineno, key))
    return found


def test_the_check_finds_a_dict_read():
    found = _string_key_reads('n = bp["compute"]["cards"]\ns = bp.get("scheduler", {})')
    assert sorted(found) == [(1, "compute"), (2, "scheduler")]


def test_expand_reads_no_blueprint_section_by_string_key():
    found = [
        f"{path.relative_to(ROOT)}:{line}: [{key!r}]"
        for path in sorted((ROOT / "generator" / "expand").glob("*.py"))
        for line, key in _string_key_reads(path.read_text())
    ]
    assert found == []


def test_every_blueprint_parameter_of_expand_is_typed():
    """A `bp` parameter anywhere in generator/expand (and the growth cost, which expands again)
    is annotated Blueprint, not a mapping."""
    files = [*(ROOT / "generator" / "expand").glob("*.py")]
    files.append(ROOT / "generator" / "analysis" / "growth_cost.py")
    untyped = [
        f"{path.name}:{a.lineno}: {ast.unparse(a.annotation) if a.annotation else 'untyped'}"
        for path in sorted(files)
        for n in ast.walk(ast.parse(path.read_text()))
        if isinstance(n, ast.FunctionDef)
        for a in n.args.args + n.args.kwonlyargs
        if a.arg == "bp" and (a.annotation is None or ast.unparse(a.annotation) != "Blueprint")
    ]
    assert untyped == []
