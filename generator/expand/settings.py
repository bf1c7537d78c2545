"""Settings: the design-review settings read from the validated blueprint and the catalog.

The one place the checks, the failure-domain analysis, the design review and the bill of
materials get their thresholds and rates from. The blueprint arrives validated, with every schema
default filled in (generator/blueprint/defaults.py), so nothing here repeats a default.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from generator.catalog import Catalog
from generator.model import Settings


def resolve_settings(bp: Mapping[str, Any], catalog: Catalog) -> Settings:
    design = bp["design"]
    rates = design["failure_rates"]
    models = {**catalog.switches, **catalog.hosts}
    return Settings(
        max_failure_share=design["max_failure_share"],
        rack_failure_rate=rates["rack"],
        cdu_failure_rate=rates["cdu"],
        cable_failure_rate=rates["cable"],
        model_failure_rates={n: m.failure_rate_per_year for n, m in sorted(models.items())},
        parallelism=dict(bp["hccl"].get("parallelism") or {}),
        parameter_rail=bp["networks"]["parameter"]["rail"],
        storage_mode=bp["networks"]["storage"]["mode"],
        storage_access=bp["zones"]["storage"]["access"],
        business_leaf_mlag=bp["networks"]["business"]["leaf"]["mlag"],
        border_router_pair=bp["zones"]["border"]["router"]["pair"],
        firewall_pair=bp["zones"]["border"]["firewall"]["pair"],
    )
