"""Warnings accepted in the blueprint (design.accept, issue #41 item 4): every committed example
generates under --strict, an acceptance names a check that exists and gives a reason, --strict
passes only the accepted checks' warnings, and the design review lists each acceptance."""

from __future__ import annotations

import re

import pytest
import yaml

from generator.cli import main
from tests.support.examples import EXAMPLES, FACTS, ROOT

LEGACY = ROOT / "blueprints" / "legacy-100card.yaml"


def _without_acceptances(text: str) -> str:
    """A blueprint's text with its design.accept list cut out (the list ends the file)."""
    head, sep, _ = text.partition("  accept:\n")
    assert sep, "the blueprint accepts nothing"
    return head


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_example_generates_under_strict(name, tmp_path, capsys):
    """README: every shipped example generates under --strict, as CI recommends running it."""
    facts = ["--facts", str(FACTS[name])] if name in FACTS else []
    args = ["generate", str(ROOT / "blueprints" / name), "-o", str(tmp_path), "--strict", *facts]
    code = main(args)
    err = capsys.readouterr().err
    assert code == 0, err
    shown = [x for x in err.splitlines() if " warning: [" in x or x.startswith("warning: [")]
    assert all("(accepted in design.accept: " in x for x in shown), shown
    review = (
        (tmp_path / "docs" / "README.md").read_text().split("## Warnings the blueprint accepts")
    )
    accepted = yaml.safe_load((ROOT / "blueprints" / name).read_text())["design"]["accept"]
    assert len(review) == 2 and accepted
    for entry in accepted:  # each acceptance listed with its reason
        assert f"| {entry['check']} | {entry['reason']}" in review[1]


def test_strict_fails_on_the_warnings_no_acceptance_covers(tmp_path, capsys):
    """The legacy design without its acceptances fails --strict on the same warnings, and with
    one of them dropped, on that one only."""
    text = LEGACY.read_text()
    bare = tmp_path / "bare.yaml"
    bare.write_text(_without_acceptances(text))
    assert main(["validate", str(bare), "--strict"]) == 2
    err = capsys.readouterr().err
    for check in ("multi-rail", "nfs-access", "shared-storage-plane", "switch-capability"):
        assert f"warning: [{check}]" in err
    assert "accepted" not in err

    one_less = tmp_path / "one-less.yaml"
    one_less.write_text(re.sub(r"    - check: nfs-access\n(      .*\n|        .*\n)+", "", text))
    assert main(["validate", str(one_less), "--strict"]) == 2
    err = capsys.readouterr().err
    failing = [x for x in err.splitlines() if "warning: [" in x and "accepted in" not in x]
    assert len(failing) == 1 and "[nfs-access]" in failing[0], failing
    assert main(["validate", str(one_less)]) == 0  # without --strict a warning never fails


def test_quiet_leaves_out_the_accepted_warnings_only(tmp_path, capsys):
    """`generate -q` in a CI step prints nothing for a design whose warnings are all accepted
    in writing (the design review lists them), but still a warning no acceptance covers."""
    text = LEGACY.read_text()
    assert main(["generate", str(LEGACY), "-o", str(tmp_path / "a"), "-q"]) == 0
    assert capsys.readouterr().err == ""
    one_less = tmp_path / "one-less.yaml"
    one_less.write_text(re.sub(r"    - check: nfs-access\n(      .*\n|        .*\n)+", "", text))
    assert main(["generate", str(one_less), "-o", str(tmp_path / "b"), "-q"]) == 0
    shown = capsys.readouterr().err.splitlines()
    assert len(shown) == 1 and "warning: [nfs-access]" in shown[0], shown


def test_an_unknown_check_or_no_reason_is_refused_where_it_is(tmp_path, capsys):
    text = _without_acceptances(LEGACY.read_text())
    bad = tmp_path / "bad.yaml"
    bad.write_text(text + "  accept:\n    - {check: nfs-acess, reason: the design as built}\n"
                   "    - {check: multi-rail}\n    - {check: provider, reason: '  '}\n")  # fmt: skip
    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err
    lines = len(text.splitlines())
    assert f"{bad}:{lines + 2}:" in err and "design.accept[0].check: 'nfs-acess'" in err
    assert "did you mean 'nfs-access'" in err
    assert f"{bad}:{lines + 3}:" in err and "design.accept[1]" in err and "'reason'" in err
    assert "design.accept[2].reason" in err


def test_an_error_is_never_accepted(tmp_path, capsys):
    """Accepting a check passes its warnings only: a compute rack over its cooling budget still
    fails (tests/errors/checks/compute-rack-cooling-with-its-leaf)."""
    text = (ROOT / "blueprints" / "pod-128.yaml").read_text()
    text = text.replace("power_kw: 30}", "power_kw: 30, cooling_kw: 23}")
    text += "    - {check: rack-power, reason: a test of an error accepted}\n"
    path = tmp_path / "hot.yaml"
    path.write_text(text)
    assert main(["validate", str(path)]) == 2
    errors = [x for x in capsys.readouterr().err.splitlines() if "error: [rack-power]" in x]
    assert len(errors) == 4 and not any("accepted" in x for x in errors), errors


def test_an_acceptance_that_matches_no_warning_is_a_warning(tmp_path, capsys):
    """An entry left after its warning is gone would pass a later warning of that check unseen:
    it is itself a warning, located at design.accept, that --strict fails on."""
    text = (ROOT / "blueprints" / "pod-128.yaml").read_text()
    text += "    - {check: npu-nic, reason: a check this cluster does not warn about}\n"
    path = tmp_path / "stale.yaml"
    path.write_text(text)
    assert main(["validate", str(path)]) == 0
    assert main(["validate", str(path), "--strict"]) == 2
    stale = [x for x in capsys.readouterr().err.splitlines() if "[accept]" in x]
    assert len(stale) == 2 and all("design.accept: warning: [accept]" in x for x in stale)
    assert "names npu-nic, which raised no warning: remove that entry" in stale[0]
    assert f"{path}:" in stale[0]
