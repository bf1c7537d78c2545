"""generator.records.record: the model's frozen records, built fast, behave as frozen dataclasses."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from generator.model import Device, Link, Rack
from generator.records import record


def _link(**changes: object) -> Link:
    values = dict(
        cable_id="PAR-000001",
        plane="parameter",
        kind="uplink",
        a_device="par-leaf-0001",
        a_port="400GE1/0/1",
        b_device="par-spine-0001",
        b_port="400GE1/0/1",
        speed=400,
        media="aoc",
        length_m=10,
        a_ip=1,
        b_ip=2,
        prefix=31,
    )
    return Link(**{**values, **changes})


def test_a_record_refuses_assignment_like_a_frozen_dataclass():
    link = _link()
    with pytest.raises(dataclasses.FrozenInstanceError):
        link.speed = 200  # type: ignore[misc]
    # slots: no other attribute either (Python 3.11's frozen slotted dataclasses raise TypeError
    # here, from the super() in their __setattr__; later versions FrozenInstanceError)
    with pytest.raises((AttributeError, TypeError)):
        link.extra = 1  # type: ignore[attr-defined]
    assert type(link) is Link and not hasattr(link, "__dict__")


def test_a_record_compares_hashes_copies_and_pickles_by_value():
    link = _link()
    assert link == _link() and hash(link) == hash(_link()) and link != _link(speed=200)
    assert pickle.loads(pickle.dumps(link, protocol=pickle.HIGHEST_PROTOCOL)) == link
    assert copy.deepcopy(link) == link and copy.copy(link) == link
    moved = dataclasses.replace(link, b_port="400GE1/0/2")
    assert moved.b_port == "400GE1/0/2" and moved.a_port == link.a_port and type(moved) is Link
    assert [f.name for f in dataclasses.fields(Link)][:2] == ["cable_id", "plane"]
    assert repr(link).startswith("Link(cable_id='PAR-000001', plane='parameter'")


def test_defaults_and_missing_arguments_are_those_of_the_dataclass():
    rack = Rack("T01-01", "training", 1, 1, "compute", 0.0, 0.0, 48, 40.0, 40.0, "liquid")
    assert rack.cdu == ""
    device = Device("npu-0001", "npu-server", "", "atlas-800t-a2", "T01-01", 1, 4, 5000.0)
    assert (device.index, device.pod, device.splits, device.mgmt) == (0, -1, (), None)
    with pytest.raises(TypeError, match="missing"):
        Rack("T01-01")  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="unexpected keyword"):
        _link(colour="red")


def test_default_factories_give_each_record_its_own_value():
    @record
    class Bag:
        name: str
        items: list = dataclasses.field(default_factory=list)

    assert Bag("a").items is not Bag("a").items


def test_a_record_with_post_init_is_refused():
    with pytest.raises(TypeError, match="__post_init__"):

        @record
        class Checked:
            name: str

            def __post_init__(self) -> None:
                pass


def test_a_field_named_like_the_generated_constructors_locals_is_refused():
    with pytest.raises(TypeError, match="no field named built"):

        @record
        class Odd:
            built: int
