"""The LLDP cabling check's parser on real `display lldp neighbor brief` output (tests/data/captures,
origins in its README), and the comparison with a plan."""

from __future__ import annotations

from pathlib import Path

from tests.support.ansible_run import plugin

ROOT = Path(__file__).resolve().parents[2]
CAPTURES = ROOT / "tests" / "data" / "captures"
lldp = plugin("filter", "wanka_lldp")


def _capture(name: str) -> str:
    return (CAPTURES / name).read_text()


def test_vendor_example_parses_although_its_values_are_not_under_the_headers():
    seen = lldp.ce_lldp_brief(_capture("ce-v300-display-lldp-neighbor-brief.txt"))
    assert seen == {
        "100GE1/0/1": [{"device": "HUAWEI", "port": "10GE1/0/1"}] * 2,
        "100GE1/0/2": [{"device": "HUAWEI", "port": "10GE1/0/2"}],
        "100GE1/0/3": [{"device": "HUAWEI", "port": "10GE1/0/3"}],
    }


def test_aligned_capture_parses():
    seen = lldp.ce_lldp_brief(_capture("ce-display-lldp-neighbor-brief-aligned.txt"))
    assert seen == {
        "100GE1/0/1": [{"device": "spine1.pod1.stg", "port": "100GE1/0/1"}],
        "10GE1/0/1": [{"device": "test-server.stg", "port": "10GE1/0/1"}],
    }


def test_older_column_order_and_a_system_name_with_blanks():
    text = (
        "Local Intf       Neighbor Dev             Neighbor Intf             Exptime(s)\n"
        "GE1/6/0/3        core sw 1                GE1/0/1                   101\n"
    )
    assert lldp.ce_lldp_brief(text) == {"GE1/6/0/3": [{"device": "core sw 1", "port": "GE1/0/1"}]}


def _plan(rows: list[tuple[str, str, str]]) -> dict:
    """A structured config as the generator writes it (interfaces with their planned peer)."""
    return {"interfaces": [{"name": a, "peer": {"device": d, "port": p}} for a, d, p in rows]}


def test_capture_that_matches_the_plan_passes_and_one_that_does_not_names_port_and_neighbour():
    seen = lldp.ce_lldp_brief(_capture("ce-v300-display-lldp-neighbor-brief.txt"))
    matching = _plan([("100GE1/0/1", "HUAWEI", "10GE1/0/1"), ("100GE1/0/3", "HUAWEI", "10GE1/0/3")])
    assert lldp.wanka_lldp_problems(seen, lldp.wanka_lldp_expected(matching, ["HUAWEI"])) == []

    other = _plan([("100GE1/0/3", "HUAWEI", "10GE1/0/4"), ("100GE1/0/4", "HUAWEI", "10GE1/0/5")])
    assert lldp.wanka_lldp_problems(seen, lldp.wanka_lldp_expected(other, ["HUAWEI"])) == [
        "100GE1/0/3: LLDP neighbour HUAWEI 10GE1/0/3, the cabling plan says HUAWEI 10GE1/0/4",
        "100GE1/0/4: no LLDP neighbour, the cabling plan says HUAWEI 10GE1/0/5",
    ]
