"""`Record`, the base of the model's records, and `replace`, which copies a record (or any other
dataclass of the model) with some fields changed.

A record is a msgspec Struct: read-only (frozen), without a `__dict__`, equal and hashable by its
fields, its `__init__` written in C. Each record class is declared `class Name(Record,
kw_only=True)`: msgspec's kw_only applies to the fields a class defines, not to its subclasses'
(https://jcristharif.com/msgspec/structs.html, "Field Ordering"), and records are built from
keyword arguments only. `gc=False`: the cycle collector does not track records. The same page
("Disabling Garbage Collection") allows it where an instance can never be part of a reference
cycle: a record holds only strings, numbers, None, tuples, other records and the catalog's
records (`Hardware.catalog`), all built before it and none referring to a model record, so none
can reach itself.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

import msgspec

T = TypeVar("T")


class Record(msgspec.Struct, frozen=True, gc=False):
    """A frozen record of the model: `class Name(Record, kw_only=True)`, fields as annotations."""


def replace(obj: T, /, **changes: Any) -> T:
    """A copy of `obj` (a Record, or a dataclass such as Cluster or a Problem) with `changes`."""
    if isinstance(obj, msgspec.Struct):
        return msgspec.structs.replace(obj, **changes)
    return dataclasses.replace(obj, **changes)  # type: ignore[type-var]
