"""Cross-field checks on a schema-valid blueprint with defaults filled, before any expansion.

Each check is a pure function `(data, catalog) -> list[Problem]`, every problem at the YAML path
of the value to change. They assume the schema is satisfied (types and required keys).
"""

from __future__ import annotations

import difflib
import re
import string
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from generator.blueprint.refusals import (
    PROVIDER,
    cache_path_problems,
    mountpoint_problems,
    overlap_problems,
    pool_kind_problems,
)
from generator.blueprint.spec import Blueprint
from generator.catalog import Catalog, HostModel, build_catalog, overrides, port_names
from generator.errors import Problem, YamlPath
from generator.vocab import Plane, Role

Data = Mapping[str, Any]
Check = Callable[[Data, Catalog], list[Problem]]

SWITCH = "switch"  # vocabulary: catalog kind
# Host models used by the blueprint, with the catalog kind each must be.
HOST_MODEL_PATHS: Mapping[YamlPath, str] = {
    ("compute", "server"): "npu-server",  # vocabulary: blueprint key
    ("zones", "storage", "nodes", "model"): "storage-node",
    ("zones", "management", "model"): "management-node",
}
# Every `model:` under these is a switch (leaf, spine, core, access, border router, firewall).
SWITCH_AREAS: tuple[YamlPath, ...] = (("networks",), ("zones", "border"))
POOL_PATHS: tuple[YamlPath, ...] = (
    ("networks", "parameter", "pool"),
    ("networks", "storage", "pool"),
    ("networks", "business", "pool"),
    ("networks", "management", "inband", "pool"),
    ("networks", "management", "oob", "pool"),
    ("zones", "border", "pool"),
)
OPTIONAL_POOL_PATHS: tuple[YamlPath, ...] = (("zones", "border", "nat"),)  # when given
_WIDE = re.compile(r"\d{4,}")
_DNS_LABEL = re.compile(r"[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?")
_HOSTNAME = ("compute", "hostname")


def semantic_problems(data: Data) -> list[Problem]:
    """Every cross-field problem; catalog entries that are themselves broken are left out of
    the catalog the other checks use (they are reported once, at their own path)."""
    catalog_section = data.get("catalog", {})
    problems = catalog_problems(catalog_section)
    broken = {p.path[:3] for p in problems}
    usable = {
        kind: {name: e for name, e in models.items() if ("catalog", kind, name) not in broken}
        for kind, models in catalog_section.items()
    }
    catalog = build_catalog(usable)
    for check in CHECKS:
        problems += check(data, catalog)
    return problems


def catalog_problems(section: Data) -> list[Problem]:
    """Port name patterns in the blueprint's catalog entries must expand, each port to its own
    name; then the checks of generator.catalog.overrides (ports, NIC names, counts)."""
    problems = []
    for name, model in section.get("switches", {}).items():
        group_of: dict[str, int] = {}
        found = []
        for index, group in enumerate(model["ports"]):
            path = ("catalog", "switches", name, "ports", index, "name")
            pattern = _pattern_problems(path, group["name"], {"slot": 1, "card": 1, "port": 1})
            names = [] if pattern else port_names(group)
            again = next((n for n in names if n in group_of), None)
            if again is not None:
                hint = f"ports[{group_of[again]}] names it already: remove the repeated group"
                pattern.append(Problem(path, f"port {again} is named twice", hint))
            elif twice := [n for n, k in Counter(names).items() if k > 1]:
                hint = "put {slot}, {card} and {port} in the name, one per numbered level"
                pattern.append(Problem(path, f"port {twice[0]} is named twice", hint))
            group_of.update((n, index) for n in names if n not in group_of)
            found += pattern
        problems += found or overrides.switch_problems(name, model)
    for name, model in section.get("servers", {}).items():
        pattern = []
        for role, ports in model["ports"].items():
            path = ("catalog", "servers", name, "ports", role, "name")
            pattern += _pattern_problems(path, ports["name"], {"n": 0})
        problems += pattern or overrides.server_problems(name, model)
    return problems


def _pattern_problems(path: YamlPath, pattern: str, fields: Mapping[str, int]) -> list[Problem]:
    try:
        format_pattern(pattern, fields)
    except ValueError as error:
        placeholders = " and ".join("{" + f + "}" for f in fields)
        return [Problem(path, str(error), f"use {placeholders}")]
    return []


def format_pattern(pattern: str, fields: Mapping[str, int]) -> str:
    """`pattern.format(**fields)`, every way it can fail turned into a ValueError in words.

    Format specs with nested fields or widths of 1000 and more are refused before formatting:
    `{index:999999999d}` would otherwise build a gigabyte string.
    """
    try:
        for _, _, spec, _ in string.Formatter().parse(pattern):
            if spec and ("{" in spec or _WIDE.search(spec)):
                raise ValueError(f"the format spec {spec!r} is not supported")
        return pattern.format(**fields)
    except KeyError as error:
        raise ValueError(f"{pattern!r} uses an unknown placeholder {{{error.args[0]}}}") from None
    except (IndexError, ValueError, AttributeError, TypeError, OverflowError) as error:
        raise ValueError(f"{pattern!r} cannot be expanded: {error}") from None


def get(data: Any, path: YamlPath) -> Any:
    """The value at `path`, or None when a part is missing."""
    for part in path:
        if not isinstance(data, Mapping) or part not in data:
            return None
        data = data[part]
    return data


def model_problems(data: Data, catalog: Catalog) -> list[Problem]:
    """Every model name exists in the catalog and is of the kind its place needs."""
    uses = [(path, kind) for path, kind in HOST_MODEL_PATHS.items()]
    uses += [(path, SWITCH) for area in SWITCH_AREAS for path in _model_keys(get(data, area), area)]
    problems = [_model_problem(path, get(data, path), kind, catalog) for path, kind in uses]
    return [p for p in problems if p is not None]


def _model_keys(value: Any, path: YamlPath) -> Iterator[YamlPath]:
    if isinstance(value, Mapping):
        for key, member in value.items():
            if key == "model" and isinstance(member, str):
                yield (*path, key)
            else:
                yield from _model_keys(member, (*path, key))


def _kind(catalog: Catalog, name: str) -> str | None:
    if name in catalog.switches:
        return SWITCH
    host = catalog.hosts.get(name)
    return host.kind if host else None


def _model_problem(path: YamlPath, name: str, kind: str, catalog: Catalog) -> Problem | None:
    actual = _kind(catalog, name)
    if actual == kind:
        return None
    choices = sorted(n for n in (*catalog.switches, *catalog.hosts) if _kind(catalog, n) == kind)
    if actual is None:
        close = difflib.get_close_matches(name, choices, n=1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        return Problem(path, f"unknown {kind} model '{name}'", hint + "see `wanka catalog`")
    return Problem(
        path,
        f"'{name}' is of kind {actual}, but this needs kind {kind}",
        f"{kind} models: {', '.join(choices)}; see `wanka catalog`",
    )


def server_model(data: Data, catalog: Catalog) -> HostModel | None:
    """The NPU server model, when the name is a known npu-server."""
    return npu_model(data["compute"]["server"], catalog)


def npu_model(name: str, catalog: Catalog) -> HostModel | None:
    model = catalog.hosts.get(name)
    return model if model is not None and model.kind == Role.NPU_SERVER else None


def server_count(data: Data, catalog: Catalog) -> int | None:
    """How many NPU servers the blueprint asks for, when that is known."""
    compute = data["compute"]
    return servers_of(compute["server"], compute.get("servers"), compute.get("cards"), catalog)


def servers_of(server: str, servers: int | None, cards: int | None, catalog: Catalog) -> int | None:
    """NPU servers from `compute`'s servers, else its cards (None when they do not divide)."""
    if servers is not None:
        return servers
    model = npu_model(server, catalog)
    if model is None or not model.npus or cards is None or cards % model.npus:
        return None
    return cards // model.npus


def planned_servers(data: Data, catalog: Catalog) -> int:
    """NPU servers of the planned final build (`growth.cards`), 0 without a plan."""
    return planned_of(data["compute"]["server"], data.get("growth", {}).get("cards", 0), catalog)


def planned_of(server: str, cards: int, catalog: Catalog) -> int:
    model = npu_model(server, catalog)
    if not cards or model is None or not model.npus or cards % model.npus:
        return 0
    return cards // model.npus


def spec_servers(bp: Blueprint, catalog: Catalog) -> int | None:
    """server_count of the typed blueprint."""
    return servers_of(bp.compute.server, bp.compute.servers, bp.compute.cards, catalog)


def spec_planned(bp: Blueprint, catalog: Catalog) -> int:
    """planned_servers of the typed blueprint."""
    return planned_of(bp.compute.server, bp.growth.cards if bp.growth else 0, catalog)


def cards_problems(data: Data, catalog: Catalog) -> list[Problem]:
    """compute.cards is a whole number of servers."""
    compute, model = data["compute"], server_model(data, catalog)
    if model is None or "cards" not in compute:
        return []
    if not model.npus:
        return [
            Problem(
                ("compute", "server"),  # vocabulary: blueprint key
                f"'{model.name}' has no NPUs, so compute.cards cannot be met",
                "give compute.servers, or set npus in the catalog entry",
            )
        ]
    cards = compute["cards"]
    if cards % model.npus == 0:
        return []
    nearest = " or ".join(str(n) for n in nearest_multiples(cards, model.npus))
    return [
        Problem(
            ("compute", "cards"),
            f"{cards} cards is not a multiple of {model.npus}, the NPUs in one {model.name}",
            f"use {nearest}",
        )
    ]


def growth_problems(data: Data, catalog: Catalog) -> list[Problem]:
    """growth.cards is a whole number of servers, and of supernodes when there are any."""
    cards = data.get("growth", {}).get("cards")
    model = server_model(data, catalog)
    if cards is None or model is None or not model.npus:
        return []
    where = ("growth", "cards")
    if cards % model.npus:
        nearest = " or ".join(str(n) for n in nearest_multiples(cards, model.npus))
        return [
            Problem(where, f"{cards} cards is not a multiple of {model.npus}, the NPUs in one "
                    f"{model.name}", f"use {nearest}")
        ]  # fmt: skip
    supernode = data["compute"].get("supernode")
    servers = cards // model.npus
    if supernode and servers % supernode["servers"]:
        size = supernode["servers"] * model.npus
        nearest = " or ".join(str(n) for n in nearest_multiples(cards, size))
        return [
            Problem(where, f"{servers} servers do not split evenly into supernodes of "
                    f"{supernode['servers']}", f"use {nearest}")
        ]  # fmt: skip
    return []


def supernode_problems(data: Data, catalog: Catalog) -> list[Problem]:
    """Supernodes split the servers evenly."""
    supernode = data["compute"].get("supernode")
    count = server_count(data, catalog)
    if supernode is None or count is None or count % supernode["servers"] == 0:
        return []
    size = supernode["servers"]
    sizes = " or ".join(str(n) for n in nearest_divisors(count, size))
    counts = " or ".join(str(n) for n in nearest_multiples(count, size))
    return [
        Problem(
            ("compute", "supernode", "servers"),
            f"{count} servers do not split evenly into supernodes of {size}",
            f"use supernodes of {sizes} servers, or {counts} servers",
        )
    ]


def nearest_multiples(value: int, step: int) -> list[int]:
    """The multiples of `step` just below and above `value` (positive ones only)."""
    below = value // step * step
    return [n for n in (below, below + step) if n > 0]


def nearest_divisors(value: int, target: int) -> list[int]:
    """The two divisors of `value` closest to `target`, ascending."""
    divisors = {d for i in range(1, int(value**0.5) + 1) if value % i == 0 for d in (i, value // i)}
    return sorted(sorted(divisors, key=lambda d: (abs(d - target), d))[:2])


def cooling_problems(data: Data, catalog: Catalog) -> list[Problem]:
    """The training zone's cooling is one the server model supports."""
    model, cooling = server_model(data, catalog), data["zones"]["training"]["cooling"]
    if model is None or cooling in model.cooling:
        return []
    supported = ", ".join(model.cooling) or "nothing"
    hint = f"set zones.training.cooling: {model.cooling[0]}" if model.cooling else ""
    return [
        Problem(
            ("zones", "training", "cooling"),
            f"{model.name} does not support {cooling} cooling (it supports {supported})",
            hint or "choose another compute.server",
        )
    ]


def pool_problems(data: Data, catalog: Catalog) -> list[Problem]:
    """The address pools, the provider hand-off and the NAT pool when given
    (refusals.overlap_problems)."""
    optional = tuple(path for path in OPTIONAL_POOL_PATHS if get(data, path) is not None)
    return overlap_problems((path, get(data, path)) for path in (*POOL_PATHS, PROVIDER, *optional))


def hostname_problems(data: Data, catalog: Catalog) -> list[Problem]:
    """The hostname pattern gives a valid DNS label for the first and last index, and
    different names for different servers."""
    pattern, first = data["compute"]["hostname"], data["compute"]["index_start"]
    count = server_count(data, catalog)
    indices = [first] if count is None else [first, first + count - 1]
    names = []
    for index in indices:
        try:
            name = format_pattern(pattern, {"index": index})
        except ValueError as error:
            return [Problem(_HOSTNAME, str(error), 'use {index}, e.g. "npu-{index:04d}"')]
        if not _DNS_LABEL.fullmatch(name):
            return [
                Problem(
                    _HOSTNAME,
                    f"{pattern!r} gives {name!r} for index {index}, which is not a DNS label",
                    "a label is lower-case letters, digits and '-' (not first or last), "
                    "at most 63 characters",
                )
            ]
        names.append(name)
    if count is not None and count > 1 and names[0] == names[-1]:
        return [
            Problem(
                _HOSTNAME,
                f"{pattern!r} gives every server the same name {names[0]!r}",
                'include {index}, e.g. "npu-{index:04d}"',
            )
        ]
    return []


def hccl_problems(data: Data, catalog: Catalog) -> list[Problem]:
    """HCCL_RDMA_SL / HCCL_RDMA_TC, when set, match the one lossless class."""
    lossless, env = data["networks"]["parameter"]["lossless"], data["hccl"]["env"]
    priority, dscp = lossless["priority"], lossless["dscp"]
    required = {
        "HCCL_RDMA_SL": (priority, f"the lossless priority {priority}"),
        "HCCL_RDMA_TC": (4 * dscp, f"4 × the lossless DSCP {dscp}"),
    }
    hint = (
        f"RoCE traffic has one lossless class, networks.parameter.lossless (priority {priority}, "
        f"DSCP {dscp}), so HCCL_RDMA_SL must be {priority} and HCCL_RDMA_TC {4 * dscp}; "
        "change the class there, or leave these variables out and wanka sets them"
    )
    return [
        Problem(("hccl", "env", name), f"{name} is {env[name]} but must be {want}, {why}", hint)
        for name, (want, why) in required.items()
        if name in env and _as_int(env[name]) != want
    ]


def cnp_problems(data: Data, catalog: Catalog) -> list[Problem]:
    """A plane's CNP DSCP differs from its RoCE DSCP (CNPs go to cs6, RoCE to the lossless queue)."""
    out = []
    for plane in (Plane.PARAMETER, Plane.STORAGE):
        cfg = data["networks"][plane].get("lossless") or {}
        if "cnp_dscp" in cfg and cfg["cnp_dscp"] == cfg.get("dscp"):
            out.append(
                Problem(
                    ("networks", plane, "lossless", "cnp_dscp"),
                    f"cnp_dscp {cfg['cnp_dscp']} is the RoCE DSCP too",
                    "congestion notifications need their own DSCP (default 48, mapped to cs6)",
                )
            )
    return out


def _as_int(value: Any) -> int | None:
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


CHECKS: tuple[Check, ...] = (
    model_problems,
    cards_problems,
    growth_problems,
    supernode_problems,
    cooling_problems,
    pool_problems,
    hostname_problems,
    hccl_problems,
    lambda data, _: pool_kind_problems((p, get(data, p)) for p in POOL_PATHS),
    lambda data, _: mountpoint_problems(data),
    lambda data, _: cache_path_problems(data),
    cnp_problems,
)
