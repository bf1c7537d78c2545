"""The switch models and pools a sized cluster needs, found by the code `wanka generate` runs.

`wanka size` starts from the blueprint defaults (the schema's models and pools) and expands the
cluster as `generate` would. Every design error expand reports for a plane too large for its
defaults names the key and a value that works (expand.upper_model: the catalog switch with the
fewest ports at the uplink speed that still has enough; a pool prefix that holds the plane); those
values are set and the cluster expanded again, until it expands and passes its design checks
(their errors name a value too: a pod spine whose half of the ports fits its ECMP limit, the racks
per row that bring every optical run within its optic's reach). So the models `wanka size` prints
are the ones the generated cluster uses, each with the ports it needs and has.
"""

from __future__ import annotations

import ipaddress
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import yaml

from generator.blueprint.defaults import resolve
from generator.blueprint.validate import SCHEMA
from generator.catalog import Catalog
from generator.errors import BlueprintError, Problem
from generator.expand import BORDER_SPARE
from generator.expand.ports import spine_lanes
from generator.vocab import Plane, Role

ROUNDS = 6  # each round settles every plane it reports, so two or three suffice
SET = re.compile(r"set ([\w.]+): ([\w-]+)(?: \(|$)")
SETTABLE = ("networks.", "zones.training.row.")  # keys choose() sets; the rest stay the user's
PREFIX = re.compile(r"use a /(\d+) or larger")
UPPER = {Role.SPINE: "spine", Role.CORE: "core"}  # roles above the leaves / access switches


@dataclass(frozen=True, slots=True)
class Choice:
    networks: dict[str, Any]  # what the blueprint sets beyond the defaults (networks, zones)
    result: Any  # pipeline.Result of the chosen blueprint
    text: str  # the blueprint as written
    reasons: tuple[str, ...]  # one line per plane: the models, ports needed and had, alternatives


def _default(path: str) -> Any:
    node: Any = SCHEMA
    for key in path.split("."):
        node = resolve(node, SCHEMA)["properties"][key]
    return node.get("default")


def _set(tree: dict, path: str, value: Any) -> None:
    *parents, last = path.split(".")
    for key in parents:
        tree = tree.setdefault(key, {})
    tree[last] = value


def _get(tree: dict, path: str) -> Any:
    for key in path.split("."):
        if not isinstance(tree, dict) or key not in tree:
            return None
        tree = tree[key]
    return tree


def _pools(networks: dict) -> list[ipaddress.IPv4Network]:
    keys = ("parameter", "storage", "business", "management.inband", "management.oob")
    found = [_get(networks, f"{k}.pool") or _default(f"networks.{k}.pool") for k in keys]
    return [ipaddress.ip_network(p) for p in found]


def _wider(old: str, prefix: int, taken: list[ipaddress.IPv4Network]) -> str:
    """`old` widened to /`prefix`, moved to the first free block of 10.64.0.0/10 if widening
    it in place would overlap another plane's pool."""
    net = ipaddress.ip_network(old)
    others = [t for t in taken if t != net]
    grown = net.supernet(new_prefix=prefix)
    if not any(grown.overlaps(t) for t in others):
        return str(grown)
    for block in ipaddress.ip_network("10.64.0.0/10").subnets(new_prefix=prefix):
        if not any(block.overlaps(t) for t in others):
            return str(block)
    return str(grown)  # nothing free: expand reports the overlap


def _apply(tree: dict, problems: list[Problem]) -> list[str]:
    """Every problem's hinted value set in `tree` (blueprint keys: networks, zones); the problems
    that name none."""
    unfixed = []
    networks = tree.setdefault("networks", {})
    for p in problems:
        key = ".".join(map(str, p.path))
        text = f"{p.message} ({p.hint})"
        if (m := PREFIX.search(text)) and key.startswith("networks.") and key.endswith(".pool"):
            path = key.removeprefix("networks.")
            old = _get(networks, path) or _default(key)
            _set(networks, path, _wider(old, int(m.group(1)), _pools(networks)))
        elif (m := SET.search(text)) and m.group(1).startswith(SETTABLE):
            value = m.group(2)
            _set(tree, m.group(1), int(value) if value.isdigit() else value)
        else:
            unfixed.append(f"{key}: {text}")
    return unfixed


def _text(text_of: Callable[[dict], str], tree: dict) -> str:
    """The blueprint of `tree`: its networks through `text_of`, its zones after them."""
    text = text_of(dict(tree.get("networks", {})))
    if tree.get("zones"):
        text += yaml.safe_dump({"zones": tree["zones"]}, sort_keys=False)
    return text


def _check_errors(result: Any) -> list[Problem]:
    """The design-check errors of a cluster that expanded, as problems to settle."""
    from generator.analysis.finding import ERROR

    return [
        Problem(f.where, f"[{f.code}] {f.message}") for f in result.findings if f.severity == ERROR
    ]


def choose(text_of: Callable[[dict], str], run: Callable[[str], Any], catalog: Catalog) -> Choice:
    """Expand the blueprint `text_of(networks)` from the defaults, setting what expand's errors
    and then the design checks' errors name, until it expands and passes its checks. `run`:
    pipeline.run of a blueprint text without emitting."""
    tree: dict[str, Any] = {}
    for _ in range(ROUNDS):
        text = _text(text_of, tree)
        try:
            result = run(text)
        except BlueprintError as err:
            if _apply(tree, err.problems):  # a problem no value of ours settles
                raise BlueprintError(err.problems) from None
            continue
        if errors := _check_errors(result):
            if _apply(tree, errors):
                raise BlueprintError(errors)
            continue
        return Choice(tree, result, text, tuple(reasons(result, catalog)))
    raise BlueprintError([Problem(("networks",), f"no design found in {ROUNDS} rounds")])


def reasons(result: Any, catalog: Catalog) -> list[str]:
    """Per plane: each switch model above the leaves, the most ports one of them uses against
    what the model has at the uplink speed, and the alternative: the default it replaced, or the
    next smaller catalog model that would not do."""
    cluster, bp = result.cluster, result.blueprint
    used: Counter[tuple[str, int]] = Counter()  # ports of a switch at a speed
    for link in cluster.links:
        used[link.a_device, link.speed] += 1
        used[link.b_device, link.speed] += 1
    out = []
    for fabric in cluster.fabrics:
        where = (
            "management." + fabric.plane
            if fabric.plane in (Plane.INBAND, Plane.OOB)
            else fabric.plane
        )
        parts = [f"{fabric.leaf_model} leaves"]
        for role in sorted({d.role for d in cluster.devices if d.plane == fabric.plane} & {*UPPER}):
            devs = [d for d in cluster.devices if d.plane == fabric.plane and d.role == role]
            model = devs[0].model
            need = max(used[d.name, fabric.up_speed] for d in devs)
            have = len(spine_lanes(catalog.switches[model], fabric.up_speed)[0])
            key = {Plane.PARAMETER: role, Plane.INBAND: "core", Plane.OOB: "core"}.get(
                fabric.plane,
                "spine",  # vocabulary: blueprint key
            )
            default = _default(f"networks.{where}.{key}.model")
            why = f"{len(devs)} x {model} ({role}): {need} ports used of {have} at {fabric.up_speed}GE"
            if model != default and _get(bp, f"networks.{where}.{key}.model") == model:
                dflt = len(spine_lanes(catalog.switches[default], fabric.up_speed)[0])
                why += f"; the default {default} has {dflt}"
            else:
                why += _smaller(catalog, model, fabric.up_speed, need)
            parts.append(why)
        out.append(f"{fabric.plane:<9}   {fabric.tiers} tiers: " + "; ".join(parts))
    return out


def _smaller(catalog: Catalog, model: str, speed: int, need: int) -> str:
    """The next smaller catalog model at `speed`, and whether it would hold `need` ports."""
    have = len(spine_lanes(catalog.switches[model], speed)[0])
    below = [
        (n_lanes, name)
        for name, m in catalog.switches.items()
        if m.platform == "huawei-ce" and 0 < (n_lanes := len(spine_lanes(m, speed)[0])) < have
    ]
    if not below:
        return ""
    n_lanes, name = max(below)
    verdict = "would also do" if n_lanes >= need + BORDER_SPARE else "would not do"
    return f"; the next smaller, {name} ({n_lanes}), {verdict}"
