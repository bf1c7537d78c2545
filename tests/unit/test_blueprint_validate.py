"""Validating blueprints: the schema, defaults, and what the cross-field checks accept. What they
refuse, message by message, is tests/errors/ (tests/faults/test_error_goldens.py)."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from generator.blueprint.defaults import fill_defaults
from generator.blueprint.load import load_blueprint
from generator.blueprint.validate import SCHEMA, validate
from generator.catalog import build_catalog, shipped_data

HEADER = "apiVersion: wanka/v1\nkind: Cluster\nmetadata:\n  name: pod-a\n"  # lines 1-4
MINIMAL = HEADER + "compute:\n  cards: 128\n"  # compute on line 5, cards on line 6


def valid(tmp_path: Path, text: str) -> dict[str, Any]:
    path = tmp_path / "blueprint.yaml"
    path.write_text(text, encoding="utf-8")
    return validate(load_blueprint(path))


# --- the schema itself ---------------------------------------------------------------------


def test_schema_is_valid_draft_2020_12() -> None:
    Draft202012Validator.check_schema(SCHEMA)


def schema_values(schema: Any, key: str) -> Iterator[Any]:
    if isinstance(schema, dict):
        for k, v in schema.items():
            if k == key and isinstance(v, str):
                yield v
            yield from schema_values(v, key)
    elif isinstance(schema, list):
        for item in schema:
            yield from schema_values(item, key)


def test_every_schema_pattern_is_explained_in_words() -> None:
    """validate() prints the words declared beside a pattern (patternErrorMessage), never the
    pattern (tests/unit/test_blueprint_schema.py checks each pattern's node has them)."""
    patterns = set(schema_values(SCHEMA, "pattern"))
    words = set(schema_values(SCHEMA, "patternErrorMessage"))
    assert len(patterns) > 15 and len(words) == len(patterns)


@pytest.mark.parametrize(
    ("section", "definition"), [("switches", "switch_model"), ("servers", "host_model")]
)
def test_shipped_catalog_models_satisfy_the_schema(section: str, definition: str) -> None:
    validator = Draft202012Validator({"$defs": SCHEMA["$defs"], "$ref": f"#/$defs/{definition}"})
    for name, model in shipped_data()[section].items():
        assert not list(validator.iter_errors(model)), name


# --- defaults ------------------------------------------------------------------------------


def test_minimal_blueprint_validates_with_defaults_filled(tmp_path: Path) -> None:
    data = valid(tmp_path, MINIMAL)
    assert data["compute"] == {
        "cards": 128,
        "server": "atlas-800t-a2",
        "hostname": "npu-{index:04d}",
        "index_start": 1,
    }
    assert data["networks"]["parameter"]["lossless"]["priority"] == 4
    assert data["networks"]["parameter"]["lossless"]["dscp"] == 33
    assert data["metadata"]["site"] == "site-1"
    assert data["zones"]["training"]["rack"]["servers"] == 4
    assert data["zones"]["storage"]["filesystems"] == [
        {"name": "train-data", "mountpoint": "/data"}
    ]
    assert data["hccl"]["env"] == {"HCCL_CONNECT_TIMEOUT": 1200, "HCCL_EXEC_TIMEOUT": 1800}
    assert data["software"] == {"driver": "24.1.rc3", "firmware": "7.5.0.2.220", "cann": "8.0.0"}
    # the storage plane carries DPC over RoCE: it gets the same lossless defaults
    assert data["networks"]["storage"]["lossless"]["pfc"] is True


def test_given_values_win_over_defaults_and_input_is_not_changed(tmp_path: Path) -> None:
    path = tmp_path / "blueprint.yaml"
    path.write_text(MINIMAL + "networks:\n  parameter:\n    lossless: {priority: 3}\n")
    loaded = load_blueprint(path)
    before = copy.deepcopy(loaded.data)
    data = validate(loaded)
    assert data["networks"]["parameter"]["lossless"] == {
        "priority": 3,
        "dscp": 33,
        "ecn": "ai-ecn",
        "cnp_dscp": 48,
        "pfc": True,
    }  # mtu: 4200 or the NPU model's hccn_tool limit, resolved in expand (planes.lossless_of)
    assert loaded.data == before


def test_fill_defaults_follows_refs_additional_properties_and_items() -> None:
    schema = {
        "$defs": {"port": {"type": "object", "properties": {"speed": {"default": 100}}}},
        "type": "object",
        "properties": {
            "a": {"type": "object", "default": {}, "properties": {"b": {"default": 1}}},
            "ports": {"type": "array", "items": {"$ref": "#/$defs/port"}},
            "named": {"type": "object", "additionalProperties": {"$ref": "#/$defs/port"}},
            "ref": {"$ref": "#/$defs/port", "default": {}},
            "none": {"type": "object", "properties": {"x": {"default": 1}}},
        },
    }
    data = {"ports": [{}, {"speed": 400}], "named": {"p1": {}}}
    assert fill_defaults(data, schema) == {
        "a": {"b": 1},
        "ports": [{"speed": 100}, {"speed": 400}],
        "named": {"p1": {"speed": 100}},
        "ref": {"speed": 100},
    }
    assert data == {"ports": [{}, {"speed": 400}], "named": {"p1": {}}}


def test_default_values_are_copies(tmp_path: Path) -> None:
    first = valid(tmp_path, MINIMAL)
    first["zones"]["storage"]["filesystems"].append({"name": "x", "mountpoint": "/x"})
    assert len(valid(tmp_path, MINIMAL)["zones"]["storage"]["filesystems"]) == 1


# --- cross-field checks -------------------------------------------------------------------
# Refused blueprints and their messages (schema problems in words, cross-field checks, catalog
# overrides) are data: tests/errors/{schema,semantic,catalog}/ (tests/faults/test_error_goldens.py).


def test_servers_instead_of_cards(tmp_path: Path) -> None:
    assert valid(tmp_path, HEADER + "compute: {servers: 16}\n")["compute"]["servers"] == 16


def test_supernodes_from_cards(tmp_path: Path) -> None:
    text = HEADER + "compute:\n  server: atlas-900-a3-superpod-node\n  cards: 768\n"
    assert valid(tmp_path, text + "  supernode: {servers: 48}\n")["compute"]["supernode"] == {
        "servers": 48
    }


def test_long_hostnames_fit_for_every_index(tmp_path: Path) -> None:
    text = HEADER + 'compute:\n  servers: 99\n  hostname: "' + "a" * 61 + '{index}"\n'
    assert valid(tmp_path, text)["compute"]["hostname"].endswith("{index}")


def test_hccl_rdma_settings_that_match_are_accepted(tmp_path: Path) -> None:
    text = MINIMAL + (
        "networks:\n  parameter:\n    lossless: {priority: 3, dscp: 26}\n"
        'hccl:\n  env: {HCCL_RDMA_SL: 3, HCCL_RDMA_TC: "104"}\n'
    )
    assert valid(tmp_path, text)["hccl"]["env"] == {"HCCL_RDMA_SL": 3, "HCCL_RDMA_TC": "104"}


# --- catalog overrides --------------------------------------------------------------------


def test_partial_override_of_a_shipped_model_is_merged(tmp_path: Path) -> None:
    text = MINIMAL + "catalog:\n  servers:\n    atlas-800t-a2: {power_w: 6000}\n"
    model = valid(tmp_path, text)["catalog"]["servers"]["atlas-800t-a2"]
    assert model["power_w"] == 6000
    assert model["npus"] == 8  # from the shipped entry


def test_new_switch_model_can_be_used(tmp_path: Path) -> None:
    text = MINIMAL + (
        "catalog:\n  switches:\n    my-leaf:\n"
        "      height_u: 1\n"
        "      power_w: 500\n"
        "      ports: [{name: '400GE1/0/{port}', count: 64, speed: 400}]\n"
        "networks:\n  parameter:\n    leaf: {model: my-leaf}\n"
    )
    data = valid(tmp_path, text)
    assert data["catalog"]["switches"]["my-leaf"]["ports"][0]["slots"] == 1
    assert data["catalog"]["switches"]["my-leaf"]["vendor"] == "huawei"


def test_override_keeps_shipped_values_the_schema_would_default(tmp_path: Path) -> None:
    text = MINIMAL + "catalog:\n  switches:\n    ne8000-m8: {power_w: 1600}\n"
    model = valid(tmp_path, text)["catalog"]["switches"]["ne8000-m8"]
    assert (model["platform"], model["power_w"]) == ("huawei-ne", 1600)


def test_subcard_ports_are_named_slot_card_port_from_the_first_numbers(tmp_path: Path) -> None:
    """Huawei numbers ports slot/subcard/port: a 2-subcard box whose ports count from 0."""
    text = MINIMAL + (
        "catalog:\n  switches:\n    ce9860-4c-ei:\n"
        "      ports: [{name: '400GE1/{card}/{port}', cards: 2, count: 2, first_port: 0, speed: 400}]\n"
    )
    model = build_catalog(valid(tmp_path, text)["catalog"]).switches["ce9860-4c-ei"]
    assert [p.name for p in model.ports] == ["400GE1/1/0", "400GE1/1/1", "400GE1/2/0", "400GE1/2/1"]
