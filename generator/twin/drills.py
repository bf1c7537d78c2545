"""Failure drills on the running twin: cut a device or a cable (its interfaces set down, so the
far end loses carrier as with a pulled cable), time how long until the flows that worked before
work again, then restore it and wait for every session to come back."""

from __future__ import annotations

import time

from generator.twin import checks, linkgroup
from generator.twin.instance import PREFIX, ns_name
from generator.twin.plan import Plan
from generator.twin.run import Clock, reapply, sh
from generator.vocab import NsKind, Plane

RECONVERGE_S = 60.0  # seconds after a cut within which the flows must work again

NPU_PATHS = "npu"  # vocabulary: drill check (after the cut, the NPU paths again)


def _set(ends: list[tuple[str, str]], state: str) -> None:
    for ns, dev in ends:
        sh("ip", "-n", ns, "link", "set", dev, state)


def _ends_of(p: Plan, device: str) -> list[tuple[str, str]]:
    names = {n for n in p.namespaces if n == ns_name(device) or n.startswith(ns_name(device) + ".")}
    return [end for link in p.links for end in (link.a, link.b) if end[0] in names]


def _targets(p: Plan) -> list[tuple[str, list[tuple[str, str]], str]]:
    """(what is cut, the interfaces to set down, which check must survive it)."""
    leaves = checks.leaves(p)
    out = []
    planes = checks.planes(p)
    spines = sorted(
        d for d, dev in p.devices.items()
        if dev.bgp and d not in leaves and planes.get(ns_name(d)) == {Plane.PARAMETER}
    )  # fmt: skip
    if spines:
        out.append((f"parameter spine {spines[0]}", _ends_of(p, spines[0]), NPU_PATHS))
    if leaves:
        leaf = sorted(d for d in leaves if planes.get(ns_name(d)) == {Plane.PARAMETER})[0]
        uplink = next(
            link for link in p.links if link.a[0] == ns_name(leaf) and link.b[0].startswith(PREFIX)
            and link.b[0] != link.a[0] and p.namespaces[link.b[0]].kind == NsKind.SWITCH
        )  # fmt: skip
        out.append((f"leaf uplink {leaf} cable {uplink.cable}", [uplink.a], NPU_PATHS))
    firewalls = sorted(d for d, dev in p.devices.items() if dev.zones)
    if firewalls:
        out.append((f"firewall {firewalls[0]}", _ends_of(p, firewalls[0]), "flows"))
        core = _core_link(p, firewalls[0])
        if core is not None:  # one link of the pair's stateful path (issue #41 item 2)
            far, link = core
            what = f"core-to-firewall link {p.namespaces[far[0]].device}-{firewalls[0]}"
            out.append((f"{what} cable {link.cable}", [far], "link"))
    provider = [link for link in p.links if link.plane == Plane.PROVIDER]
    if provider:
        near = p.namespaces[provider[0].a[0]].device
        out.append((f"provider link of {near}", [provider[0].a], "internet"))
    return out


def _core_link(p: Plan, firewall: str):
    """The first cable from `firewall` to an in-band core (else an out-of-band one): its core
    end, the one a pulled cable or a dead core port takes down, and the link."""
    mine = {n for n in p.namespaces if n == ns_name(firewall)}
    planes = checks.planes(p)
    for plane in (Plane.INBAND, Plane.OOB):
        for link in p.links:
            for near, far in ((link.a, link.b), (link.b, link.a)):
                if near[0] in mine and planes.get(far[0]) == {plane, Plane.BORDER}:
                    return far, link
    return None


def _check(p: Plan, kind: str, flows: set[str], cut: set[str]) -> checks.Outcome:
    """One look (no probe retried: the drill's loop looks again until they work)."""
    if kind == NPU_PATHS:
        return checks.npu_paths(p, retry=False)
    return checks.flows(p, {"internet"} if kind == "internet" else flows, skip=cut, retry=False)


def _restore(p: Plan, ends: list[tuple[str, str]]) -> None:
    """Links up again, and the kernel routes the kernel dropped with them put back."""
    for ns in sorted({ns for ns, _ in ends}):
        reapply(p.namespaces[ns], [dev for n, dev in ends if n == ns])


def run(
    p: Plan, working_flows: set[str], progress=lambda m: None, clock: Clock | None = None
) -> list[checks.Outcome]:
    """Each drill: the flows (or NPU paths) that worked before must work again after the cut."""
    clock = clock or Clock()
    with linkgroup.emulated(p):
        return _run(p, working_flows, progress, clock)


def _run(p: Plan, working_flows: set[str], progress, clock: Clock) -> list[checks.Outcome]:
    out = []
    for what, ends, kind in _targets(p):
        flows = working_flows if kind != "internet" else working_flows & {"internet"}
        outcome = checks.Outcome(f"drill: cut {what}")
        if kind == "internet" and not flows:
            outcome.note = "the internet flow did not work before the cut"
            out.append(outcome)
            continue
        _set(ends, "down")
        start = time.monotonic()
        with clock(f"drill {kind}: cut until the flows work"):
            while True:
                cut = {ns for ns, _ in ends} if kind == "flows" else set()
                began = time.monotonic()
                result = _check(p, kind, flows, cut)
                # the verdict is the first round begun after RECONVERGE_S that fails: a round
                # begun earlier may have met the network still converging (on a loaded machine
                # one round of a thousand probes takes longer than RECONVERGE_S)
                if result.ok or began - start > RECONVERGE_S:
                    break
                time.sleep(checks.POLL)
        outcome.seconds = time.monotonic() - start
        outcome.proved, outcome.total, outcome.failures = (
            result.proved,
            result.total,
            result.failures,
        )
        with clock(f"drill {kind}: restore until sessions and FIBs settle"):
            _restore(p, ends)
            back = checks.sessions(p, timeout=RECONVERGE_S)
        outcome.note = f"restored: sessions back after {back[0].seconds:.1f} s"
        for b in back:
            outcome.failures += [f.after("after restoring") for f in b.failures]
        progress(f"{outcome.name}: {outcome.proved}/{outcome.total} in {outcome.seconds:.1f} s")
        out.append(outcome)
    return out
