"""Reading files of an output folder that may be damaged or hostile (issue #16).

A FIFO or device where a file should be, bytes that are not UTF-8, YAML that does not parse or
expands through aliases (wanka never writes anchors), values that are not addresses, CSV columns
renamed: every reader goes through `file_text`/`file_yaml`, and `located` turns what a reader
raises on bad data into one `Damaged` error naming the file (and the line, where the reader
numbers its lines `n`).

Every file is read relative to the folder opened once (`opened`), each path component opened with
O_NOFOLLOW: a symbolic link anywhere in the folder is refused at its path (wanka writes none, and
one may point outside the folder), and a folder renamed over this one mid-read is detected
(`replaced`). Each kind of file has a size limit checked before a byte is read (issue #31).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import re
import stat
from collections.abc import Callable, Iterator
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

# Largest files verify reads: a device config (.cfg) is 67 KB on the largest switch of
# wanka-10k (par-core-16-01, 10,240 cards; a chassis' port count bounds it), an hccn file or a
# host_vars file a few KB, the largest YAML 268 KB (node-labels.yaml, grows with the hosts) and
# files/cabling.csv 3.2 MB (grows with the cables: ~32 MB at 102,400 cards). The limits keep
# 10x and more above those and refuse a file over them by its size before reading a byte.
# A hostile file under a limit costs what a real one of its size does: a 16 MB config of
# interfaces took 29 s and 2.5 GB, a 15 MB hosts.yml 9 s and 0.8 GB, a 60 MB cabling.csv 96 s
# and 4.9 GB (measured), so each limit is as tight as the real files allow.
MAX_CONFIG_BYTES = 1024 * 1024  # .cfg, .conf: a switch's ports bound it, not the cluster
MAX_TEXT_BYTES = 4 * 1024 * 1024  # YAML, scripts: ~2.7 MB at 102,400 cards (10x 10,240's)
MAX_TABLE_BYTES = 64 * 1024 * 1024  # .csv tables
# files/cabling.csv is ~1.2 KB per host and device config at 10,240 cards (3.2 MB for 2,617):
# read.cabling is given this much per host and config, at most MAX_TABLE_BYTES
CABLE_BYTES_PER_DEVICE = 8 * 1024
_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OPEN: dict[str, int] = {}  # folder -> its descriptor, while `opened` holds it


class Damaged(NotAnOutput):
    """A file in the folder cannot be read as wanka writes it; the message is located."""


class NotText(Damaged):
    """A file that is not UTF-8 text."""


@contextlib.contextmanager
def opened(folder: Path) -> Iterator[int]:
    """The folder opened once: every read below goes through this descriptor and opens each
    component with O_NOFOLLOW (openat(2)), so a symbolic link inside is refused and a folder
    renamed over this one mid-read (generate's atomic replace) cannot mix its files in."""
    try:
        fd = os.open(folder, _DIR & ~os.O_NOFOLLOW)
    except OSError as error:
        raise NotAnOutput(f"{folder}: cannot open the folder: {error.strerror}") from None
    _OPEN[str(folder)] = fd
    try:
        yield fd
    finally:
        del _OPEN[str(folder)]
        os.close(fd)


def replaced(folder: Path, fd: int) -> bool:
    """True when `folder` no longer names the folder open as `fd` (renamed or deleted)."""
    try:
        now, then = os.stat(folder), os.fstat(fd)
    except OSError:
        return True
    return (now.st_dev, now.st_ino) != (then.st_dev, then.st_ino)


@contextlib.contextmanager
def _folder_fd(folder: Path, sub: str) -> Iterator[int]:
    """A descriptor of `sub` (a relative folder path, "" for the folder) inside the open
    folder, every component opened without following a link; Damaged at a link."""
    top = _OPEN.get(str(folder))
    fd = os.open(folder, _DIR & ~os.O_NOFOLLOW) if top is None else os.dup(top)
    try:
        done = []
        for part in (p for p in sub.split("/") if p):
            done.append(part)
            try:
                inner = os.open(part, _DIR, dir_fd=fd)
            except OSError as error:
                if error.errno in (errno.ELOOP, errno.ENOTDIR) and _is_link(part, fd):
                    where = "/".join(done)
                    raise Damaged(
                        f"{where}: it is a symbolic link, which is not followed"
                    ) from None
                raise
            os.close(fd)
            fd = inner
        yield fd
    finally:
        os.close(fd)


def _is_link(name: str, fd: int) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _limit(where: str) -> int:
    if where.endswith((".cfg", ".conf")):
        return MAX_CONFIG_BYTES
    return MAX_TABLE_BYTES if where.endswith(".csv") else MAX_TEXT_BYTES


def file_text(folder: Path, path: Path, limit: int | None = None) -> str:
    """A regular file (never a link) inside `folder` of at most its limit (by its kind, or
    `limit` when smaller) as UTF-8; Damaged otherwise (never blocks, never reads more)."""
    where = rel(folder, path)
    sub, _, name = where.rpartition("/")
    limit = min(limit or _limit(where), _limit(where))
    try:
        with _folder_fd(folder, sub) as fd:
            raw = read_regular(name, limit, dir_fd=fd, links=False)
    except ReadRefused as refused:
        raise Damaged(f"{where}: {refused.message}") from None
    except OSError as error:
        raise Damaged(f"{where}: cannot read the file: {error.strerror or error}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = _line_of(raw[: error.start])
        raise NotText(f"{where}:{line}: byte 0x{raw[error.start]:02x} is not UTF-8") from None
    return _device_lines(where, text)


# A device ends a line at each CR, LF or CRLF, and at nothing else (VRP reads a config file as
# the CLI reads typed lines, each ended by Enter: CR, LF or CRLF [unconfirmed]). Every reader of
# verify gets the text with LF alone, so a line is numbered alike by rules' own line search
# ("\n") and by str.splitlines, which also splits at the characters of _OTHER_BREAKS: those no
# device sees as line ends, wanka never writes (the blueprint loader refuses them), and a file
# holding one is refused rather than read as lines no device would see.
_ASCII_BREAKS = "\x0b\x0c\x1c\x1d\x1e"
_OTHER_BREAKS = _ASCII_BREAKS + "\x85\u2028\u2029"


def _device_lines(where: str, text: str) -> str:
    """`text` with each CRLF and CR as LF; Damaged at a character only str.splitlines breaks
    lines at."""
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    # str.find per character (C speed: 54 MB of configs in 20 ms, a regular expression 180 ms)
    breaks = _ASCII_BREAKS if text.isascii() else _OTHER_BREAKS
    at = min((i for i in map(text.find, breaks) if i >= 0), default=-1)
    if at >= 0:
        line = text.count("\n", 0, at) + 1
        raise Damaged(
            f"{where}:{line}: U+{ord(text[at]):04X} is a line break to some readers and not to a "
            "device; wanka writes none"
        )
    return text


def _line_of(before: bytes) -> int:
    """The line number after `before`, each CR, LF or CRLF ending a line."""
    return before.count(b"\n") + before.count(b"\r") - before.count(b"\r\n") + 1


def listing(folder: Path, sub: str, suffix: str = "", folders: bool = False) -> list[Path]:
    """The entries of folder/sub (none when it is missing) whose name ends in `suffix`, sorted,
    folders only with `folders`; Damaged when sub is, or passes through, a symbolic link."""
    try:
        with _folder_fd(folder, sub) as fd, os.scandir(fd) as entries:
            names = [
                e.name
                for e in entries
                if e.name.endswith(suffix) and (folders or not e.is_dir(follow_symlinks=False))
            ]
    except FileNotFoundError:
        return []
    except NotADirectoryError:
        raise Damaged(f"{sub}: it is a file, where wanka writes a folder") from None
    return [folder / sub / name for name in sorted(names)]


def is_file(folder: Path, where: str) -> bool:
    """True when folder/where is a regular file; Damaged when it is a symbolic link."""
    sub, _, name = where.rpartition("/")
    try:
        with _folder_fd(folder, sub) as fd:
            info = os.stat(name, dir_fd=fd, follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                target = os.readlink(name, dir_fd=fd)
                raise Damaged(f"{where}: it is a symbolic link to {target}, which is not followed")
    except OSError:
        return False
    return stat.S_ISREG(info.st_mode)


def walk(folder: Path, sub: str = "") -> list[Path]:
    """Every regular file under folder/sub, sorted; Damaged at the first symbolic link (wanka
    writes none: a link may point outside the folder)."""
    out: list[Path] = []
    todo = [sub]
    while todo:
        here = todo.pop()
        with _folder_fd(folder, here) as fd, os.scandir(fd) as entries:
            for e in entries:
                where = f"{here}/{e.name}" if here else e.name
                if e.is_symlink():
                    target = os.readlink(e.name, dir_fd=fd)
                    raise Damaged(
                        f"{where}: it is a symbolic link to {target}, which is not followed"
                    )
                if e.is_dir(follow_symlinks=False):
                    todo.append(where)
                elif e.is_file(follow_symlinks=False):
                    out.append(folder / where)
    return sorted(out)


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


DEFAULT_VRF = "_public_"


def rel(folder: Path, path: Path) -> str:
    return path.relative_to(folder).as_posix()
