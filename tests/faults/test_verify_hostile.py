"""`wanka verify` reads a folder as the switch and the terminal would, and cannot be fooled or
stalled by it (issue #31 item 6): spellings the VRP command line accepts (whitespace, case,
incomplete keywords) are judged as the full command; a symbolic link is refused; control
characters in names come out escaped; a huge file is refused by its size in seconds; a
folder replaced by a concurrent `wanka generate` is never judged half old, half new."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from generator import cli
from generator.verify import verify

ROOT = Path(__file__).resolve().parents[2]
LEAF = "files/switches/biz-leaf-0001.cfg"


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, Path]:
    """pod-128 and legacy-100card generated once (both verify clean)."""
    made = {}
    for name in ("pod-128", "legacy-100card"):
        folder = tmp_path_factory.mktemp("gen") / name
        assert cli.main(["generate", str(ROOT / f"blueprints/{name}.yaml"), "-o", str(folder)]) == 0
        made[name] = folder
    return made


@pytest.fixture
def pod(outputs, tmp_path) -> Path:
    folder = tmp_path / "pod-128"
    shutil.copytree(outputs["pod-128"], folder)
    return folder


def _verify(capsys, *args: str) -> tuple[int, str]:
    code = cli.main(["verify", *args])
    out = capsys.readouterr()
    return code, out.out + out.err


def _insert_after(path: Path, anchor: str, new: list[str]) -> list[int]:
    """Insert `new` lines after the first line equal to `anchor`; their line numbers."""
    lines = path.read_text().splitlines()
    at = lines.index(anchor) + 1
    path.write_text("\n".join(lines[:at] + new + lines[at:]) + "\n")
    return list(range(at + 1, at + 1 + len(new)))


# (system-view lines, what verify says of each): every spelling the CLI takes for the command
SPELLED = {
    # CE V300R023C00 telnet_server_disable.json: "The undo telnet server disable command enables
    # the Telnet service"
    "telnet on": (
        [
            "undo telnet \t server   disable",
            "UNDO TELNET Server DISABLE",
            "un tel ser dis",
            "Undo  TELNET  server  DIS",
        ],
        "telnet server enabled",
    ),
    "snmp v1/v2c": (
        [
            "snmp-agent sys-info version \t v2c",
            "SNMP-AGENT SYS-INFO VERSION V1",
            "snmp s v v3 v2",  # several versions: [unconfirmed] on the CE, see commands.yaml
            "snmp-agent sys-i ver ALL",
            "snmp-agent COMM read wanka",
        ],
        "SNMP v1/v2c",
    ),
}


@pytest.mark.parametrize("case", sorted(SPELLED))
def test_spellings_the_cli_accepts_are_judged_at_their_line(case, pod, capsys):
    spellings, says = SPELLED[case]
    lines = _insert_after(pod / LEAF, "telnet server disable", spellings)
    code, text = _verify(capsys, str(pod))
    assert code == 1
    found = [int(n) for n in re.findall(rf"{re.escape(LEAF)}:(\d+): {re.escape(says)}", text)]
    assert found == lines


def test_acl_rules_in_any_spelling_are_judged(pod, capsys):
    rules = [
        " rule 4 PERMIT SOURCE ANY",
        " rule 3 per sou any",
        " rule  2  permit  source  0.0.0.0  255.255.255.255",
    ]
    lines = _insert_after(pod / LEAF, "acl number 2000", rules)
    code, text = _verify(capsys, str(pod))
    assert code == 1
    for n in lines:
        assert re.search(rf"{re.escape(LEAF)}:{n}: ACL 2000 permits", text), (n, text)


@pytest.mark.parametrize(
    "line,why",
    [
        # VRP8's form (NE40E telnet-server-enable(TELNETS).json); the CE V300 has none
        ("telnet server enable", "not a huawei-ce form of view system"),
        # `serv` is `server` and `server-source` (CE ssh_server-source.json): ambiguous
        ("ssh serv acl 2000", "not a huawei-ce form of view system"),
        # a system-view command typed in an interface view
        (" telnet server disable", "not a huawei-ce form of view interface"),
    ],
)
def test_a_line_the_switch_refuses_stops_verify_at_its_line(line, why, pod, capsys):
    at = _insert_after(pod / LEAF, "interface MEth0/0/0", [line])[0]
    code, text = _verify(capsys, str(pod))
    assert code == 2
    assert f"wanka: {LEAF}:{at}: {line.strip()!r}: {why}" in text, text


@pytest.mark.parametrize(
    "old,new",
    [
        (" acl 2000 inbound", " ACL 2000 IN"),  # the VTY ACL, abbreviated: still restricted
        ("ssh server acl 2000", "SSH  SERVER  ac 2000"),
        ("snmp-agent acl 2000", "snmp acl 2000"),
        ("snmp-agent sys-info version v3", "snmp-agent sys-info version V2C Disable"),
        ("telnet server disable", "teln SERVER dis"),
    ],
)
def test_spellings_that_keep_it_closed_verify_clean(old, new, pod, capsys):
    path = pod / LEAF
    text = path.read_text()
    assert f"\n{old}\n" in text
    path.write_text(text.replace(f"\n{old}\n", f"\n{new}\n", 1))
    code, out = _verify(capsys, str(pod))
    assert code == 0, out


@pytest.mark.parametrize(
    "link,target",
    [
        (LEAF, "/etc/hostname"),  # outside the folder
        ("hosts.yml", "files/cabling.csv"),  # inside it: still not what wanka writes
        ("host_vars", "/tmp"),  # a folder
        ("files/hccn/npu-001.conf", "../../group_vars/all.yml"),
        ("files/switches", "/etc"),
    ],
)
def test_a_symbolic_link_is_refused_where_it_is(link, target, pod, capsys):
    path = pod / link
    shutil.rmtree(path) if path.is_dir() else path.unlink()
    path.symlink_to(target)
    code, text = _verify(capsys, str(pod))
    assert code == 2
    assert f"wanka: {link}: it is a symbolic link" in text, text


def test_control_characters_in_names_come_out_escaped(pod, tmp_path, capsys):
    # a config named with a CSI sequence that enables telnet, a cabled device named with a
    # bidi override and an OSC title sequence, and a link named with a C1 CSI
    evil = pod / "files/switches/sw\x1b[2J\u202e.cfg"
    evil.write_text("sysname x\nundo telnet server disable\n")
    evil.with_suffix(".yml").write_text("platform: huawei-ce\n")
    cabling = pod / "files/cabling.csv"
    row = cabling.read_text().splitlines()[1].split(",")
    row[0], row[2], row[3] = "X-1", "fw\u202egnp.\x1b]0;owned\x07", "eth9"
    cabling.write_text(cabling.read_text() + ",".join(row) + "\n")
    code, text = _verify(capsys, str(pod))
    assert code == 1
    assert "sw\\x1b[2J\\u202e.cfg:2: telnet server enabled" in text
    assert "fw\\u202egnp.\\x1b]0;owned\\x07 is cabled but has no configuration" in text
    linked = tmp_path / "copy\x1b[8m"
    shutil.copytree(pod, linked)
    (linked / "files/switches/x\x9b31m.cfg").symlink_to("/etc/hostname")
    code, text = _verify(capsys, str(linked))
    assert code == 2 and "files/switches/x\\x9b31m.cfg: it is a symbolic link" in text
    for raw in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert raw not in text
    evil.with_suffix(".yml").unlink()  # no platform beside it: the config cannot be read
    code, text = _verify(capsys, str(pod))
    assert code == 2 and "sw\\x1b[2J\\u202e.yml" in text, text
    assert "\x1b" not in text


# Runs the command in a grandchild and prints its CPU seconds and its own peak RSS. Linux keeps a
# process's peak RSS across execve (exec_mmap records the old mm's high-water mark in
# signal->maxrss), so a command forked straight from this pytest worker would report the worker's
# size; a child forked from this small launcher starts from the launcher's.
_LAUNCHER = """
import os, sys
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
print(usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024)
sys.exit(os.waitstatus_to_exitcode(status))
"""


def _measured(args: list[str]) -> tuple[int, float, int, str]:
    """Exit code, CPU seconds (user + system, its children's included), peak memory in bytes and
    stderr of one command. CPU, not wall seconds: other work on the machine (the other test
    workers) stretches the wall time of a refusal (5.31 s once under load), not its CPU time."""
    proc = subprocess.run(
        [sys.executable, "-c", _LAUNCHER, *args], capture_output=True, text=True, cwd=ROOT
    )
    cpu, peak = proc.stdout.split()[-2:]
    return proc.returncode, float(cpu), int(peak), proc.stderr


def _huge(path: Path, line: str, size: int = 200_000_000) -> None:
    chunk = (line * (1 + (1 << 20) // len(line))).encode()
    with path.open("wb") as fh:
        while fh.tell() < size:
            fh.write(chunk)


WANKA = [sys.executable, "-m", "generator"]


@pytest.mark.parametrize(
    "target,line",
    [
        (LEAF, "telnet server enable\n"),
        ("hosts.yml", "    h: {ansible_host: 10.0.0.1}\n"),
        ("files/cabling.csv", "a,b,c,d\n"),
        ("files/hccn/npu-001.conf", "address_0=10.0.0.1\n"),
    ],
)
def test_a_200_mb_file_is_refused_in_seconds(target, line, pod):
    _huge(pod / target, line)
    code, seconds, peak, err = _measured([*WANKA, "verify", str(pod)])
    assert code == 2 and f"wanka: {target}: the file is too large" in err, err
    assert seconds < 5 and peak < 500 * 2**20, (seconds, peak)


def test_a_command_longer_than_the_switch_takes_is_refused_at_its_line(pod, capsys):
    original = (pod / LEAF).read_text().splitlines()
    for n, width in ((3, 3101 - 12), (5, 50_000), (9, 900_000)):
        lines = list(original)
        lines[n - 1] = "description " + "x" * width
        (pod / LEAF).write_text("\n".join(lines) + "\n")
        code, text = _verify(capsys, str(pod))
        assert code == 2 and f"{LEAF}:{n}: {width + 12:,} characters" in text


@pytest.mark.slow  # writes 200 MB: ~3 s
def test_a_200_mb_blueprint_is_refused_by_generate_in_seconds(tmp_path):
    for name, line in (("bp.yaml", "a: 1\n"), ("bp2.yaml", "- [x, y]\n"), ("bp3.yml", "#\n")):
        _huge(tmp_path / name, line)
        code, seconds, peak, err = _measured(
            [*WANKA, "generate", str(tmp_path / name), "-o", str(tmp_path / "out")]
        )
        assert code == 2 and "the file is too large" in err and name in err, err
        assert seconds < 5 and peak < 500 * 2**20, (seconds, peak)


@pytest.mark.slow  # two examples generated over and over: ~5 s each
@pytest.mark.parametrize(
    "first,then", [("pod-128", "legacy-100card"), ("legacy-100card", "pod-128")]
)
def test_verify_racing_generate_never_reports_a_false_breach(first, then, outputs, tmp_path):
    """Two different outputs take turns in one folder while verify reads it: a read that mixed
    them (one's cabling with the other's configs) or lost files to the swap would report
    problems; every read must be one whole, clean output."""
    folder = tmp_path / "out"
    shutil.copytree(outputs[first], folder)
    reads = 0
    for turn in range(4):
        blueprint = ROOT / f"blueprints/{(then, first)[turn % 2]}.yaml"
        proc = subprocess.Popen(
            [*WANKA, "generate", str(blueprint), "-o", str(folder)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=ROOT,
        )
        while proc.poll() is None:
            report = verify(folder)
            assert not report.problems, [p.render() for p in report.problems]
            reads += 1
        assert proc.returncode == 0
    assert reads >= 4
