"""A design-check finding, its severities and the closed set of check names."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum

from generator.errors import YamlPath


class Severity(StrEnum):
    """How a finding weighs: an error stops the run, a warning too under --strict (unless its
    check is accepted, design.accept), information only with --verbose."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO


class Check(StrEnum):
    """The design checks by the name a finding shows (`[provider]`) and a blueprint's
    `design.accept[].check` names (the schema's enum is this list: tests/unit/test_accept.py)."""

    ACCEPT = "accept"  # an acceptance (design.accept) whose check raised no warning; not acceptable
    BUSINESS_SPOF = "business-spof"
    CDU_CAPACITY = "cdu-capacity"
    COOLING = "cooling"
    ECMP = "ecmp"
    FAILURE_DOMAIN = "failure-domain"
    FIREWALL_SYMMETRY = "firewall-symmetry"
    GROWTH = "growth"
    LOSSLESS = "lossless"
    MLAG_DAD = "mlag-dad"
    MULTI_RAIL = "multi-rail"
    NFS_ACCESS = "nfs-access"
    NPU_FACTS = "npu-facts"
    NPU_NIC = "npu-nic"
    OPTIC_REACH = "optic-reach"
    OVERSUBSCRIPTION = "oversubscription"
    PARALLELISM = "parallelism"
    POOL_USAGE = "pool-usage"
    PORTS_LEFT = "ports-left"
    PROVIDER = "provider"
    RACK_POWER = "rack-power"
    SHARED_STORAGE_PLANE = "shared-storage-plane"
    SPLIT_PORTS = "split-ports"
    SWITCH_CAPABILITY = "switch-capability"
    SWITCH_MTU = "switch-mtu"


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
