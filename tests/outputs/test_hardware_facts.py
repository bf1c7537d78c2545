"""Per-model hardware facts: every switch model names its release, interface naming, ECMP width,
ECN and command families, each cited or marked unconfirmed; no config exceeds its model's ECMP
width or uses a command family the model lacks; ECN follows what the model has."""

from __future__ import annotations

import re

import pytest
import yaml

from generator import pipeline
from generator.catalog import SWITCH_FACTS, shipped_data
from tests.support.examples import ROOT, generated

SMALL = ("pod-128.yaml", "cluster-1k.yaml", "legacy-100card.yaml", "supernode-768.yaml")
# The first command of each family as it appears at the start of a config line (CE V300 CLI).
FAMILIES = {
    "port-split": re.compile(r"^port split ", re.M),
    "dcb-pfc": re.compile(r"^\s*dcb pfc", re.M),
    "pfc-deadlock": re.compile(r"^\s*priority \d+ turn-off threshold ", re.M),
    "diffserv": re.compile(r"^diffserv domain |^\s*trust upstream ", re.M),
    "static-ecn": re.compile(r"^drop-profile |^\s*qos queue \d+ ecn", re.M),
    "ai-ecn": re.compile(r"^ai-service", re.M),
    "bgp": re.compile(r"^bgp ", re.M),
    "ospf": re.compile(r"^ospf ", re.M),
    "m-lag": re.compile(r"^dfs-group ", re.M),
    "v-stp": re.compile(r"^stp v-stp enable", re.M),
}


@pytest.mark.parametrize("model", sorted(shipped_data()["switches"]))
def test_every_switch_model_names_its_facts_with_a_source_or_unconfirmed(model):
    entry = shipped_data()["switches"][model]
    for name in SWITCH_FACTS:
        fact = entry.get(name)
        assert isinstance(fact, dict) and "value" in fact, f"{model}: no {name}"
        assert fact.get("source") or fact.get("confirmed") is False, (
            f"{model}.{name}: neither a source nor confirmed: false"
        )
    assert entry["ecn"]["value"] in ("ai-ecn", "static", "none")
    assert set(entry["command_families"]["value"]) <= set(FAMILIES)


@pytest.mark.parametrize("name", SMALL)
def test_configs_stay_within_ecmp_width_and_command_families(name):
    result = generated(name)
    cluster = result.cluster
    files = {f.path: f.data.decode() for f in result.files}
    for d in cluster.devices:
        path = f"files/switches/{d.name}.cfg"
        if path not in files:
            continue
        text = files[path]
        facts = cluster.facts_of(d.model)
        widths = [int(w) for w in re.findall(r"maximum load-balancing (\d+)", text)]
        assert all(w == d.ecmp_paths <= facts.ecmp_max for w in widths), (d.name, widths)
        used = {fam for fam, rx in FAMILIES.items() if rx.search(text)}
        assert used <= set(facts.command_families), (d.name, d.model, used)
        if "ai-ecn" not in facts.command_families:
            assert "ai-service" not in text


def test_models_without_ai_ecn_get_static_ecn():
    """pod-128 asks for AI ECN; the CE9860 leaves are not on the AI ECN hardware list, so they get
    the static drop profile; the CE8851 storage leaves keep AI ECN."""
    result = generated("pod-128.yaml")
    files = {f.path: f.data.decode() for f in result.files}
    par = files["files/switches/par-leaf-0001.cfg"]
    assert "ai-service" not in par and "drop-profile wanka-ecn" in par
    assert re.search(r"^ qos queue 4 ecn$", par, re.M)
    sto = next(
        files[f"files/switches/{d.name}.cfg"]
        for d in result.cluster.devices
        if d.role == "leaf" and d.plane == "storage"
    )
    assert "ai-ecn enable" in sto and "drop-profile" not in sto


def _variant(tmp_path, name: str, edit) -> pipeline.Result:
    bp = yaml.safe_load((ROOT / "blueprints" / name).read_text())
    edit(bp)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(bp))
    return pipeline.run(path, emit=False)


def test_more_paths_than_the_model_installs_fail_the_design_check(tmp_path):
    """A leaf model that installs 8 paths under 16 uplinks: half the uplinks would sit idle."""

    def narrow(bp):
        bp["catalog"] = {
            "switches": {"ce9860-4c-ei": {"ecmp_max": {"value": 8, "confirmed": False}}}
        }

    result = _variant(tmp_path, "pod-128.yaml", narrow)
    errors = [f for f in result.findings if f.code == "ecmp"]
    assert len(errors) == 1 and errors[0].severity == "error"
    assert "16 paths, limit 8" in errors[0].message
    # located at the key that settles it, with a value that does (expand/remedies.py): 3:1
    # leaves 8 of a leaf's 32 ports for uplinks
    assert errors[0].where == ("networks", "parameter", "oversubscription")
    assert "set networks.parameter.oversubscription: '3:1'" in errors[0].message

    def settled(bp):
        narrow(bp)
        bp["networks"]["parameter"]["oversubscription"] = "3:1"

    assert not [f for f in _variant(tmp_path, "pod-128.yaml", settled).findings if f.code == "ecmp"]


def test_10k_example_is_one_to_one_with_every_uplink_usable():
    cluster = generated("wanka-10k.yaml").cluster
    assert not [f for f in generated("wanka-10k.yaml").findings if f.severity == "error"]
    ups: dict[str, int] = {}
    for link in cluster.links:
        if link.plane == "parameter" and link.kind == "uplink":
            ups[link.a_device] = ups.get(link.a_device, 0) + 1
    for d in cluster.devices_with("spine", "parameter"):
        assert ups[d.name] == d.ecmp_paths <= cluster.facts_of(d.model).ecmp_max
    assert cluster.fabric("parameter").oversubscription == "1:1"


test_10k_example_is_one_to_one_with_every_uplink_usable = pytest.mark.slow(
    test_10k_example_is_one_to_one_with_every_uplink_usable
)


def test_runs_over_the_optics_reach_fail_and_long_runs_take_single_mode():
    """The catalog's MMF rule stops at 70 m (the SR optics reach 100 m on OM4); a run longer than
    its optic's reach is a design error."""
    from generator.analysis.checks import optic_reach
    from generator.catalog import build_catalog
    from generator.records import replace

    catalog = build_catalog()
    assert catalog.medium(400, 100) == "SMF" and catalog.medium(400, 70) == "MMF"
    assert catalog.optic("MMF", 400) == ("400GBASE-SR8", 100)
    assert catalog.optic("AOC", 400) == ("", 0)
    cluster = generated("pod-128.yaml").cluster
    link = next(x for x in cluster.links if x.kind == "uplink")
    long_mmf = replace(link, media="MMF", length_m=150, optic="400GBASE-SR8", reach_m=100)
    found = list(optic_reach(replace(cluster, links=(long_mmf,))))
    assert [f.severity for f in found] == ["error"] and "150 m > 400GBASE-SR8 100 m" in found[
        0
    ].message
    assert not list(optic_reach(replace(cluster, links=(replace(long_mmf, length_m=70),))))


@pytest.mark.slow
def test_10k_example_optics_reach_their_runs():
    cluster = generated("wanka-10k.yaml").cluster
    optical = [x for x in cluster.links if x.media in ("MMF", "SMF")]
    assert optical and all(x.optic and x.length_m <= x.reach_m for x in optical)
    assert max(x.length_m for x in optical if x.media == "MMF") <= 70


def test_lossless_commands_are_held_against_the_model_lists_of_their_pages(tmp_path):
    """Review finding 19: the dcb pfc family and `priority N turn-off threshold` are documented
    for a list of CE6800/8800 models. ce9860-4c-ei is not on it and its release is unconfirmed:
    a warning naming what to run on the box. Claimed as covered by V300R023C00, it is an error;
    without the pfc-deadlock family its configs carry no turn-off line."""
    warned = [f for f in generated("pod-128.yaml").findings if f.code == "switch-capability"]
    assert [f.severity for f in warned] == ["warning"]
    assert "ce9860-4c-ei (parameter plane)" in warned[0].message
    assert "`display dcb pfc deadlock trigger status`" in warned[0].message

    def claimed(bp):
        release = {"value": "V300R023C00", "source": "claimed by this test"}
        bp["catalog"] = {"switches": {"ce9860-4c-ei": {"release": release}}}

    errors = [f for f in _variant(tmp_path, "pod-128.yaml", claimed).findings
              if f.code == "switch-capability"]  # fmt: skip
    assert [f.severity for f in errors] == ["error"] and "has no PFC" in errors[0].message

    def no_deadlock(bp):
        families = {"value": ["port-split", "dcb-pfc", "diffserv", "static-ecn", "bgp", "ospf"]}
        bp["catalog"] = {"switches": {"ce9860-4c-ei": {"command_families": families}}}

    bp = yaml.safe_load((ROOT / "blueprints" / "pod-128.yaml").read_text())
    no_deadlock(bp)
    (tmp_path / "nd.yaml").write_text(yaml.safe_dump(bp))
    files = pipeline.run(tmp_path / "nd.yaml").files
    leaf = next(f for f in files if f.path == "files/switches/par-leaf-0001.cfg")
    assert b"dcb pfc" in leaf.data and b"turn-off threshold" not in leaf.data
