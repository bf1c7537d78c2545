"""generator/catalog/licences.yaml read once: the licence a feature needs on a platform."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import yaml

from generator.records import Record


class Licence(Record, kw_only=True):
    """A licence a switch's configuration needs: the feature it runs and the page saying so
    (`Device.licences`)."""

    name: str  # e.g. CE-LIC-AFRD
    feature: str  # e.g. ai-ecn (Cluster.ecn_of)
    source: str


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
