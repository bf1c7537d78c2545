"""The twin's failures are records (file, line, subject, message, the cause to blame, the phase),
read by their fields; their text is only what the report and the terminal show."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from generator.cli import main
from generator.twin import prove, run
from generator.twin.outcome import Failure, Outcome, Stop, kinds

ROOT = Path(__file__).resolve().parents[2]


def test_a_failure_reads_as_where_subject_message_leaving_out_what_is_empty():
    width = Failure("files/switches/par-leaf-0001.cfg", 838, "par-leaf-0001", "1 next hops to X")
    assert width.where == "files/switches/par-leaf-0001.cfg:838"
    assert width.text() == "files/switches/par-leaf-0001.cfg:838: par-leaf-0001: 1 next hops to X"
    assert str(width) == width.text()
    whole_file = Failure("files/ztp/configs/a.cfg", message="a fetched a config that differs")
    assert whole_file.text() == "files/ztp/configs/a.cfg: a fetched a config that differs"
    no_file = Failure(subject="parameter -> business", message="ns 10.0.0.1 reached 10.1.0.1")
    assert no_file.text() == "parameter -> business: ns 10.0.0.1 reached 10.1.0.1"


def test_the_cause_comes_first_and_the_phase_before_everything():
    shut = Failure("files/switches/par-leaf-0002.cfg", 400, message="400GE1/3/1 is shut down")
    down = Failure("files/switches/par-leaf-0002.cfg", 838, "par-leaf-0002", "BGP peer 10.0.0.1 "
                   "(AS 65001) is Active", cause=shut)  # fmt: skip
    assert down.text() == (
        "files/switches/par-leaf-0002.cfg:400: 400GE1/3/1 is shut down; "
        "files/switches/par-leaf-0002.cfg:838: par-leaf-0002: BGP peer 10.0.0.1 (AS 65001) is Active"
    )
    later = down.after("after restoring")
    assert later.text() == "after restoring: " + down.text()
    assert (later.file, later.line, later.cause) == (down.file, down.line, shut)


def test_failures_of_one_line_and_subject_are_one_kind_and_others_each_their_own():
    flow = [Failure("files/flows.csv", 7, "dns", f"host{i} -> resolver: timed out") for i in (1, 2)]
    other_flow = Failure("files/flows.csv", 8, "ntp", "host1 -> ntp: timed out")
    pairs = [Failure(subject="parameter -> business", message=f"ns{i} reached") for i in (1, 2)]
    groups = kinds([flow[0], pairs[0], flow[1], other_flow, pairs[1]])
    assert groups == [(2, flow[0]), (1, pairs[0]), (1, other_flow), (1, pairs[1])]


def test_an_outcome_is_ok_only_with_every_case_proved_and_no_failure():
    assert Outcome("x", proved=3, total=3).ok
    assert not Outcome("x", proved=2, total=3).ok
    assert not Outcome("x", proved=3, total=3, failures=[Failure(message="late")]).ok


def test_no_twin_module_splits_text_back_into_data():
    """The review's finding: `f.split(": ")[1]` recovered flow names from failure strings."""
    for path in sorted((ROOT / "generator" / "twin").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        assert not re.search(r"""\.split\(["']: ["']\)""", text), path.name
        assert "failures: list[str]" not in text, path.name


def test_the_terminal_shows_each_kind_once_with_how_many_more_are_like_it():
    from generator.twin import terminal

    flows = [Failure("files/flows.csv", 7, "dns", f"h{i} -> resolver: timed out") for i in range(3)]
    pairs = [Failure(subject=f"parameter -> p{i}", message=f"ns{i} reached") for i in range(13)]
    text = terminal([
        Outcome("required flows", 26, 29, flows, note="3 probes not made"),
        Outcome("forbidden pairs fail", 0, 13, pairs),
        Outcome("ECMP width", 4, 4),
    ])  # fmt: skip
    assert text.splitlines() == [
        "FAIL required flows: 26/29 (3 probes not made)",
        "     files/flows.csv:7: dns: h0 -> resolver: timed out  [and 2 more like it]",
        "FAIL forbidden pairs fail: 0/13",
        *[f"     parameter -> p{i}: ns{i} reached" for i in range(12)],
        "     [and 1 more failures of other kinds: see the report]",
        "ok   ECMP width: 4/4",
    ]
    assert text.endswith("ok   ECMP width: 4/4\n")


def test_the_report_lists_every_failure_under_its_check_and_none_when_clean():
    from generator.twin import NOT_EMULATED, plan, report

    folder = ROOT / "inventories" / "pod-128"
    p = plan.plan(folder, {})
    cause = Failure(
        "files/cabling.csv", 130, message="cable PAR-000065 joins x to y, another subnet"
    )
    down = Failure(
        "files/switches/a.cfg", 9, "a", "BGP peer 10.0.0.1 (AS 1) is Active", cause=cause
    )
    failing = [Outcome("BGP sessions Established", 1, 2, [down], seconds=1.25, note="converged")]
    text = report(folder, p, failing, {"total": 3.04})
    assert text.startswith("# Twin report: pod-128\n\n")
    assert "| BGP sessions Established | 1 | 2 | 1.2 | FAIL converged |\n" in text
    assert (
        "## Failures\n\n- BGP sessions Established: files/cabling.csv:130: cable PAR-000065 joins "
        "x to y, another subnet; files/switches/a.cfg:9: a: BGP peer 10.0.0.1 (AS 1) is Active\n\n"
        "## Lines read\n"
    ) in text
    assert text.endswith("## Times\n\n- total: 3.0 s\n")
    clean = report(folder, p, [Outcome("ECMP", 4, 4)], {})
    assert "## Failures\n\nnone\n\n## Lines read\n\n| lines | twin | what it means |\n" in clean
    assert f"## Not emulated (never claimed)\n\n- {NOT_EMULATED[0]}\n" in clean


# programs of their own, not commands of the CLI: the ZTP client test double (run by path in a
# switch's namespace: its stdout is its answer to the drill) and the maintainers' scripts
# `python -m generator.collection readme` (the role READMEs it writes name it) and
# `python -m generator.blueprint.schema [--write]` (the schema file, generated from the records)
OWN_PROGRAMS = {"twin/ztp_client.py", "collection.py", "blueprint/schema.py"}


def test_only_the_cli_prints():
    import ast

    printing = set()
    for path in sorted((ROOT / "generator").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if any(
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "print"
            for node in ast.walk(tree)
        ):
            printing.add(path.relative_to(ROOT / "generator").as_posix())
    assert {p for p in printing if not p.startswith("cli/")} == OWN_PROGRAMS


def test_twin_prove_leaves_the_printing_and_the_exit_code_to_the_cli(tmp_path, capsys, monkeypatch):
    """`twin prove` returns its result or raises, as every twin command does; the CLI prints the
    message and exits 2 (here a folder wanka did not write, refused before any root work)."""
    monkeypatch.setattr(run, "missing", list)  # root and the packages, as on a twin host
    args = argparse.Namespace(folder=str(tmp_path))
    with pytest.raises(Stop, match="not a generated folder"):
        prove.main(args)
    assert capsys.readouterr() == ("", "")  # prove itself printed nothing
    assert main(["twin", "prove", str(tmp_path)]) == 2
    out = capsys.readouterr()
    assert (out.out, out.err) == (
        "",
        f"wanka: {tmp_path}: not a generated folder (no files/cabling.csv)\n",
    )
