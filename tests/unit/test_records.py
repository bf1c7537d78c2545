"""The model's records are frozen, without a __dict__ and built from keyword arguments only;
`replace` copies a record or a dataclass with some fields changed."""

from __future__ import annotations

import inspect

import pytest

from generator import model
from generator.analysis.finding import Finding
from generator.expand.fabric import Endpoint
from generator.records import Record, replace


def test_a_record_refuses_positional_arguments_and_assignment():
    rack = model.Rack(
        name="T01-01", zone="training", row=1, position=1, kind="compute", x_m=0.0, y_m=0.0,
        height_u=48, power_kw=40.0, cooling_kw=40.0, cooling="liquid",
    )  # fmt: skip
    with pytest.raises(TypeError, match="positional"):
        model.Rack("T01-01", "training", 1, 1, "compute", 0.0, 0.0, 48, 40.0, 40.0, "liquid")  # type: ignore[misc]
    with pytest.raises(AttributeError):
        rack.height_u = 42  # type: ignore[misc]
    assert not hasattr(rack, "__dict__")


def test_replace_copies_a_record_or_a_dataclass_with_the_changes_only():
    rack = model.Rack(
        name="T01-01", zone="training", row=1, position=1, kind="compute", x_m=0.0, y_m=0.0,
        height_u=48, power_kw=40.0, cooling_kw=40.0, cooling="liquid",
    )  # fmt: skip
    fed = replace(rack, cdu="CDU-01")
    assert (fed.cdu, rack.cdu) == ("CDU-01", "")
    assert fed == model.Rack(
        **{**{f: getattr(rack, f) for f in rack.__struct_fields__}, "cdu": "CDU-01"}
    )
    finding = Finding(severity="warning", code="x", message="m")
    assert replace(finding, severity="error") == Finding(severity="error", code="x", message="m")
    with pytest.raises(TypeError):
        replace(rack, no_such_field=1)


def _records(cls: type) -> list[type]:
    return [c for sub in cls.__subclasses__() for c in (sub, *_records(sub))]


def test_every_record_class_takes_keyword_arguments_only():
    assert Endpoint in _records(Record) and model.Device in _records(Record)
    positional = {
        c.__name__: [
            p.name for p in inspect.signature(c).parameters.values() if p.kind != p.KEYWORD_ONLY
        ]
        for c in _records(Record)
    }
    assert {name: ps for name, ps in positional.items() if ps} == {}
