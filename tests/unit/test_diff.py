"""wanka diff: the build changes between two blueprint revisions, and the CLI around it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from generator import diff, pipeline
from generator.cli import main
from generator.model import ip
from tests.support.examples import ROOT, TINY, generated

POD = ROOT / "blueprints" / "pod-128.yaml"


def _variant(tmp_path: Path, name: str, change) -> Path:
    bp = yaml.safe_load(POD.read_text())
    change(bp)
    path = tmp_path / name
    path.write_text(yaml.safe_dump(bp, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def bigger(tmp_path_factory):
    """pod-128 with one more leaf's worth of servers: 160 cards."""
    path = _variant(
        tmp_path_factory.mktemp("bigger"), "pod-128.yaml", lambda b: b["compute"].update(cards=160)
    )
    return pipeline.run(path)


def test_nothing_changes_against_itself():
    old = generated("pod-128.yaml")
    report = diff.compare(old, old)
    assert not diff.changed(report)
    assert "no change" in diff.markdown(report)


def test_more_servers_lists_exactly_the_new_devices_cables_and_addresses(bigger):
    old = generated("pod-128.yaml")
    report = diff.compare(old, bigger)
    assert diff.changed(report)
    new_servers = {f"npu-{i:03d}" for i in range(17, 21)}
    added = {d["name"] for d in report["devices"]["added"]}
    assert added == new_servers | {"par-leaf-0005"}
    assert report["devices"]["removed"] == []
    # every link of a new server is an added cable, and nothing else is added
    new_links = {
        (x.a_device, x.a_port, x.b_device, x.b_port)
        for x in bigger.cluster.links
        if x.a_device in new_servers or x.b_device == "par-leaf-0005"
    }
    old_ends = {(x.a_device, x.a_port) for x in old.cluster.links} | {
        (x.b_device, x.b_port) for x in old.cluster.links
    }
    listed = {
        tuple(c["a"].split(":", 1)) + tuple(c["b"].split(":", 1)) for c in report["cables"]["added"]
    } | {
        tuple(c["new"]["a"].split(":", 1)) + tuple(c["new"]["b"].split(":", 1))
        for c in report["cables"]["repatched"]
    }
    assert {x for x in new_links if (x[0], x[1]) not in old_ends} <= listed
    assert report["cables"]["removed"] == []
    # every re-patched cable keeps one of its ends
    for c in report["cables"]["repatched"]:
        assert {c["old"]["a"], c["old"]["b"]} & {c["new"]["a"], c["new"]["b"]}
    # the new servers' addresses are added; no address is lost
    want = {
        (a.device, a.port, a.plane, f"{ip(a.ip)}/{a.prefix}")
        for a in bigger.cluster.addresses
        if a.device in new_servers
    }
    got = {(x["device"], x["port"], x["plane"], x["address"]) for x in report["addresses"]["added"]}
    assert want <= got
    assert report["addresses"]["removed"] == []
    assert report["ranks"] == {"old": 128, "new": 160, "moved": []}
    cfg = {x["switch"]: x for x in report["configs"]}
    assert cfg["par-leaf-0005"]["status"] == "added"
    assert all(x["status"] == "changed" for n, x in cfg.items() if n != "par-leaf-0005")
    md = diff.markdown(report)
    assert "#### Devices added (5)" in md and "npu-020" in md


def test_changed_pool_changes_only_that_planes_addresses(tmp_path):
    old = generated("pod-128.yaml")
    path = _variant(
        tmp_path, "pod-128.yaml", lambda b: b["networks"]["business"].update(pool="10.110.0.0/20")
    )
    report = diff.compare(old, pipeline.run(path))
    assert not any(report["devices"].values())
    assert not any(report["cables"].values())
    assert report["ranks"]["moved"] == []
    changed = report["addresses"]["changed"]
    business = [(a.device, a.port) for a in old.cluster.addresses if a.plane == "business"]
    assert {(x["device"], x["port"]) for x in changed if x["plane"] == "business"} >= set(business)
    assert all(x["new"].startswith("10.110.") for x in changed if x["plane"] == "business")
    # the firewall links facing the business spines are addressed from the business pool too
    assert all(
        x["plane"] == "business" or (x["plane"] == "border" and x["new"].startswith("10.110."))
        for x in changed
    )
    assert report["configs"], "the business switches' gateway addresses change"
    # disturbances, but not from growing: no growth plan would have avoided them
    assert report["disturbances"] and report["plan"] is None
    assert "growth.cards" not in diff.markdown(report)


def test_growth_without_a_plan_names_the_plan_that_avoids_it(bigger):
    """pod-128 has no growth plan: growing it to 160 cards moves installed gear, and the diff
    names the growth.cards that would have made it additions only, with what that plan's build
    would have disturbed, counted on the plan's build, not assumed."""
    old = generated("pod-128.yaml")
    report = diff.compare(old, bigger)
    moved = [x for x in report["disturbances"] if x["kind"] == "device moved"]
    assert moved, "growing pod-128 without a plan moves devices"
    assert report["plan"] == {"cards": bigger.cluster.cards, "disturbances": {}}
    line = next(x for x in diff.markdown(report).splitlines() if "growth plan" in x)
    assert f"set `growth.cards: {bigger.cluster.cards}` in phase 1" in line
    assert "moved 0 devices" in line and "0 times" in line


def _tiny(folder: Path, cards: int = 16) -> Path:
    """The tiny blueprint (16 cards), or with more cards: the command's exit codes and formats
    are the same at any size (what a diff holds is checked above, on pod-128)."""
    bp = yaml.safe_load(TINY)
    bp["compute"]["cards"] = cards
    path = folder / f"tiny-{cards}.yaml"
    path.write_text(yaml.safe_dump(bp, sort_keys=False))
    return path


def test_cli_exit_codes_and_formats(tmp_path, capsys):
    small, bigger_path = _tiny(tmp_path), _tiny(tmp_path, 32)
    assert main(["diff", str(small), str(small)]) == 0
    assert "no change" in capsys.readouterr().out
    assert main(["diff", str(small), str(bigger_path), "--format", "json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert {d["name"] for d in data["devices"]["added"]} == {"npu-0003", "npu-0004"}
    bad = tmp_path / "bad.yaml"
    bad.write_text("metadata: [\n")
    assert main(["diff", str(small), str(bad)]) == 2
    assert main(["diff", str(small), str(tmp_path / "missing.yaml")]) == 2


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_cli_reads_revisions_from_git(tmp_path, capsys, monkeypatch):
    repo = tmp_path / "repo"
    (repo / "blueprints").mkdir(parents=True)
    _git("init", "-q", cwd=repo)
    target = repo / "blueprints" / "pod-128.yaml"  # the tiny blueprint under this name
    target.write_text(_tiny(tmp_path).read_text())
    _git("add", ".", cwd=repo)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one", cwd=repo)
    target.write_text(_tiny(tmp_path, 32).read_text())
    monkeypatch.chdir(repo)
    assert main(["diff", "HEAD:blueprints/pod-128.yaml", "blueprints/pod-128.yaml"]) == 1
    assert "#### Devices added (2)" in capsys.readouterr().out
    assert main(["diff", "HEAD:blueprints/pod-128.yaml", "HEAD:blueprints/pod-128.yaml"]) == 0
    capsys.readouterr()
    assert main(["diff", "nosuchref:blueprints/pod-128.yaml", "blueprints/pod-128.yaml"]) == 2
    assert "nosuchref" in capsys.readouterr().err
    assert main(["diff", "HEAD:blueprints/missing.yaml", "blueprints/pod-128.yaml"]) == 2
    outside = tmp_path / "outside"
    outside.mkdir()
    monkeypatch.chdir(outside)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    assert main(["diff", "HEAD:blueprints/pod-128.yaml", str(POD)]) == 2
    assert "not in a git repository" in capsys.readouterr().err
