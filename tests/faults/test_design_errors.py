"""Designs that cannot be built: every problem of one blueprint in one run, each hint applied
makes it valid. The message of each refused design is data: tests/errors/expand/ and
tests/errors/checks/ (tests/faults/test_error_goldens.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.cli import main

ROOT = Path(__file__).resolve().parents[2]
POD = (ROOT / "blueprints" / "pod-128.yaml").read_text()


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


REFUSED = [  # the designs tests/errors/ expects `wanka validate` to refuse (exit 2)
    case
    for kind in ("expand", "checks")
    for case in sorted((ROOT / "tests" / "errors" / kind).glob("*.yaml"))
    if case.with_suffix(".txt").read_text().startswith("exit 2\n")
]


def _heavy_slow(cases: list[Path]) -> list:
    """The 65,536-card cases expand a whole large cluster (~5 s): slow, run in CI."""
    return [pytest.param(c, marks=pytest.mark.slow) if "65536" in c.stem else c for c in cases]


@pytest.mark.parametrize("case", _heavy_slow(REFUSED), ids=lambda p: p.stem)
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
    from tests.support.examples import generated

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


def _cdu_lines(err: str) -> list[str]:
    return [x for x in err.splitlines() if "[cdu-capacity]" in x]


def test_the_planner_places_n_plus_1_cdus_and_the_plan_and_bom_list_them(tmp_path, capsys):
    """pod-128's 96.8 kW on CDUs of 300 kW needs one; the planner places two, a rack pair on
    each, so with either out the other holds the zone (N+1: Vertiv, 'How N+1 redundancy
    supports continuous data center cooling'). On 60 kW CDUs two are needed and three placed.
    No N+1 warning, only the line that it holds."""
    from generator import pipeline

    for text, cdus, cap in (
        (POD, 2, 300),
        (POD.replace("capacity_kw: 300", "capacity_kw: 60"), 3, 60),
    ):
        (line,) = _cdu_lines(_findings(tmp_path, text, capsys))
        assert line.startswith("info: ") and f"{cdus} CDUs carry 96.8 kW" in line, line
        assert f"the other {cdus - 1} hold {(cdus - 1) * cap:,} kW (N+1 holds)" in line, line
        cluster = pipeline.run(tmp_path / "bp.yaml", emit=False).cluster
        assert len(cluster.cdus) == cdus and all(c.racks for c in cluster.cdus)
        assert all(c.load_kw <= cap for c in cluster.cdus)


def test_a_rack_too_few_to_spread_gets_a_standby_cdu_in_the_plan_and_bom(tmp_path, capsys):
    """32 cards fill one rack: its CDU and a standby CDU on the shared loop, both ordered."""
    text = POD.replace("cards: 128", "cards: 32")
    (line,) = _cdu_lines(_findings(tmp_path, text, capsys))
    assert line.startswith("info: ") and "2 CDUs carry 24.2 kW" in line, line
    out = tmp_path / "out"
    assert main(["generate", str(tmp_path / "bp.yaml"), "-o", str(out)]) == 0
    bom = (out / "files" / "bom.csv").read_text()
    assert "CDU-01 300 kW" in bom and "CDU-02 300 kW" in bom
    plan = (out / "docs" / "README.md").read_text()
    assert "| CDU-02 | 0 |" in plan, plan


@pytest.mark.parametrize(
    "name", ["pod-128.yaml", "cluster-1k.yaml", "supernode-768.yaml", "wanka-10k.yaml"]
)
def test_every_liquid_example_holds_n_plus_1_without_a_warning(name):
    from tests.support.examples import expanded

    cluster = expanded(name).cluster
    (cdu,) = [f for f in expanded(name).findings if f.code == "cdu-capacity"]
    load = sum(c.load_kw for c in cluster.cdus)
    assert cdu.severity == "info" and "(N+1 holds)" in cdu.message, cdu
    assert (len(cluster.cdus) - 1) * min(c.capacity_kw for c in cluster.cdus) >= load


def test_cooling_is_stated_with_its_alternative(tmp_path, capsys):
    """Liquid or air: the review says which, where, whether the blueprint chose it or the schema
    default (liquid) applied, and the other choice."""
    line = _line_of(POD, "cooling: liquid")
    (liquid,) = [x for x in _findings(tmp_path, POD, capsys).splitlines() if "[cooling]" in x]
    assert f"bp.yaml:{line}:" in liquid and "cooling: liquid, 2 CDUs " in liquid
    assert "chosen in the blueprint" in liquid and "The alternative, air" in liquid
    default = POD.replace("    cooling: liquid\n", "")
    (left,) = [x for x in _findings(tmp_path, default, capsys).splitlines() if "[cooling]" in x]
    assert "cooling: liquid" in left and "not written, so the schema default applied" in left
    air = POD.replace("cooling: liquid", "cooling: air")
    err = _findings(tmp_path, air, capsys)
    (stated,) = [x for x in err.splitlines() if "[cooling]" in x]
    assert "cooling: air" in stated and "chosen in the blueprint" in stated
    assert "The alternative, liquid" in stated
    assert "[cdu-capacity]" not in err  # no CDU on air
