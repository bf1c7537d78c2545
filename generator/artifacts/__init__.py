"""Emitters: one module per artifact, each `emit(cluster) -> Iterable[OutputFile]`."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class OutputFile:
    path: str  # relative to the output folder, '/'-separated
    data: bytes
