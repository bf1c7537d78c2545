"""Settings: the design-review settings, a view over the validated blueprint's records with the
catalog's failure rates beside them.

The one place the checks, the failure-domain analysis, the design review and the bill of
materials get their thresholds and rates from. The blueprint arrives validated, with every schema
default filled in (generator/blueprint/defaults.py), so nothing here repeats a default or copies
a setting.
"""

from __future__ import annotations

from generator.blueprint.spec import Blueprint
from generator.catalog import Catalog
from generator.model import Settings


def resolve_settings(bp: Blueprint, catalog: Catalog) -> Settings:
    models = {**catalog.switches, **catalog.hosts}
    return Settings(
        design=bp.design,
        networks=bp.networks,
        zones=bp.zones,
        hccl=bp.hccl,
        model_failure_rates={n: m.failure_rate_per_year for n, m in sorted(models.items())},
    )
