"""files/bom.csv as a procurement lead orders from it and a spreadsheet sums it (issue #32 item
2), and `wanka catalog MODEL`: every chassis with its boards, line cards, power supplies and fans
(catalog switches.yaml, each cited or [unconfirmed]), optics by part and reach, breakouts as
breakouts, licences per switch model, integer watts, a `confirmed` column. Read with the csv
module only, beside the inventory and the cabling plan of the same folder."""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from generator.cli import main
from tests.support.examples import render_example
from tests.support.output_readers import inventory_vars

PART_CATEGORIES = ("board", "line card", "power supply", "fan")


def bom(folder: Path) -> list[dict[str, str]]:
    with (folder / "files/bom.csv").open(newline="") as fh:
        return list(csv.DictReader(fh))


def cabling(folder: Path) -> list[dict[str, str]]:
    with (folder / "files/cabling.csv").open(newline="") as fh:
        return list(csv.DictReader(fh))


def check_orderable(folder: Path) -> list[dict[str, str]]:
    """What every BOM must hold, whatever the blueprint; returns the rows."""
    text = (folder / "files/bom.csv").read_text()
    rows = bom(folder)
    assert list(rows[0])[:6] == ["category", "item", "detail", "quantity", "unit_power_w",
                                 "total_power_w"]  # fmt: skip
    # appended: old readers keep working
    assert list(rows[0])[6:] == ["confirmed", "source", "part_number"]
    assert all(re.fullmatch(r"[0-9A-Z][0-9A-Z-]*|", r["part_number"]) for r in rows)
    assert "domain.md" not in text, "a source names a document outside the repository"
    # every network device row says the airflow it is ordered with
    for r in rows:
        if r["category"] == "device" and not r["detail"].endswith(("server", "node")):
            airflow = r["detail"].split(", ")[1]
            assert airflow in ("port-side-intake", "port-side-exhaust"), r
    assert not re.search(r"\d[eE][+-]?\d", text), "no number in exponent form"
    # a spreadsheet's sum: every watt figure an integer; the total is the devices' power
    total = sum(int(r["total_power_w"]) for r in rows)
    hosts = inventory_vars(folder)
    devices = Counter(v["model"] for v in hosts.values() if "model" in v)
    device_rows = [r for r in rows if r["category"] == "device"]
    assert total == sum(int(r["total_power_w"]) for r in device_rows) > 0
    for r in device_rows:
        assert int(r["total_power_w"]) == int(r["unit_power_w"]) * int(r["quantity"])
    assert all(r["confirmed"] in ("yes", "no", "-") for r in rows)
    assert all(r["source"] for r in rows), "every row says where it comes from"
    assert all(r["confirmed"] == "no" or "[unconfirmed]" not in r["source"][:13] for r in rows)
    # parts: per model, count per box x boxes of that model in the inventory
    for r in (r for r in rows if r["category"] in PART_CATEGORIES):
        m = re.fullmatch(r"(\d+) per (\S+) x ([\d,]+);.*", r["detail"])
        assert m, r["detail"]
        per, model, boxes = int(m[1]), m[2], int(m[3].replace(",", ""))
        assert boxes == devices[model] and int(r["quantity"]) == per * boxes, r
    # licences: one per switch whose host variables name it, per model
    ordered = Counter()
    for v in hosts.values():
        for lic in v.get("licences", []):
            ordered[(lic, v["model"])] += 1
    listed = {
        (r["item"], r["detail"].split(":")[0]): int(r["quantity"])
        for r in rows
        if r["category"] == "licence"
    }
    assert listed == dict(ordered)
    # breakouts: one breakout cable per split cable of the cabling plan that is not a trunk
    legs = Counter(r["cable_id"] for r in cabling(folder) if not r["trunk_id"])
    split = sum(1 for n in legs.values() if n > 1)
    assert sum(int(r["quantity"]) for r in rows if r["category"] == "breakout cable") == split
    assert not [r for r in rows if r["category"] == "cable" and r["item"].startswith("DAC 200G")]
    return rows


def _items(rows, category):
    return {r["item"]: r for r in rows if r["category"] == category}


@pytest.fixture(scope="module")
def pod(tmp_path_factory) -> Path:
    return render_example(tmp_path_factory, "bom")


def test_pod_128_bom_orders_parts_breakouts_and_licences(pod):
    rows = check_orderable(pod)
    breakouts = _items(rows, "breakout cable")
    assert "DAC 400G QSFP-DD to 2 x 200G QSFP56" in breakouts  # was "DAC 200G"
    psus = _items(rows, "power supply")
    fans = _items(rows, "fan")
    # the CE8851-32CQ8DQ-P's two power supply and six fan slots are cited (EDOC1100369504)
    psu = psus["CE8851-32CQ8DQ-P AC power module"]
    assert psu["confirmed"] == "yes" and "EDOC1100369504" in psu["source"]
    assert fans["CE8851-32CQ8DQ-P fan module"]["detail"].startswith("6 per ce8851-32cq8dq-p")
    assert _items(rows, "line card"), "the CE9860's subcards"
    assert _items(rows, "licence")["CE-LIC-AFRD"]["detail"] == "ce8851-32cq8dq-p: ai-ecn"
    # orderable (issue 41): the part number of the CE8851-32CQ8DQ-P as ordered with its airflow,
    # from its Hardware Description page; auto airflow from the hot/cold-aisle layout: the
    # storage leaves and spines stand in network racks (ports to the cold aisle: intake), the
    # parameter leaves in the compute racks (ports to the servers' rear, hot aisle: exhaust)
    devices = {(r["item"], r["detail"]): r for r in rows if r["category"] == "device"}
    for role in ("leaf", "spine"):
        ce8851 = devices[("ce8851-32cq8dq-p", f"{role}, port-side-intake")]
        assert ce8851["part_number"] == "02353EGQ" and ce8851["confirmed"] == "yes"
        assert "EDOC1100369504/25c81995" in ce8851["source"]
    assert ("ce9860-4c-ei", "leaf, port-side-exhaust") in devices
    assert devices[("ce9860-4c-ei", "leaf, port-side-exhaust")]["part_number"] == ""
    assert devices[("ce9860-4c-ei", "leaf, port-side-exhaust")]["confirmed"] == "no"
    # the firewall's order names a model, marked unconfirmed
    [fw] = [r for r in rows if r["detail"].startswith("firewall")]
    assert fw["detail"].endswith(", order as USG6716E [unconfirmed]") and fw["confirmed"] == "no"


def test_airflow_chosen_in_the_blueprint_orders_that_variant(tmp_path):
    """zones.training.airflow: port-side-exhaust orders every switch so (02353EGR for the
    CE8851-32CQ8DQ-P); a chassis has no airflow variant, so its row keeps its model's number."""
    root = Path(__file__).resolve().parents[2]
    text = (root / "blueprints/pod-128.yaml").read_text()
    assert "\nzones:\n  training:\n" in text
    text = text.replace(
        "\nzones:\n  training:\n", "\nzones:\n  training:\n    airflow: port-side-exhaust\n"
    )
    blueprint = tmp_path / "pod-128.yaml"
    blueprint.write_text(text)
    out = tmp_path / "out"
    assert main(["generate", str(blueprint), "-o", str(out), "-q"]) == 0
    rows = check_orderable(out)
    devices = [r for r in rows if r["category"] == "device" and "," in r["detail"]]
    assert devices and all(r["detail"].split(", ")[1] == "port-side-exhaust" for r in devices)
    ce8851 = [r for r in devices if r["item"] == "ce8851-32cq8dq-p"]
    assert ce8851 and {r["part_number"] for r in ce8851} == {"02353EGR"}


def test_the_catalog_sends_no_reader_to_a_document_outside_the_repository():
    catalog = Path(__file__).resolve().parents[2] / "generator" / "catalog"
    for path in sorted(catalog.glob("*.yaml")):
        assert "domain.md" not in path.read_text(), path.name


@pytest.mark.slow  # wanka-10k generates for tens of seconds
def test_wanka_10k_bom_lists_chassis_parts_optics_by_reach_and_breakouts(tmp_path):
    out = tmp_path / "wanka-10k"
    root = Path(__file__).resolve().parents[2]
    assert main(["generate", str(root / "blueprints/wanka-10k.yaml"), "-o", str(out), "-q"]) == 0
    rows = check_orderable(out)
    chassis = {
        r["item"] for r in rows if r["category"] == "device" and r["item"].startswith("ce168")
    }
    assert chassis, "wanka-10k's spines are CE16800 chassis"
    for model in chassis:
        parts = [
            r for r in rows if r["category"] in PART_CATEGORIES and f" per {model} " in r["detail"]
        ]
        kinds = {r["category"] for r in parts}
        assert {"board", "line card", "power supply", "fan"} <= kinds, (model, kinds)
    optics = _items(rows, "optic")
    assert optics and all(re.fullmatch(r"\S+ \S+ \d+ m", item) for item in optics), optics
    assert _items(rows, "licence")
    # fibre by grade and connector: 400GBASE-SR8 needs an MPO-16 cable of OM4 (issue 41)
    sr8 = [r for r in rows if r["category"] == "cable" and "400GBASE-SR8" in r["item"]]
    assert sr8 and all(r["item"].startswith("MMF OM4 MPO-16 (16 fibres) ") for r in sr8)
    assert all("400gbase-sr8" in r["source"] and r["confirmed"] == "yes" for r in sr8)
    assert all(r["detail"] in ("MMF OM4", "SMF OS2") for r in optics.values())
    # the firewall hand-offs' breakouts are trunks: a cassette per trunk of the cabling plan
    trunks = {r["trunk_id"] for r in cabling(out) if r["trunk_id"]}
    assert sum(int(r["quantity"]) for r in rows if r["category"] == "cassette") == len(trunks)


def test_catalog_ce16808_shows_the_values_in_use_with_their_sources(capsys):
    assert main(["catalog", "ce16808"]) == 0
    out = capsys.readouterr().out
    assert "ports: 288 x 400GE" in out and "power_w: 12000" in out
    lines = [x for x in out.splitlines() if x.startswith("  ")]
    assert all("  <- " in x for x in lines if not x.endswith(": none")), lines
    mpu = next(x for x in lines if "CE-MPUD-HALF2" in x)
    assert "EDOC1100095397" in mpu and "[unconfirmed]" not in mpu
    assert any(x.startswith("  psus: 10 x ") and "[unconfirmed]" in x for x in lines)
    assert main(["catalog", "ce16808", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["line_cards"] and data["fans"] and data["height_u"]["value"] == 18
    assert main(["catalog", "ce8851-32cq8dq-p", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["licences"][0]["value"].startswith("CE-LIC-AFRD")


def test_catalog_unknown_model_exits_2_with_close_names(capsys):
    assert main(["catalog", "ce1680"]) == 2
    err = capsys.readouterr().err
    assert "ce16808" in err and "ce16804" in err
