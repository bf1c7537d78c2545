"""Design rules of what can be plugged in, stated from the model's links and trunks.

A split port is one cage holding one module: its lanes leave on one breakout cable (the legs
share a Link.cable_id) or on one optic whose lanes run through one trunk and cassette (they share
a Link.trunk_id). The planes split ports for their own breakouts, and the border and a shared
storage plane only take lanes of ports they split themselves (generator.expand.border FreePorts):
a hand-off to a firewall is a whole port or a leg of its own breakout. `wanka verify` checks the
same rule on the rendered files/cabling.csv (generator.verify.physical)."""

from __future__ import annotations

from collections.abc import Iterator

from generator.analysis.finding import ERROR, INFO, Check, Finding
from generator.model import Cluster


def split_ports(cluster: Cluster) -> Iterator[Finding]:
    cables: dict[tuple[str, str], set[str]] = {}
    whole: set[tuple[str, str]] = set()
    for x in cluster.links:
        for device, port in ((x.a_device, x.a_port), (x.b_device, x.b_port)):
            parent, split, _ = port.partition(":")
            if split:
                cables.setdefault((device, parent), set()).add(x.trunk_id or x.cable_id)
            else:
                whole.add((device, port))
    bad = []
    for (device, parent), ids in cables.items():
        if (device, parent) in whole:
            ids = {*ids, "and the whole port"}
        if len(ids) > 1:
            bad.append(f"{device} {parent} ({', '.join(sorted(ids))})")
    bad.sort()
    if bad:
        yield Finding(
            ERROR,
            Check.SPLIT_PORTS,
            f"{len(bad)} split ports have lanes on more than one cable, e.g. {bad[0]}: a cage holds "
            "one module, so a split port's lanes take one breakout cable or one optic with one "
            "trunk and cassette (a model bug: please report it with the blueprint)",
        )
        return
    trunked = {t.trunk_id for t in cluster.trunks}
    by_trunk = sum(1 for ids in cables.values() if ids <= trunked)
    held = (
        f"{len(cables)} split ports, each on one cable: {len(cables) - by_trunk} breakout "
        f"cables and {by_trunk} optics with one trunk and cassette"
        if cables
        else "no split ports: every cable ends in whole ports"
    )
    yield Finding(
        INFO,
        Check.SPLIT_PORTS,
        f"{held}; the border hand-offs take whole ports or a breakout of their own (a cage "
        "holds one module)",
    )
