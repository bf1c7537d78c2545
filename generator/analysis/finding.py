"""A design-check finding, its severities and the closed set of check names."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum

from generator.errors import YamlPath
from generator.vocab import Check  # re-exported: the check names, below the blueprint (spec.Accept)


class Severity(StrEnum):
    """How a finding weighs: an error stops the run, a warning too under --strict (unless its
    check is accepted, design.accept), information only with --verbose."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO


@dataclass(frozen=True, slots=True)
class Finding:
    severity: Severity
    code: Check  # stable identifier, e.g. oversubscription
    message: str
    where: YamlPath = ()  # blueprint path the finding is about, when there is one
    # a warning the blueprint accepts (design.accept): the reason it gives; --strict passes it
    accepted: str = ""

    def line(self) -> str:
        text = f"{self.severity}: [{self.code}] {self.message}"
        return f"{text} (accepted in design.accept: {self.accepted})" if self.accepted else text


def accepted(findings: Iterable[Finding], reasons: Mapping[str, str]) -> Iterator[Finding]:
    """The findings, each warning of a check the blueprint accepts (design.accept: check ->
    reason, cluster.settings.accepted) carrying its reason: still shown and listed in the design
    review, but --strict passes it. An error is never accepted; an acceptance that matched no
    warning is one itself (its check `accept` cannot be accepted)."""
    warned = set()
    for f in findings:
        reason = reasons.get(f.code, "") if f.severity == WARNING else ""
        if reason:
            warned.add(f.code)
        yield replace(f, accepted=reason) if reason else f
    for check in sorted(set(reasons) - warned):  # it would pass a later warning unseen
        yield Finding(
            WARNING,
            Check.ACCEPT,
            f"design.accept names {check}, which raised no warning: remove that entry, so a "
            f"later warning of {check} is seen",
            ("design", "accept"),
        )
