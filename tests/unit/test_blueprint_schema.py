"""wanka-v1.schema.json is written from the records of generator/blueprint/spec.py
(generator/blueprint/schema.py, issue #44 item 2): the committed file is the writer's output,
and each kind of declaration becomes the schema a blueprint author and validate() expect."""

from typing import Annotated, Any, Literal

import msgspec
import msgspec.inspect as mi
from msgspec import Meta

from generator.blueprint import schema, spec
from generator.blueprint.validate import SCHEMA


def test_the_committed_schema_is_written_from_the_records():
    stale = "stale: run python -m generator.blueprint.schema --write"
    assert schema.FILE.read_text(encoding="utf-8") == schema.schema_text(), stale
    assert schema.blueprint_schema() == SCHEMA  # what validate() reads


def test_the_check_sees_a_setting_added_to_a_record(monkeypatch):
    class Design(spec.Design, kw_only=True):
        max_rack_weight_kg: Annotated[int, Meta(ge=1, description="Rack weight limit")] = 1000

    class Blueprint(spec.Blueprint, kw_only=True, rename={"api_version": "apiVersion"}):
        design: Design = spec.filled(Design)

    monkeypatch.setattr(spec, "Blueprint", Blueprint)
    assert schema.schema_text() != schema.FILE.read_text(encoding="utf-8")
    added = schema.blueprint_schema()["properties"]["design"]["properties"]["max_rack_weight_kg"]
    assert added == {
        "description": "Rack weight limit",
        "type": "integer",
        "minimum": 1,
        "default": 1000,
    }


class Inner(spec.Record):
    size: Annotated[int, Meta(ge=1, le=8, description="Size")] = 2


class Sample(spec.Record, kw_only=True):
    name: Annotated[str, Meta(pattern="^[a-z]+$", min_length=2, description="Name")]
    mode: Annotated[Literal["zeta", "alpha", 3], Meta(description="Mode")] = "zeta"
    share: spec.Share = 0.5
    count: spec.SpineCount = "auto"
    pool: Annotated[spec.Cidr, Meta(description="Pool")] = "10.0.0.0/8"
    note: str | None = None
    env: dict[spec.HcclVariable, str | int] = msgspec.field(default_factory=dict)
    paths: tuple[spec.AbsolutePath, ...] = ("/a",)
    inner: Annotated[Inner, Meta(description="An object")] = spec.filled(Inner)


def _written(record: type) -> tuple[dict[str, Any], dict[str, Any]]:
    writer = schema._Writer()
    return writer.node(mi.type_info(record)), writer.defs


def test_each_kind_of_declaration_becomes_its_schema():
    node, defs = _written(Sample)
    assert node["type"] == "object" and node["additionalProperties"] is False
    assert node["required"] == ["name"]  # the one field without a default
    props = node["properties"]
    assert list(props) == [f.name for f in msgspec.structs.fields(Sample)]
    assert props["name"] == {
        "description": "Name",
        "type": "string",
        "minLength": 2,
        "pattern": "^[a-z]+$",
    }
    assert props["mode"]["enum"] == ["zeta", "alpha", 3]  # as written, not sorted
    assert props["share"] == {
        "type": "number",
        "exclusiveMinimum": 0,
        "maximum": 1,
        "default": 0.5,
    }
    assert props["count"] == {
        "description": "`auto` or a number",
        "oneOf": [{"const": "auto"}, {"type": "integer", "minimum": 1, "maximum": 4096}],
        "default": "auto",
    }
    assert props["pool"] == {"$ref": "#/$defs/cidr", "description": "Pool", "default": "10.0.0.0/8"}
    assert defs["cidr"]["type"] == "string" and defs["cidr"]["description"].startswith("IPv4")
    assert props["note"] == {"type": "string"}  # optional, never null, no default
    assert props["env"] == {
        "type": "object",
        "propertyNames": {
            "pattern": "^HCCL_[A-Z0-9_]+$",
            "patternErrorMessage": "HCCL variables are named HCCL_ and upper-case letters, "
            "digits or '_'",
        },
        "additionalProperties": {"type": ["string", "integer"]},
        "default": {},
    }
    assert props["paths"]["items"]["pattern"] == "^/[A-Za-z0-9_./-]*$"
    assert props["paths"]["default"] == ["/a"]
    assert props["inner"]["default"] == {}  # filled member by member
    assert props["inner"]["properties"]["size"]["default"] == 2


def test_a_record_in_defs_is_written_once_and_referred_to():
    node, defs = _written(spec.ParameterNetwork)
    assert node["properties"]["lossless"] == {"$ref": "#/$defs/lossless", "default": {}}
    assert defs["lossless"]["properties"]["ecn"]["enum"] == ["ai-ecn", "static", "off"]


def test_the_records_and_the_schema_bound_a_value_alike():
    """msgspec checks the same Meta the schema was written from (a record built in code)."""
    bad = {"name": "x", "share": 2}
    try:
        msgspec.convert(bad, Sample)
    except msgspec.ValidationError as err:
        assert "length >= 2" in str(err) or "<= 1" in str(err)
    else:
        raise AssertionError("a value outside the declared bounds was accepted")


def test_a_catalog_model_is_written_from_its_record():
    """generator.catalog's records declare the keys a blueprint's catalog override may give."""
    defs = schema.blueprint_schema()["$defs"]
    switch, host = defs["switch_model"], defs["host_model"]
    assert "name" not in switch["properties"]  # filled from the entry's key
    assert switch["required"] == ["height_u", "power_w", "ports"]
    assert switch["properties"]["source"]["default"] == "blueprint"  # a blueprint's model
    assert switch["properties"]["vendor"]["default"] == "huawei"  # the record's own default
    assert "default" not in switch["properties"]["boards"]  # the loader's, not filled
    assert switch["properties"]["boards"]["$ref"] == "#/$defs/parts"
    airflow = switch["properties"]["order"]["properties"]["airflow"]["properties"]
    assert list(airflow) == ["port-side-intake", "port-side-exhaust"]
    assert host["properties"]["ports"]["propertyNames"] == {
        "enum": ["npu", "storage", "business", "inband", "bmc"]
    }
    assert defs["fact"]["required"] == ["value"] and defs["fact"]["properties"]["value"] == {}


def _patterns(node: Any, path: str = "") -> list[tuple[str, dict[str, Any]]]:
    """(where, node) of every schema node with a pattern."""
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in _patterns(v, f"{path}/{i}")]
    if not isinstance(node, dict):
        return []
    found = [(path, node)] if isinstance(node.get("pattern"), str) else []
    return found + [p for k, v in node.items() for p in _patterns(v, f"{path}/{k}")]


def test_every_pattern_says_in_words_what_it_wants():
    """validate() prints a value's pattern as words (patternErrorMessage, declared in the same
    Meta as the pattern), never as a regular expression."""
    found = _patterns(schema.blueprint_schema())
    assert len(found) > 20
    assert [where for where, node in found if "patternErrorMessage" not in node] == []
    assert _patterns({"a": {"pattern": "x"}}) == [("/a", {"pattern": "x"})]
