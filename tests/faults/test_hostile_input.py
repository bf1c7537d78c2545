"""Hostile input: every command ends in exit 0, 1 or 2 with no traceback, and exit 2 says where.

Two properties, each run for the Hypothesis profile's count of examples (tests/conftest.py:
`ci` 200, `dev` 10):

- mutated blueprints through load -> validate -> expand: a result or a located BlueprintError,
  nothing written beside the blueprint, names that cannot leave the output folder. Hypothesis
  mutates the small pod-128 blueprint (wrong types, missing and extra keys, huge and negative
  numbers, floats, NaN, empty lists, unicode, path separators and `..` in names, overlapping
  pools, YAML anchors/aliases including a recursive one, duplicate keys, tags, tabs).
- every command (validate, generate, ranktable, placement, size, diff, verify, schema, catalog)
  run in-process through `generator.cli.main` with hostile arguments and files: mutated
  blueprints, hostile numbers and words, `REF:path` specs that look like git options, output
  paths onto folders and below files, and verify on a copied output folder with damaged files
  (cut, spliced bytes, hostile lines, FIFOs, folders and device symlinks in place of files).
  Each case has a SIGALRM deadline, so a hang fails instead of blocking the run.

Numbers in blueprints are drawn small (0..64), negative, or beyond every schema maximum: a valid
but huge cluster (a million cards is allowed) would be a slow case, not a hostile one.
"""

from __future__ import annotations

import atexit
import copy
import io
import os
import re
import shlex
import shutil
import signal
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from generator import cli, output, parallel, pipeline
from generator.artifacts import hccl
from generator.blueprint.load import MAX_BYTES
from generator.errors import BlueprintError
from generator.verify.report import printable
from tests.support.examples import TINY

ROOT = Path(__file__).resolve().parents[2]
BASE = yaml.safe_load((ROOT / "blueprints" / "pod-128.yaml").read_text())
POOLS = [
    ("networks", "parameter", "pool"),
    ("networks", "storage", "pool"),
    ("networks", "business", "pool"),
    ("networks", "management", "inband", "pool"),
    ("networks", "management", "oob", "pool"),
]
NAMES = [("metadata", "name"), ("compute", "hostname"), ("metadata", "site")]
PATHY = [
    "..",
    "../../etc",
    "/etc/passwd",
    "a/b",
    "pod-128/../../x",
    "npu-{index}/..",
    "..\\..\\windows",
    "{index.__class__}",
    "{0}",
    "{index:>99999}",
    "npu\x00",
    "\u202epod",
    "ｐｏｄ-１２８",
    "",
    " ",
    "-" * 300,
]


def _paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _paths(v, (*prefix, i))


ALL_PATHS = [p for p in _paths(BASE) if p]


def _get(node, path):
    for part in path:
        node = node[part]
    return node


DICT_PATHS = [p for p in _paths(BASE) if isinstance(_get(BASE, p), dict)]

leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(0, 64),
    st.integers(-(2**63), -1),
    st.integers(2**31, 2**80),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=16),
    st.sampled_from(PATHY),
    st.sampled_from(["10.64.0.0/18", "10.0.0.0/8", "0.0.0.0/0", "10.64.0.0/33", "::/0"]),
)
value = st.recursive(
    leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


@st.composite
def blueprints(draw) -> tuple[str, bool]:
    """(YAML text, whether a name that becomes a path was touched)."""
    bp = copy.deepcopy(BASE)
    named = False
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(MUTATIONS))
        try:
            if kind == "replace":
                path = draw(st.sampled_from(ALL_PATHS))
                _get(bp, path[:-1])[path[-1]] = draw(value)
            elif kind == "delete":
                path = draw(st.sampled_from(ALL_PATHS))
                del _get(bp, path[:-1])[path[-1]]
            elif kind == "extra":
                path = draw(st.sampled_from([*DICT_PATHS, ()]))
                _get(bp, path)[draw(st.text(max_size=12))] = draw(value)
            elif kind == "empty":
                path = draw(st.sampled_from(ALL_PATHS))
                _get(bp, path[:-1])[path[-1]] = draw(st.sampled_from([[], {}, "", None]))
            elif kind == "pool":  # overlapping or identical pools
                a, b = draw(st.permutations(POOLS))[:2]
                _get(bp, a[:-1])[a[-1]] = draw(
                    st.sampled_from([_get(bp, b), "10.0.0.0/8", "10.64.0.0/19", "10.96.0.0/21"])
                )
            elif kind == "name":
                path = draw(st.sampled_from(NAMES))
                _get(bp, path[:-1])[path[-1]] = draw(st.sampled_from(PATHY) | st.text(max_size=20))
                named = True
            elif kind == "alias":  # the same object twice: the dumper writes &id001 / *id001
                a, b = draw(st.sampled_from(DICT_PATHS)), draw(st.sampled_from(ALL_PATHS))
                _get(bp, b[:-1])[b[-1]] = _get(bp, a)
            elif kind == "recursive":
                path = draw(st.sampled_from(DICT_PATHS))
                _get(bp, path)["self"] = _get(bp, path)
            elif kind == "inject":  # a string in the syntax of the file it lands in
                where, key = draw(st.sampled_from(INJECTION_POINTS))
                node = bp
                for part in where:
                    node = node.setdefault(part, {})
                node[key] = draw(st.sampled_from(INJECTIONS) | st.text(max_size=12))
        except (KeyError, IndexError, TypeError):
            pass  # an earlier mutation removed or replaced the parent; keep what we have
    text = yaml.safe_dump(bp, allow_unicode=True, sort_keys=False, default_flow_style=False)
    tail = draw(
        st.sampled_from(
            [
                "",
                "metadata: {name: duplicate}\n",  # a duplicate top-level key
                "compute: {cards: 8}\ncompute: {cards: 16}\n",
                "\t- tab\n",
                "--- \nsecond: document\n",
                "x: !!python/object/apply:os.system ['true']\n",
                "<<: {a: 1}\n",
            ]
        )
    )
    return text + tail, named


MUTATIONS = ["replace", "delete", "extra", "empty", "pool", "name", "alias", "recursive", "inject"]
INJECTIONS = [
    "a; touch /tmp/wanka-hostile-pwned",
    "$(touch /tmp/wanka-hostile-pwned)",
    "x\ntelnet server enable",
    "MEth0/0/0\r\nip route-static 0.0.0.0 0 192.0.2.1",
    "x\u2028y",
    "<script>alert(1)</script>",
    "`id`",
    "' \" \\",
]
INJECTION_POINTS = [  # (mapping path, key): strings that reach env files, switch configs, docs
    (("hccl", "env"), "HCCL_HOSTILE"),
    (("catalog", "switches", "ce9860-4c-ei"), "mgmt_port"),
    (("catalog", "switches", "ce9860-4c-ei"), "description"),
    (("catalog", "servers", "atlas-800t-a2"), "description"),
    (("metadata",), "site"),
    (("metadata",), "description"),
]
_DIR = tempfile.mkdtemp(prefix="wanka-hostile-")
atexit.register(shutil.rmtree, _DIR, ignore_errors=True)  # one per test process, gone after it


def _no_injection(result: pipeline.Result) -> None:
    """A valid blueprint's strings stay data: every env line is `export NAME=WORD` to a shell,
    and no string a switch config states holds a line break or control character."""
    server = result.cluster.npu_servers[0]
    for line in hccl.environment(result.cluster, server).splitlines():
        if not line.startswith("#"):
            assert len(shlex.split(line)) == 2, line
    names = [(d.name, d.mgmt.interface if d.mgmt else "") for d in result.cluster.devices]
    names += [(link.a_port, link.b_port) for link in result.cluster.links]
    for text in {n for pair in names for n in pair}:
        assert _CLI_WORD.fullmatch(text), repr(text)  # one word on a config line
    assert result.cluster.site.isprintable(), repr(result.cluster.site)


_CLI_WORD = re.compile(r"[A-Za-z0-9/:._-]*")


def _run(text: str, named: bool) -> None:
    folder = Path(_DIR)
    path = folder / "bp.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    before = set(os.listdir(folder))
    try:
        result = pipeline.run(path, emit=False)
    except BlueprintError as err:
        assert err.file == str(path), err.render()
        assert err.problems, "an error without a problem"
        assert any(p.line is not None for p in err.problems), err.render()
    else:
        _no_injection(result)
        name = result.cluster.name
        assert name and "/" not in name and "\\" not in name and name not in (".", "..")
        for host in result.cluster.npu_servers:
            assert "/" not in host.name and ".." not in host.name, host.name
        if named:  # the emitted paths must stay inside the folder (output._files refuses)
            output._files(parallel.emit_all(result.cluster, result.analysis))
    assert set(os.listdir(folder)) == before, "something was written beside the blueprint"


@given(blueprints())  # examples: the Hypothesis profile's count (tests/conftest.py)
def test_mutated_blueprints_end_in_a_result_or_a_located_error(case):
    _run(*case)


# --- every command, in-process ------------------------------------------------------------------

COMMANDS = ("validate", "generate", "ranktable", "placement", "size", "diff", "verify", "schema")
COMMANDS += ("catalog",)
CASE_SECONDS = 60  # a case that runs longer is a hang
HOSTILE_WORDS = [
    "-",
    "--",
    "-x",
    "--output=/tmp/wanka-hostile-pwned",
    "HEAD:--output=/tmp/wanka-hostile-pwned",
    "-p:x",
    "HEAD:",
    ":x",
    "HEAD:blueprints/pod-128.yaml",
    "nosuchref:blueprints/pod-128.yaml",
    "HEAD:blueprints",
    "HEAD:../../etc/passwd",
    "/dev/null",
    "/dev/zero",
    "/",
    ".",
    "",
    "\x00",
    "a\nb",
    "ｐｏｄ",
    "x" * 300,
]
numbers = st.one_of(
    st.integers(-(2**70), 2**70).map(str),
    st.integers(-3, 300).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.sampled_from(["nan", "inf", "-inf", "1e308", "1e-308", "0", "-0", "0x10", "1_0", "١٢"]),
)
words = st.sampled_from(HOSTILE_WORDS) | st.text(max_size=12)


def _tiny_output() -> Path:
    """One generated 16-card folder for the verify cases (copied and damaged per case)."""
    folder = Path(_DIR) / "tiny-output"
    if not folder.is_dir():
        bp = Path(_DIR) / "tiny.yaml"
        bp.write_text(TINY)
        output.write(folder, pipeline.run(bp).files)
    return folder


@st.composite
def damage(draw, folder: Path) -> None:
    """Damage one file of a copied output folder: cut it, splice in bytes or hostile lines,
    remove it, or put a FIFO, a folder or a symlink to a device in its place."""
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    path = draw(st.sampled_from(files))
    data = path.read_bytes()
    at = draw(st.integers(0, len(data)))
    how = draw(st.sampled_from(["cut", "splice", "line", "remove", "fifo", "dir", "device"]))
    if how == "cut":
        path.write_bytes(data[:at])
    elif how == "splice":
        path.write_bytes(data[:at] + draw(st.binary(max_size=24)) + data[at:])
    elif how == "line":
        line = draw(
            st.sampled_from(
                [
                    "a: &a [1, *a]",
                    "x: [[[[[[",
                    " ip address 1.2.3.4 255.0.255.0",
                    " ip address 999.0.0.1 24",
                    "interface Vlanif99999999999999999999",
                    "vlan batch 1 to 99999999999",
                    "address_0=10.0.0.300",
                    "netmask_0=33",
                    "gateway_0=::1",
                    "a_device,a_port",
                    "\ufeff\u2028",
                ]
            )
            | st.text(max_size=40)
        )
        cut = data.rfind(b"\n", 0, at) + 1
        path.write_bytes(data[:cut] + line.encode("utf-8", "surrogatepass") + b"\n" + data[cut:])
    else:
        path.unlink()
        if how == "fifo":
            os.mkfifo(path)
        elif how == "dir":
            path.mkdir()
        elif how == "device":
            path.symlink_to("/dev/zero")


@st.composite
def invocations(draw, folder: Path) -> list[str]:
    """One command line, its files made inside `folder`."""
    command = draw(st.sampled_from(COMMANDS))
    bp = folder / "bp.yaml"
    if command in ("validate", "generate", "ranktable", "placement", "diff"):
        text, _ = draw(blueprints())
        bp.write_text(text, encoding="utf-8", errors="surrogatepass")
    if command == "validate":
        return ["validate", str(bp)]
    if command == "generate":
        extra = draw(st.sampled_from([[], ["--check"], ["-o", str(bp)], ["-o", str(bp / "x")]]))
        return ["generate", str(bp), "-q", *(extra or ["-o", str(folder / "out")])]
    if command in ("ranktable", "placement"):
        argv = [command, str(bp)]
        size = draw(st.sampled_from([None, "--servers", "--cards"]))
        if size:
            argv += [size, draw(numbers)]
        for option in ("--hosts", "--exclude"):
            if draw(st.booleans()):
                argv += [option, draw(words | st.sampled_from(["npu-001,npu-002", "npu-999"]))]
        if command == "placement":
            for option in draw(st.sets(st.sampled_from(["--tp", "--pp", "--dp", "--sp", "--ep"]))):
                argv += [option, draw(numbers)]
        elif draw(st.booleans()):
            argv += ["-o", draw(st.sampled_from([str(folder), str(folder / "rt.json")]))]
        return argv
    if command == "size":
        argv = ["size"]
        for option in ("--params", "--tokens", "--days"):
            argv += [option, draw(numbers)]
        for option in ("--mfu", "--overhead", "--card-tflops", "--hbm-gb", "--supernode"):
            if draw(st.booleans()):
                argv += [option, draw(numbers)]
        for option in ("--server", "--leaf", "--name"):
            if draw(st.booleans()):
                argv += [option, draw(words | st.sampled_from(["atlas-800t-a2", "ce9860-4c-ei"]))]
        if draw(st.booleans()):
            argv += ["--force", "--write", str(folder / draw(st.sampled_from(["s.yaml", ""])))]
        return argv
    if command == "diff":
        other = draw(st.sampled_from([str(ROOT / "blueprints" / "pod-128.yaml")]) | words)
        pair = draw(st.permutations([str(bp), other]))
        return ["diff", *draw(st.sampled_from([[], ["--format", "json"]])), "--", *pair]
    if command == "verify":
        target = folder / "out"
        shutil.copytree(_tiny_output(), target, symlinks=True)
        for _ in range(draw(st.integers(1, 2))):
            draw(damage(target))
        return ["verify", str(target)]
    extra = draw(st.sampled_from([[], ["--json"], [draw(words)]]))
    return [command, *extra] if command == "catalog" else [command, *extra[1:2]]


def _located(err: str, argv: list[str]) -> bool:
    """An exit-2 message names where the problem is: a file or argument given on the command
    line (FILE:LINE:COL: ..., `wanka: FILE: ...`), an option (`wanka: --tp 0: ...`), a file in
    the verified folder (FILE, FILE:LINE or FILE:LINE:COL, as a YAML error gives it), or
    argparse's `usage:` line."""
    # split("\n"), not splitlines(): a message quoting an argument such as "\x1e" (a line break
    # to str.splitlines) is still one line
    lines = [line for line in err.split("\n") if line and not line.startswith("warning:")]
    if not lines:
        return False
    given = [a for a in argv[1:] if a]
    options = re.compile(r"--[a-z][a-z-]+")

    def names_a_place(line: str) -> bool:
        if line.startswith("usage:") or ": error: " in line:
            return True
        body = line.removeprefix("wanka: ")
        return (
            any(body.startswith(a) or body.startswith(printable(a)) for a in given)
            or ("" in argv[1:] and body.startswith("'' (an empty argument)"))
            or bool(options.search(body))
            or (argv[0] == "verify" and re.match(r"[\w./-]+(:\d+){0,2}: ", body) is not None)
        )

    return any(names_a_place(line) for line in lines)


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang(f"a case ran longer than {CASE_SECONDS} s")


@given(st.data())  # examples: the Hypothesis profile's count (tests/conftest.py)
def test_every_command_fails_cleanly_on_hostile_input(data):
    """Exit 0, 1 or 2; no exception escapes main; no traceback; exit 2 says where; git never
    takes a user argument as an option; nothing hangs (SIGALRM per case)."""
    with tempfile.TemporaryDirectory(dir=_DIR) as tmp:
        argv = data.draw(invocations(Path(tmp)), label="argv")
        stdout, stderr = io.StringIO(), io.StringIO()
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(CASE_SECONDS)
        try:
            with redirect_stdout(stdout), redirect_stderr(stderr):
                try:
                    code = cli.main(argv)
                except SystemExit as exit_:  # argparse refusing the command line
                    code = exit_.code if isinstance(exit_.code, int) else 2
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)
        err = stderr.getvalue()
        _STATS[argv[0]] = _STATS.get(argv[0], 0) + 1
        _FAILED.append(argv)  # taken off again when every assertion below holds
        assert code in (0, 1, 2), (argv, code, err[-2000:])
        assert "Traceback" not in err, (argv, err[-2000:])
        if code == 2:
            assert _located(err, argv), (argv, err[-2000:])
        assert not Path("/tmp/wanka-hostile-pwned").exists(), argv
        _FAILED.pop()


_STATS: dict[str, int] = {}
_FAILED: list[list[str]] = []  # command lines whose case failed: the property test reports them


def test_the_command_mix_reaches_every_command():
    """Runs after the property test: with the ci profile's count every command was drawn. A
    failing case stops Hypothesis early, so the mix is only judged when every case passed."""
    if _FAILED:
        pytest.skip(f"the property test failed first ({len(_FAILED)} failing cases)")
    if sum(_STATS.values()) >= 100:
        assert set(_STATS) == set(COMMANDS), _STATS


def test_a_50_mb_file_is_refused_by_the_size_limit_fast(tmp_path):
    path = tmp_path / "huge.yaml"
    with path.open("wb") as fh:
        fh.write((ROOT / "blueprints" / "pod-128.yaml").read_bytes())
        fh.write(b"# " + b"x" * 1022 + b"\n")
        fh.truncate(50 * 1024 * 1024)  # sparse: 50 MB without writing 50 MB
    assert path.stat().st_size > MAX_BYTES
    start = time.process_time()  # CPU seconds: load on the machine stretches only wall time
    with pytest.raises(BlueprintError) as err:
        pipeline.run(path, emit=False)
    assert time.process_time() - start < 2.0
    assert str(path) in err.value.render()
