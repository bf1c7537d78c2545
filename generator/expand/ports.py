"""Port plans of one switch model: which ports (or split lanes) face the hosts, which face up,
and how many uplinks an oversubscription ratio needs."""

from __future__ import annotations

import math
from dataclasses import dataclass

from generator.catalog import SwitchModel
from generator.errors import BlueprintError, Problem, YamlPath


@dataclass(frozen=True, slots=True)
class LeafPlan:
    split: str  # "2x200GE" or "none"
    lanes: tuple[tuple[str, str], ...]  # (lane name, parent port) toward hosts
    uplinks: tuple[str, ...]
    up_speed: int
    peer_ports: tuple[str, ...]


def _lane_sources(model: SwitchModel, speed: int, split: str) -> tuple[list[str], int, str]:
    """Ports that give `speed` lanes: (parents, lanes per parent, split type or 'none')."""
    if split in ("auto", "none"):
        direct = [p.name for p in model.ports_at(speed)]
        if direct or split == "none":
            return direct, 1, "none"
    for port_speed in sorted(model.speeds):
        k = port_speed // speed
        want = split if split != "auto" else f"{k}x{speed}GE"
        if k > 1 and port_speed == k * speed:
            parents = [p.name for p in model.ports_at(port_speed) if want in p.splits]
            if parents:
                return parents, k, want
    return [], 1, "none"


def leaf_port_plan(
    model: SwitchModel,
    down_speed: int,
    ratio: tuple[int, int] | None,
    split: str,
    peer_links: int,
    uplinks: int | None,
    where: YamlPath,
) -> LeafPlan:
    """Choose host-facing lanes and uplinks on a leaf for the requested oversubscription."""
    parents, k, split_type = _lane_sources(model, down_speed, split)
    if not parents:
        raise BlueprintError(
            [
                Problem(
                    (*where, "model"),
                    f"leaf model {model.name} has no port that gives {down_speed}GE toward hosts"
                    + (f" with split {split}" if split not in ("auto", "none") else ""),
                    f"its ports: {describe_ports(model)}",
                )
            ]
        )
    down_port_speed = down_speed * k
    others = [p for p in model.ports if p.speed != down_port_speed and p.speed >= down_speed]
    if others:
        up_speed = max(p.speed for p in others)
        up_pool = [p.name for p in others if p.speed == up_speed]
        down_parents = parents
        peer = up_pool[:peer_links]
        up_pool = up_pool[peer_links:]
        need = (
            uplinks
            if uplinks is not None
            else _uplinks_for(len(down_parents) * down_port_speed, ratio, up_speed)
        )
        if need > len(up_pool):
            raise BlueprintError(
                [
                    Problem(
                        (*where, "model"),
                        f"leaf model {model.name} cannot build {_ratio_text(ratio)}: "
                        f"{len(down_parents) * down_port_speed}G toward hosts needs {need} x {up_speed}GE "
                        f"uplinks, it has {len(up_pool)} free",
                        "choose a larger oversubscription or another leaf model",
                    )
                ]
            )
        ups = up_pool[:need]
    else:
        up_speed = down_port_speed
        total = len(parents) - peer_links
        if uplinks is not None:
            d = total - uplinks
        else:
            a, b = ratio or (1, 1)
            d = (total * a) // (a + b)
            while d > 0 and d + _uplinks_for(d * down_port_speed, ratio, up_speed) > total:
                d -= 1
        if d <= 0:
            raise BlueprintError(
                [
                    Problem(
                        (*where, "model"),
                        f"leaf model {model.name} has too few ports for this plane",
                        "",
                    )
                ]
            )
        down_parents = parents[:d]
        need = (
            uplinks if uplinks is not None else _uplinks_for(d * down_port_speed, ratio, up_speed)
        )
        peer = parents[d : d + peer_links]
        ups = parents[d + peer_links : d + peer_links + need]
    lanes = tuple(
        (f"{parent}:{i}" if k > 1 else parent, parent)
        for parent in down_parents
        for i in range(1, k + 1)
    )
    return LeafPlan(
        split=split_type, lanes=lanes, uplinks=tuple(ups), up_speed=up_speed, peer_ports=tuple(peer)
    )


def _uplinks_for(down_bw: int, ratio: tuple[int, int] | None, up_speed: int) -> int:
    a, b = ratio or (1, 1)
    return max(1, math.ceil(down_bw * b / (a * up_speed)))


def _ratio_text(ratio: tuple[int, int] | None) -> str:
    return f"{ratio[0]}:{ratio[1]}" if ratio else "its uplinks"


def describe_ports(model: SwitchModel) -> str:
    counts: dict[int, int] = {}
    for p in model.ports:
        counts[p.speed] = counts.get(p.speed, 0) + 1
    return ", ".join(f"{n} x {s}GE" for s, n in sorted(counts.items(), reverse=True))


def spine_lanes(model: SwitchModel, speed: int) -> tuple[list[tuple[str, str]], str]:
    """Ports of an upper-tier switch at `speed`: [(lane, parent)], split type used."""
    parents, k, split_type = _lane_sources(model, speed, "auto")
    lanes = [(f"{p}:{i}" if k > 1 else p, p) for p in parents for i in range(1, k + 1)]
    return lanes, split_type
