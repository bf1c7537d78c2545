"""Equal-cost paths each routed switch must install, and the switch models' facts.

A switch installs one path per routed uplink toward everything above it, and one per parallel
link toward one destination below (the links to one leaf, or to the spines of one pod when they
share an AS). The design check compares this with the model's `maximum load-balancing` limit
(catalog `ecmp_max`); the switch config sets it."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from generator.catalog import Catalog
from generator.model import Device, Link, SwitchFacts
from generator.records import replace
from generator.vocab import LinkKind, Role


def ecmp_paths(devices: tuple[Device, ...], links: Iterable[Link]) -> tuple[Device, ...]:
    """The devices, each routed switch with its `ecmp_paths`."""
    by_name = {d.name: d for d in devices}
    up: Counter[str] = Counter()
    below: dict[str, Counter] = defaultdict(Counter)
    uplink, upper = LinkKind.UPLINK, frozenset((Role.SPINE, Role.CORE))  # read once (vocab.py)
    for link in links:
        if link.kind != uplink or not link.a_ip:
            continue
        up[link.a_device] += 1
        far = by_name[link.a_device]
        key = far.asn or ((far.role, far.pod) if far.role in upper else far.name)
        below[link.b_device][key] += 1
    paths = {name: max(up[name], max(below[name].values(), default=0)) for name in {*up, *below}}
    return tuple(replace(d, ecmp_paths=paths[d.name]) if d.name in paths else d for d in devices)


def switch_facts(devices: Iterable[Device], catalog: Catalog) -> tuple[SwitchFacts, ...]:
    out = []
    for name in sorted({d.model for d in devices if d.platform}):
        m = catalog.switches[name]
        out.append(
            SwitchFacts(
                model=name,
                release=str(m.fact("release", "")),
                ecmp_max=m.ecmp_max,
                ecn=str(m.fact("ecn", "none")),
                command_families=m.command_families,
                release_confirmed=bool(m.facts.get("release", {}).get("confirmed", True)),
                families_confirmed=bool(m.facts.get("command_families", {}).get("confirmed", True)),
            )
        )
    return tuple(out)
