"""Faults while writing: SIGKILL mid-write, a full disk, two runs on one folder at once.

The writer's promise (generator/output.py): the output folder holds the previous output or the
complete new one, never a mix; the next run removes whatever a killed run left beside it.
Concurrent runs on one folder take a lock: last writer wins, whole.
"""

from __future__ import annotations

import errno
import os
import signal
import time
from pathlib import Path

import pytest

from generator import output
from generator.artifacts import OutputFile
from generator.cli import main
from tests.support.examples import generated
from tests.support.forked import Forked

ROOT = Path(__file__).resolve().parents[2]
BLUEPRINTS = {name: ROOT / "blueprints" / f"{name}.yaml" for name in ("pod-128", "legacy-100card")}
OLD = [OutputFile("files/old.txt", b"previous output\n")]


def _tree(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _reference(name: str) -> dict[str, bytes]:
    return _tree(ROOT / "inventories" / name)  # kept fresh by tests/outputs/test_examples_fresh.py


def _leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if ".tmp-" in p.name or ".old-" in p.name)


def test_sigkill_inside_the_write_loop_leaves_the_previous_output(tmp_path):
    """Deterministic: the process kills itself after writing 40 files into its temporary folder."""
    files = generated("pod-128.yaml").files
    out = tmp_path / "out"
    output.write(out, OLD)
    old = _tree(out)

    def write_and_die_at_the_40th_file() -> None:  # runs in the forked child only
        real_open, count = os.open, [0]

        def killing_open(path, flags, *a, **k):  # the writer creates each file with os.open
            if flags & os.O_CREAT and ".tmp-" in str(path):
                count[0] += 1
                if count[0] == 40:
                    os.kill(os.getpid(), signal.SIGKILL)
            return real_open(path, flags, *a, **k)

        os.open = killing_open
        output.write(out, files)

    assert len(files) > 40
    res = Forked(write_and_die_at_the_40th_file).wait()
    assert res.returncode == -signal.SIGKILL, res.stderr
    assert _tree(out) == old
    assert _leftovers(tmp_path), "the killed run should have left its temporary folder"
    output.write(out, OLD)  # the next run cleans up
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("delay", [0.05, 0.15, 0.25])
def test_sigkill_of_wanka_generate_at_any_moment(tmp_path, capsys, delay):
    """Timing-based: whatever the moment, the folder is the old output or the whole new one.
    The run is `wanka generate` in a process forked from this one (no interpreter start and
    imports first): it generates pod-128 for about a fifth of a second, then writes and swaps
    the folder in a few hundredths (the deterministic test above kills it inside the write loop);
    the delays fall early, late and around the end."""
    out = tmp_path / "out"
    output.write(out, OLD)
    old, new = _tree(out), _reference("pod-128")
    run = Forked(lambda: main(["generate", str(BLUEPRINTS["pod-128"]), "-o", str(out), "-q"]))
    time.sleep(delay)
    run.kill(signal.SIGKILL)
    assert run.wait().returncode in (0, -signal.SIGKILL)
    assert _tree(out) in (old, new)
    # the next run (in this process: the killed one was a process of its own) cleans up
    code = main(["generate", str(BLUEPRINTS["pod-128"]), "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    assert _tree(out) == new
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("nth", [1, 25, -1])
def test_disk_full_at_the_nth_file(tmp_path, monkeypatch, nth):
    files = generated("pod-128.yaml").files
    out = tmp_path / "out"
    output.write(out, OLD)
    old = _tree(out)
    limit = len(files) + 1 if nth == -1 else nth  # the marker file is written too
    real_open, count = os.open, [0]

    def full_open(path, flags, *a, **k):  # the writer creates each file with os.open
        if flags & os.O_CREAT and ".tmp-" in str(path):
            count[0] += 1
            if count[0] == limit:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real_open(path, flags, *a, **k)

    assert len(files) < output.PARALLEL_FROM_FILES  # written in this process, counted here
    monkeypatch.setattr(os, "open", full_open)
    with pytest.raises(output.OutputError, match="No space left on device") as err:
        output.write(out, files)
    assert err.value.__cause__.errno == errno.ENOSPC
    monkeypatch.undo()
    assert count[0] == limit
    assert _tree(out) == old
    assert _leftovers(tmp_path) == []


def test_two_runs_at_once_leave_one_whole_output(tmp_path):
    """Last writer wins, whole: the folder equals one of the two outputs, never a mix. Two
    processes run `wanka generate` on one folder at once (forked from this one: what the command
    runs, without two more interpreters to start)."""
    out = tmp_path / "out"
    output.write(out, OLD)
    a, b = (
        Forked(lambda name=name: main(["generate", str(BLUEPRINTS[name]), "-o", str(out), "-q"]))
        for name in ("pod-128", "legacy-100card")
    )
    for run in (a.wait(), b.wait()):
        assert run.returncode == 0, run.stderr
    assert _tree(out) in (_reference("pod-128"), _reference("legacy-100card"))
    assert _leftovers(tmp_path) == []


@pytest.fixture(params=["this process", "forked workers"])
def emitters(request, monkeypatch, tmp_path):
    """generate's emitters as they run for a small cluster (here) and a large one (forked
    workers that write their own files): both paths on pod-128."""
    from generator import parallel

    if request.param == "forked workers":
        monkeypatch.setattr(parallel, "PARALLEL_FROM_LINKS", 0)
    spool = tmp_path / "spool"
    spool.mkdir()
    monkeypatch.setattr("tempfile.tempdir", str(spool))  # where the workers spool the analysis
    yield request.param
    assert list(spool.iterdir()) == []


def test_generate_writes_each_file_where_it_is_made_and_swaps_the_whole_tree_in(
    tmp_path, capsys, emitters
):
    out = tmp_path / "out"
    output.write(out, OLD)
    code = main(["generate", str(BLUEPRINTS["pod-128"]), "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    assert _tree(out) == _reference("pod-128")
    files = len(_reference("pod-128")) - 1  # the marker is not counted
    assert f"{out}: {files} files written" in capsys.readouterr().err
    assert _leftovers(tmp_path) == []


def test_a_design_failure_after_the_files_were_written_leaves_the_previous_output(
    tmp_path, capsys, emitters
):
    """--strict fails on legacy-100card's warnings (without the acceptances of its design.accept)
    once the analysis is done; the forked emitters have written files by then, which go with the
    temporary folder."""
    out = tmp_path / "out"
    output.write(out, OLD)
    old = _tree(out)
    legacy = tmp_path / "legacy.yaml"
    legacy.write_text(BLUEPRINTS["legacy-100card"].read_text().partition("  accept:\n")[0])
    code = main(["generate", str(legacy), "-o", str(out), "--strict"])
    assert code == 2
    assert "design checks failed (--strict: warnings fail too); nothing written" in (
        capsys.readouterr().err
    )
    assert _tree(out) == old
    assert _leftovers(tmp_path) == []


def test_a_full_disk_while_the_emitters_write_is_the_output_folders_error(
    tmp_path, capsys, monkeypatch, emitters
):
    out = tmp_path / "out"
    output.write(out, OLD)
    old = _tree(out)
    real_open, count = os.open, [0]

    def full_open(path, flags, *a, **k):  # forked workers inherit it, each with its own count
        if flags & os.O_CREAT and ".tmp-" in str(path):
            count[0] += 1
            if count[0] == 25:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real_open(path, flags, *a, **k)

    monkeypatch.setattr(os, "open", full_open)
    code = main(["generate", str(BLUEPRINTS["pod-128"]), "-o", str(out), "-q"])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert f"wanka: cannot write {out}: No space left on device" in err
    assert _tree(out) == old
    assert _leftovers(tmp_path) == []
