"""`record`: the model's records are frozen, slotted, keyword-only dataclasses."""

from __future__ import annotations

import dataclasses

record = dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
