"""Writing output: deterministic bytes, atomic replacement, --check drift, refusal of foreign folders."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator import output
from generator.artifacts import OutputFile

ROOT = Path(__file__).resolve().parents[1]


def _run(
    *args: str, env: dict | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "generator", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
        cwd=cwd or ROOT,
    )


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_same_input_same_bytes_whatever_the_hash_seed(tmp_path):
    bp = str(ROOT / "blueprints" / "pod-128.yaml")
    a, b = tmp_path / "a", tmp_path / "b"
    assert _run("generate", bp, "-o", str(a), env={"PYTHONHASHSEED": "1"}).returncode == 0
    assert (
        _run(
            "generate",
            bp,
            "-o",
            str(b),
            env={"PYTHONHASHSEED": "4242", "LC_ALL": "C"},
            cwd=tmp_path,
        ).returncode
        == 0
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {"PYTHONHASHSEED": "987654", "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8", "TZ": "Asia/Tokyo"}
    c = tmp_path / "c"
    assert _run("generate", bp, "-o", str(c), env=env, cwd=elsewhere).returncode == 0
    assert _tree(a) == _tree(b) == _tree(c)
    assert "files/cabling.csv" in _tree(a)


def test_check_reports_drift_and_writes_nothing(tmp_path):
    bp = str(ROOT / "blueprints" / "pod-128.yaml")
    out = tmp_path / "out"
    first = _run("generate", bp, "-o", str(out), "--check")
    assert first.returncode == 1 and "added    files/cabling.csv" in first.stdout
    assert not out.exists()
    assert _run("generate", bp, "-o", str(out)).returncode == 0
    assert _run("generate", bp, "-o", str(out), "--check").returncode == 0
    (out / "files" / "cabling.csv").write_text("edited\n")
    (out / "files" / "stray.txt").write_text("x\n")
    drift = _run("generate", bp, "-o", str(out), "--check")
    assert drift.returncode == 1
    assert (
        "changed  files/cabling.csv" in drift.stdout and "removed  files/stray.txt" in drift.stdout
    )
    assert (out / "files" / "cabling.csv").read_text() == "edited\n"


def test_failed_write_leaves_previous_output_intact(tmp_path, monkeypatch):
    out = tmp_path / "out"
    output.write(out, [OutputFile("files/a.txt", b"old\n")])
    before = _tree(out)

    real_open = open

    def failing_open(path, mode="r", *a, **k):
        if "w" in mode and str(path).endswith("b.txt"):
            raise OSError(28, "No space left on device")
        return real_open(path, mode, *a, **k)

    monkeypatch.setattr("builtins.open", failing_open)
    with pytest.raises(OSError):
        output.write(out, [OutputFile("files/a.txt", b"new\n"), OutputFile("files/b.txt", b"b\n")])
    monkeypatch.undo()
    assert _tree(out) == before
    assert [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name] == []


def test_refuses_to_replace_a_folder_it_did_not_write(tmp_path):
    foreign = tmp_path / "home"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("precious\n")
    with pytest.raises(output.OutputError, match="did not write"):
        output.write(foreign, [OutputFile("files/a.txt", b"x\n")])
    assert (foreign / "thesis.tex").read_text() == "precious\n"
    res = _run("generate", str(ROOT / "blueprints" / "pod-128.yaml"), "-o", str(foreign))
    assert res.returncode == 2 and "did not write" in res.stderr


def test_unsafe_output_paths_are_refused(tmp_path):
    for bad in ("../escape.txt", "/etc/passwd", "files//x"):
        with pytest.raises(ValueError):
            output.write(tmp_path / "o", [OutputFile(bad, b"x")])
