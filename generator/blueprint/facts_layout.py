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
seconds. A line outside the layout raises `OffLayout` with where it is and what it holds; the
caller then reads a small file with the full YAML loader, or refuses a large one at that line.
The data read is the same as the YAML loader's for every file this reader accepts: keys are
plain strings YAML reads as strings, values decimal integers, duplicates refused.
"""

from __future__ import annotations

import re
from typing import Any

from yaml.nodes import ScalarNode
from yaml.resolver import Resolver

from generator.errors import YamlPath

_COMMENT = re.compile(r"\s*(#.*)?")
_TOP = re.compile(r"([a-z_]+):(?: ([A-Za-z]+))?")  # "hosts:", "kind: NpuFacts"
_HOST = re.compile(r"  ([A-Za-z0-9][A-Za-z0-9._-]*):")
_KEY = re.compile(r"(    - |      )([a-z_]+): (0|[1-9][0-9]{0,19})")  # a die's first, next key
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
        if dies is not None and line.startswith("    "):
            raise _off_die(line, number, ("hosts", host, "devices", len(dies) - (die is not None)))
        die = None
        if line == "    devices:" and hosts is not None and host and not hosts[host]:
            dies = hosts[host]["devices"] = []
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
