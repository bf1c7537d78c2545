"""Writing output: deterministic bytes, atomic replacement, --check drift, refusal of foreign folders."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator import output
from generator.artifacts import OutputFile
from generator.cli import main

ROOT = Path(__file__).resolve().parents[1]
POD = str(ROOT / "blueprints" / "pod-128.yaml")


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


def _wanka(capsys, *args: str) -> tuple[int, str, str]:
    """`wanka ARGS` in this process: exit code, stdout, stderr."""
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_same_input_same_bytes_whatever_the_hash_seed(tmp_path, capsys):
    """This process (pytest's hash seed) and two others with other seeds, locales and zones."""
    bp = POD
    a, b = tmp_path / "a", tmp_path / "b"
    assert _wanka(capsys, "generate", bp, "-o", str(a))[0] == 0
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


def test_check_reports_drift_and_writes_nothing(tmp_path, capsys):
    bp = POD
    out = tmp_path / "out"
    code, stdout, _ = _wanka(capsys, "generate", bp, "-o", str(out), "--check")
    assert code == 1 and "added    files/cabling.csv" in stdout
    assert not out.exists()
    assert _wanka(capsys, "generate", bp, "-o", str(out))[0] == 0
    assert _wanka(capsys, "generate", bp, "-o", str(out), "--check")[0] == 0
    (out / "files" / "cabling.csv").write_text("edited\n")
    (out / "files" / "stray.txt").write_text("x\n")
    code, stdout, _ = _wanka(capsys, "generate", bp, "-o", str(out), "--check")
    assert code == 1
    assert "changed  files/cabling.csv" in stdout and "removed  files/stray.txt" in stdout
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
    with pytest.raises(output.OutputError, match="No space left on device"):
        output.write(out, [OutputFile("files/a.txt", b"new\n"), OutputFile("files/b.txt", b"b\n")])
    monkeypatch.undo()
    assert _tree(out) == before
    assert [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name] == []


def test_refuses_to_replace_a_folder_it_did_not_write(tmp_path, capsys):
    foreign = tmp_path / "home"
    foreign.mkdir()
    (foreign / "thesis.tex").write_text("precious\n")
    with pytest.raises(output.OutputError, match="did not write"):
        output.write(foreign, [OutputFile("files/a.txt", b"x\n")])
    assert (foreign / "thesis.tex").read_text() == "precious\n"
    code, _, err = _wanka(capsys, "generate", POD, "-o", str(foreign))
    assert code == 2 and "did not write" in err


def test_unsafe_output_paths_are_refused(tmp_path):
    for bad in ("../escape.txt", "/etc/passwd", "files//x"):
        with pytest.raises(ValueError):
            output.write(tmp_path / "o", [OutputFile(bad, b"x")])
