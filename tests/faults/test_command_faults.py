"""Every command fails cleanly (#16): OS errors, impossible requests, damaged folders, closed
pipes and killed runs end in one located line and exit 2 (or quietly), never a traceback or a
hang. Each test here failed on main before #16.

Cases that could hang on a broken build (FIFOs, alias bombs) run under a SIGALRM deadline; limits,
mount namespaces, pipes and signals need a child process; the rest run `generator.cli.main`
in-process.
"""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from generator import cli, output
from generator.artifacts import OutputFile
from tests.support.examples import TINY
from tests.support.forked import Forked

ROOT = Path(__file__).resolve().parents[2]
POD = ROOT / "blueprints" / "pod-128.yaml"
PYTHON_WANKA = [sys.executable, "-m", "generator"]
SIZE = ["size", "--params", "7e9", "--tokens", "1e11", "--days", "30"]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err
    return code, out, err


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bp") / "tiny.yaml"
    path.write_text(TINY)
    return path


# --- write errors --------------------------------------------------------------------------------


def test_generate_below_a_file_is_refused_in_words(tmp_path, capsys, tiny):
    (tmp_path / "afile").write_text("x")
    code, _, err = run(capsys, "generate", tiny, "-o", tmp_path / "afile" / "out", "-q")
    assert code == 2
    assert f"{tmp_path / 'afile'} is a file, not a folder" in err


def test_ranktable_and_size_write_below_a_file_or_onto_a_folder(tmp_path, capsys, tiny):
    (tmp_path / "afile").write_text("x")
    for target, words in ((tmp_path, "is a folder"), (tmp_path / "afile" / "x", "is a file")):
        code, _, err = run(capsys, "ranktable", tiny, "--servers", "1", "-o", target)
        assert code == 2 and words in err, err
        code, _, err = run(capsys, *SIZE, "--write", target, "--force")
        assert code == 2 and words in err, err
    assert (tmp_path / "afile").read_text() == "x"


def test_a_file_size_limit_ends_in_a_message_and_leaves_nothing_half_written(tmp_path, tiny):
    """RLIMIT_FSIZE makes every write past 64 KiB fail with EFBIG (Python ignores SIGXFSZ)."""

    out = tmp_path / "out"

    def limited() -> int:  # in a child process of its own: the limit ends with it
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 * 1024, 64 * 1024))
        return cli.main(["generate", str(tiny), "-o", str(out), "-q"])

    done = Forked(limited).wait()
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert f"cannot write {out}: File too large" in done.stderr
    assert not out.exists()
    assert [p.name for p in tmp_path.iterdir()] == [".out.lock"]  # no temporary folder left


def _read_only(folder: Path) -> list[str]:
    """A command prefix that makes `folder` read-only for the command, even for root."""
    if os.geteuid() != 0:
        folder.chmod(0o555)
        return []
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if probe.returncode != 0 or not shutil.which("unshare"):
        pytest.skip("running as root without mount namespaces: cannot make a folder read-only")
    script = 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && exec "$@"'
    return ["unshare", "-m", "sh", "-c", script, str(folder)]


@pytest.mark.slow  # three commands in child processes
def test_a_read_only_folder_ends_in_a_message(tmp_path, tiny):
    folder = tmp_path / "ro"
    folder.mkdir()
    prefix = _read_only(folder)
    for argv, words in (
        (["generate", tiny, "-o", folder / "out", "-q"], "cannot write"),
        (["ranktable", tiny, "--servers", "1", "-o", folder / "rt.json"], "cannot write"),
        ([*SIZE, "--write", folder / "bp.yaml"], "cannot write"),
    ):
        done = subprocess.run(
            [*prefix, sys.executable, "-m", "generator", *map(str, argv)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
        )
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr and words in done.stderr, done.stderr
        assert "Read-only file system" in done.stderr or "Permission denied" in done.stderr
    assert list(folder.iterdir()) == []


# --- impossible requests -------------------------------------------------------------------------


@pytest.mark.parametrize("option", ["--tp", "--pp", "--dp", "--sp", "--ep"])
@pytest.mark.parametrize("value", ["0", "-4"])
def test_placement_refuses_parallel_sizes_below_one(capsys, tiny, option, value):
    code, _, err = run(capsys, "placement", tiny, option, value)
    assert code == 2
    assert f"{option}: {value}: a parallel size is a whole number from 1 (try {option} 1)" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["--params", "1e300", "--tokens", "1e300", "--days", "1"],
        ["--params", "1e308", "--tokens", "10", "--days", "1"],
        ["--params", "1e12", "--tokens", "1e13", "--days", "30", "--overhead", "nan"],
        ["--params", "1e12", "--tokens", "1e13", "--days", "30", "--overhead", "inf"],
    ],
)
def test_size_refuses_figures_out_of_range(capsys, argv):
    code, _, err = run(capsys, "size", *argv)
    assert code == 2 and err.startswith("wanka: "), err


# --- diff and git --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "spec",
    ["HEAD:--output={target}", "--output={target}:blueprints/pod-128.yaml", "-p:x", "--no-index:y"],
)
def test_diff_never_passes_a_user_argument_to_git_as_an_option(tmp_path, capsys, spec):
    target = tmp_path / "written-by-git"
    code, _, err = run(capsys, "diff", "--", spec.format(target=target), POD)
    assert code == 2 and "cannot start with '-'" in err, err
    assert not target.exists()


def test_diff_into_a_closed_pipe_ends_quietly(tmp_path):
    """`wanka diff ... | head`: the JSON report (~90 KB) outgrows the pipe after head exits."""
    bigger = tmp_path / "p160.yaml"
    bp = yaml.safe_load(POD.read_text())
    bp["compute"]["cards"] = 160
    bp["networks"]["parameter"]["pool"] = "10.80.0.0/18"
    bigger.write_text(yaml.safe_dump(bp))
    command = f'"{sys.executable}" -m generator diff --format json "{POD}" "{bigger}" | head -c 10'
    done = subprocess.run(
        ["bash", "-c", command], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.stdout == '{\n "addres'
    assert done.stderr == ""


# --- the output folder ---------------------------------------------------------------------------


def test_cleanup_does_not_glob_other_folders_by_the_output_name(tmp_path):
    other = tmp_path / ".outX.tmp-123"  # another run's temporary folder, matched by `out*`
    other.mkdir()
    output.write(tmp_path / "out*", [OutputFile("a.txt", b"a\n")])
    assert other.is_dir()


def test_the_root_folder_is_refused_and_no_lock_is_made_beside_it(capsys, tiny):
    lock = Path("/..lock")  # where main's writer put it
    before = lock.stat().st_mtime_ns if lock.exists() else None
    code, _, err = run(capsys, "generate", tiny, "-o", "/", "-q")
    assert code == 2 and "/ is the root folder" in err
    assert (lock.stat().st_mtime_ns if lock.exists() else None) == before


def test_check_reports_symlinks_and_other_file_types_as_drift(tmp_path, capsys, tiny):
    out = tmp_path / "out"
    assert run(capsys, "generate", tiny, "-o", out, "-q")[0] == 0
    hosts = out / "hosts.yml"
    copy = tmp_path / "hosts-copy.yml"
    copy.write_bytes(hosts.read_bytes())
    hosts.unlink()
    hosts.symlink_to(copy)  # same bytes, but not a file wanka wrote
    os.mkfifo(out / "extra.fifo")
    code, stdout, _ = run(capsys, "generate", tiny, "-o", out, "--check", "-q")
    assert code == 1
    assert "changed  hosts.yml" in stdout and "removed  extra.fifo" in stdout


# --- verify on a damaged folder ------------------------------------------------------------------


@pytest.fixture(scope="module")
def generated(tmp_path_factory, tiny) -> Path:
    out = tmp_path_factory.mktemp("gen") / "tiny"
    assert cli.main(["generate", str(tiny), "-o", str(out), "-q"]) == 0
    return out


def _switch(folder: Path, suffix: str = ".cfg") -> Path:
    return sorted((folder / "files" / "switches").glob(f"*{suffix}"))[0]


def _replace_first(path: Path, old: str, new: str) -> None:
    import re

    text = path.read_text()
    changed = re.sub(old, new, text, count=1, flags=re.M)
    assert changed != text, old
    path.write_text(changed)


DAMAGE = {
    "yaml syntax": lambda f: (f / "hosts.yml").write_text("all: [1\n"),
    "hosts not a mapping": lambda f: (f / "hosts.yml").write_text("- 1\n- 2\n"),
    "pools not addresses": lambda f: (f / "group_vars" / "all.yml").write_text(
        "pools: {parameter: 10.999.0.0/16}\n"
    ),
    "bad bytes": lambda f: _switch(f).write_bytes(_switch(f).read_bytes() + b"\xff\xfe\n"),
    "bad address": lambda f: _replace_first(
        _switch(f), r"ip address [0-9.]+ ", "ip address 999.1.1.1 "
    ),
    "bad mask": lambda f: _replace_first(
        _switch(f), r"(ip address [0-9.]+) [0-9.]+", r"\1 255.0.255.0"
    ),
    "bad hccn netmask": lambda f: _replace_first(
        sorted((f / "files" / "hccn").glob("*.conf"))[0], r"^netmask_0=.*$", "netmask_0=255.x"
    ),
    "renamed csv column": lambda f: _replace_first(
        f / "files" / "cabling.csv", "^cable_id,plane,a_device", "cable_id,plane,a_dev"
    ),
    "bad bytes in hosts": lambda f: (f / "hosts.yml").write_bytes(b"all:\n  x: \xc3\x28\n"),
    "host vars not a mapping": lambda f: sorted((f / "host_vars").glob("*.yml"))[0].write_text(
        "- 1\n"
    ),
    "host vars yaml syntax": lambda f: sorted((f / "host_vars").glob("*.yml"))[-1].write_text(
        "rack: [1\n"
    ),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_verify_on_a_damaged_folder_says_which_file_and_exits_2(
    tmp_path, capsys, generated, damage
):
    folder = tmp_path / "damaged"
    shutil.copytree(generated, folder, symlinks=True)
    DAMAGE[damage](folder)
    code, _, err = run(capsys, "verify", folder)
    assert code == 2, err
    line = err.strip().splitlines()[-1]
    assert line.startswith("wanka: ") and any(
        name in line
        for name in ("hosts.yml", "host_vars/", "all.yml", ".cfg", ".conf", "cabling.csv")
    ), line


def _fifo_in_place_of(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}' if i > 1 else '*a'] * 9)}]\n" for i in range(1, 30)
)


@pytest.mark.parametrize(
    "damage",
    [
        lambda f: os.mkfifo(f / "files" / "switches" / "zz-fifo.cfg"),
        lambda f: _fifo_in_place_of(_switch(f)),
        lambda f: (f / "group_vars" / "all.yml").write_text(BOMB),
        lambda f: (f / "hosts.yml").write_text("a: " + "[" * 3000 + "]" * 3000 + "\n"),
    ],
    ids=["fifo config", "fifo for a config", "alias bomb all.yml", "deep"],
)
def test_verify_never_hangs_on_fifos_or_alias_bombs(tmp_path, capsys, generated, damage):
    folder = tmp_path / "damaged"
    shutil.copytree(generated, folder, symlinks=True)
    damage(folder)
    with deadline(60):
        code, _, err = run(capsys, "verify", folder)
    assert code == 2, err[-2000:]
    assert err.startswith("wanka: ")


def test_verify_does_not_parse_structured_switch_configs(tmp_path, capsys, generated):
    """files/switches/*.yml are for people and tools; verify proves the .cfg files, takes the
    platform from the `platform:` line of the .yml beside each (a line, not a YAML parse) and
    scans the .yml text for secrets, so an alias bomb there costs nothing (and proves nothing)."""
    folder = tmp_path / "damaged"
    shutil.copytree(generated, folder, symlinks=True)
    _switch(folder, ".yml").write_text("platform: huawei-ce\n" + BOMB)
    with deadline(60):
        code, _, err = run(capsys, "verify", folder)
    assert code == 0, err[-2000:]


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail instead of hanging: SIGALRM raises in the test after `seconds`."""

    def expired(signum, frame):
        raise TimeoutError(f"still running after {seconds} s: a hang")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


# --- a killed run --------------------------------------------------------------------------------


def _children(pid: int) -> set[int]:
    """The process's children now; none once it has exited (its /proc entry goes while read)."""
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        try:
            found |= {int(c) for c in task.read_text().split()}
        except OSError:
            continue
    return found


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"  # a zombie has exited


@pytest.mark.slow
def test_killing_a_parallel_run_leaves_no_worker_behind(tmp_path):
    """At 10k cards the emitters run in forked workers; killing the parent must kill them too,
    before any prints a traceback about its lost parent."""
    err = tmp_path / "stderr"
    with err.open("w") as sink:
        proc = subprocess.Popen(
            [*PYTHON_WANKA, "generate", "blueprints/wanka-10k.yaml", "-o", tmp_path / "out", "-q"],
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=sink,
        )
        deadline = time.monotonic() + 300
        workers: set[int] = set()
        while time.monotonic() < deadline and len(workers) < 2 and proc.poll() is None:
            workers = _children(proc.pid)
            time.sleep(0.2)
        assert len(workers) >= 2, "the run never started its workers"
        # at once: a second's wait let a loaded machine finish the run first (#32)
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    time.sleep(3)  # an orphan would print its traceback now
    alive = {pid for pid in workers if _running(pid)}
    assert alive == set(), f"workers still running: {alive}"
    assert "Traceback" not in err.read_text(), err.read_text()[-2000:]
    assert not (tmp_path / "out").exists()
