"""The command line as a user meets it: help, schema, catalog, validate, exit codes.

Most tests call generator.cli.main(argv) in this process (what `wanka ARGS` runs) and read what it
printed; one test starts the real `python -m generator` and `wanka` console script."""

from __future__ import annotations

import gc
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator.blueprint.validate import SCHEMA
from generator.cli import main
from tests.support.examples import EXAMPLES, LARGE_EXAMPLES, ROOT, TINY, expanded


def wanka(capsys, *args: str) -> tuple[int, str, str]:
    """Exit code, stdout and stderr of `wanka ARGS`, run in this process."""
    try:
        code = main(list(args))
    except SystemExit as exit_:  # argparse: --help, usage errors
        code = exit_.code if isinstance(exit_.code, int) else 2
    out = capsys.readouterr()
    return code, out.out, out.err


def test_python_m_generator_and_the_console_script_run(tmp_path):
    script = shutil.which("wanka", path=str(Path(sys.executable).parent)) or shutil.which("wanka")
    assert script, "the wanka console script is not installed (pip install -e .)"
    bp = tmp_path / "tiny.yaml"
    bp.write_text("apiVersion: wanka/v1\nkind: Cluster\nmetadata: {name: tiny}\n")
    for argv in ([sys.executable, "-m", "generator"], [script]):
        ok = subprocess.run([*argv, "--version"], capture_output=True, text=True, cwd=tmp_path)
        assert ok.returncode == 0 and ok.stdout.startswith("wanka "), ok
        bad = subprocess.run([*argv, "validate", str(bp)], capture_output=True, text=True)
        assert bad.returncode == 2 and bad.stderr.startswith(f"{bp}:"), bad.stderr
        assert "Traceback" not in bad.stderr


def test_help_teaches_the_commands_and_exit_codes(capsys):
    code, out, _ = wanka(capsys, "--help")
    assert code == 0
    for word in ("generate", "validate", "schema", "catalog", "exit codes", "--check"):
        assert word in out


def test_schema_prints_the_shipped_schema(capsys):
    code, out, _ = wanka(capsys, "schema")
    assert code == 0 and json.loads(out) == SCHEMA
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_a_command_runs_without_the_cyclic_collector_and_restores_it(capsys, monkeypatch):
    # after the pipeline the model is still in memory while generate reports and writes: the
    # first collection would walk all of it (seconds of CPU at 102,400 cards)
    from generator import cli

    seen = []
    schema = cli._COMMANDS["schema"]
    monkeypatch.setitem(
        cli._COMMANDS, "schema", lambda a: (seen.append(gc.isenabled()), schema(a))[1]
    )
    assert gc.isenabled()
    code, out, _ = wanka(capsys, "schema")
    assert code == 0 and json.loads(out) == SCHEMA
    assert seen == [False] and gc.isenabled()


def test_catalog_lists_models_and_marks_unconfirmed_ones(capsys):
    _, out, _ = wanka(capsys, "catalog")
    assert "ce9860-4c-ei" in out and "atlas-800t-a2" in out and "[unconfirmed]" in out
    rows = json.loads(wanka(capsys, "catalog", "--json")[1])
    assert {"model": "ce8851-32cq8dq-p", "type": "switch"}.items() <= next(
        r for r in rows if r["model"] == "ce8851-32cq8dq-p"
    ).items()


def test_every_example_validates_and_starts_with_the_schema_line(capsys, monkeypatch):
    """`wanka validate` on the small examples at once; the large one's validation (load,
    validate, expand and analyse: pipeline.run without files, the run expanded() shares) has no
    error either. The command on the large one too: test_the_large_examples_validate (slow)."""
    monkeypatch.chdir(ROOT)
    small = [name for name in EXAMPLES if name not in LARGE_EXAMPLES]
    code, out, err = wanka(capsys, "validate", *(f"blueprints/{name}" for name in small))
    assert code == 0, err
    assert out.count(": valid (") == len(small)
    for name in LARGE_EXAMPLES:
        assert [f.line() for f in expanded(name).findings if f.severity == "error"] == []
    for name in EXAMPLES:
        first = (ROOT / "blueprints" / name).read_text().splitlines()[0]
        assert (
            first == "# yaml-language-server: $schema=../generator/blueprint/wanka-v1.schema.json"
        )


@pytest.mark.slow  # expands 10,240 cards
def test_the_large_examples_validate(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code, out, err = wanka(capsys, "validate", *(f"blueprints/{name}" for name in LARGE_EXAMPLES))
    assert code == 0, err
    assert out.count(": valid (") == len(LARGE_EXAMPLES)


def test_a_twenty_line_blueprint_is_enough(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    bp = tmp_path / "tiny.yaml"
    bp.write_text(
        "apiVersion: wanka/v1\nkind: Cluster\nmetadata: {name: tiny}\ncompute: {cards: 64}\n"
    )
    code, _, err = wanka(capsys, "generate", str(bp), "-o", str(tmp_path / "out"))
    assert code == 0, err
    assert (tmp_path / "out" / "files" / "cabling.csv").is_file()


BAD_INPUT = sorted((ROOT / "tests" / "errors" / "bad-input").glob("*.yaml"))


@pytest.mark.parametrize("path", BAD_INPUT, ids=lambda p: p.stem)
def test_bad_input_exits_2_without_traceback_and_writes_nothing(
    path, tmp_path, capsys, monkeypatch
):
    monkeypatch.chdir(tmp_path)
    for args in (("validate", str(path)), ("generate", str(path), "-o", str(tmp_path / "out"))):
        code, _, err = wanka(capsys, *args)
        assert code == 2, (path.name, err)
        assert "Traceback" not in err and err.startswith(str(path)), err
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_progress_goes_to_stderr_only_when_asked(tmp_path, capsys):
    bp = tmp_path / "tiny.yaml"  # the stages are the same at any size
    bp.write_text(TINY)
    bp = str(bp)
    _, _, quiet = wanka(capsys, "generate", bp, "-o", str(tmp_path / "a"))
    assert "links cabled" not in quiet and not quiet.startswith("[")
    _, out, loud = wanka(capsys, "generate", bp, "-o", str(tmp_path / "b"), "--progress")
    assert "links cabled" in loud and out == ""
