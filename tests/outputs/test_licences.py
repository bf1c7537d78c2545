"""AI ECN's licence (review 2 finding 20, issue #29), read from a folder `wanka generate` wrote:
files/bom.csv orders one CE-LIC-AFRD per switch whose configuration carries `ai-ecn enable`
(a row per switch model; each switch names it in its `licences` host variable), and
the design review's ECN table says, per plane and switch model, the ECN those configurations
carry. CE-LIC-AFRD is Huawei's: CE6800/8800 V300R023C00 Configuration Guide, "Configuration
Precautions for AI ECN": "AI ECN is under license control (CE-LIC-AFRD)"."""

from __future__ import annotations

import csv
import io
import re
from collections import Counter, defaultdict
from pathlib import Path

import pytest
import yaml

from tests.support.examples import render_example
from tests.support.output_readers import inventory_vars

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    return render_example(tmp_path_factory, "licences")


def ai_ecn_switches(folder: Path) -> set[str]:
    """Switches whose rendered configuration enables AI ECN (`ai-ecn enable` in ai-service)."""
    return {
        cfg.stem
        for cfg in (folder / "files/switches").glob("*.cfg")
        if re.search(r"^\s+ai-ecn enable$", cfg.read_text(), re.M)
    }


def test_bom_orders_one_licence_per_switch_that_enables_ai_ecn(rendered):
    """Per switch model, as many CE-LIC-AFRD as that model's switches enabling AI ECN, with the
    source; each such switch, and no other, names the licence in its host variables."""
    rows = list(csv.DictReader(io.StringIO((rendered / "files/bom.csv").read_text())))
    licences = [r for r in rows if r["category"] == "licence"]
    switches = ai_ecn_switches(rendered)
    assert switches, "pod-128's storage leaves (CE8851-32CQ8DQ-P) run AI ECN"
    hosts = inventory_vars(rendered)
    per_model = Counter(hosts[name]["model"] for name in switches)
    ordered = {r["detail"].split(":")[0]: int(r["quantity"]) for r in licences}
    assert ordered == dict(per_model)
    assert all(r["item"] == "CE-LIC-AFRD" and r["confirmed"] == "yes" for r in licences)
    assert all("Configuration Precautions for AI ECN" in r["source"] for r in licences)
    named = {h for h, v in hosts.items() if "CE-LIC-AFRD" in v.get("licences", [])}
    assert named == switches


def ecn_table(readme: str) -> list[list[str]]:
    """The rows of docs/README.md's "ECN on the lossless planes" table."""
    section = readme.split("### ECN on the lossless planes", 1)[1].split("\n#", 1)[0]
    lines = [x for x in section.splitlines() if x.startswith("| ") and not x.startswith("| plane")]
    return [[c.strip() for c in x.strip("|").split("|")] for x in lines]


def test_design_review_states_the_ecn_the_configs_carry_and_the_licence(rendered):
    configs: dict[tuple[str, str], list[str]] = defaultdict(list)
    for y in (rendered / "files/switches").glob("*.yml"):
        cfg = yaml.safe_load(y.read_text())
        if cfg.get("lossless"):
            configs[(cfg["plane"], cfg["model"])].append(y.stem)
    enabled = ai_ecn_switches(rendered)
    rows = ecn_table((rendered / "docs/README.md").read_text())
    assert {(plane, model) for plane, model, *_ in rows} == set(configs)
    for plane, model, count, ecn, licence in rows:
        names = configs[(plane, model)]
        assert int(count) == len(names), (plane, model)
        if ecn == "ai-ecn":
            assert set(names) <= enabled, f"{plane} {model}: said AI ECN, configs without it"
            assert licence == "CE-LIC-AFRD"
        else:
            assert not set(names) & enabled, f"{plane} {model}: said {ecn}, configs enable AI ECN"
            assert licence == "none"
    said = {m for _, m, _, ecn, _ in rows if ecn == "ai-ecn"}
    assert said and {m for (_, m), names in configs.items() if set(names) & enabled} == said
    # the parameter plane's CE9860 carries static ECN although the plane asks for AI ECN
    assert any(r[:2] == ["parameter", "ce9860-4c-ei"] and r[3:] == ["static", "none"] for r in rows)
