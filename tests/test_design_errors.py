"""Designs that cannot be built stop with a located message, exit 2, and write nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.cli import main

ROOT = Path(__file__).resolve().parents[1]
POD = (ROOT / "blueprints" / "pod-128.yaml").read_text()
TEN_K = (ROOT / "blueprints" / "wanka-10k.yaml").read_text()
A3 = (ROOT / "blueprints" / "supernode-768.yaml").read_text()
LEGACY = (ROOT / "blueprints" / "legacy-100card.yaml").read_text()


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def _generate(tmp_path: Path, text: str, capsys) -> tuple[int, str, Path]:
    """`wanka generate` of the text, in this process: exit code, stderr, blueprint path."""
    bp = tmp_path / "bp.yaml"
    bp.write_text(text)
    code = main(["generate", str(bp), "-o", str(tmp_path / "out")])
    return code, capsys.readouterr().err, bp


CASES = {
    "two tiers asked, spine radix too small": (
        TEN_K.replace("    tiers: auto\n", "    tiers: 2\n"),
        "spine: {model: ce16804}",
        "networks.parameter.spine.model",
        "(set networks.parameter.spine.model: ce16816 (576 ports at 400GE, 320 needed), "
        "or tiers: 3 (pods under cores))",
    ),
    "pool too small": (
        POD.replace("pool: 10.64.0.0/18", "pool: 10.64.0.0/26"),
        "pool: 10.64.0.0/26",
        "networks.parameter.pool",
        "too small",
    ),
    "rack power exceeded": (
        POD.replace("rack: {servers: 4, power_kw: 30}", "rack: {servers: 8, power_kw: 30}"),
        "rack: {servers: 8",
        "zones.training.rack.servers",
        "over the rack's power budget",
    ),
    "rack cooling exceeded": (
        POD.replace(
            "rack: {servers: 4, power_kw: 30}", "rack: {servers: 4, power_kw: 30, cooling_kw: 20}"
        ),
        "cooling_kw: 20",
        "zones.training.rack.servers",
        "over the rack's cooling budget of 20 kW",
    ),
    "network rack too small for a spine chassis": (
        TEN_K.replace(
            "    cooling: liquid\n", "    cooling: liquid\n    network_rack: {power_kw: 10}\n", 1
        ),
        "network_rack: {power_kw: 10}",
        "zones.training.network_rack.power_kw",
        "does not fit an empty 42U network rack of 10 kW",
    ),
    "leaf without 200GE": (
        POD.replace(
            "leaf: {model: ce9860-4c-ei, split: 2x200GE}", "leaf: {model: ce6865-48s8cq-ei}"
        ),
        "leaf: {model: ce6865-48s8cq-ei}",
        "networks.parameter.leaf.model",
        "no port that gives 200GE",
    ),
    "spine count does not divide uplinks": (
        POD.replace("spine: {model: ce9860-4c-ei}", "spine: {model: ce9860-4c-ei, count: 3}"),
        "ce9860-4c-ei, count: 3",
        "networks.parameter.spine.count",
        "do not divide",
    ),
    # hccn_tool refuses these NPU addresses (hicann/driver tool_ops.c is_ipaddr_conflict,
    # tool_ops_ext.c): a5a7f7e generated them, and every host's script stopped at its NPU 0
    "NPU pool over the host's virtual NIC subnet": (
        POD.replace("pool: 10.64.0.0/18", "pool: 192.168.0.0/18"),
        "pool: 192.168.0.0/18",
        "networks.parameter.pool",
        "overlaps 192.168.1.0/24, which hccn_tool -ip -s refuses",
    ),
    "NPU pool over the AMP-mode subnet of A1/A2 (Atlas 800 9000)": (
        LEGACY.replace("pool: 10.64.0.0/20", "pool: 192.168.0.0/20"),
        "pool: 192.168.0.0/20",
        "networks.parameter.pool",
        "overlaps 192.168.2.0/24",
    ),
    "A3 NPU pool inside 192.0.0.0/8": (
        A3.replace("pool: 10.64.0.0/16", "pool: 192.168.64.0/18"),
        "pool: 192.168.64.0/18",
        "networks.parameter.pool",
        "overlaps 192.0.0.0/8, which hccn_tool -ip -s refuses as an NPU address on "
        "atlas-900-a3-superpod-node",
    ),
    "A3 MTU above the RoH port cap": (
        A3.replace("pool: 10.64.0.0/16", "pool: 10.64.0.0/16\n    lossless: {mtu: 4200}"),
        "lossless: {mtu: 4200}",
        "networks.parameter.lossless.mtu",
        "MTU 4200 is above the 4192 that hccn_tool -mtu -s accepts",
    ),
    "spine without ports at the uplink speed": (
        POD.replace("spine: {model: ce9860-4c-ei}", "spine: {model: ce5882-48t4s}"),
        "ce5882-48t4s",
        "networks.parameter.spine.model",
        "no 400GE ports",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_impossible_design_is_refused_with_location(tmp_path, case, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text, needle, path, message = CASES[case]
    code, err, bp = _generate(tmp_path, text, capsys)
    assert code == 2, err
    assert "Traceback" not in err
    line = _line_of(text, needle)
    assert f"{bp}:{line}:" in err and path in err and message in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow  # expands 10,240 cards
def test_ten_k_auto_tiers_picks_three(tmp_path):
    from tests.conftest import generated

    fabric = generated("wanka-10k.yaml").cluster.fabric("parameter")
    assert (fabric.tiers, fabric.pods, fabric.spines_per_pod) == (3, 5, 16)


def _schema_has(path: str) -> bool:
    """A dotted key of the blueprint schema (wanka-v1.schema.json) exists."""
    from generator.blueprint.defaults import resolve
    from generator.blueprint.validate import SCHEMA

    node = SCHEMA
    for key in path.split("."):
        node = resolve(node, SCHEMA).get("properties", {}).get(key)
        if node is None:
            return False
    return True


@pytest.mark.slow  # expands 65,536 cards twice
def test_every_problem_of_a_65536_card_pod_in_one_run_and_its_hints_work(tmp_path, capsys):
    """pod-128 scaled to 65,536 cards (8,192 servers): the business spines, both management
    cores and all five pools are too small. One `wanka validate` names all of them, each at its
    FILE:LINE:COL and YAML key, each with a value; the blueprint with every value applied expands."""
    import ipaddress
    import re

    import yaml

    from generator import pipeline

    text = POD.replace("cards: 128", "cards: 65536")
    bp = tmp_path / "big.yaml"
    bp.write_text(text)
    assert main(["validate", str(bp)]) == 2
    lines = capsys.readouterr().err.splitlines()
    got = {}
    for line in lines:
        m = re.match(rf"{re.escape(str(bp))}:(\d+):\d+: ([\w.]+): (.*)$", line)
        assert m, f"not located: {line}"
        got[m.group(2)] = (int(m.group(1)), m.group(3))
    assert set(got) == {
        "networks.business.spine.model",
        "networks.management.inband.core.model",
        "networks.management.oob.core.model",
        "networks.parameter.pool",
        "networks.storage.pool",
        "networks.business.pool",
        "networks.management.inband.pool",
        "networks.management.oob.pool",
    }, lines
    # each line points into the section that holds the key (models absent here: their section)
    assert got["networks.parameter.pool"][0] == _line_of(text, "pool: 10.64.0.0/18")
    assert got["networks.business.spine.model"][0] == _line_of(text, "  business:")

    data = yaml.safe_load(text)
    for key, (_, message) in got.items():
        assert _schema_has(key), key
        *parents, last = key.split(".")
        node = data
        for k in parents:
            node = node.setdefault(k, {})
        if key.endswith(".pool"):
            prefix = re.search(r"use a /(\d+) or larger", message)
            assert prefix, message
            pool = ipaddress.ip_network(node[last]).supernet(new_prefix=int(prefix.group(1)))
            node[last] = str(pool)
            continue
        hint = re.search(
            r"set ([\w.]+): ([\w-]+) \((\d+) ports at (\d+)GE, (\d+) needed\)", message
        )
        assert hint and hint.group(1) == key, message
        assert int(hint.group(3)) >= int(hint.group(5)), message
        node[last] = hint.group(2)
        assert not re.search(
            r"tiers: (3|auto)", message
        )  # no plane but the parameter plane has a tiers key
    fixed = tmp_path / "fixed.yaml"
    fixed.write_text(yaml.safe_dump(data, sort_keys=False))
    cluster = pipeline.run(fixed, emit=False).cluster  # no design error left in expansion
    models = {d.model for d in cluster.devices if d.name.startswith("biz-spine")}
    assert models == {data["networks"]["business"]["spine"]["model"]}


def _findings(tmp_path: Path, text: str, capsys) -> str:
    bp = tmp_path / "bp.yaml"
    bp.write_text(text)
    main(["validate", "-v", str(bp)])
    return capsys.readouterr().err


def test_cdus_without_n_plus_1_warn_at_the_cdu_line_with_the_count_that_holds(tmp_path, capsys):
    """pod-128's one CDU of 300 kW: with it out nothing cools the racks. The warning is located
    at zones.training.cdu.capacity_kw and asks for 2 (N+1: Vertiv, 'How N+1 redundancy supports
    continuous data center cooling'); the INFO line that only said 'fullest CDU-01 at 97 %' is
    gone into it."""
    err = _findings(tmp_path, POD, capsys)
    line = _line_of(POD, "cdu: {capacity_kw: 300}")
    (warning,) = [x for x in err.splitlines() if "[cdu-capacity]" in x]
    assert f"bp.yaml:{line}:" in warning and "zones.training.cdu.capacity_kw: warning:" in warning
    assert "with one out the rest hold 0 kW" in warning and "Install 2 CDUs of 300 kW" in warning
    # a 60 kW CDU takes two 24.2 kW racks: 2 planned, 3 carry the 96.8 kW with one out
    small = POD.replace("cdu: {capacity_kw: 300}", "cdu: {capacity_kw: 60}")
    (warning,) = [x for x in _findings(tmp_path, small, capsys).splitlines() if "[cdu-" in x]
    assert "2 CDUs of 60 kW" in warning and "Install 3 CDUs of 60 kW" in warning


def test_cooling_is_stated_with_its_alternative(tmp_path, capsys):
    """Liquid (the schema default) or air: the review says which, where, and the other choice."""
    line = _line_of(POD, "cooling: liquid")
    (liquid,) = [x for x in _findings(tmp_path, POD, capsys).splitlines() if "[cooling]" in x]
    assert f"bp.yaml:{line}:" in liquid and "cooling: liquid, 1 CDU " in liquid
    assert "schema default" in liquid and "The alternative, air" in liquid
    air = POD.replace("cooling: liquid", "cooling: air")
    err = _findings(tmp_path, air, capsys)
    (stated,) = [x for x in err.splitlines() if "[cooling]" in x]
    assert "cooling: air" in stated and "The alternative, liquid" in stated
    assert "[cdu-capacity]" not in err  # no CDU on air
