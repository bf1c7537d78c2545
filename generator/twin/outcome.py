"""What a twin check found: an Outcome (counts, a note) and its failures as records, each with the
file and line of the folder behind it, what it is about and what is wrong (as verify's
`report.Problem`). Code reads the fields; only the report and the terminal turn them into text.
And what a twin command leaves for the CLI, which prints it and picks the exit code: Finished,
or Stop (exit 2) or TakenDown (interrupted)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field


class Stop(Exception):
    """What ends a twin command before it has a result: a located message (printable) for the
    CLI, which prints it and exits 2."""


class TakenDown(Exception):
    """Interrupted (Ctrl-C, SIGTERM): the twin was taken down."""


@dataclass(slots=True)
class Finished:
    """What a twin command leaves for the CLI: the text for standard output, whether a check
    failed, and (`twin exec`) the exit status of the command it ran."""

    text: str = ""
    failed: bool = False
    status: int | None = None


@dataclass(frozen=True, slots=True)
class Failure:
    """One thing that does not work. Its text joins `where: subject: message`, leaving out what
    is empty; a `cause` (a cable or a shut port to blame) comes first, before `; `; a `phase`
    (when it was seen, such as "after restoring") first of all."""

    file: str = ""  # the folder's file behind it (relative), "" when no one file is to blame
    line: int = 0  # its line; 0 when the whole file (or no file) is meant
    subject: str = ""  # what failed: a device, a flow, a pair of planes, a probe
    message: str = ""
    cause: Failure | None = None
    phase: str = ""

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.file and self.line else self.file

    def text(self) -> str:
        own = ": ".join(part for part in (self.where, self.subject, self.message) if part)
        if self.cause is not None:
            own = f"{self.cause.text()}; {own}"
        return f"{self.phase}: {own}" if self.phase else own

    __str__ = text

    def kind(self) -> tuple:
        """What groups it with others on the terminal: its phase, cause, file, line and subject
        when it names a file (the same line failing for many peers, flows or probes); else it is
        a kind of its own."""
        if not self.file:
            return (self,)
        return (self.phase, self.cause, self.file, self.line, self.subject)

    def after(self, phase: str) -> Failure:
        return dataclasses.replace(self, phase=phase)


@dataclass(slots=True)
class Outcome:
    name: str
    proved: int = 0
    total: int = 0
    failures: list[Failure] = field(default_factory=list)
    seconds: float = 0.0
    note: str = ""

    @property
    def ok(self) -> bool:
        return not self.failures and self.proved == self.total


def kinds(failures: list[Failure]) -> list[tuple[int, Failure]]:
    """Failures grouped by kind (Failure.kind), in the order each kind first failed: the count
    and the first of each."""
    groups: dict[tuple, list[Failure]] = {}
    for f in failures:
        groups.setdefault(f.kind(), []).append(f)
    return [(len(g), g[0]) for g in groups.values()]
