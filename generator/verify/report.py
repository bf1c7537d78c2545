"""What verify found: problems with their file and line, and the counts it read."""

from __future__ import annotations

from dataclasses import dataclass, field


def printable(text: str) -> str:
    """`text` safe to print on a terminal: every character that is not printable (C0 and C1
    controls such as ESC, which start terminal escape sequences, DEL, line and paragraph
    separators, and format characters such as the bidi overrides U+202A-U+202E and isolates
    U+2066-U+2069, which reorder what follows) written as its Python escape, \\x1b or \\u202e;
    a backslash is doubled, so an escape in the text cannot pass for one made here."""
    if text.isprintable() and "\\" not in text:
        return text
    return "".join(c if c.isprintable() and c != "\\" else _escape(c) for c in text)


def _escape(c: str) -> str:
    if c == "\\":
        return "\\\\"
    n = ord(c)
    return f"\\x{n:02x}" if n < 0x100 else f"\\u{n:04x}" if n < 0x10000 else f"\\U{n:08x}"


class NotAnOutput(Exception):
    """The folder is not a wanka output folder; its message is printable as it is."""

    def __str__(self) -> str:
        return printable(super().__str__())


@dataclass(frozen=True, slots=True)
class Problem:
    file: str
    line: int
    reason: str
    path: tuple[str, ...] = ()

    def render(self) -> str:
        text = printable(f"{self.file}:{self.line}: {self.reason}")
        return text + "".join(f"\n    {printable(step)}" for step in self.path)


@dataclass(slots=True)
class Report:
    problems: list[Problem] = field(default_factory=list)
    switches: int = 0
    hosts: int = 0
    nodes: int = 0
    edges: int = 0
    flows: int = 0  # required flows (rows of files/flows.csv) checked
    flow_pairs: int = 0  # (source, destination) endpoint pairs proven
    flows_idle: list[str] = field(default_factory=list)  # flows with no endpoints on one side

    def __bool__(self) -> bool:
        return not self.problems

    def summary(self) -> str:
        """What a clean run proved, for `wanka verify`'s one line."""
        idle = f", {', '.join(self.flows_idle)} without endpoints" if self.flows_idle else ""
        return printable(
            f"verified ({self.switches} device configs, {self.hosts} hosts, {self.nodes:,} "
            f"graph nodes; {self.flows} required flows proven over {self.flow_pairs:,} endpoint "
            f"pairs{idle}; planes isolated, management ACLs, every cabled device configured, "
            "no clear secrets, no NFS)"
        )
