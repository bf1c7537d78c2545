"""Every error is located, and what it names exists (issue #31 item 7).

- A `hccl.parallelism` layout that does not fit the cluster is a design error at the blueprint's
  own `hccl.parallelism.<key>` line, naming no command-line flag, with a value that works:
  applying the hint as written makes the blueprint valid. `wanka placement`, where the user typed
  flags, names the flags.
- Every YAML path a message names (the located path, dotted paths in the text, and the keys its
  `set KEY:` / `use KEY:` hints tell the user to write) exists in the blueprint schema, over the
  error cases of tests/errors/ (the bad-input corpus among them) and the cases here.
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest
import yaml

from generator.cli import main
from tests.support.examples import ROOT

SCHEMA = json.loads((ROOT / "generator/blueprint/wanka-v1.schema.json").read_text())
POD = (ROOT / "blueprints" / "pod-128.yaml").read_text()  # 16 servers x 8 = 128 ranks
TOP = "|".join(SCHEMA["properties"])
ABSOLUTE = re.compile(rf"(?<![\w.-])(?:{TOP})(?:\.[A-Za-z0-9_-]+|\[\d+\])+")
RELATIVE = re.compile(r"\b(?:set|use|raise|lower|add)\s+([a-z_]+(?:\.[a-z_0-9-]+)*):\s")
LOCATED = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): (?P<path>[^\s:]+): (?P<text>.*)$")


def _parallel(sizes: str) -> str:
    return POD.replace("\ncompute:", f"\nhccl:\n  parallelism: {{{sizes}}}\ncompute:", 1)


def _cli(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(list(argv))
    return code, err.getvalue()


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


# sizes -> the key the error is located at; 128 ranks, 8 per server
PARALLEL = {
    "tp: 3": "tp",  # 3 does not divide 128
    "tp: 8, sp: 3, pp: 3": "sp",  # no single size can fix it: several change
    "sp: 5, pp: 2": "sp",
    "dp: 5": "dp",  # tp*sp*dp*pp != ranks
    "dp: 16, ep: 3": "dp",  # the new dp must also take the expert size
    "tp: 8, ep: 3": "ep",  # ep must divide dp = 16
}


@pytest.mark.parametrize("sizes", sorted(PARALLEL))
def test_a_parallel_layout_that_does_not_fit_names_its_line_and_a_value_that_works(tmp_path, sizes):
    text = _parallel(sizes)
    bp = tmp_path / "bp.yaml"
    bp.write_text(text)
    code, err = _cli("validate", str(bp))
    assert code == 2, err
    errors = [line for line in err.splitlines() if "error: [parallelism]" in line]
    assert len(errors) == 1, err
    key = PARALLEL[sizes]
    line = _line_of(text, "parallelism:")
    col = text.splitlines()[line - 1].index(f"{key}:") + 1
    assert errors[0].startswith(f"{bp}:{line}:{col}: hccl.parallelism.{key}: error:"), errors[0]
    assert "--" not in errors[0]  # no flag the user never typed
    hint = re.search(r"\(set ((?:hccl\.parallelism\.\w+: \d+(?:, )?)+)\)$", errors[0])
    assert hint, errors[0]
    fixed = yaml.safe_load(text)
    for k, v in re.findall(r"hccl\.parallelism\.(\w+): (\d+)", hint.group(1)):
        fixed["hccl"]["parallelism"][k] = int(v)
    bp.write_text(yaml.safe_dump(fixed, sort_keys=False))
    code, err = _cli("validate", str(bp))
    assert "[parallelism]" not in err.replace("warning: [parallelism]", ""), err
    assert code == 0, err


def test_the_placement_command_names_the_flags_the_user_typed():
    code, err = _cli("placement", str(ROOT / "blueprints/pod-128.yaml"), "--tp", "3")
    assert code == 2, err
    assert "--tp/--sp/--pp: 128 ranks" in err and "(try --tp 2)" in err, err
    code, err = _cli("placement", str(ROOT / "blueprints/pod-128.yaml"), "--tp", "2")
    assert code == 0, err


# --- every path a message names exists in the schema ---------------------------------------


def _node(node: dict, part: str | int) -> list[dict]:
    """The schema nodes `part` leads to from `node` (through $ref, oneOf/anyOf/allOf)."""
    if "$ref" in node:
        node = SCHEMA["$defs"][node["$ref"].rsplit("/", 1)[-1]]
    out = []
    for key in ("oneOf", "anyOf", "allOf"):
        for sub in node.get(key, ()):
            out += _node(sub, part)
    if isinstance(part, int):
        if isinstance(node.get("items"), dict):
            out.append(node["items"])
    elif part in node.get("properties", {}):
        out.append(node["properties"][part])
    elif isinstance(node.get("additionalProperties"), dict):
        out.append(node["additionalProperties"])
    return out


def in_schema(path: tuple) -> bool:
    nodes = [SCHEMA]
    for part in path:
        nodes = [n for node in nodes for n in _node(node, part)]
    return bool(nodes)


def _parts(dotted: str) -> tuple:
    return tuple(
        int(p[1:-1]) if p.startswith("[") else p for p in re.findall(r"\[\d+\]|[^.\[]+", dotted)
    )


def named_paths(message: str) -> list[tuple[str, tuple]]:
    """(as written, path) of each YAML path one printed line names; a relative hint key is
    resolved against the located path's ancestors (the first that has it)."""
    m = LOCATED.match(message)
    located = _parts(m["path"]) if m and m["path"] != "(document)" else ()
    text = m["text"] if m else message
    found = [(m["path"], located)] if located else []  # first: the located path
    found += [(p, _parts(p)) for p in ABSOLUTE.findall(text)]
    for key in RELATIVE.findall(text):
        if re.match(rf"(?:{TOP})\b", key):
            continue  # absolute: found above
        parents = [located[:i] for i in range(len(located), -1, -1)]
        at = next((p for p in parents if in_schema((*p, *_parts(key)))), located)
        found.append((key, (*at, *_parts(key))))
    return found


def _messages(tmp_path: Path) -> list[str]:
    texts = {f"parallel {k}": _parallel(k) for k in PARALLEL}
    # tests/errors/facts/ is located in facts files, whose paths are not the blueprint schema's
    files = [
        p for p in sorted((ROOT / "tests/errors").glob("*/*.yaml")) if p.parent.name != "facts"
    ]
    for name, text in texts.items():
        path = tmp_path / f"{re.sub(r'[^a-z0-9]+', '-', name)}.yaml"
        path.write_text(text)
        files.append(path)
    lines = []
    for path in files:
        _, err = _cli("validate", "-v", str(path))
        lines += [(line, _document(path)) for line in err.splitlines()]
    return lines


def _document(path: Path) -> object:
    try:
        return yaml.safe_load(path.read_bytes())
    except (yaml.YAMLError, RecursionError):
        return None


def _written(document: object, path: tuple) -> bool:
    """Whether the user's own document holds `path` (a message may locate an unknown key there)."""
    for part in path:
        try:
            document = document[part]  # type: ignore[index]
        except (KeyError, IndexError, TypeError):
            return False
    return True


@pytest.mark.slow  # every error case validated again: ~11 s
def test_every_path_a_message_names_is_in_the_schema(tmp_path):
    lines = _messages(tmp_path)
    assert len(lines) > 30, lines  # the cases do report
    wrong = {
        (written, line)
        for line, document in lines
        for i, (written, path) in enumerate(named_paths(line))
        if not in_schema(path) and not (i == 0 and _written(document, path))
    }
    assert not wrong, "\n".join(f"{w}: {line}" for w, line in sorted(wrong))


@pytest.mark.parametrize(
    ("message", "bad"),
    [
        (
            "f:1:1: networks.management.inband.spine.model: x",
            "networks.management.inband.spine.model",
        ),
        ("f:2:3: networks.business.spine.model: x (use tiers: auto or 3)", "tiers"),
        ("f:2:3: hccl: x (set hccl.parallelism.xp: 2)", "hccl.parallelism.xp"),
    ],
)
def test_the_schema_check_finds_a_key_the_schema_lacks(message, bad):
    """The check above can fail: the kinds of names the review found wrong are caught."""
    assert [w for w, p in named_paths(message) if not in_schema(p)] == [bad]


def test_the_schema_check_accepts_paths_that_exist():
    line = "f:1:1: networks.parameter.spine.model: x (use tiers: auto or 3; see catalog.switches.ce16804.ports)"
    assert all(in_schema(p) for _, p in named_paths(line)), named_paths(line)
