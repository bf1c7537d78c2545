"""Values that would settle a design check's error, found where the catalog is (the analysis
reads only the Cluster): for a switch role that needs more equal-cost paths than its model
installs, the blueprint key and value that hold them (analysis.hardware.ecmp_limit names it)."""

from __future__ import annotations

import math
from collections.abc import Iterable

from generator.catalog import Catalog
from generator.errors import format_path
from generator.expand.ports import spine_lanes
from generator.model import Device, Fabric
from generator.vocab import Plane, Role


def ecmp_options(
    devices: Iterable[Device], fabrics: Iterable[Fabric], catalog: Catalog
) -> tuple[tuple[str, str, str, str], ...]:
    """(plane, role, blueprint key, value) per plane and role whose switches need more
    equal-cost paths than their model's `ecmp_max`; value "" when nothing found holds them.
    A leaf's paths are its uplinks: an oversubscription that divides them under the limit
    (`_fewer_uplinks`). A pod spine of three tiers has half its ports up (fabric.build_plane:
    1:1, one link to a core of its plane each), so its paths are half its ports at the uplink
    speed: the largest model whose half fits its ecmp_max. Any other role keeps its ports: the
    model with the fewest ports, at least as many as now, whose ecmp_max holds the paths."""
    worst: dict[tuple[str, str], tuple[int, str]] = {}
    for d in devices:
        m = catalog.switches.get(d.model)
        if m is not None and d.ecmp_paths > m.ecmp_max:
            worst[d.plane, d.role] = max(
                worst.get((d.plane, d.role), (0, "")), (d.ecmp_paths, d.model)
            )
    by_plane = {f.plane: f for f in fabrics}
    out = []
    for (plane, role), (paths, model) in sorted(worst.items()):
        fabric = by_plane.get(plane)
        limit = catalog.switches[model].ecmp_max
        if fabric is not None and role == Role.LEAF and not Plane(plane).is_management:
            key, value = f"networks.{plane}.oversubscription", _fewer_uplinks(fabric, paths, limit)
        else:
            key = format_path(_model_key(plane, role))
            value = _option(catalog, fabric, role, paths, model) if fabric else ""
        out.append((plane, role, key, value))
    return tuple(out)


def _model_key(plane: str, role: str) -> tuple[str, ...]:
    """The schema key that picks the model of a plane's switches of `role`."""
    if Plane(plane).is_management:
        return ("networks", "management", plane, role, "model")  # access or core
    return ("networks", plane, role, "model")


def _fewer_uplinks(fabric: Fabric, paths: int, limit: int) -> str:
    """The oversubscription r:1 that leaves a leaf at most `limit` uplinks. A leaf's ports are
    split between hosts and uplinks by the ratio (ports.leaf_port_plan), so its P ports give
    about P/(1+r) uplinks, P = uplinks x (1 + the ratio now): r >= P/limit - 1 ('1:1', 16
    uplinks, limit 8: P = 32, '3:1')."""
    down, up = (int(x) for x in fabric.oversubscription.split(":"))
    ports = paths * (down + up) / up
    ratio = max(2, math.ceil(ports / limit - 1 - 1e-9))
    return f"'{ratio}:1' (at most {limit} uplinks per leaf of {round(ports)} ports)"


def _option(catalog: Catalog, fabric: Fabric, role: str, paths: int, model: str) -> str:
    now = catalog.switches[model]
    speed = fabric.up_speed
    have = len(spine_lanes(now, speed)[0])
    fits = []
    for name, m in catalog.switches.items():
        lanes = len(spine_lanes(m, speed)[0])
        if m.platform != now.platform or not lanes:
            continue
        if role == Role.SPINE and fabric.tiers == 3:
            if lanes // 2 <= m.ecmp_max:
                fits.append((lanes, name, f"{lanes} ports at {speed}GE, {lanes // 2} up"))
        elif m.ecmp_max >= paths and lanes >= have:
            fits.append((-lanes, name, f"{lanes} ports at {speed}GE"))
    if not fits:
        return ""
    _, name, ports = max(fits)
    return f"{name} ({ports}, ecmp_max {catalog.switches[name].ecmp_max})"
