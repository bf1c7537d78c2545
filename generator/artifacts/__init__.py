"""Emitters: one module per artifact, each declaring its `emit(cluster, analysis)` with the
`emitter` decorator (what it needs: the analysis or only the model; small and late or not), so
adding an output touches one file; `registered()` finds them all. And the CSV writer they share."""

from __future__ import annotations

import csv
import importlib
import io
import pkgutil
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator.output import OutputFile  # the writer's record, which the emitters return

if TYPE_CHECKING:
    from generator.analysis import Analysis
    from generator.model import Cluster

__all__ = ["Emitter", "OutputFile", "csv_bytes", "emitter", "registered"]

Emit = Callable[..., Iterable[OutputFile]]  # `emit(cluster, analysis)`: analysis None if unshown


@dataclass(frozen=True, slots=True)
class Emitter:
    """One output's emitter as its module declares it. `analysis`: it shows the design analysis,
    so it runs once the analysis exists (else it gets None and may start beside it). `late`: a
    small emitter, queued behind the large ones so the workers end together (the analysis
    emitters that are late share one task). `parts` > 1: it renders unit by unit, `units(cluster)`
    the units and `emit_units(cluster, units)` their files, and generator/parallel.py splits the
    units into that many parts across its workers."""

    emit: Emit
    analysis: bool = False
    late: bool = False
    parts: int = 1
    units: Callable[[Cluster], Sequence[Any]] | None = None
    emit_units: Callable[[Cluster, Sequence[Any]], Iterable[OutputFile]] | None = None

    @property
    def name(self) -> str:
        """The emitter's module name (`switches`, `docs`)."""
        return self.emit.__module__.rsplit(".", 1)[1]

    def __call__(self, cluster: Cluster, analysis: Analysis | None = None) -> Iterable[OutputFile]:
        return self.emit(cluster, analysis)


def emitter(
    *,
    analysis: bool = False,
    late: bool = False,
    parts: int = 1,
    units: Callable[[Cluster], Sequence[Any]] | None = None,
    emit_units: Callable[[Cluster, Sequence[Any]], Iterable[OutputFile]] | None = None,
) -> Callable[[Emit], Emitter]:
    """Declares a module's `emit(cluster, analysis)` as an emitter (Emitter says what each
    argument means); the module's `emit` is then the Emitter, called as before."""
    if parts > 1 and not (units and emit_units):
        raise TypeError("an emitter split into parts needs `units` and `emit_units`")
    return lambda emit: Emitter(
        emit, analysis=analysis, late=late, parts=parts, units=units, emit_units=emit_units
    )


def registered() -> tuple[Emitter, ...]:
    """Every emitter of this package, the largest first: those split into parts, then the rest
    (not late before late), each group by module name."""
    found = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        found += [
            v
            for v in vars(module).values()
            if isinstance(v, Emitter) and v.emit.__module__ == module.__name__
        ]
    return tuple(sorted(found, key=lambda e: (e.parts == 1, e.late, e.name)))


def csv_bytes(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> bytes:
    """`header` and `rows` as the csv module writes them (excel dialect, `\\n` line ends)."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue().encode()
