"""files/switches/<name>.yml against the shipped JSON Schema of the switch structured config
(generator/artifacts/schemas/switch-structured-config.schema.json), as Arista AVD checks its
eos_cli_config_gen structured config: every example's every switch validates, and the schema
rejects what a broken emitter could write."""

from __future__ import annotations

import copy
import json
from functools import cache
from importlib import resources

import jsonschema
import pytest
import yaml

from tests.support.examples import EXAMPLES, generated

Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@cache
def validator() -> jsonschema.Draft202012Validator:
    node = resources.files("generator").joinpath(
        "artifacts", "schemas", "switch-structured-config.schema.json"
    )
    schema = json.loads(node.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


@cache  # read once per example: the tests here only read it (_broken changes a deep copy)
def _configs(name: str) -> dict[str, dict]:
    return {
        f.path: yaml.load(f.data, Loader=Loader)
        for f in generated(name).files
        if f.path.startswith("files/switches/") and f.path.endswith(".yml")
    }


# Validation costs seconds per hundred configs: the two smallest examples in the quick loop,
# every example (the 10,240-card one's ~650 configs included) in the slow suite.
QUICK = ("legacy-100card.yaml", "pod-128.yaml")
SIZES = [n if n in QUICK else pytest.param(n, marks=pytest.mark.slow) for n in EXAMPLES]


@pytest.mark.parametrize("name", SIZES)
def test_every_structured_config_matches_the_schema(name):
    configs = _configs(name)
    assert configs
    for path, cfg in configs.items():
        errors = [
            f"{'.'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator().iter_errors(cfg)
        ]
        assert not errors, f"{path}: {errors[:3]}"


def _broken(cfg: dict, how: str) -> dict:
    cfg = copy.deepcopy(cfg)
    if how == "clear-text password":
        cfg["management"]["users"][0]["password"] = "Admin@123"
    elif how == "missing hostname":
        del cfg["hostname"]
    elif how == "bad address":
        cfg["management"]["address"] = "10.0.0.256"
    elif how == "unknown lossless key":
        cfg["lossless"]["pfc_priority"] = 3
    elif how == "port without profile or mode":
        cfg["interfaces"].append({"name": "400GE1/0/64"})
    elif how == "bgp without asn":
        del cfg["routing"]["asn"]
    return cfg


@pytest.mark.parametrize(
    "how",
    [
        "clear-text password",
        "missing hostname",
        "bad address",
        "unknown lossless key",
        "port without profile or mode",
        "bgp without asn",
    ],
)
def test_schema_rejects_a_broken_config(how):
    leaf = _configs("pod-128.yaml")["files/switches/par-leaf-0001.yml"]
    assert validator().is_valid(leaf)
    assert leaf["routing"]["protocol"] == "bgp"
    assert not validator().is_valid(_broken(leaf, how))
