"""Characters a blueprint may hold, for the files its strings land in.

Blueprint strings reach switch configurations (one command per line), shell scripts, CSV, YAML,
Markdown and HTML. Formats that have escaping get it where they are written (YAML and JSON are
serialised, HTML is autoescaped, shell values are quoted); line-oriented formats have none, so a
line break or control character in a value would start a new command. Those are refused here,
at load time, with the value's location:

- in the file: the Unicode line and paragraph separators U+0085, U+2028 and U+2029, which some
  editors and YAML readers break lines at and others do not (a key can hide inside what looks
  like a comment);
- in every string and key: control characters (Unicode category Cc: C0, DEL, C1), line or
  paragraph separators, and what prints as nothing or as something else: format characters
  (Cf: the bidirectional overrides of "Trojan Source", zero-width joiners), surrogates, private
  use and unassigned code points, spaces other than U+0020; except a line break or tab in free
  text that no output carries (`FREE_TEXT`). What is left is what str.isprintable() accepts.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any

from generator.errors import Problem, YamlPath

UNICODE_BREAKS = {
    "\u0085": "NEXT LINE",
    "\u2028": "LINE SEPARATOR",
    "\u2029": "PARAGRAPH SEPARATOR",
}
FREE_TEXT: tuple[YamlPath, ...] = (("metadata", "description"),)  # stated in no output
_FREE_TEXT_ALLOWS = "\n\t"
_REFUSED_CATEGORIES = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")


def first_unicode_break(text: str) -> int:
    """Offset of the first U+0085/U+2028/U+2029 in `text`, or -1."""
    found = [i for i in (text.find(c) for c in UNICODE_BREAKS) if i >= 0]
    return min(found, default=-1)


def bad_character(value: str, allowed: str = "") -> str | None:
    """The first control character or line separator in `value` (not in `allowed`), or None."""
    for char in value:
        category = unicodedata.category(char)
        refused = category in _REFUSED_CATEGORIES or (category == "Zs" and char != " ")
        if refused and char not in allowed:
            return char
    return None


def describe(char: str) -> str:
    """`U+000A (LINE FEED)` for a refused character."""
    name = UNICODE_BREAKS.get(char) or unicodedata.name(char, "")
    name = name or _CONTROL_NAMES.get(char, "a control character")
    return f"U+{ord(char):04X} ({name})"


_CONTROL_NAMES = {"\n": "LINE FEED", "\r": "CARRIAGE RETURN", "\t": "TAB", "\x00": "NUL"}


def string_problems(data: Any, path: YamlPath = ()) -> list[Problem]:
    """Every key and string value holding a character no output format can carry safely."""
    return [
        Problem(
            where,
            f"{what} holds the character {describe(char)}",
            "strings land in switch configs, shell scripts and tables, one item per line: "
            "remove line breaks, control and invisible characters",
        )
        for where, what, char in _bad_strings(data, path)
    ]


def _bad_strings(data: Any, path: YamlPath) -> Iterator[tuple[YamlPath, str, str]]:
    if isinstance(data, str):
        char = bad_character(data, _FREE_TEXT_ALLOWS if path in FREE_TEXT else "")
        if char is not None:
            yield path, "the value", char
    elif isinstance(data, Mapping):
        for key, value in data.items():
            char = bad_character(key)
            if char is not None:
                yield (*path, key), "the key", char
            yield from _bad_strings(value, (*path, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _bad_strings(value, (*path, index))
