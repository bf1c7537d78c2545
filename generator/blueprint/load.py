"""Read a blueprint file into plain data plus the source position of every YAML path.

The file is untrusted input. Nothing here ever constructs an object from a YAML tag: PyYAML only
composes a node tree (with marks), and this module builds dicts, lists, strings, numbers, booleans
and None from it, refusing every other tag. Limits keep hostile files cheap to refuse:

- size: at most `MAX_BYTES`, checked before anything is parsed;
- nesting: at most `MAX_DEPTH` levels, checked on the token stream *before* PyYAML's recursive
  composer runs (so 20,000 nested `[` cannot exhaust the Python stack), and again while building
  (aliases can nest deeper than the text shows);
- values (scalars, keys included, lists and mappings): at most `MAX_VALUES`, counted on the
  token stream before composing and again while building with aliases expanded, so an alias
  bomb is refused after a few milliseconds instead of expanding to hundreds of millions of nodes.

Choices: timestamps (`2024-01-01`) are kept as the string written; merge keys (`<<`) are refused;
mapping keys must be strings (`1:`, `yes:` and `null:` are refused with a hint to quote them);
aliases are followed, and an alias to one of its own parents is refused.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.reader import Reader

from generator.blueprint.numbers import NumberRefused, check_float, check_int, check_length
from generator.blueprint.readfile import ReadRefused, read_regular
from generator.blueprint.text import describe, first_unicode_break
from generator.errors import BlueprintError, Problem, YamlPath

MAX_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 64
MAX_VALUES = 100_000

_Alias = tuple[YamlPath, tuple[int, int]]  # where an alias was used: its path and position
_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BOM = b"\xef\xbb\xbf"
_YAML_TAG = "tag:yaml.org,2002:"
_OPENING_TOKENS = (
    yaml.BlockMappingStartToken,
    yaml.BlockSequenceStartToken,
    yaml.FlowMappingStartToken,
    yaml.FlowSequenceStartToken,
)
_VALUE_TOKENS = (yaml.ScalarToken, yaml.AliasToken, *_OPENING_TOKENS)
_CLOSING_TOKENS = (yaml.BlockEndToken, yaml.FlowMappingEndToken, yaml.FlowSequenceEndToken)
_SECOND_DOCUMENT = "but found another document"  # PyYAML's ComposerError.problem, C and Python
_PLAIN_DATA = "a blueprint holds plain data: strings, numbers, true/false, null, lists and mappings"

# Scalar tags we build, with the PyYAML safe constructor for the ones that are not kept as text.
_SCALAR_BUILDERS: dict[str, Callable[[SafeConstructor, yaml.ScalarNode], Any] | None] = {
    "str": None,
    "timestamp": None,  # kept as the string written
    "int": SafeConstructor.construct_yaml_int,
    "float": SafeConstructor.construct_yaml_float,
    "bool": SafeConstructor.construct_yaml_bool,
    "null": SafeConstructor.construct_yaml_null,
}

_NUMBER_CHECKS: dict[str, Callable[[str, Any], None]] = {"int": check_int, "float": check_float}
_KIND_WORDS = {"int": "a number", "float": "a number", "bool": "true/false", "null": "null"}


@dataclass(frozen=True, slots=True)
class LoadedBlueprint:
    """A blueprint file as plain data, with where each part of it was written."""

    file: str  # the path as given
    data: dict[str, Any]
    # every YAML path -> 1-based (line, column); for a mapping entry, the position of its key
    positions: dict[YamlPath, tuple[int, int]]
    # unquoted scalars that YAML 1.1 read as something other than a string, as written
    # (e.g. `oversubscription: 1:1` -> "1:1" for the value 61), for hints that show the trap
    plain_scalars: dict[YamlPath, str] = field(default_factory=dict)


def load_blueprint(path: str | os.PathLike[str], max_values: int | None = None) -> LoadedBlueprint:
    """Read, decode, parse and build one blueprint file; BlueprintError says what is wrong.
    `max_values`: MAX_VALUES unless given (an NPU facts file is bounded by the largest real one)."""
    file = str(path)
    try:
        raw = _read(file)
    except _Refused as refused:
        raise BlueprintError(refused.problems, file) from None
    return load_text(raw, file, max_values)


def load_text(text: str | bytes, file: str, max_values: int | None = None) -> LoadedBlueprint:
    """A blueprint given as text (`wanka size` makes one) or as a file's bytes, decoded, parsed
    and built as load_blueprint does; `file` names it in messages."""
    raw = text.encode() if isinstance(text, str) else text
    limit = MAX_VALUES if max_values is None else max_values
    try:
        root = _parse(_decode(raw), limit)
        builder = _Builder(limit)
        builder.positions[()] = _position(root)
        data = builder.build(root, (), 1, None)
        if builder.problems:
            raise _Refused(*builder.problems)
    except _Refused as refused:
        raise BlueprintError(refused.problems, file) from None
    return LoadedBlueprint(file, data, builder.positions, builder.plain_scalars)


class _Refused(Exception):
    """Internal: problems found before the file name is attached."""

    def __init__(self, *problems: Problem) -> None:
        super().__init__()
        self.problems = problems


def _read(file: str) -> bytes:
    """A regular file's bytes (FIFOs and devices are refused without blocking on them)."""
    try:
        return read_regular(file, MAX_BYTES)
    except ReadRefused as refused:
        hint = refused.hint if "too large" not in refused.message else _SIZE_HINT
        raise _Refused(Problem((), refused.message, hint)) from None


_SIZE_HINT = "a blueprint is a few dozen lines (the limit is 4 MiB); is this the right file?"


def _decode(raw: bytes) -> str:
    """Strict UTF-8 (a leading BOM is allowed); YAML's non-printable characters are refused too."""
    body = raw.removeprefix(_BOM)
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as error:
        prefix = body[: error.start].decode("utf-8")
        line, column = _line_column(prefix, len(prefix))
        raise _Refused(
            Problem(
                (),
                f"the file is not valid UTF-8: byte 0x{body[error.start]:02x} cannot be decoded",
                "save the file as UTF-8",
                line=line,
                column=column,
            )
        ) from None
    bad = Reader.NON_PRINTABLE.search(text)
    at = bad.start() if bad else first_unicode_break(text)
    if at >= 0:
        message = (
            f"control character U+{ord(text[at]):04X} is not allowed in YAML"
            if bad
            else f"the character {describe(text[at])} is a line break only some YAML readers see"
        )
        raise _Refused(Problem((), message, "remove it", *_line_column(text, at)))
    return text


def _line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset."""
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1


def _parse(text: str, max_values: int) -> yaml.Node:
    """Compose exactly one YAML document into a node tree (nothing is constructed)."""
    try:
        _prescan(text, max_values)
        loader = _Loader(text)
        try:
            root = loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as error:
        raise _Refused(_syntax_problem(error, text)) from None
    except yaml.YAMLError as error:
        raise _Refused(Problem((), f"invalid YAML: {error}")) from None
    if root is None:
        raise _Refused(Problem((), "the file is empty: there is no YAML document", _START_HINT))
    return _require_mapping(root)


_START_HINT = "a blueprint starts with `apiVersion: wanka/v1` and `kind: Cluster`"


def _require_mapping(root: yaml.Node) -> yaml.Node:
    line, column = _position(root)
    if isinstance(root, yaml.ScalarNode) and root.tag == _YAML_TAG + "null" and not root.value:
        raise _Refused(Problem((), "the document is empty", _START_HINT, line=line, column=column))
    if not isinstance(root, yaml.MappingNode):
        raise _Refused(
            Problem(
                (),
                f"the top level must be a mapping of keys (apiVersion, kind, ...), "
                f"not {_node_kind(root)}",
                _START_HINT,
                line=line,
                column=column,
            )
        )
    return root


def _prescan(text: str, max_values: int) -> None:
    """Refuse deep nesting and too many values from the token stream, before PyYAML's composer
    (recursive, and slow per node) sees them.

    Depth: indentless sequences (`key:` then `- item` at the key's indentation) and single-pair
    mappings inside flow sequences open a level without a token; each sits inside a level that
    has one, so the real depth is at most twice the depth counted here, and `_Builder` checks
    the exact depth afterwards.
    Values: every scalar (keys included), alias and collection token makes at least one value,
    so more such tokens than `max_values` means more values than `_Builder` would accept.
    """
    depth = values = 0
    for token in yaml.scan(text, Loader=_Loader):
        if isinstance(token, _VALUE_TOKENS):
            values += 1
            if values > max_values:
                raise _Refused(_too_many((), _position(token), in_alias=False, limit=max_values))
        if isinstance(token, _OPENING_TOKENS):
            depth += 1
            if depth > MAX_DEPTH:
                raise _Refused(_too_deep((), _position(token)))
        elif isinstance(token, _CLOSING_TOKENS):
            depth -= 1


def _too_many(path: YamlPath, where: tuple[int, int], in_alias: bool, limit: int) -> Problem:
    if in_alias:
        return Problem(
            path,
            f"the document expands to more than {limit:,} values through aliases",
            "each *alias repeats its anchored value, so nested aliases multiply: an alias bomb",
            *where,
        )
    return Problem(
        path,
        f"the document has more than {limit:,} values (keys included)",
        "no blueprint needs that many; is this the right file?",
        *where,
    )


def _recursive(path: YamlPath, where: tuple[int, int]) -> Problem:
    return Problem(
        path,
        "an alias refers to a mapping or list that contains it (a recursive value)",
        "a blueprint is a tree; copy the value instead",
        *where,
    )


def _too_deep(path: YamlPath, where: tuple[int, int]) -> Problem:
    return Problem(
        path,
        f"the document nests deeper than {MAX_DEPTH} levels",
        "a blueprint needs only a few levels; look for runaway brackets or aliases",
        *where,
    )


def _syntax_problem(error: yaml.MarkedYAMLError, text: str) -> Problem:
    mark = error.problem_mark or error.context_mark
    if mark is None:
        return Problem((), f"invalid YAML: {error.problem or error}")
    line, column = mark.line + 1, mark.column + 1
    lines = text.split("\n")
    indent = lines[mark.line][: mark.column + 1] if mark.line < len(lines) else ""
    if "\t" in indent and not indent.strip():
        return Problem(
            (),
            "a tab character is used for indentation; YAML allows only spaces",
            "replace the tab with spaces",
            line=line,
            column=column,
        )
    if error.problem == _SECOND_DOCUMENT:
        return Problem(
            (),
            f"more than one YAML document: a second document starts at line {line}",
            "a blueprint is one document; remove the `---` and what follows, or split the file",
            line=line,
            column=column,
        )
    if error.problem and "nesting depth" in error.problem:  # PyYAML >= 6.0.4 scanner's own limit
        return _too_deep((), (line, column))
    hint = ""
    if error.context and error.context_mark is not None:
        hint = f"{error.context} at line {error.context_mark.line + 1}"
    return Problem((), f"invalid YAML: {error.problem}", hint, line=line, column=column)


def _position(item: yaml.Node | yaml.Token | yaml.Event) -> tuple[int, int]:
    """1-based (line, column) where a node, token or event starts."""
    return item.start_mark.line + 1, item.start_mark.column + 1


def _node_kind(node: yaml.Node) -> str:
    """What a node is, never its text (a token file given as the blueprint stays out of logs)."""
    return {yaml.MappingNode: "a mapping", yaml.SequenceNode: "a list"}.get(type(node), "a scalar")


def _short_tag(tag: str) -> str:
    return tag.removeprefix(_YAML_TAG)


def _show_tag(tag: str) -> str:
    return "!!" + tag.removeprefix(_YAML_TAG) if tag.startswith(_YAML_TAG) else tag


class _Builder:
    """Builds plain data from a node tree, recording positions; one instance per file."""

    def __init__(self, max_values: int) -> None:
        self.max_values = max_values
        self.positions: dict[YamlPath, tuple[int, int]] = {}
        self.plain_scalars: dict[YamlPath, str] = {}
        self.problems: list[Problem] = []
        self._constructor = SafeConstructor()
        self._values = 0
        self._built: set[int] = set()  # nodes built once already: meeting one again is an alias
        self._open: set[int] = set()  # containers being built: an alias to one is a cycle

    def build(self, node: yaml.Node, path: YamlPath, depth: int, alias: _Alias | None) -> Any:
        """`depth` counts containers from the root (1); `alias` is the path and position of the
        outermost alias being expanded (None outside aliases)."""
        if id(node) in self._built and alias is None:
            alias = (path, self._written_at(path))
        self._built.add(id(node))
        self._values += 1 + (len(node.value) if isinstance(node, yaml.MappingNode) else 0)
        if self._values > self.max_values:  # keys count as values, as in `_prescan`
            where = alias or (path, _position(node))
            raise _Refused(_too_many(*where, in_alias=alias is not None, limit=self.max_values))
        if isinstance(node, yaml.ScalarNode):
            return self._scalar(node, path)
        if depth > MAX_DEPTH:
            raise _Refused(_too_deep(*(alias or (path, _position(node)))))
        if id(node) in self._open:
            raise _Refused(_recursive(*(alias or (path, _position(node)))))
        expected = "map" if isinstance(node, yaml.MappingNode) else "seq"
        if _short_tag(node.tag) != expected:
            return self._refuse_tag(node, path)
        self._open.add(id(node))
        try:
            if isinstance(node, yaml.MappingNode):
                return self._mapping(node, path, depth, alias)
            return self._sequence(node, path, depth, alias)
        finally:
            self._open.discard(id(node))

    def _written_at(self, path: YamlPath) -> tuple[int, int]:
        """Where the value at `path` is written in place: its key, or its enclosing list."""
        if path and isinstance(path[-1], int):
            path = path[:-1]
        return self.positions[path]

    def _mapping(
        self, node: yaml.MappingNode, path: YamlPath, depth: int, alias: _Alias | None
    ) -> dict[str, Any]:
        out: dict[str, Any] = {}
        first_line: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = self._key(key_node, path)
            if key is None:
                continue
            key_path = (*path, key)
            line, column = _position(key_node)
            if key in first_line:
                self.problems.append(
                    Problem(
                        key_path,
                        f"duplicate key '{key}' (first at line {first_line[key]}, "
                        f"again at line {line})",
                        "remove one of them; other YAML readers silently keep only the last",
                        line=line,
                        column=column,
                    )
                )
                continue
            first_line[key] = line
            self.positions[key_path] = (line, column)
            out[key] = self.build(value_node, key_path, depth + 1, alias)
        return out

    def _sequence(
        self, node: yaml.SequenceNode, path: YamlPath, depth: int, alias: _Alias | None
    ) -> list[Any]:
        out = []
        for index, item in enumerate(node.value):
            item_path = (*path, index)
            self.positions[item_path] = _position(item)
            out.append(self.build(item, item_path, depth + 1, alias))
        return out

    def _key(self, node: yaml.Node, path: YamlPath) -> str | None:
        """A mapping key as a string, or None after recording why it is refused."""
        if not isinstance(node, yaml.ScalarNode):
            self._problem(path, node, f"a key must be a string, not {_node_kind(node)}")
            return None
        kind = _short_tag(node.tag)
        if kind in _SCALAR_BUILDERS and _SCALAR_BUILDERS[kind] is None:  # kept as text
            return node.value
        if kind == "merge":
            self._problem(
                path,
                node,
                "merge keys (<<) are not supported",
                "write the keys out; an alias (*name) can still repeat a whole value",
            )
        elif kind in _SCALAR_BUILDERS:
            self._problem(
                path,
                node,
                f"key {node.value} is read as {_KIND_WORDS[kind]}; keys must be strings",
                f'quote it: "{node.value}"',
            )
        else:
            self._refuse_tag(node, path)
        return None

    def _scalar(self, node: yaml.ScalarNode, path: YamlPath) -> Any:
        kind = _short_tag(node.tag)
        if kind not in _SCALAR_BUILDERS:
            return self._refuse_tag(node, path)
        construct = _SCALAR_BUILDERS[kind]
        if construct is None:
            return node.value
        try:
            if kind == "int":
                check_length(node.value)
            value = construct(self._constructor, node)
            if kind in _NUMBER_CHECKS:
                _NUMBER_CHECKS[kind](node.value, value)
        except NumberRefused as refused:
            return self._problem(path, node, refused.message, refused.hint)
        except (ValueError, KeyError, OverflowError):
            return self._problem(path, node, f"{node.value[:40]!r} is not a valid {kind}")
        self.plain_scalars[path] = node.value
        return value

    def _refuse_tag(self, node: yaml.Node, path: YamlPath) -> None:
        self._problem(
            path,
            node,
            f"the tag {_show_tag(node.tag)} is not allowed; {_PLAIN_DATA}",
            "remove the tag; nothing was constructed from it",
        )

    def _problem(self, path: YamlPath, node: yaml.Node, message: str, hint: str = "") -> None:
        self.problems.append(Problem(path, message, hint, *_position(node)))
