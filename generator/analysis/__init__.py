"""analyse(cluster) -> Analysis: the design findings, the failure-domain review and the shared
rows (bill of materials, IP plan), computed once in the pipeline after expand and handed to every
emitter (`emit(cluster, analysis)`). Pure: the same Cluster gives an equal Analysis, and nothing
is kept between calls."""

from __future__ import annotations

from dataclasses import dataclass

from generator.analysis.checks import ERROR, INFO, WARNING, Finding, check
from generator.analysis.command_table import unconfirmed, unconfirmed_facts
from generator.analysis.failure_domains import Review
from generator.analysis.failure_review import review
from generator.analysis.growth_cost import GrowthCost, next_step_cost
from generator.analysis.hardware import lossless_needs
from generator.analysis.licences import Licence, licence_rows, licences
from generator.analysis.materials import BomRow, IpRow, bom_rows, ip_entries, ip_table
from generator.analysis.rolling import Rolling, rolling
from generator.blueprint.spec import Blueprint
from generator.model import Cluster

__all__ = ["ERROR", "INFO", "WARNING", "Analysis", "Finding", "analyse"]


@dataclass(frozen=True, slots=True)
class Analysis:
    findings: tuple[Finding, ...]  # errors first, then warnings, then information
    failures: Review  # what one failure costs, and how often a job is interrupted
    bom: tuple[BomRow, ...]  # files/bom.csv rows, also in the design review
    ip_plan: tuple[IpRow, ...]  # files/ip-plan.csv rows (materials.ip_table), also in the review
    rolling: Rolling  # the inventory's rolling order and the day-2 switch batches
    # per device model: (model, platform, the command forms no reference page confirms for it)
    unconfirmed_commands: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    # per platform the cluster configures: (platform, form, the fact from its [unconfirmed] mark)
    unconfirmed_facts: tuple[tuple[str, str, str], ...] = ()
    licences: tuple[Licence, ...] = ()  # (device, feature, licence, source), the BOM's licence rows
    # the next step up without a growth plan, the plan that avoids it and what reserving costs
    # (generator.analysis.growth_cost); None when analysed without the blueprint
    growth: GrowthCost | None = None


def unconfirmed_commands(cluster: Cluster) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """Per device model, the command forms it is given that no reference page confirms: every
    [unconfirmed] form of its platform, and the lossless ones whose page lists other models."""
    out = []
    for model, platform in sorted({(d.model, d.platform) for d in cluster.devices if d.platform}):
        mine = {form for _, form, _ in lossless_needs(cluster, model)}
        forms = tuple(c.form for c, _ in unconfirmed(platform, model)
                      if c.emitted and (not c.confirmed or c.form in mine))  # fmt: skip
        if forms:
            out.append((model, platform, forms))
    return tuple(out)


def analyse(cluster: Cluster, blueprint: Blueprint | None = None) -> Analysis:
    """With the validated `blueprint` the cluster came from, also the growth cost (it expands
    the blueprint once more, at the next step up)."""
    failures = review(cluster)
    needs = tuple(licences(cluster))
    findings = tuple(check(cluster, failures))
    grows = blueprint is not None and not any(
        f.severity == ERROR for f in findings
    )  # else nothing is written
    return Analysis(
        findings=findings,
        failures=failures,
        bom=(*bom_rows(cluster), *licence_rows(cluster, needs)),  # licence rows last, as sorted
        ip_plan=tuple(ip_table(ip_entries(cluster))),
        rolling=rolling(cluster),
        unconfirmed_commands=unconfirmed_commands(cluster),
        unconfirmed_facts=tuple(
            (platform, c.form, fact)
            for platform in sorted({d.platform for d in cluster.devices if d.platform})
            for c, fact in unconfirmed_facts(platform)
        ),
        licences=needs,
        growth=next_step_cost(cluster, blueprint) if grows else None,
    )
