"""Designs that cannot be built: every problem of one blueprint in one run, each hint applied
makes it valid. The message of each refused design is data: tests/errors/expand/ and
tests/errors/checks/ (tests/test_error_goldens.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.cli import main

ROOT = Path(__file__).resolve().parents[1]
POD = (ROOT / "blueprints" / "pod-128.yaml").read_text()


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


REFUSED = [  # the designs tests/errors/ expects `wanka validate` to refuse (exit 2)
    case
    for kind in ("expand", "checks")
    for case in sorted((ROOT / "tests" / "errors" / kind).glob("*.yaml"))
    if case.with_suffix(".txt").read_text().startswith("exit 2\n")
]


@pytest.mark.parametrize("case", REFUSED, ids=lambda p: p.stem)
def test_a_refused_design_is_refused_by_generate_too_and_nothing_is_written(
    tmp_path, case, capsys, monkeypatch
):
    """What `wanka validate` refuses (its message: tests/errors/<kind>/<case>.txt), `wanka
    generate` refuses with exit 2, every line located in the blueprint, no traceback, no folder."""
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "out"
    code = main(["generate", str(case), "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    located = [x for x in err.splitlines() if not x.endswith("nothing written")]
    assert located and all(x.startswith(f"{case}:") for x in located), err
    assert not out.exists()


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
    cores and all five pools are too small, and on the cluster built with the suggested models
    and pools the business uplinks run past their optics' reach. One `wanka validate` names all
    of them, each at its FILE:LINE:COL and schema key with a value; the design-check error says
    it was found with the suggested values applied. The blueprint with every value applied
    passes `wanka validate`."""
    import re

    import yaml

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
        "zones.training.row.racks",  # the design check's optic reach, in the same run
    }, lines
    # each line points into the section that holds the key (models absent here: their section)
    assert got["networks.parameter.pool"][0] == _line_of(text, "pool: 10.64.0.0/18")
    assert got["networks.business.spine.model"][0] == _line_of(text, "  business:")
    assert got["zones.training.row.racks"][0] == _line_of(text, "  training:")
    reach = got["zones.training.row.racks"][1]
    assert "[optic-reach]" in reach and "found on the cluster built with the values" in reach

    data = yaml.safe_load(text)
    for key, (_, message) in got.items():
        assert _schema_has(key), key
        assert not re.search(r"tiers: (3|auto)", message)  # only the parameter plane has tiers
        hint = re.search(r"set ([\w.]+): ([\w./-]+)", message)
        assert hint and hint.group(1) == key, message
        if m := re.search(r"\((\d+) ports at (\d+)GE, (\d+) needed\)", message):
            assert int(m.group(1)) >= int(m.group(3)), message
        *parents, last = key.split(".")
        node = data
        for k in parents:
            node = node.setdefault(k, {})
        value = hint.group(2)
        node[last] = int(value) if value.isdigit() else value
    fixed = tmp_path / "fixed.yaml"
    fixed.write_text(yaml.safe_dump(data, sort_keys=False))
    assert main(["validate", str(fixed)]) == 0, capsys.readouterr().err
    assert data["zones"]["training"]["row"]["racks"] > 16  # fewer, longer rows than the default


def _findings(tmp_path: Path, text: str, capsys) -> str:
    bp = tmp_path / "bp.yaml"
    bp.write_text(text)
    main(["validate", "-v", str(bp)])
    return capsys.readouterr().err


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
