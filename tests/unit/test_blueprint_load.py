"""Loading blueprint files: positions, plain data only, limits, and every file in
tests/errors/bad-input/."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from generator.blueprint.load import MAX_BYTES, MAX_DEPTH, MAX_VALUES, load_blueprint
from generator.blueprint.validate import validate
from generator.errors import BlueprintError
from tests.support.profiles import max_examples

BAD_INPUT = Path(__file__).resolve().parents[1] / "errors" / "bad-input"


def write(tmp_path: Path, text: str | bytes, name: str = "blueprint.yaml") -> Path:
    path = tmp_path / name
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


def refused(path: Path) -> BlueprintError:
    with pytest.raises(BlueprintError) as caught:
        load_blueprint(path)
    return caught.value


def only_problem(error: BlueprintError) -> tuple[str, int | None, int | None]:
    assert len(error.problems) == 1, error.render()
    problem = error.problems[0]
    return error.render(), problem.line, problem.column


# --- every file in bad-input/ ------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(p.name for p in BAD_INPUT.glob("*.yaml")))
def test_bad_input_is_refused_fast_naming_the_file_and_constructing_nothing(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each message, line and column: tests/errors/bad-input/<name>.txt (test_error_goldens)."""
    monkeypatch.chdir(tmp_path)  # python-tag.yaml would `touch` a file here if it ever ran
    path = BAD_INPUT / name
    start = time.process_time()
    with pytest.raises(BlueprintError) as caught:
        validate(load_blueprint(path))
    elapsed = time.process_time() - start
    # hang guard only, in CPU time: load on the machine does not count
    assert elapsed < 2, f"{name} took {elapsed:.2f} s"
    lines = caught.value.render().splitlines()
    assert lines and all(text.startswith(f"{path}:") for text in lines), lines
    assert list(tmp_path.iterdir()) == []


def test_bad_input_copies_are_byte_identical_to_the_shared_originals() -> None:
    shared = Path("/work/shared/bad-input")
    if not shared.is_dir():
        pytest.skip("shared originals not present")
    for original in shared.iterdir():
        assert (BAD_INPUT / original.name).read_bytes() == original.read_bytes()


# --- data and positions ----------------------------------------------------------------------

SAMPLE = """\
apiVersion: wanka/v1
kind: Cluster
metadata:
  name: pod-a
compute: {cards: 128, hostname: "npu-{index}"}
zones:
  storage:
    filesystems:
      - name: data
        mountpoint: /data
      - {name: logs, mountpoint: /logs}
"""


def test_data_is_plain_python(tmp_path: Path) -> None:
    loaded = load_blueprint(write(tmp_path, SAMPLE))
    assert loaded.data == yaml.safe_load(SAMPLE)
    assert loaded.file == str(tmp_path / "blueprint.yaml")


def test_positions_point_at_keys_and_list_items(tmp_path: Path) -> None:
    positions = load_blueprint(write(tmp_path, SAMPLE)).positions
    assert positions[()] == (1, 1)
    assert positions[("apiVersion",)] == (1, 1)
    assert positions[("metadata", "name")] == (4, 3)
    assert positions[("compute", "cards")] == (5, 11)
    assert positions[("compute", "hostname")] == (5, 23)
    assert positions[("zones", "storage", "filesystems", 0)] == (9, 9)
    assert positions[("zones", "storage", "filesystems", 0, "mountpoint")] == (10, 9)
    assert positions[("zones", "storage", "filesystems", 1)] == (11, 9)
    assert positions[("zones", "storage", "filesystems", 1, "name")] == (11, 10)


def test_every_path_in_the_data_has_a_position(tmp_path: Path) -> None:
    loaded = load_blueprint(write(tmp_path, SAMPLE))
    assert set(paths(loaded.data)) == set(loaded.positions)


def paths(value: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    members: list[tuple[Any, Any]] = []
    if isinstance(value, dict):
        members = list(value.items())
    elif isinstance(value, list):
        members = list(enumerate(value))
    return [path, *(p for key, member in members for p in paths(member, (*path, key)))]


def test_byte_order_mark_is_accepted(tmp_path: Path) -> None:
    loaded = load_blueprint(write(tmp_path, b"\xef\xbb\xbfapiVersion: wanka/v1\n"))
    assert loaded.data == {"apiVersion": "wanka/v1"}
    assert loaded.positions[("apiVersion",)] == (1, 1)


def test_yaml_1_1_scalars_are_kept_with_what_was_written(tmp_path: Path) -> None:
    loaded = load_blueprint(write(tmp_path, 'cann: 8.10\nquoted: "1:1"\npair: yes\n'))
    assert loaded.data == {"cann": 8.1, "quoted": "1:1", "pair": True}
    assert loaded.plain_scalars == {("cann",): "8.10", ("pair",): "yes"}


def test_yaml_1_1_base_60_numbers_are_refused_with_the_quoting_hint(tmp_path: Path) -> None:
    text, line, column = only_problem(refused(write(tmp_path, "ratio: 1:1\n")))
    assert (line, column) == (1, 8)
    assert "1:1 is a YAML 1.1 base-60 number (61)" in text
    assert 'quote it if it is text ("1:1")' in text


def test_timestamps_stay_strings(tmp_path: Path) -> None:
    loaded = load_blueprint(write(tmp_path, "day: 2024-01-31\nwhen: 2024-01-31 10:00:00\n"))
    assert loaded.data == {"day": "2024-01-31", "when": "2024-01-31 10:00:00"}


def test_timestamp_keys_stay_strings(tmp_path: Path) -> None:
    assert load_blueprint(write(tmp_path, "2024-01-31: x\n")).data == {"2024-01-31": "x"}


def test_explicit_standard_tags_are_built(tmp_path: Path) -> None:
    loaded = load_blueprint(
        write(tmp_path, 'a: !!str 123\nb: !!int "12"\nc: !!float 1\nd: !!null x\n')
    )
    assert loaded.data == {"a": "123", "b": 12, "c": 1.0, "d": None}


def test_explicit_tag_with_an_impossible_value_is_refused(tmp_path: Path) -> None:
    text, line, column = only_problem(refused(write(tmp_path, "a: 1\nb: !!int many\n")))
    assert "'many' is not a valid int" in text
    assert (line, column) == (2, 4)


def test_aliases_are_expanded_into_separate_values(tmp_path: Path) -> None:
    loaded = load_blueprint(write(tmp_path, "base: &b {x: 1}\ncopy: *b\nlist: [*b, *b]\n"))
    assert loaded.data == {"base": {"x": 1}, "copy": {"x": 1}, "list": [{"x": 1}, {"x": 1}]}
    assert loaded.data["copy"] is not loaded.data["base"]
    assert loaded.positions[("copy",)] == (2, 1)


# --- refusals --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tag", "line", "column"),
    [
        ("a: 1\nb: !!python/name:os.system x\n", "!!python/name:os.system", 2, 4),
        ("a: !!python/object/new:list [[1]]\n", "!!python/object/new:list", 1, 4),
        ("a: !!binary aGVsbG8=\n", "!!binary", 1, 4),
        ("a: !!set {x, y}\n", "!!set", 1, 4),
        ("a: !!omap [x: 1]\n", "!!omap", 1, 4),
        ("a:\n  b: !custom 1\n", "!custom", 2, 6),
        ("a: !!str {x: 1}\n", "!!str", 1, 4),
    ],
)
def test_other_tags_are_refused_and_never_built(
    tmp_path: Path, text: str, tag: str, line: int, column: int
) -> None:
    message, *where = only_problem(refused(write(tmp_path, text)))
    assert f"tag {tag} is not allowed" in message
    assert tuple(where) == (line, column)


def test_every_duplicate_key_is_reported_with_both_lines(tmp_path: Path) -> None:
    text = "a: 1\nb:\n  c: 1\n  c: 2\nd: {e: 1, e: 2}\na: 3\n"
    problems = refused(write(tmp_path, text)).problems
    messages = [(p.message, p.line) for p in problems]
    assert messages == [
        ("duplicate key 'c' (first at line 3, again at line 4)", 4),
        ("duplicate key 'e' (first at line 5, again at line 5)", 5),
        ("duplicate key 'a' (first at line 1, again at line 6)", 6),
    ]


@pytest.mark.parametrize(
    ("text", "expected", "line"),
    [
        ("a: 1\n1: x\n", 'quote it: "1"', 2),
        ("yes: x\n", 'quote it: "yes"', 1),
        ("a:\n  null: x\n", 'quote it: "null"', 2),
        ("? [a, b]\n: x\n", "a key must be a string, not a list", 1),
        ("base: &b {x: 1}\nother:\n  <<: *b\n", "merge keys (<<) are not supported", 3),
    ],
)
def test_keys_must_be_plain_strings(tmp_path: Path, text: str, expected: str, line: int) -> None:
    message, found_line, _ = only_problem(refused(write(tmp_path, text)))
    assert expected in message
    assert found_line == line


@pytest.mark.parametrize(
    ("text", "expected", "line"),
    [
        ("", "the file is empty", None),
        ("# only a comment\n", "the file is empty", None),
        ("---\n", "the document is empty", 2),
        ("just text\n", "must be a mapping", 1),
        ("- a\n", "must be a mapping", 1),
        ("a: 1\n---\nb: 2\n", "a second document starts at line 2", 2),
        ("a: [1, 2\nb: 3\n", "invalid YAML", 2),
        ("a: 1\n b: 2\n", "invalid YAML: mapping values are not allowed", 2),
        ("a:\n  b: 1\n\tc: 2\n", "tab character is used for indentation", 3),
        ("a: x\x07y\n", "control character U+0007", 1),
    ],
)
def test_malformed_documents_are_located(
    tmp_path: Path, text: str, expected: str, line: int | None
) -> None:
    message, found_line, _ = only_problem(refused(write(tmp_path, text)))
    assert expected in message
    assert found_line == line


def test_invalid_utf8_reports_line_and_character_column(tmp_path: Path) -> None:
    message, line, column = only_problem(
        refused(write(tmp_path, "a: 1\nb: é\xff\n".encode("latin-1")))
    )
    assert "not valid UTF-8" in message
    assert (line, column) == (2, 4)  # the latin-1 é is itself the first bad byte


def test_invalid_utf8_after_multibyte_characters(tmp_path: Path) -> None:
    _, line, column = only_problem(refused(write(tmp_path, "a: éé".encode() + b"\xff\n")))
    assert (line, column) == (1, 6)


def test_file_over_the_size_limit_is_refused_before_parsing(tmp_path: Path) -> None:
    path = write(tmp_path, b"[" * (MAX_BYTES + 1))
    start = time.process_time()
    message, line, _ = only_problem(refused(path))
    assert time.process_time() - start < 2
    assert f"{MAX_BYTES + 1:,} bytes" in message
    assert f"{MAX_BYTES:,}" in message
    assert line is None


def test_file_at_the_size_limit_is_parsed(tmp_path: Path) -> None:
    head = b"a: 1\n"
    loaded = load_blueprint(write(tmp_path, head + b"#" * (MAX_BYTES - len(head))))
    assert loaded.data == {"a": 1}


@pytest.mark.parametrize("name", ["missing.yaml", "."])
def test_unreadable_path_is_a_blueprint_error(tmp_path: Path, name: str) -> None:
    message, line, _ = only_problem(refused(tmp_path / name))
    assert "cannot read the file" in message
    assert line is None


def test_nesting_up_to_the_limit_is_accepted(tmp_path: Path) -> None:
    levels = MAX_DEPTH - 1  # the top-level mapping is the first level
    loaded = load_blueprint(write(tmp_path, "a: " + "[" * levels + "]" * levels + "\n"))
    value, depth = loaded.data["a"], 1
    while value:
        value, depth = value[0], depth + 1
    assert depth == levels


def test_nesting_beyond_the_limit_is_refused(tmp_path: Path) -> None:
    levels = MAX_DEPTH
    message, line, column = only_problem(
        refused(write(tmp_path, "a: 1\nb: " + "[" * levels + "]" * levels + "\n"))
    )
    assert f"deeper than {MAX_DEPTH} levels" in message
    assert (line, column) == (2, 4 + levels - 1)


def test_nesting_without_tokens_is_counted_exactly(tmp_path: Path) -> None:
    # PyYAML writes lists under keys "indentless": they open a level with no token of their own.
    value: Any = "leaf"
    for _ in range(MAX_DEPTH // 2 + 1):
        value = {"k": [value]}
    message, *_ = only_problem(refused(write(tmp_path, yaml.safe_dump(value))))
    assert f"deeper than {MAX_DEPTH} levels" in message


def test_aliases_cannot_nest_beyond_the_limit(tmp_path: Path) -> None:
    chain = ["a0: &a0 [x]", *(f"a{i}: &a{i} [*a{i - 1}]" for i in range(1, MAX_DEPTH + 1))]
    message, line, _ = only_problem(refused(write(tmp_path, "\n".join(chain) + "\n")))
    assert f"deeper than {MAX_DEPTH} levels" in message
    assert line is not None


def test_recursive_alias_is_refused(tmp_path: Path) -> None:
    message, line, _ = only_problem(refused(write(tmp_path, "a: 1\nb: &b [1, *b]\n")))
    assert "recursive" in message
    assert line == 2


def test_alias_bomb_is_refused_quickly_at_the_alias(tmp_path: Path) -> None:
    lines = ['l0: &l0 ["x", "x", "x", "x", "x", "x", "x", "x", "x", "x"]']
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 10)}]" for i in range(1, 9)]
    start = time.process_time()
    error = refused(write(tmp_path, "\n".join(lines) + "\n"))
    assert time.process_time() - start < 2
    message, line, _ = only_problem(error)
    assert "through aliases" in message
    # l4 expands to 111,111 values: reported at the alias inside it that crosses the limit
    assert line == 5
    assert error.problems[0].path[0] == "l4"
    assert len(error.problems[0].path) == 2


def test_too_many_values_are_refused_before_composing(tmp_path: Path) -> None:
    path = write(tmp_path, "a: [" + "1," * ((MAX_BYTES - 10) // 2) + "]\n")
    start = time.process_time()
    message, line, _ = only_problem(refused(path))
    assert time.process_time() - start < 2
    assert f"more than {MAX_VALUES:,} values" in message
    assert line == 1


@pytest.mark.slow  # 50,000 entries: seconds; the same boundary at a lowered limit runs below
def test_many_values_below_the_limit_load(tmp_path: Path) -> None:
    entries = MAX_VALUES // 2 - 1  # a key and a value each, plus the top-level mapping
    loaded = load_blueprint(write(tmp_path, "".join(f"k{i}: {i}\n" for i in range(entries))))
    assert len(loaded.data) == entries


def test_one_value_below_the_limit_loads_and_one_above_is_refused(tmp_path, monkeypatch) -> None:
    """The value count's boundary, at a limit of 1,000 (the loader reads MAX_VALUES when it
    counts): 999 values load; 1,001 are refused with the limit named, at the line whose value
    crosses it."""
    limit = 1000
    monkeypatch.setattr("generator.blueprint.load.MAX_VALUES", limit)
    entries = limit // 2 - 1  # a key and a value each, plus the top-level mapping: 999 values
    loaded = load_blueprint(write(tmp_path, "".join(f"k{i}: {i}\n" for i in range(entries))))
    assert len(loaded.data) == entries
    over = write(tmp_path, "".join(f"k{i}: {i}\n" for i in range(entries + 1)), "over.yaml")
    message, line, _ = only_problem(refused(over))  # 1,001 values
    assert f"more than {limit:,} values" in message
    assert line == entries + 1  # its key is value 1,000, its value 1,001


@settings(max_examples=max_examples(300, 30), deadline=None)  # 300 under the ci profile
@given(
    st.one_of(
        st.text(alphabet=st.sampled_from(list("ab: -[]{},&*!|>'\"#\n\t?%@`<1.\\\x00é"))),
        st.binary(max_size=200),
    )
)
def test_any_input_loads_or_is_a_blueprint_error(
    tmp_path_factory: pytest.TempPathFactory, content: str | bytes
) -> None:
    path = write(tmp_path_factory.mktemp("fuzz"), content)
    try:
        loaded = load_blueprint(path)
    except BlueprintError as error:
        assert error.problems
        assert error.render().startswith(str(path))
    else:
        assert isinstance(loaded.data, dict)
        assert set(paths(loaded.data)) == set(loaded.positions)
