"""The growth drill: the output of a larger build inside the planned `growth` size, applied to the
running twin of the smaller one, as a day-200 change would be applied to the cluster: the new
devices' namespaces, cables and FRR instances come up, every existing namespace gets only what
the grown output adds (its new ports' addresses and routes, its new FRR lines through vtysh,
an nftables ruleset only if it changed). Then every BGP session that was up must not have
dropped (FRR's per-peer `connectionsDropped`), every route an existing router had must keep its
next hops, the grown output's sessions must all come up and its NPU servers reach each other.

A grown output that takes something away (a namespace, a cable, a config line of an existing
device) is not inside its plan: each such removal is a failure, and it is not applied."""

from __future__ import annotations

import time
from collections.abc import Callable

from generator.twin import checks, run
from generator.twin.outcome import Failure, Outcome
from generator.twin.plan import Link, Plan


def _drops(p: Plan) -> dict[tuple[str, str], int]:
    """(namespace, peer) -> the times that BGP session has dropped, for every Established one."""
    out = {}
    for ns in p.namespaces.values():
        if "bgpd" not in ns.daemons:
            continue
        for peer, state in run.vtysh_json(ns.name, "show bgp neighbors").items():
            if isinstance(state, dict) and state.get("bgpState") == "Established":
                out[(ns.name, peer)] = state.get("connectionsDropped", 0)
    return out


def _fibs(p: Plan) -> dict[str, dict[str, list[dict]]]:
    return {ns.name: checks.routes(ns.name) for ns in p.namespaces.values() if ns.frr}


def _hops(route: list[dict]) -> set[tuple[str, str]]:
    return {(h.get("gateway", ""), h.get("dev", "")) for h in route}


def _leg(link: Link) -> tuple[str, frozenset]:
    """A cable leg: its id (a breakout cable's legs share one) and its two ends."""
    return link.cable, frozenset((link.a, link.b))


def removals(old: Plan, new: Plan) -> list[Failure]:
    """What the grown output takes away from the running twin."""
    gone = "the grown output has no such namespace"
    out = [Failure(subject=name, message=gone) for name in old.namespaces
           if name not in new.namespaces]  # fmt: skip
    legs = {_leg(link) for link in new.links}
    out += [
        Failure(
            "files/cabling.csv",
            link.line,
            message=f"cable {link.cable} ({link.a[0]} {link.a[1]} to {link.b[0]} {link.b[1]}) "
            "is gone from the grown output or re-patched",
        )
        for link in old.links
        if _leg(link) not in legs
    ]
    for name, ns in old.namespaces.items():
        if name in new.namespaces and ns.frr:
            kept = set(new.namespaces[name].frr.splitlines())
            lost = [line for line in ns.frr.splitlines() if line not in kept and line != "!"]
            out += [
                Failure(
                    subject=ns.device, message=f"the grown output drops the FRR line `{g.strip()}`"
                )
                for g in lost
            ]
    return out


def apply(old: Plan, new: Plan) -> tuple[int, int, int]:
    """Bring the grown output's additions up; return (namespaces, cables, routers reconfigured)."""
    added = [ns for name, ns in new.namespaces.items() if name not in old.namespaces]
    legs = {_leg(link) for link in old.links}
    links = [link for link in new.links if _leg(link) not in legs]
    cabled = run.add(added, links)
    for name, ns in new.namespaces.items():
        if name not in old.namespaces:
            run.configure(ns, ns.commands, cabled.get(name, []))
            continue
        before = old.namespaces[name]
        have = set(before.commands)
        run.configure(ns, [c for c in ns.commands if c not in have], cabled.get(name, []), False)
        if ns.nft != before.nft:
            run.guard(ns.nft, "nft", name)
            run.sh("ip", "netns", "exec", name, "nft", "-f", "-",
                   input="flush ruleset\n" + ns.nft)  # fmt: skip
    run.start_frr([ns for ns in added if ns.frr], width=max(_widths(old), _widths(new)))
    changed = 0
    for name, ns in new.namespaces.items():
        if name in old.namespaces and ns.frr != old.namespaces[name].frr:
            run.guard(ns.frr, "FRR", name)
            conf = run.frr_dir(name) / "frr.conf"
            conf.write_text(ns.frr, encoding="utf-8")
            run.sh("vtysh", "--vty_socket", str(run.frr_dir(name)), "-f", str(conf))
            changed += 1
    return len(added), len(links), changed


def _widths(p: Plan) -> int:
    return max((run.paths(ns.frr) for ns in p.namespaces.values() if ns.frr), default=1)


def drill(old: Plan, new: Plan, progress: Callable[[str], None]) -> list[Outcome]:
    out = Outcome("growth: the grown output applied to the running twin")
    out.failures = removals(old, new)
    if out.failures:
        return [out]
    checks.sessions(old)  # the running twin converged: what it has is what must not change
    drops, fibs = _drops(old), _fibs(old)
    start = time.monotonic()
    namespaces, cables, routers = apply(old, new)
    progress(f"grown: {namespaces} namespaces and {cables} cables added, {routers} routers changed")
    up = checks.sessions(new)
    out.seconds = time.monotonic() - start
    out.note = (
        f"{namespaces} namespaces and {cables} cables added, {routers} existing routers "
        f"reconfigured; sessions up {out.seconds:.1f} s after"
    )
    after = _drops(old)
    resets = Outcome("growth: no existing BGP session reset", total=len(drops))
    for (ns, peer), n in sorted(drops.items()):
        if after.get((ns, peer), n + 1) != n:
            resets.failures.append(
                Failure(subject=new.namespaces[ns].device, message=f"BGP peer {peer} was reset")
            )
        else:
            resets.proved += 1
    moved = Outcome("growth: no existing route changed", total=sum(map(len, fibs.values())))
    for ns, fib in sorted(fibs.items()):
        now = checks.routes(ns)
        for dest, hops in sorted(fib.items()):
            if dest in now and _hops(now[dest]) == _hops(hops):
                moved.proved += 1
            else:
                changed = f"{sorted(_hops(hops))} to {sorted(_hops(now.get(dest, [])))}"
                moved.failures.append(
                    Failure(
                        subject=new.namespaces[ns].device,
                        message=f"route {dest} changed from {changed}",
                    )
                )
    out.total = out.proved = 1
    for o in up:
        o.name = f"growth: {o.name} (grown output)"
    npu = checks.npu_paths(new)
    npu.name = f"growth: {npu.name} (grown output)"
    return [out, resets, moved, *up, npu]
