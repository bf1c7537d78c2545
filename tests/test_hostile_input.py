"""Hostile blueprints: every mutation of a valid example ends in a result or a located BlueprintError.

Hypothesis mutates the small pod-128 blueprint (wrong types, missing and extra keys, huge and
negative numbers, empty lists, unicode, path separators and `..` in names, overlapping pools,
YAML anchors/aliases including a recursive one, duplicate keys) and runs load -> validate ->
expand in-process. Never another exception; nothing is written beside the blueprint; a blueprint
that passes has a name and host names that cannot leave the output folder.

Numbers are drawn small (0..64), negative, or beyond every schema maximum (>= 2**31): a valid
but huge cluster (a million cards is allowed) would be a slow case, not a hostile one.
"""

from __future__ import annotations

import copy
import os
import tempfile
import time
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from generator import output, pipeline
from generator.blueprint.load import MAX_BYTES
from generator.errors import BlueprintError

ROOT = Path(__file__).resolve().parents[1]
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
        kind = draw(
            st.sampled_from(
                ["replace", "delete", "extra", "empty", "pool", "name", "alias", "recursive"]
            )
        )
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


_DIR = tempfile.mkdtemp(prefix="wanka-hostile-")
_STATS = {"cases": 0, "valid": 0, "seconds": 0.0}


def _run(text: str, named: bool) -> None:
    folder = Path(_DIR)
    path = folder / "bp.yaml"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    before = set(os.listdir(folder))
    start = time.perf_counter()
    try:
        result = pipeline.run(path, emit=False)
    except BlueprintError as err:
        assert err.file == str(path), err.render()
        assert err.problems, "an error without a problem"
        assert any(p.line is not None for p in err.problems), err.render()
    else:
        _STATS["valid"] += 1
        name = result.cluster.name
        assert name and "/" not in name and "\\" not in name and name not in (".", "..")
        for host in result.cluster.npu_servers:
            assert "/" not in host.name and ".." not in host.name, host.name
        if named:  # the emitted paths must stay inside the folder (output._files refuses)
            output._files(pipeline.emit_all(result.cluster, result.analysis))
    finally:
        _STATS["cases"] += 1
        _STATS["seconds"] += time.perf_counter() - start
    assert set(os.listdir(folder)) == before, "something was written beside the blueprint"


@settings(
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(blueprints())
def test_mutated_blueprints_end_in_a_result_or_a_located_error(case):
    _run(*case)


def test_report_the_hypothesis_figures():
    """Not a check: prints how many cases ran and how long (run after the property test)."""
    if _STATS["cases"]:
        print(
            f"\nhostile input: {_STATS['cases']} cases, {_STATS['valid']} valid, "
            f"{_STATS['seconds']:.1f}s in the pipeline"
        )


def test_a_50_mb_file_is_refused_by_the_size_limit_fast(tmp_path):
    path = tmp_path / "huge.yaml"
    with path.open("wb") as fh:
        fh.write((ROOT / "blueprints" / "pod-128.yaml").read_bytes())
        fh.write(b"# " + b"x" * 1022 + b"\n")
        fh.truncate(50 * 1024 * 1024)  # sparse: 50 MB without writing 50 MB
    assert path.stat().st_size > MAX_BYTES
    start = time.perf_counter()
    with pytest.raises(BlueprintError) as err:
        pipeline.run(path, emit=False)
    assert time.perf_counter() - start < 2.0
    assert str(path) in err.value.render()
