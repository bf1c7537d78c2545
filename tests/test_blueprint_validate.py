"""Validating blueprints: schema problems in words, defaults, and the cross-field checks."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from generator.blueprint.defaults import fill_defaults
from generator.blueprint.load import load_blueprint
from generator.blueprint.validate import PATTERN_MEANINGS, SCHEMA, validate
from generator.catalog import build_catalog, shipped_data
from generator.errors import BlueprintError, Problem

HEADER = "apiVersion: wanka/v1\nkind: Cluster\nmetadata:\n  name: pod-a\n"  # lines 1-4
MINIMAL = HEADER + "compute:\n  cards: 128\n"  # compute on line 5, cards on line 6


def valid(tmp_path: Path, text: str) -> dict[str, Any]:
    path = tmp_path / "blueprint.yaml"
    path.write_text(text, encoding="utf-8")
    return validate(load_blueprint(path))


def problems(tmp_path: Path, text: str) -> list[Problem]:
    """The problems, after checking that the rendered error names the file on every line."""
    path = tmp_path / "blueprint.yaml"
    path.write_text(text, encoding="utf-8")
    loaded = load_blueprint(path)
    with pytest.raises(BlueprintError) as caught:
        validate(loaded)
    assert all(line.startswith(f"{path}:") for line in caught.value.render().splitlines())
    return caught.value.problems


def one(tmp_path: Path, text: str) -> Problem:
    found = problems(tmp_path, text)
    assert len(found) == 1, found
    return found[0]


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
    assert set(schema_values(SCHEMA, "pattern")) <= set(PATTERN_MEANINGS)


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


# --- schema problems in words -------------------------------------------------------------


def test_unquoted_ratio_explains_the_yaml_trap(tmp_path: Path) -> None:
    path = tmp_path / "blueprint.yaml"
    path.write_text(MINIMAL + "networks:\n  parameter:\n    oversubscription: 1:1\n")
    with pytest.raises(BlueprintError) as caught:  # refused when read, before the schema
        load_blueprint(path)
    [problem] = caught.value.problems
    assert problem.path == ("networks", "parameter", "oversubscription")
    assert problem.message.startswith("1:1 is a YAML 1.1 base-60 number (61)")
    assert 'quote it if it is text ("1:1")' in problem.hint
    assert (problem.line, problem.column) == (9, 23)


def test_unquoted_version_explains_the_yaml_trap(tmp_path: Path) -> None:
    problem = one(tmp_path, MINIMAL + "software:\n  cann: 8.10\n")
    assert problem.message == "expected a string, got the number 8.1"
    assert "YAML reads 8.10 as the number 8.1; quote versions" in problem.hint
    assert problem.line == 8


def test_quoted_number_where_a_number_belongs(tmp_path: Path) -> None:
    problem = one(tmp_path, HEADER + 'compute:\n  cards: "128"\n')
    assert problem.message == "expected a whole number, got the string '128'"
    assert "remove the quotes" in problem.hint
    assert problem.line == 6


def test_unknown_key_is_named_at_the_key_with_a_suggestion(tmp_path: Path) -> None:
    problem = one(tmp_path, HEADER + "compute:\n  cards: 128\n  severs: 16\n")
    assert problem.path == ("compute", "severs")
    assert problem.message == "unknown key 'severs'"
    assert problem.hint == "did you mean 'servers'?"
    assert (problem.line, problem.column) == (7, 3)


def test_unknown_key_without_a_close_match_lists_the_allowed_keys(tmp_path: Path) -> None:
    problem = one(tmp_path, MINIMAL + "zzz: 1\n")
    assert problem.message == "unknown key 'zzz'"
    assert "allowed keys: apiVersion, kind, metadata" in problem.hint


def test_missing_required_key(tmp_path: Path) -> None:
    problem = one(
        tmp_path, "apiVersion: wanka/v1\nkind: Cluster\nmetadata:\n  site: x\ncompute: {cards: 8}\n"
    )
    assert problem.message == "missing required key 'name'"
    assert problem.path == ("metadata",)
    assert problem.line == 3


def test_enum_lists_the_allowed_values(tmp_path: Path) -> None:
    problem = one(tmp_path, MINIMAL + "zones:\n  training: {cooling: liqud}\n")
    assert problem.message == "'liqud' is not one of 'liquid', 'air'"
    assert problem.hint == "did you mean 'liquid'?"
    assert problem.line == 8


def test_const_names_the_one_allowed_value(tmp_path: Path) -> None:
    problem = one(tmp_path, MINIMAL.replace("kind: Cluster", "kind: Clustr"))
    assert problem.message == "'Clustr' is not allowed here: it must be 'Cluster'"
    assert problem.line == 2


def test_pattern_is_explained_for_the_cluster_name(tmp_path: Path) -> None:
    problem = one(tmp_path, MINIMAL.replace("pod-a", "Pod_A"))
    assert problem.path == ("metadata", "name")
    assert "lower-case letters, digits and '-'" in problem.message
    assert "at most 63 characters" in problem.message
    assert "safe as a folder name" in problem.message


@pytest.mark.parametrize(
    ("compute", "hint"),
    [("{hostname: x}", "none is given"), ("{cards: 8, servers: 1}", "`cards` and `servers` given")],
)
def test_compute_needs_exactly_one_of_cards_or_servers(
    tmp_path: Path, compute: str, hint: str
) -> None:
    problem = one(tmp_path, HEADER + f"compute: {compute}\n")
    assert problem.message == "give exactly one of `cards` or `servers`"
    assert problem.hint == hint
    assert problem.line == 5


def test_compute_of_the_wrong_type_is_one_problem(tmp_path: Path) -> None:
    problem = one(tmp_path, HEADER + "compute: 7\n")
    assert problem.message == "expected a mapping, got the number 7"


def test_one_of_reports_the_specific_problem(tmp_path: Path) -> None:
    problem = one(tmp_path, MINIMAL + "networks:\n  storage:\n    spine: {count: 5000}\n")
    assert problem.message == "the number 5000 is above the maximum 4096"


def test_one_of_lists_the_alternatives(tmp_path: Path) -> None:
    problem = one(tmp_path, MINIMAL + "networks:\n  storage:\n    spine: {count: aut}\n")
    assert problem.message == (
        "expected 'auto' or a whole number from 1 to 4096, got the string 'aut'"
    )
    assert problem.hint == "did you mean 'auto'?"


def test_bad_key_name_is_reported_at_the_key(tmp_path: Path) -> None:
    problem = one(tmp_path, MINIMAL + "hccl:\n  env:\n    HCCL_OK: 1\n    hccl_bad: 2\n")
    assert problem.path == ("hccl", "env", "hccl_bad")
    assert problem.message.startswith("key 'hccl_bad' is not valid here: HCCL variables")
    assert (problem.line, problem.column) == (10, 5)


def test_all_schema_problems_are_reported_in_file_order(tmp_path: Path) -> None:
    text = (
        MINIMAL.replace("pod-a", "Pod")
        + "zones: {training: {cooling: wet}}\nsoftware: {cann: 8.10}\n"
    )
    found = problems(tmp_path, text)
    assert [p.path for p in found] == [
        ("metadata", "name"),
        ("zones", "training", "cooling"),
        ("software", "cann"),
    ]
    assert [p.line for p in found] == [4, 7, 8]


# --- cross-field checks -------------------------------------------------------------------


def test_unknown_model_suggests_the_closest_name(tmp_path: Path) -> None:
    problem = one(tmp_path, MINIMAL + "networks:\n  parameter:\n    leaf: {model: ce9860}\n")
    assert problem.path == ("networks", "parameter", "leaf", "model")
    assert problem.message == "unknown switch model 'ce9860'"
    assert "did you mean 'ce9860-4c-ei'?" in problem.hint
    assert "see `wanka catalog`" in problem.hint
    assert problem.line == 9


@pytest.mark.parametrize(
    ("section", "path", "message"),
    [
        (
            "compute: {server: ce16816, cards: 128}\n",
            ("compute", "server"),
            "'ce16816' is of kind switch, but this needs kind npu-server",
        ),
        (
            "compute: {cards: 128}\nzones:\n  border:\n    firewall: {model: atlas-800t-a2}\n",
            ("zones", "border", "firewall", "model"),
            "'atlas-800t-a2' is of kind npu-server, but this needs kind switch",
        ),
        (
            "compute: {cards: 128}\nzones:\n  storage:\n    nodes: {model: taishan-200-2280}\n",
            ("zones", "storage", "nodes", "model"),
            "'taishan-200-2280' is of kind management-node, but this needs kind storage-node",
        ),
        (
            "compute: {cards: 128}\nnetworks:\n  management:\n    oob: {core: {model: x1}}\n",
            ("networks", "management", "oob", "core", "model"),
            "unknown switch model 'x1'",
        ),
    ],
)
def test_models_must_be_of_the_right_kind(
    tmp_path: Path, section: str, path: tuple[str, ...], message: str
) -> None:
    problem = one(tmp_path, HEADER + section)
    assert problem.path == path
    assert problem.message == message
    assert "wanka catalog" in problem.hint


def test_cards_must_fill_whole_servers(tmp_path: Path) -> None:
    problem = one(tmp_path, HEADER + "compute:\n  cards: 130\n")
    assert problem.path == ("compute", "cards")
    assert problem.message == "130 cards is not a multiple of 8, the NPUs in one atlas-800t-a2"
    assert problem.hint == "use 128 or 136"
    assert problem.line == 6


def test_fewer_cards_than_one_server(tmp_path: Path) -> None:
    assert one(tmp_path, HEADER + "compute: {cards: 3}\n").hint == "use 8"


def test_servers_instead_of_cards(tmp_path: Path) -> None:
    assert valid(tmp_path, HEADER + "compute: {servers: 16}\n")["compute"]["servers"] == 16


def test_supernodes_must_divide_the_servers(tmp_path: Path) -> None:
    text = HEADER + "compute:\n  servers: 100\n  supernode: {servers: 48}\n"
    problem = one(tmp_path, text)
    assert problem.path == ("compute", "supernode", "servers")
    assert problem.message == "100 servers do not split evenly into supernodes of 48"
    assert problem.hint == "use supernodes of 25 or 50 servers, or 96 or 144 servers"
    assert problem.line == 7


def test_supernodes_from_cards(tmp_path: Path) -> None:
    text = HEADER + "compute:\n  server: atlas-900-a3-superpod-node\n  cards: 768\n"
    assert valid(tmp_path, text + "  supernode: {servers: 48}\n")["compute"]["supernode"] == {
        "servers": 48
    }


def test_cooling_must_suit_the_server(tmp_path: Path) -> None:
    text = (
        HEADER
        + "compute: {server: atlas-800-9000, cards: 64}\nzones:\n  training: {cooling: liquid}\n"
    )
    problem = one(tmp_path, text)
    assert problem.path == ("zones", "training", "cooling")
    assert problem.message == "atlas-800-9000 does not support liquid cooling (it supports air)"
    assert problem.hint == "set zones.training.cooling: air"
    assert problem.line == 7


def test_default_cooling_is_checked_too(tmp_path: Path) -> None:
    problem = one(tmp_path, HEADER + "compute: {server: atlas-800-9000, cards: 64}\n")
    assert problem.path == ("zones", "training", "cooling")
    assert problem.line == 1  # not written: reported at the nearest written ancestor, the top


def test_overlapping_pools_name_both(tmp_path: Path) -> None:
    text = MINIMAL + "networks:\n  storage: {pool: 10.64.128.0/17}\n"
    problem = one(tmp_path, text)
    assert problem.path == ("networks", "storage", "pool")
    assert problem.message == "10.64.128.0/17 overlaps networks.parameter.pool 10.64.0.0/12"
    assert problem.line == 8


def test_pool_with_host_bits_suggests_the_network(tmp_path: Path) -> None:
    problem = one(tmp_path, MINIMAL + "networks:\n  parameter: {pool: 10.64.0.1/12}\n")
    assert problem.message == "10.64.0.1/12 has host bits set"
    assert problem.hint == "did you mean 10.64.0.0/12?"
    assert problem.line == 8


def test_pool_with_impossible_octets(tmp_path: Path) -> None:
    problem = one(tmp_path, MINIMAL + "networks:\n  business: {pool: 10.300.0.0/16}\n")
    assert problem.message == "10.300.0.0/16 is not a valid IPv4 network"


def test_all_pools_are_checked(tmp_path: Path) -> None:
    text = MINIMAL + (
        "networks:\n"
        "  management:\n"
        "    inband: {pool: 10.101.0.1/16}\n"
        "    oob: {pool: 10.100.1.0/24}\n"
    )
    found = problems(tmp_path, text)
    assert [p.path[-2] for p in found] == ["inband", "oob"]
    assert found[0].message == "10.101.0.1/16 has host bits set"
    assert found[1].message == "10.100.1.0/24 overlaps networks.business.pool 10.100.0.0/16"


@pytest.mark.parametrize(
    ("hostname", "count", "message"),
    [
        ("npu", 2, "'npu' gives every server the same name 'npu'"),
        ("npu.{index}", 2, "'npu.{index}' gives 'npu.1' for index 1, which is not a DNS label"),
        ("npu-{rack}", 2, "'npu-{rack}' uses an unknown placeholder {rack}"),
        ("npu-{index:q}", 2, "'npu-{index:q}' cannot be expanded"),
        ("{index}-", 2, "'{index}-' gives '1-' for index 1, which is not a DNS label"),
        ("a" * 61 + "{index}", 100, "for index 100, which is not a DNS label"),
        ("npu-{index:0999999999d}", 2, "the format spec '0999999999d' is not supported"),
        ("npu-{index:{index}}", 2, "the format spec '{index}' is not supported"),
    ],
)
def test_hostnames_are_distinct_dns_labels(
    tmp_path: Path, hostname: str, count: int, message: str
) -> None:
    problem = one(tmp_path, HEADER + f'compute:\n  servers: {count}\n  hostname: "{hostname}"\n')
    assert problem.path == ("compute", "hostname")
    assert message in problem.message
    assert problem.line == 7


def test_long_hostnames_fit_for_every_index(tmp_path: Path) -> None:
    text = HEADER + 'compute:\n  servers: 99\n  hostname: "' + "a" * 61 + '{index}"\n'
    assert valid(tmp_path, text)["compute"]["hostname"].endswith("{index}")


@pytest.mark.parametrize(
    ("env", "name", "message"),
    [
        (
            "HCCL_RDMA_SL: 3",
            "HCCL_RDMA_SL",
            "HCCL_RDMA_SL is 3 but must be 4, the lossless priority 4",
        ),
        ("HCCL_RDMA_TC: 128", "HCCL_RDMA_TC", "HCCL_RDMA_TC is 128 but must be 132"),
        ('HCCL_RDMA_TC: "x"', "HCCL_RDMA_TC", "HCCL_RDMA_TC is x but must be 132"),
    ],
)
def test_hccl_rdma_settings_follow_the_lossless_class(
    tmp_path: Path, env: str, name: str, message: str
) -> None:
    problem = one(tmp_path, MINIMAL + f"hccl:\n  env:\n    {env}\n")
    assert problem.path == ("hccl", "env", name)
    assert problem.message.startswith(message)
    assert "one lossless class" in problem.hint
    assert problem.line == 9


def test_hccl_rdma_settings_that_match_are_accepted(tmp_path: Path) -> None:
    text = MINIMAL + (
        "networks:\n  parameter:\n    lossless: {priority: 3, dscp: 26}\n"
        'hccl:\n  env: {HCCL_RDMA_SL: 3, HCCL_RDMA_TC: "104"}\n'
    )
    assert valid(tmp_path, text)["hccl"]["env"] == {"HCCL_RDMA_SL": 3, "HCCL_RDMA_TC": "104"}


def test_all_cross_field_problems_are_reported(tmp_path: Path) -> None:
    text = HEADER + (
        "compute: {cards: 130}\n"
        "networks:\n"
        "  parameter: {leaf: {model: nope}}\n"
        "  business: {pool: 10.64.0.0/16}\n"
    )
    assert [p.line for p in problems(tmp_path, text)] == [5, 7, 8]


# --- catalog overrides --------------------------------------------------------------------


def test_partial_override_of_a_shipped_model_is_merged(tmp_path: Path) -> None:
    text = MINIMAL + "catalog:\n  servers:\n    atlas-800t-a2: {power_w: 6000}\n"
    model = valid(tmp_path, text)["catalog"]["servers"]["atlas-800t-a2"]
    assert model["power_w"] == 6000
    assert model["npus"] == 8  # from the shipped entry


def test_override_that_breaks_a_model_is_reported_at_its_path(tmp_path: Path) -> None:
    text = MINIMAL + "catalog:\n  servers:\n    atlas-800t-a2:\n      npus: 100\n"
    problem = one(tmp_path, text)
    assert problem.path == ("catalog", "servers", "atlas-800t-a2", "npus")
    assert problem.message == "the number 100 is above the maximum 64"
    assert problem.line == 10


def test_new_model_must_be_complete(tmp_path: Path) -> None:
    text = MINIMAL + "catalog:\n  switches:\n    my-leaf: {height_u: 1}\n"
    found = problems(tmp_path, text)
    assert {p.message for p in found} == {
        "missing required key 'power_w'",
        "missing required key 'ports'",
    }
    assert {p.line for p in found} == {9}


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


def test_port_name_that_cannot_expand_is_reported(tmp_path: Path) -> None:
    text = MINIMAL + (
        "catalog:\n  switches:\n    ce16816:\n"
        "      ports: [{name: '400GE{slot}/{lane}/{port}', count: 36, speed: 400}]\n"
    )
    problem = one(tmp_path, text)
    assert problem.path == ("catalog", "switches", "ce16816", "ports", 0, "name")
    assert "an interface name is letters, digits and '/:._-' with {port}" in problem.message
    assert problem.line == 10


def test_subcard_ports_are_named_slot_card_port_from_the_first_numbers(tmp_path: Path) -> None:
    """Huawei numbers ports slot/subcard/port: a 2-subcard box whose ports count from 0."""
    text = MINIMAL + (
        "catalog:\n  switches:\n    ce9860-4c-ei:\n"
        "      ports: [{name: '400GE1/{card}/{port}', cards: 2, count: 2, first_port: 0, speed: 400}]\n"
    )
    model = build_catalog(valid(tmp_path, text)["catalog"]).switches["ce9860-4c-ei"]
    assert [p.name for p in model.ports] == ["400GE1/1/0", "400GE1/1/1", "400GE1/2/0", "400GE1/2/1"]


def test_ports_that_would_share_a_name_are_reported(tmp_path: Path) -> None:
    text = MINIMAL + (
        "catalog:\n  switches:\n    ce9860-4c-ei:\n"
        "      ports: [{name: '400GE1/0/{port}', cards: 4, count: 8, speed: 400}]\n"
    )
    problem = one(tmp_path, text)
    assert problem.path == ("catalog", "switches", "ce9860-4c-ei", "ports", 0, "name")
    assert problem.message == "port 400GE1/0/1 is named twice" and "{card}" in problem.hint


def test_override_that_changes_the_kind_is_caught_where_the_model_is_used(tmp_path: Path) -> None:
    text = MINIMAL + "catalog:\n  servers:\n    atlas-800t-a2: {kind: storage-node}\n"
    problem = one(tmp_path, text)
    assert problem.path == ("compute", "server")
    assert "storage-node" in problem.message
