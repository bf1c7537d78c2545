"""Read an NPU facts file in the layout roles/npu_facts writes, line by line, without PyYAML.

The role writes the file with Ansible's `to_nice_yaml(sort_keys=true, indent=2)`: block style,
one `key: value` per line, every id a plain decimal integer:

    hosts:
      npu-001:
        devices:
        - chip_id: 0
          device_id: 0
          ...
    kind: NpuFacts

At 100,000 A3 cards (12,500 nodes x 16 dies) that is 24 MB and 1.4 million lines; PyYAML took
46 s to load it (libyaml included: it builds a Python object per token), this reader a few
seconds. A die may also be written as facts.py shows a hand-written file, one flow mapping a
line, the list indented or not (`    - {device_id: 0, npu_id: 0, ...}`, every pair `key: id`):
the 100,000-card file in that form is 20 MB, read in 1.6 s of CPU, where the blueprint loader
took 30 s and 1.6 GB. A line outside the layout raises `OffLayout` with where it is and what it
holds; the caller then reads a small file with the full YAML loader, or refuses a large one at
that line. The data read is the same as the YAML loader's for every file this reader accepts:
keys are plain strings YAML reads as strings, values decimal integers, duplicates refused (for
the flow form: 10,649 accepted of 100,000 mutated files, each equal to what the YAML loader reads).
"""

from __future__ import annotations

import re
from typing import Any

from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

from generator.blueprint.facts_check import KEYS
from generator.errors import YamlPath

_COMMENT = re.compile(r"\s*(#.*)?")
_TOP = re.compile(r"([a-z_]+):(?: ([A-Za-z]+))?")  # "hosts:", "kind: NpuFacts"
_HOST = re.compile(r"  ([A-Za-z0-9][A-Za-z0-9._-]*):")
_KEY = re.compile(r"(    - |      )([a-z_]+): (0|[1-9][0-9]{0,19})")  # a die's first, next key
# a die written by hand as facts.py shows it, one flow mapping a line, in a sequence indented
# or not: `    - {device_id: 0, npu_id: 0, ...}`
_FLOW_DIE = re.compile(r"( {4}| {6})- \{([^{}]*)\}")
_PAIR = re.compile(r"( *)([a-z_]+): +(0|[1-9][0-9]{0,19}) *")
_DIE_KEYS = frozenset(KEYS)
_CONTROL = re.compile(r"[^\t\n\r -~]")  # anything but printable ASCII, tab and line breaks
_STR = "tag:yaml.org,2002:str"
_RESOLVER = Resolver()


class OffLayout(Exception):
    """A line outside the layout: 1-based line and column, the YAML path it would set (as far
    as known) and the text written there."""

    def __init__(self, line: int, column: int, path: YamlPath, text: str) -> None:
        super().__init__(f"line {line}: {text!r}")
        self.line, self.column, self.path, self.text = line, column, path, text


class Duplicate(Exception):
    """A key written twice: where (line, column, path) and the line of the first one."""

    def __init__(self, line: int, column: int, path: YamlPath, first: int) -> None:
        super().__init__(f"line {line}: duplicate")
        self.line, self.column, self.path, self.first = line, column, path, first


def read_layout(
    text: str, want: frozenset[YamlPath] = frozenset()
) -> tuple[dict[str, Any], dict[YamlPath, tuple[int, int]]]:
    """The file's data, and the (line, column) of the document, its top keys, its hosts and of
    every path in `want` (positions of all 1.4 million values would cost more than the data;
    a caller locating problems reads the file again with the paths it needs)."""
    data: dict[str, Any] = {}
    hosts: dict[str, Any] | None = None
    dies: list[dict[str, int]] | None = None
    die: dict[str, int] | None = None
    host = ""
    indent = 0  # of the current devices list's `- `: 4 or 6, 0 before its first die
    positions: dict[YamlPath, tuple[int, int]] = {(): (1, 1)}
    first_line: dict[YamlPath, int] = {}
    odd = _CONTROL.search(text)
    if odd:  # YAML reads some of these as line breaks (U+2028, U+0085) or refuses them
        number = text.count("\n", 0, odd.start()) + 1
        raise OffLayout(number, odd.start() - text.rfind("\n", 0, odd.start()), (), odd[0])
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.rstrip(" \r")
        m = _KEY.fullmatch(line) if dies is not None else None
        if m is not None:  # the hot path: 6 of every 7 lines
            if m[1] == "    - ":
                indent = _same_indent(
                    indent, 4, number=number, path=("hosts", host, "devices"), line=line
                )
                die = {}
                dies.append(die)
                if want:
                    _record(
                        path=("hosts", host, "devices", len(dies) - 1),
                        line=number,
                        column=5,
                        want=want,
                        positions=positions,
                    )
            elif die is None:
                raise OffLayout(number, 1, ("hosts", host, "devices"), line)
            if m[2] in die:
                path = ("hosts", host, "devices", len(dies) - 1, m[2])
                raise Duplicate(number, 7, path, 0)  # the first is a line or a few above
            die[m[2]] = int(m[3])
            if want:
                _record(
                    path=("hosts", host, "devices", len(dies) - 1, m[2]),
                    line=number,
                    column=7,
                    want=want,
                    positions=positions,
                )
            continue
        if _COMMENT.fullmatch(line):
            continue
        flow = _FLOW_DIE.fullmatch(line) if dies is not None else None
        if flow is not None:
            path = ("hosts", host, "devices")
            indent = _same_indent(indent, len(flow[1]), number=number, path=path, line=line)
            dies.append(_flow_die(flow, number, (*path, len(dies)), want=want, positions=positions))
            die = None  # a `  key: id` line after it is outside the layout
            continue
        if dies is not None and line.startswith("    "):
            raise _off_die(line, number, ("hosts", host, "devices", len(dies) - (die is not None)))
        die = None
        if line == "    devices:" and hosts is not None and host and not hosts[host]:
            dies = hosts[host]["devices"] = []
            indent = 0
            _record(
                path=("hosts", host, "devices"),
                line=number,
                column=5,
                want=want,
                positions=positions,
            )
            continue
        dies = None
        if line.startswith("  ") and hosts is not None:
            m = _HOST.fullmatch(line)
            if m is None or not _plain_string(m[1]):
                raise OffLayout(number, 3, ("hosts",), line)
            host = m[1]
            _once(first_line, ("hosts", host), number, 3)
            hosts[host] = {}
            positions[("hosts", host)] = (number, 3)
            continue
        hosts = None
        m = _TOP.fullmatch(line)
        hosts_key = m is not None and m[1] == "hosts" and m[2] is None
        if not hosts_key and not (m and m[1] == "kind" and m[2] and _plain_string(m[2])):
            raise OffLayout(number, 1, (), line)
        _once(first_line, (m[1],), number, 1)
        positions[(m[1],)] = (number, 1)
        if m[1] == "kind":
            data["kind"] = m[2]
        else:
            hosts = data["hosts"] = {}
    if data.get("hosts") == {}:  # nothing under a key: YAML's null
        data["hosts"] = None
    for name, entry in (data.get("hosts") or {}).items():
        if not entry:
            data["hosts"][name] = None
        elif not entry["devices"]:
            entry["devices"] = None
    return data, positions


def _same_indent(indent: int, now: int, number: int, path: YamlPath, line: str) -> int:
    """The list's indent, set by its first die; a die at another indent is outside the layout
    (YAML would read it as something else, or refuse it)."""
    if indent and now != indent:
        raise OffLayout(number, 1, path, line)
    return now


def _flow_die(
    flow: re.Match[str],
    number: int,
    path: YamlPath,
    want: frozenset[YamlPath],
    positions: dict[YamlPath, tuple[int, int]],
) -> dict[str, int]:
    """One die written `- {key: id, key: id, ...}`: every pair a plain key and a decimal id;
    OffLayout at a pair that is not, Duplicate at a key written twice."""
    die: dict[str, int] = {}
    column = flow.start(2) + 1  # 1-based column of the first character inside the braces
    if want:
        _record(path=path, line=number, column=column - 1, want=want, positions=positions)
    for part in flow[2].split(","):
        pair = _PAIR.fullmatch(part)
        if pair is None or not (pair[2] in _DIE_KEYS or _plain_string(pair[2])):
            key = re.match(r" *([a-z_]+): *", part)  # readable: located at the value
            if key is None:
                at = len(part) - len(part.lstrip(" "))
                raise OffLayout(number, column + at, path, part.strip())
            raise OffLayout(number, column + key.end(), (*path, key[1]), part[key.end() :].strip())
        key_column = column + len(pair[1])
        if pair[2] in die:
            raise Duplicate(number, key_column, (*path, pair[2]), number)
        die[pair[2]] = int(pair[3])
        if want:
            _record(
                path=(*path, pair[2]),
                line=number,
                column=key_column,
                want=want,
                positions=positions,
            )
        column += len(part) + 1
    return die


def _plain_string(word: str) -> bool:
    """Whether YAML reads this plain scalar as a string (not true, null, 1e3, ...)."""
    return _RESOLVER.resolve(ScalarNode, word, (True, False)) == _STR


def _off_die(line: str, number: int, die_path: YamlPath) -> OffLayout:
    """A line under `devices:` that is not `- key: id` or `  key: id`: located at the value
    when the key is readable (`sdid: 1000.0`), else at the line."""
    m = re.fullmatch(r"(    - |      )([a-z_]+): *(.*)", line)
    if m is None:
        return OffLayout(number, 1, die_path, line)
    return OffLayout(number, len(m[1]) + len(m[2]) + 3, (*die_path, m[2]), m[3])


def _record(
    path: YamlPath,
    line: int,
    column: int,
    want: frozenset[YamlPath],
    positions: dict[YamlPath, tuple[int, int]],
) -> None:
    if path in want:
        positions[path] = (line, column)


def _once(first_line: dict[YamlPath, int], path: YamlPath, line: int, column: int) -> None:
    if path in first_line:
        raise Duplicate(line, column, path, first_line[path])
    first_line[path] = line
