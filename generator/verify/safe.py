"""Reading files of an output folder that may be damaged or hostile (issue #16).

A FIFO or device where a file should be, bytes that are not UTF-8, YAML that does not parse or
expands through aliases (wanka never writes anchors), values that are not addresses, CSV columns
renamed: every reader goes through `file_text`/`file_yaml`, and `located` turns what a reader
raises on bad data into one `Damaged` error naming the file (and the line, where the reader
numbers its lines `n`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

import yaml

from generator.blueprint.readfile import ReadRefused, read_regular
from generator.structured_yaml import FastVariablesLoader, VariablesLoader
from generator.verify.report import NotAnOutput

T = TypeVar("T")
# libyaml, when it is there, reads the 10k inventory in a fraction of the pure-Python time, but
# its composer recurses in C and crashes the process on deeply nested input; such text goes to the
# pure-Python loader, whose recursion ends in a RecursionError.
# Both read the `!unsafe` tag of Ansible variable files as plain data (structured_yaml).
FAST_LOADER = FastVariablesLoader
SHALLOW = 100  # bracket depth and indentation the fast loader is given
_BRACKETS = re.compile(r"[\[\]{}]")
_INDENT = re.compile(rf"^[ -]{{{SHALLOW},}}", re.M)

MAX_FILE_BYTES = 256 * 1024 * 1024


class Damaged(NotAnOutput):
    """A file in the folder cannot be read as wanka writes it; the message is located."""


class NotText(Damaged):
    """A file that is not UTF-8 text."""


def file_text(folder: Path, path: Path) -> str:
    """A regular file of at most MAX_FILE_BYTES as UTF-8; Damaged otherwise (never blocks)."""
    try:
        raw = read_regular(path, MAX_FILE_BYTES)
    except ReadRefused as refused:
        raise Damaged(f"{rel(folder, path)}: {refused.message}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise NotText(
            f"{rel(folder, path)}:{line}: byte 0x{raw[error.start]:02x} is not UTF-8"
        ) from None


def file_yaml(folder: Path, path: Path) -> Any:
    """A YAML file's data; Damaged for a syntax error, an alias, or nesting too deep."""
    return yaml_text(rel(folder, path), file_text(folder, path))


def yaml_text(where: str, text: str) -> Any:
    """YAML text's data (`where` names it in errors); Damaged for a syntax error, an alias
    (an alias bomb would make every walk over the data exponential), or nesting too deep."""
    loader = (FAST_LOADER if _shallow(text) else VariablesLoader)(text)
    try:
        node = loader.get_single_node()
        if node is not None and _has_alias(node):
            raise Damaged(f"{where}: uses YAML aliases, which wanka never writes")
        return None if node is None else loader.construct_document(node)
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line = f"{mark.line + 1}:{mark.column + 1}:" if mark else ""
        raise Damaged(f"{where}:{line} invalid YAML: {error.problem or error}") from None
    except (yaml.YAMLError, RecursionError) as error:
        raise Damaged(f"{where}: invalid YAML: {type(error).__name__}") from None
    finally:
        loader.dispose()


def _shallow(text: str) -> bool:
    """No line indented SHALLOW or more, and flow brackets never nested SHALLOW deep (quoted
    brackets count too: a false alarm only costs the slow loader)."""
    if _INDENT.search(text):
        return False
    depth = 0
    for m in _BRACKETS.finditer(text):
        depth += 1 if m.group() in "[{" else -1
        if depth >= SHALLOW:
            return False
    return True


def _has_alias(root: yaml.Node) -> bool:
    """True when a node is reached twice (an alias), walking without recursion."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            return True
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
        elif isinstance(node, yaml.MappingNode):
            stack.extend(n for pair in node.value for n in pair)
    return False


_DATA_ERRORS = (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError)


def located(file: str = "") -> Callable[[Callable[..., T]], Callable[..., T]]:
    """A reader `reader(..., folder, [path], ...)` of `file` (default: its path argument) with
    bad data reported as Damaged at its file and line."""

    def wrap(reader: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(reader)
        def read(*args: Any, **kwargs: Any) -> T:
            try:
                return reader(*args, **kwargs)
            except Damaged:
                raise
            except _DATA_ERRORS as error:
                where = _where(reader, file, args, error.__traceback__)
                raise Damaged(where + _say(error)) from None

        return read

    return wrap


def _where(reader: Callable, file: str, args: tuple, tb: TracebackType | None) -> str:
    """`file:line: ` of the failing read, from the reader's own locals where it has them: `where`
    as a file name or (file, line), and the line number `n`; else the path argument."""
    paths = [a for a in args if isinstance(a, Path)]
    file = file or (rel(paths[0], paths[1]) if len(paths) > 1 else reader.__name__)
    line = None
    while tb is not None:
        if tb.tb_frame.f_code is reader.__code__:
            names = tb.tb_frame.f_locals
            where, n = names.get("where"), names.get("n")
            file, line = where if isinstance(where, tuple) else (where or file, n)
        tb = tb.tb_next
    return f"{file}:{line}: " if isinstance(line, int) else f"{file}: "


def _say(error: BaseException) -> str:
    if isinstance(error, KeyError):
        return f"missing {error.args[0]!r} (a column or key wanka writes); damaged or not ours"
    return f"cannot read it: {error}"


PLANES = ("parameter", "storage", "business", "inband", "oob")
DEFAULT_VRF = "_public_"


def rel(folder: Path, path: Path) -> str:
    return path.relative_to(folder).as_posix()
