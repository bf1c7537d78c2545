"""A design-check finding and its severities."""

from __future__ import annotations

from dataclasses import dataclass

from generator.errors import YamlPath

ERROR, WARNING, INFO = "error", "warning", "info"


@dataclass(frozen=True, slots=True)
class Finding:
    severity: str  # error | warning | info
    code: str  # stable identifier, e.g. oversubscription
    message: str
    where: YamlPath = ()  # blueprint path the finding is about, when there is one

    def line(self) -> str:
        return f"{self.severity}: [{self.code}] {self.message}"
