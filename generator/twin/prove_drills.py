"""Failure drills of one `wanka twin prove` shard, read from the FIBs: every single-spine
failure, and one uplink failure per leaf class.

A spine cut: every interface of the spine's namespace set down (its far ends lose carrier, as
with a dead box); then every leaf of the shard must hold its route to every leaf subnet of the
build (its plane) with the design's width less the cables to that spine (checks.design_width:
uplinks to spines, at most the catalog's ecmp_max). An uplink cut: a leaf's first cable to a
spine set down at the leaf; then that leaf must hold every route with one path fewer, and
every other leaf a route (at least one path, at most the design's) to that leaf's subnets and
the design's width to the rest. A leaf class: leaves of one inventory group `*_leaves`, one
model and one uplink count (a parameter leaf, a storage leaf, a leaf with fewer uplinks).

After each cut the links come up again (run.reapply) and the cut side's BGP sessions are
cleared so that it connects at once (the translated configs wait VRP's ConnectRetry, 32 s,
generator.twin.routing); the next drill starts when every FIB of the shard is again what it
was before the cut. The seconds from cut to the expected FIBs are printed per drill (this
machine's FRR, not a CE's convergence time)."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from generator.twin import checks, run
from generator.twin.outcome import Failure
from generator.twin.plan import Plan, ns_name

DRILL_S = 90.0  # seconds for the FIBs to show a cut, and again to be back after it
LOOK_S = 0.5  # between looks at the FIBs
WHOLE = "device"  # a drill that takes a whole device (a spine) down, not one of its cables


def spines(q: Plan, interior: set[str]) -> list[str]:
    """The BGP spines inside the shard (members of an inventory group `*_spines`)."""
    group = {d for g, ms in q.groups.items() if g.endswith("_spines") for d in ms}
    return sorted(d for d in q.devices if d in group and q.devices[d].bgp
                  and ns_name(d) in interior)  # fmt: skip


def leaf_classes(q: Plan, interior: set[str]) -> dict[str, str]:
    """Class -> its first leaf inside the shard (class: `*_leaves` group, model, uplinks)."""
    group = {d: g for g, ms in sorted(q.groups.items()) if g.endswith("_leaves") for d in ms}
    out: dict[str, str] = {}
    for leaf in sorted(checks.leaves(q)):
        if ns_name(leaf) not in interior:
            continue
        model = q.hostvars.get(leaf, {}).get("model", "?")
        uplinks, _ = checks.design_width(q, leaf)
        out.setdefault(f"{group.get(leaf, 'leaves')}, {model}, {uplinks} uplinks", leaf)
    return out


def _cables(q: Plan, a: str, b: str) -> int:
    na, nb = ns_name(a), ns_name(b)
    return sum(1 for link in q.links if {link.a[0], link.b[0]} == {na, nb})


def _uplink(q: Plan, leaf: str):
    group = {d for g, ms in q.groups.items() if g.endswith("_spines") for d in ms}
    mine = ns_name(leaf)
    for link in q.links:
        for near, far in ((link.a, link.b), (link.b, link.a)):
            if near[0] == mine and q.namespaces[far[0]].device in group:
                return link, near
    return None, None


def _want(q: Plan, leaf: str, fewer: int) -> int:
    uplinks, cap = checks.design_width(q, leaf)
    return min(uplinks - fewer, cap) if cap else uplinks - fewer


def _judge(q, leaves, subnets, cut_spine: str = "", cut_leaf: str = "") -> list[str]:
    """What differs from the widths expected after the cut, one line per route (empty: held).
    `subnets`: leaf -> [(another leaf of its plane, that leaf's subnets)]."""
    with ThreadPoolExecutor(checks.LOOKERS) as pool:
        fibs = dict(zip(leaves, pool.map(lambda d: checks.routes(ns_name(d)), leaves), strict=True))
    out = []
    for leaf in leaves:
        fewer = _cables(q, leaf, cut_spine) if cut_spine else int(leaf == cut_leaf)
        want = _want(q, leaf, fewer)
        for other, nets in subnets[leaf]:
            if other == leaf:
                continue
            for net in nets:
                width = len(fibs[leaf].get(str(net), []))
                if other == cut_leaf and leaf != cut_leaf:
                    ok = 1 <= width <= _want(q, leaf, 0)
                else:
                    ok = width == want
                if not ok:
                    dev = q.devices[leaf]
                    expected = (f"1 to {_want(q, leaf, 0)}" if other == cut_leaf
                                and leaf != cut_leaf else str(want))  # fmt: skip
                    out.append(Failure(dev.path, dev.bgp.maximum_line or dev.bgp.line, leaf,
                                       f"{width} next hops to {net} ({other}), expected "
                                       f"{expected}"))  # fmt: skip
    return out


def _wait(look: Callable[[], list], seconds: float) -> tuple[list, float]:
    start = time.monotonic()
    while True:
        bad = look()
        if not bad or time.monotonic() - start > seconds:
            return bad, time.monotonic() - start
        time.sleep(LOOK_S)


def run_drills(q: Plan, interior: set[str], subnets, fibs, progress=lambda m: None) -> list:
    """Each drill of the shard as a checks.Outcome (module docstring). `subnets`: each leaf of
    the shard -> [(each leaf of its plane in the whole build, its subnets)]; `fibs`: namespaces
    -> {namespace: its FIB lines} (prove's)."""
    routers = sorted(n for n in interior if q.namespaces[n].frr)
    before = fibs(routers)
    leaves = sorted(d for d in checks.leaves(q) if ns_name(d) in interior)
    drills = [(WHOLE, s, _ends(q, ns_name(s))) for s in spines(q, interior)]
    for cls, leaf in leaf_classes(q, interior).items():
        link, near = _uplink(q, leaf)
        if link is not None:
            drills.append((f"uplink of a leaf of {cls}:", leaf, [near]))
    out = []
    for kind, device, ends in drills:
        name = (f"drill: spine {device} down" if kind == WHOLE
                else f"drill: {kind} {device} {ends[0][1]} down")  # fmt: skip
        o = checks.Outcome(name, total=1)
        _set(ends, "down")
        bad, o.seconds = _wait(lambda d=device, k=kind: _judge(
            q, leaves, subnets, cut_spine=d if k == WHOLE else "",
            cut_leaf=d if k != WHOLE else ""), DRILL_S)  # fmt: skip
        o.failures += bad
        for ns in sorted({n for n, _ in ends}):
            run.reapply(q.namespaces[ns], [dev for n, dev in ends if n == ns])
            run.vtysh(ns, "clear bgp *")
        lost, back = _wait(lambda: _changed(fibs(routers), before), DRILL_S)
        o.failures += [f.after(f"{DRILL_S:.0f} s after the links came up") for f in lost]
        o.proved = int(not o.failures)
        o.note = f"{o.seconds:.1f} s to the expected FIBs, back in {back:.1f} s"
        progress(f"{name}: {'ok' if o.ok else 'FAIL'} ({o.note})")
        out.append(o)
    return out


def _changed(now: dict[str, list[str]], before: dict[str, list[str]]) -> list[Failure]:
    out = []
    for n, table in sorted(now.items()):
        if table != before[n]:
            gone, new = sorted(set(before[n]) - set(table)), sorted(set(table) - set(before[n]))
            out.append(Failure(subject=n, message=f"its FIB is not what it was before the drill "
                               f"({len(gone)} routes gone, e.g. {gone[:1]}, {len(new)} new, "
                               f"e.g. {new[:1]})"))  # fmt: skip
    return out


def _ends(q: Plan, ns: str) -> list[tuple[str, str]]:
    return [end for link in q.links for end in (link.a, link.b) if end[0] == ns]


def _set(ends: list[tuple[str, str]], state: str) -> None:
    by: dict[str, list[str]] = {}
    for ns, dev in ends:
        by.setdefault(ns, []).append(dev)
    for ns, devs in by.items():
        run.sh(
            "ip", "-n", ns, "-batch", "-", input="".join(f"link set {d} {state}\n" for d in devs)
        )
