"""Settings: the design-review settings read from the validated blueprint and the catalog.

The one place the checks, the failure-domain analysis, the design review and the bill of
materials get their thresholds and rates from. The blueprint arrives validated, with every schema
default filled in (generator/blueprint/defaults.py), so nothing here repeats a default.
"""

from __future__ import annotations

import msgspec

from generator.blueprint.spec import Blueprint
from generator.catalog import Catalog
from generator.model import Settings


def resolve_settings(bp: Blueprint, catalog: Catalog) -> Settings:
    design = bp.design
    rates = design.failure_rates
    chosen = bp.hccl.parallelism
    models = {**catalog.switches, **catalog.hosts}
    return Settings(
        max_failure_share=design.max_failure_share,
        accepted={a.check: a.reason for a in design.accept},
        rack_failure_rate=rates.rack,
        cdu_failure_rate=rates.cdu,
        cable_failure_rate=rates.cable,
        model_failure_rates={n: m.failure_rate_per_year for n, m in sorted(models.items())},
        parallelism={k: v for k, v in msgspec.structs.asdict(chosen).items() if v is not None}
        if chosen
        else {},
        parameter_rail=bp.networks.parameter.rail,
        storage_mode=bp.networks.storage.mode,
        storage_access=bp.zones.storage.access,
        business_leaf_mlag=bp.networks.business.leaf.mlag,
        border_router_pair=bp.zones.border.router.pair,
        firewall_pair=bp.zones.border.firewall.pair,
    )
