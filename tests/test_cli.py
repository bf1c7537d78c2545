"""The command line as a user meets it: help, schema, catalog, validate, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from generator.blueprint.validate import SCHEMA
from tests.conftest import EXAMPLES, ROOT


def wanka(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "generator", *args], capture_output=True, text=True, cwd=cwd
    )


def test_help_teaches_the_commands_and_exit_codes():
    res = wanka("--help")
    assert res.returncode == 0
    for word in ("generate", "validate", "schema", "catalog", "exit codes", "--check"):
        assert word in res.stdout


def test_schema_prints_the_shipped_schema():
    res = wanka("schema")
    assert res.returncode == 0 and json.loads(res.stdout) == SCHEMA
    assert SCHEMA["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_catalog_lists_models_and_marks_unconfirmed_ones():
    res = wanka("catalog")
    assert (
        "ce9860-4c-ei" in res.stdout
        and "atlas-800t-a2" in res.stdout
        and "[unconfirmed]" in res.stdout
    )
    rows = json.loads(wanka("catalog", "--json").stdout)
    assert {"model": "ce8851-32cq8dq-p", "type": "switch"}.items() <= next(
        r for r in rows if r["model"] == "ce8851-32cq8dq-p"
    ).items()


def test_every_example_validates_and_starts_with_the_schema_line():
    res = wanka("validate", *(f"blueprints/{name}" for name in EXAMPLES))
    assert res.returncode == 0, res.stderr
    assert res.stdout.count(": valid (") == len(EXAMPLES)
    for name in EXAMPLES:
        first = (ROOT / "blueprints" / name).read_text().splitlines()[0]
        assert (
            first == "# yaml-language-server: $schema=../generator/blueprint/wanka-v1.schema.json"
        )


def test_a_twenty_line_blueprint_is_enough(tmp_path):
    bp = tmp_path / "tiny.yaml"
    bp.write_text(
        "apiVersion: wanka/v1\nkind: Cluster\nmetadata: {name: tiny}\ncompute: {cards: 64}\n"
    )
    res = wanka("generate", str(bp), "-o", str(tmp_path / "out"), cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    assert (tmp_path / "out" / "files" / "cabling.csv").is_file()


def test_bad_input_exits_2_without_traceback_and_writes_nothing(tmp_path):
    bad = ROOT / "tests" / "data" / "bad-input"
    for path in sorted(bad.glob("*.yaml")):
        for args in (("validate", str(path)), ("generate", str(path), "-o", str(tmp_path / "out"))):
            res = wanka(*args, cwd=tmp_path)
            assert res.returncode == 2, (path.name, res.stderr)
            assert "Traceback" not in res.stderr and res.stderr.startswith(str(path)), res.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_progress_goes_to_stderr_only_when_asked(tmp_path):
    bp = str(ROOT / "blueprints" / "pod-128.yaml")
    quiet = wanka("generate", bp, "-o", str(tmp_path / "a"))
    assert "[" not in quiet.stderr.split("\n")[0] or "links cabled" not in quiet.stderr
    loud = wanka("generate", bp, "-o", str(tmp_path / "b"), "--progress")
    assert "links cabled" in loud.stderr and loud.stdout == ""
