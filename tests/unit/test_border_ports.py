"""generator/expand/border.py FreePorts: the border and a shared storage plane get whole ports, or
lanes of a port split for them alone (issue 41: a split port is one cage holding one module, so
its lanes leave on one breakout cable or one trunk)."""

from __future__ import annotations

from types import SimpleNamespace

from generator.catalog import build_catalog
from generator.expand.border import FreePorts, cable_of
from generator.expand.fabric import Wire

WHERE = ("zones", "border")


def _ports(plane_lanes: list[str]) -> tuple[FreePorts, dict[str, dict[str, str]]]:
    """A CE16804 spine (400GE ports only) whose plane split 400GE1/0/0 into 4 x 100GE and cabled
    `plane_lanes` of it (a trunk of its own), as wanka-10k's business spines did."""
    spine = build_catalog().switches["ce16804"]
    wires = [
        Wire(
            kind="uplink",
            a_device=f"leaf-{i}",
            a_port="100GE1/0/1",
            b_device="spine",
            b_port=lane,
            speed=100,
            cable=("spine", "400GE1/0/0"),
        )
        for i, lane in enumerate(plane_lanes)
    ]
    splits = {"spine": {"400GE1/0/0": "4x100GE"}}
    builds = {"business": SimpleNamespace(wires=wires)}
    return FreePorts(builds, {"spine": spine}, splits, ["spine"]), splits


def test_the_free_lanes_of_a_plane_split_port_are_never_handed_out():
    ports, splits = _ports(["400GE1/0/0:1", "400GE1/0/0:2"])
    first = ports.take("spine", 100, WHERE, "border")
    second = ports.take("spine", 100, WHERE, "border")
    # a port of its own, split for the border: both lanes on it, one breakout
    assert (first, second) == ("400GE1/0/1:1", "400GE1/0/1:2")
    assert splits["spine"] == {"400GE1/0/0": "4x100GE", "400GE1/0/1": "4x100GE"}
    assert cable_of("fw-01", "100GE1/0/0", "spine", first) == ("spine", "400GE1/0/1")
    assert cable_of("fw-02", "100GE1/0/0", "spine", second) == ("spine", "400GE1/0/1")
    # another wire set (numbered apart, so another cable) gets another port
    assert ports.take("spine", 100, WHERE, "storage") == "400GE1/0/2:1"
    # and a whole port where one is asked for
    assert ports.take("spine", 400, WHERE, "border", whole=True) == "400GE1/0/3"


def test_a_whole_port_at_the_speed_is_its_own_cable():
    assert cable_of("fw-01", "100GE1/0/0", "rtr-01", "100GE1/0/0") == ("fw-01", "100GE1/0/0")
