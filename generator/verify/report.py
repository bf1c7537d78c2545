"""What verify found: problems with their file and line, and the counts it read."""

from __future__ import annotations

from dataclasses import dataclass, field


class NotAnOutput(Exception):
    """The folder is not a wanka output folder."""


@dataclass(frozen=True, slots=True)
class Problem:
    file: str
    line: int
    reason: str
    path: tuple[str, ...] = ()

    def render(self) -> str:
        text = f"{self.file}:{self.line}: {self.reason}"
        return text + "".join(f"\n    {step}" for step in self.path)


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
        return (
            f"verified ({self.switches} device configs, {self.hosts} hosts, {self.nodes:,} "
            f"graph nodes; {self.flows} required flows proven over {self.flow_pairs:,} endpoint "
            f"pairs{idle}; planes isolated, management ACLs, every cabled device configured, "
            "no clear secrets, no NFS)"
        )
