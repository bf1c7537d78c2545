"""Numbers as YAML writes them: only the forms every YAML reader takes the same way.

PyYAML implements YAML 1.1, whose integer and float forms differ from YAML 1.2 (what most other
tools read): `0200` is octal 128 in 1.1 and 200 in 1.2, `2:8` is sexagesimal 128 in 1.1 and the
text "2:8" in 1.2, `1_000` is 1000 in 1.1 and text in 1.2. A blueprint is read by people and
other tools too, so those forms are refused with a hint instead of being taken silently (even
under a `%YAML 1.2` directive, which PyYAML ignores). Also refused: `.nan` and `.inf` (no field
takes them), and integer literals of more than `MAX_DIGITS` digits (no field needs them, and
Python refuses to print integers of more than 4,300 digits).

Accepted: decimal integers (`-12`, `+7`, `0`), and decimal floats (`1.5`, `-0.25`, `1.0e+3`,
`.5`, and `1` under an explicit `!!float`).
"""

from __future__ import annotations

import math
import re

MAX_DIGITS = 20  # 2**64 has 20 digits; the largest number a blueprint holds is an ASN (10)

_DECIMAL_INT = re.compile(r"[-+]?(0|[1-9][0-9]*)")
_DECIMAL_FLOAT = re.compile(r"[-+]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][-+]?[0-9]+)?")


class NumberRefused(ValueError):
    """A number written in a form that is refused: `message` and `hint` say why and what to do."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def check_length(written: str) -> None:
    """Refuse an integer literal of more than MAX_DIGITS digits, before it is converted."""
    digits = written.lstrip("+-").replace("_", "")
    if len(digits) > MAX_DIGITS:
        raise NumberRefused(
            f"an integer of {len(digits):,} digits is too long (at most {MAX_DIGITS})",
            "no value in a blueprint needs more than 10 digits",
        )


def check_int(written: str, value: int) -> None:
    """Refuse an integer that YAML 1.1 read from anything but a plain decimal literal."""
    if _DECIMAL_INT.fullmatch(written):
        return
    if ":" in written:
        raise NumberRefused(
            f"{written} is a YAML 1.1 base-60 number ({value}); YAML 1.2 readers take it as text",
            f'quote it if it is text ("{written}"), or write the number {value}',
        )
    lower = written.lower().lstrip("+-")
    if "_" in written:
        form = "an integer with '_' separators"
    elif lower.startswith("0x"):
        form = "a hexadecimal integer"
    elif lower.startswith("0b"):
        form = "a binary integer"
    elif lower.startswith("0o") or lower.startswith("0"):
        form = "an octal integer in YAML 1.1 (a leading 0)"
    else:
        form = "an integer form other YAML readers may not share"
    raise NumberRefused(
        f"{written} is {form}, read as {value}",
        f"write it in decimal without leading zeros ({value}), or quote it if it is text",
    )


def check_float(written: str, value: float) -> None:
    """Refuse NaN, infinities, and floats YAML 1.1 read from a form other readers do not share."""
    if math.isnan(value) or math.isinf(value):
        raise NumberRefused(
            f"{written} is not a finite number", "write a number such as 1.5, or leave it out"
        )
    if _DECIMAL_FLOAT.fullmatch(written):
        return
    if ":" in written:
        raise NumberRefused(
            f"{written} is a YAML 1.1 base-60 number ({value}); YAML 1.2 readers take it as text",
            f'quote it if it is text ("{written}"), or write the number {value}',
        )
    raise NumberRefused(
        f"{written} is a number form other YAML readers may not share (read as {value})",
        f"write it as a plain decimal ({value}), or quote it if it is text",
    )
