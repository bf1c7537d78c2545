"""Writing output: deterministic bytes, atomic replacement, --check drift, refusal of foreign folders."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import pytest

from generator import output
from generator.artifacts import OutputFile
from generator.cli import main
from tests.support.ansible_warnings import ansible_warnings
from tests.support.examples import TINY

ROOT = Path(__file__).resolve().parents[2]
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


@pytest.fixture
def tiny(tmp_path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY)
    return path


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


def test_check_reports_drift_and_writes_nothing(tmp_path, capsys, tiny):
    bp = str(tiny)  # drift is drift at any size
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


@pytest.mark.parametrize("writers", ["this process", "forked writers"])
def test_failed_write_leaves_previous_output_intact(tmp_path, monkeypatch, writers):
    out = tmp_path / "out"
    output.write(out, [OutputFile("files/a.txt", b"old\n")])
    before = _tree(out)

    real_open = os.open

    def full_disk(path, flags, *a, **k):  # forked writers inherit it
        if flags & os.O_CREAT and str(path).endswith("b.txt"):
            raise OSError(28, "No space left on device", str(path))
        return real_open(path, flags, *a, **k)

    monkeypatch.setattr(output.os, "open", full_disk)
    if writers == "forked writers":
        monkeypatch.setattr(output, "PARALLEL_FROM_FILES", 1)
    with pytest.raises(output.OutputError, match="No space left on device"):
        output.write(out, [OutputFile("files/a.txt", b"new\n"), OutputFile("files/b.txt", b"b\n")])
    monkeypatch.undo()
    assert _tree(out) == before
    assert [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name] == []


def test_many_files_written_by_forked_writers_are_every_byte_of_the_output(tmp_path, monkeypatch):
    # the forked writers' path from 100 files instead of 2,000: the same split (each writer every
    # n-th file), a seventh of the files to create
    monkeypatch.setattr(output, "PARALLEL_FROM_FILES", 100)
    files = [OutputFile(f"d{i % 7}/f{i}.txt", f"{i}\n".encode() * (i % 5)) for i in range(350)]
    assert len(files) >= output.PARALLEL_FROM_FILES  # the forked writers' path
    output.write(tmp_path / "out", files)
    written = _tree(tmp_path / "out")
    assert written.pop(output.MARKER).endswith(
        b"".join(sorted(f.path.encode() + b"\n" for f in files))
    )
    assert written == {f.path: f.data for f in files}
    assert not output.check(tmp_path / "out", files)


def test_write_and_check_run_without_the_cyclic_collector_and_restore_it(tmp_path, monkeypatch):
    # after pipeline.run the first collection would walk every object of the model (0.65 s at
    # 102,400 cards): writing and checking keep it paused, then leave it as they found it
    seen: dict[str, list[bool]] = {"_write_tree": [], "_differs": []}
    for name, calls in seen.items():
        real = getattr(output, name)
        monkeypatch.setattr(
            output, name, lambda *a, c=calls, f=real: (c.append(gc.isenabled()), f(*a))[1]
        )
    files = [OutputFile("a.txt", b"a\n")]
    assert gc.isenabled()
    output.write(tmp_path / "out", files)
    assert not output.check(tmp_path / "out", files)
    assert seen["_write_tree"] == [False]
    assert seen["_differs"] and not any(seen["_differs"])
    assert gc.isenabled()


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


def test_a_user_file_in_the_output_folder_stops_generate_and_nothing_changes(
    tmp_path, capsys, tiny
):
    out = tmp_path / "tiny"
    assert _wanka(capsys, "generate", str(tiny), "-o", str(out), "-q")[0] == 0
    (out / "group_vars" / "site-local.yml").write_text("ntp_servers: [192.0.2.1]\n")
    (out / "host_vars" / "extra-host.yml").write_text("rack: X\n")
    (out / "files" / "hccn" / "npu-0001.conf").write_text("edited\n")  # ours: replaced
    before = _tree(out)
    code, _, err = _wanka(capsys, "generate", str(tiny), "-o", str(out), "-q")
    assert code == 2
    assert "group_vars/site-local.yml" in err and "host_vars/extra-host.yml" in err
    assert "files/hccn" not in err and "tiny.site/" in err
    assert _tree(out) == before
    (out / "group_vars" / "site-local.yml").unlink()
    (out / "host_vars" / "extra-host.yml").unlink()
    assert _wanka(capsys, "generate", str(tiny), "-o", str(out), "-q")[0] == 0
    assert (out / "files" / "hccn" / "npu-0001.conf").read_text() != "edited\n"


# What a play on npu-0001 sees: its variables and groups as Ansible resolves them at run time
SEEN = "{{ {'hostvars': hostvars[inventory_hostname], 'burn_in': groups['burn_in']} | to_json }}"


def test_the_site_overlay_survives_generate_and_ansible_reads_it_second(tmp_path, capsys, tiny):
    import json

    from tests.support.ansible_run import tool

    out, site = tmp_path / "tiny", tmp_path / "tiny.site"
    assert _wanka(capsys, "generate", str(tiny), "-o", str(out), "-q")[0] == 0
    (site / "group_vars" / "all").mkdir(parents=True)
    (site / "host_vars").mkdir()
    (site / "group_vars" / "all" / "site.yml").write_text("ntp_servers: [192.0.2.1]\n")
    (site / "host_vars" / "npu-0001.yml").write_text("site_burn_in: true\n")
    (site / "hosts.yml").write_text(
        "all:\n  children:\n    burn_in:\n      hosts:\n        npu-0001:\n"
    )
    mine = {p: p.read_bytes() for p in site.rglob("*") if p.is_file()}
    assert _wanka(capsys, "generate", str(tiny), "-o", str(out), "-q")[0] == 0
    assert {p: p.read_bytes() for p in site.rglob("*") if p.is_file()} == mine
    env = {**os.environ, "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1"}
    res = subprocess.run(  # one ad-hoc run (the debug action runs on the controller)
        [
            tool("ansible"),
            "npu-0001",
            "-i",
            str(out / "hosts.yml"),
            "-i",
            str(site),
            "-m",
            "ansible.builtin.debug",
            "-a",
            f"msg={SEEN}",
        ],
        capture_output=True,
        text=True,
        env=env,
    )
    assert res.returncode == 0 and not ansible_warnings(res.stderr), res.stdout + res.stderr
    seen = json.loads(res.stdout.split(" => ", 1)[1])["msg"]
    seen = json.loads(seen) if isinstance(seen, str) else seen
    npu = seen["hostvars"]
    assert npu["ntp_servers"] == ["192.0.2.1"] and npu["site_burn_in"] is True
    assert npu["ansible_host"]  # the generated host_vars still apply
    assert seen["burn_in"] == ["npu-0001"]
    # the roles' files stay the generated folder's (first -i wins)
    assert npu["wanka_files"] == f"{out}/files", npu["wanka_files"]


# --- names beside the folder: the lock and the staging folders are wanka's own -------------------


def _lock_in_the_way(parent: Path, kind: str) -> Path:
    """Puts a user's thing named `.out.lock`; returns the file it would let wanka overwrite."""
    lock, victim = parent / ".out.lock", parent / "precious.txt"
    victim.write_text("user data\n")
    if kind == "symlink to a file":
        lock.symlink_to(victim)
    elif kind == "dangling symlink":
        victim = parent / "made-by-open"  # open(O_CREAT) through the link would make it
        lock.symlink_to(victim)
    elif kind == "fifo":
        os.mkfifo(lock)
    elif kind == "folder":
        lock.mkdir()
    else:  # a regular file of the user's
        lock.write_text("user data\n")
        victim = lock
    return victim


@pytest.mark.parametrize(
    "kind", ["symlink to a file", "dangling symlink", "fifo", "folder", "user's file"]
)
def test_a_lock_name_taken_by_a_user_is_refused_and_nothing_is_written(tmp_path, kind):
    victim = _lock_in_the_way(tmp_path, kind)
    before = victim.read_bytes() if victim.exists() else None
    run = subprocess.run(  # a FIFO opened for writing without O_NONBLOCK would hang: time it out
        [sys.executable, "-c", f"from generator import output; from generator.artifacts import "
         f"OutputFile; output.write(__import__('pathlib').Path({str(tmp_path / 'out')!r}), "
         f"[OutputFile('a.txt', b'a')])"],
        capture_output=True, text=True, timeout=20, cwd=ROOT,
    )  # fmt: skip
    assert run.returncode != 0 and "not wanka's lock file" in run.stderr, run.stderr
    assert not (tmp_path / "out").exists()
    assert (victim.read_bytes() if victim.exists() else None) == before
    assert sorted(p.name for p in tmp_path.iterdir() if ".tmp-" in p.name) == []


def test_the_lock_wanka_made_is_reused(tmp_path):
    output.write(tmp_path / "out", [OutputFile("a.txt", b"a\n")])
    assert (tmp_path / ".out.lock").read_bytes() == output.LOCK_TEXT
    output.write(tmp_path / "out", [OutputFile("a.txt", b"b\n")])
    assert (tmp_path / "out" / "a.txt").read_bytes() == b"b\n"


@pytest.mark.parametrize("name", [".out.tmp-abc123", ".out.tmp-", ".out.old-4242", ".out.tmp-link"])
def test_a_user_folder_named_like_a_staging_folder_is_neither_moved_nor_deleted(tmp_path, name):
    out, mine = tmp_path / "out", tmp_path / name
    target = tmp_path / "keep" if name.endswith("link") else mine
    target.mkdir()
    (target / "notes.txt").write_text("mine\n")
    (target / output.STAGED).symlink_to(tmp_path / "keep-marker")  # a link is not the marker
    (tmp_path / "keep-marker").write_bytes(output.STAGED_TEXT)
    if target != mine:
        mine.symlink_to(target)
    for data in (b"one\n", b"two\n"):  # a first run (no output yet) and a replacing one
        output.write(out, [OutputFile("a.txt", data)])
        assert (mine / "notes.txt").read_text() == "mine\n"
    assert (out / "a.txt").read_bytes() == b"two\n"
    assert sorted(p.name for p in tmp_path.iterdir() if ".tmp-" in p.name or ".old-" in p.name) == [
        name
    ]


def test_a_run_killed_between_its_renames_is_restored_by_the_next(tmp_path, monkeypatch):
    out = tmp_path / "out"
    output.write(out, [OutputFile("a.txt", b"old\n")])
    monkeypatch.setattr(output, "_exchange", lambda a, b: False)  # the two-rename path
    real_rename, calls = os.rename, []

    def killed_after_the_first(src, dst):
        calls.append(dst)
        real_rename(src, dst)
        if len(calls) == 1:
            raise KeyboardInterrupt  # stands for SIGKILL: nothing after this line runs

    monkeypatch.setattr(output.os, "rename", killed_after_the_first)
    monkeypatch.setattr(output.shutil, "rmtree", lambda *a, **k: None)  # a kill cleans nothing
    with pytest.raises(KeyboardInterrupt):
        output.write(out, [OutputFile("a.txt", b"new\n")])
    monkeypatch.undo()
    assert not out.exists()
    output.write(out, [OutputFile("b.txt", b"b\n")])
    assert _tree(out) == {"b.txt": b"b\n", output.MARKER: (out / output.MARKER).read_bytes()}
    assert sorted(p.name for p in tmp_path.iterdir() if ".tmp-" in p.name) == []
