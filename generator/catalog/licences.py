"""generator/catalog/licences.yaml read once: the licence a feature needs on a platform."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import yaml

from generator.model_hardware import Licence


@cache
def licence_table() -> dict[str, dict[str, dict[str, Any]]]:
    """platform -> feature -> {licence, source, page}."""
    text = resources.files("generator.catalog").joinpath("licences.yaml").read_text("utf-8")
    return yaml.load(text, getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}


@cache
def licence_for(platform: str, feature: str) -> Licence | None:
    """The licence a switch of `platform` needs to run `feature` (one shared record), or None."""
    need = licence_table().get(platform, {}).get(feature)
    return Licence(name=need["licence"], feature=feature, source=need["source"]) if need else None
