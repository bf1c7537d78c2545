"""generator/catalog: the shipped YAML and a blueprint's overrides read through one typed loader
(msgspec records, #44 item 2), whose fields are the keys the blueprint schema allows."""

from __future__ import annotations

import json

import msgspec
import pytest

from generator.catalog import HostModel, HostPorts, PortGroup, SwitchModel, build_catalog
from tests.support.examples import ROOT

SCHEMA = json.loads((ROOT / "generator/blueprint/wanka-v1.schema.json").read_text())["$defs"]


def _keys(record: type[msgspec.Struct]) -> set[str]:
    """The keys the record reads, without the one its entry's key fills (a model's name, a host
    port's role)."""
    keyed = {SwitchModel: "name", HostModel: "name", HostPorts: "role"}.get(record)
    return {f.encode_name for f in msgspec.structs.fields(record)} - {keyed}


@pytest.mark.parametrize(
    ("record", "properties"),
    [
        (SwitchModel, SCHEMA["switch_model"]["properties"]),
        (PortGroup, SCHEMA["switch_model"]["properties"]["ports"]["items"]["properties"]),
        (HostModel, SCHEMA["host_model"]["properties"]),
        (
            HostPorts,
            SCHEMA["host_model"]["properties"]["ports"]["additionalProperties"]["properties"],
        ),
    ],
)
def test_the_records_read_every_key_the_schema_allows(record, properties):
    assert _keys(record) == set(properties), record.__name__


def test_an_entry_key_no_record_declares_is_refused():
    entry = {
        "height_u": 1,
        "power_w": 350,
        "ports": [{"name": "GE1/0/{port}", "count": 48, "speed": 1}],
    }
    assert (
        len(build_catalog({"switches": {"lab-switch": entry}}).switches["lab-switch"].ports) == 48
    )
    with pytest.raises(msgspec.ValidationError, match="unknown field `power_kw`"):
        build_catalog({"switches": {"lab-switch": {**entry, "power_kw": 0.35}}})


def test_values_are_kept_as_written_and_derived_ones_made_once():
    catalog = build_catalog({"servers": {"lab": {"kind": "storage-node", "height_u": 2,
                                                  "power_w": 800, "ports": {"storage": {"count": 2, "speed": 100}}}}})  # fmt: skip
    lab = catalog.hosts["lab"]
    assert repr(lab.power_w) == "800" and lab.ports["storage"].names == ("storage0", "storage1")
    assert lab.ports["storage"].role == "storage" and lab.name == "lab"
    ce = catalog.switches["ce9860-4c-ei"]
    assert ce.ports is ce.ports and ce.ecmp_max == ce.facts["ecmp_max"]["value"]
