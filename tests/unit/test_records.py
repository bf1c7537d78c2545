"""The model's records are frozen, slotted and built from keyword arguments only."""

from __future__ import annotations

import dataclasses

import pytest

from generator import model


def test_a_record_refuses_positional_arguments_and_assignment():
    rack = model.Rack(
        name="T01-01", zone="training", row=1, position=1, kind="compute", x_m=0.0, y_m=0.0,
        height_u=48, power_kw=40.0, cooling_kw=40.0, cooling="liquid",
    )  # fmt: skip
    with pytest.raises(TypeError, match="positional"):
        model.Rack("T01-01", "training", 1, 1, "compute", 0.0, 0.0, 48, 40.0, 40.0, "liquid")  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        rack.height_u = 42  # type: ignore[misc]
    assert not hasattr(rack, "__dict__")
