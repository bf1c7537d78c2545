"""`wanka twin prove FOLDER`: every switch, router and firewall of a build runs in FRR/nftables
at least once, shard by shard (generator.twin.shard), each shard's boundary fed by BGP speakers
announcing what the neighbouring shard's own FRR had as best.

Order: the shards run one after another; each boundary announces what its device's FRR held the
last time that device ran (nothing before it first ran). After every pass the boundary of each
shard is built again from what was captured meanwhile: a shard whose boundary would announce
exactly what it announced on its last run has nothing new to learn and is not run again; the
passes end when none changes (a fixpoint; the number of passes is printed). What a shard
proves is the outcome of its last run.

Per shard: every BGP session and OSPF adjacency of its devices (toward the boundary too), each
leaf's route to every leaf subnet of the whole build with the ECMP width of the design read from
its FIB, NPU to NPU across its leaves (real packets, parameter plane only), and, in a shard with
the provider and hosts, the forbidden pairs and the required flows whose ends it holds; once
every neighbour across its boundary has run, its drills (generator.twin.prove_drills: every
spine down, one uplink down per leaf class). Overall: a device run in several shards (a spine,
a core) has one FIB in all of them. A green run is recorded; `--since PREVIOUS` runs only the
shards a changed output touches (generator.twin.prove_since).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import resource
import shutil
import signal
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from generator.collection import ansible_collection
from generator.twin import (
    checks,
    hosts,
    plan,
    probe,
    prove_drills,
    prove_since,
    routing,
    run,
    shard,
)
from generator.twin.explain import walk
from generator.twin.instance import PREFIX, ns_name
from generator.twin.outcome import Failure, Finished, Stop, TakenDown
from generator.twin.plan import Plan
from generator.twin.run import sh
from generator.verify.report import NotAnOutput
from generator.vocab import NsKind, Plane

# bgpd holds a new update subgroup's first updates back for 1 s plus 50 ms per peer, at most
# 10 s (FRR bgpd/bgp_updgrp.h: BGP_DEFAULT_SUBGROUP_COALESCE_TIME 1000,
# BGP_PEER_ADJUST_SUBGROUP_COALESCE_TIME 50, BGP_MAX_SUBGROUP_COALESCE_TIME 10000): a FIB quiet
# for less than that after the sessions came up may not have heard a spine yet (measured: a
# cluster-1k shard's leaves had no BGP route 5 s after Established, all 66 at 15 s)
COALESCE = 11.0
# seconds for every session of a shard to come up: wanka-10k's pod shards in their second pass
# (32 core speakers of 36 sessions and about 1,000 announcements each, 88 routers, on this
# 2-core machine shared with other jobs) had sessions still coming up after checks' 90 s
SESSIONS = 300.0
MAX_PASSES = 6  # a fabric of 3 tiers settles in 2 (the cores carry each pod's subnets once)
KEYFILES = run.STATE / "keyfiles-prove"
BIRD = "/usr/sbin/bird"  # Debian package bird2: the boundary speakers (shard.speaker)
SHOWN = 8


def _quiet(message: str) -> None:
    pass


_say: Callable[[str], None] = _quiet  # where progress goes: main's `say` (the CLI prints it)


def _out(message: str) -> None:
    _say(message)


def available_mib() -> int:
    text = Path("/proc/meminfo").read_text()
    return int(re.search(r"^MemAvailable:\s+(\d+) kB", text, re.M).group(1)) // 1024


def main(args: argparse.Namespace, say: Callable[[str], None] = _quiet) -> Finished:
    """`wanka twin prove`: the outcomes for the CLI to print, or Stop (exit 2) or TakenDown
    (interrupted). Progress goes to `say`."""
    global _say
    _say = say
    if missing := run.missing():
        raise Stop("the twin needs " + ", ".join(missing))
    folder = Path(args.folder).resolve()
    if not (folder / "files" / "cabling.csv").is_file():
        raise Stop(f"{args.folder}: not a generated folder (no files/cabling.csv)")
    try:
        run.claim()
        run.vacant()
        started = time.perf_counter()
        p = plan.plan(folder, {}, bounded=False)
        routing.apply(p)
        have = available_mib()
        budget = args.memory or have // 2
        lay = shard.layout(p, budget)
        since = prove_since.read(Path(args.since), folder) if args.since else None
    except prove_since.NoRecord as err:
        raise Stop(str(err)) from None
    except (plan.Refused, NotAnOutput) as err:
        raise Stop(f"{args.folder}/{err}" if not isinstance(err, plan.Refused)
                   else str(err)) from None  # fmt: skip
    except shard.TooLarge as err:
        raise Stop(f"{args.folder}: {err}") from None
    if len(lay.shards) > 1 and not Path(BIRD).exists():
        raise Stop(f"the boundary speakers of {len(lay.shards)} shards need {BIRD} "
                   "(Debian package bird2)")  # fmt: skip
    signal.signal(signal.SIGTERM, _sigterm)
    try:
        return _prove(args, folder, p, lay, started=started, have=have, since=since)
    except KeyboardInterrupt:
        run.down()
        raise TakenDown from None
    except BaseException:
        run.down()
        raise


def _sigterm(*_):
    raise KeyboardInterrupt


class Keyfiles:
    """The hosts' keyfiles (the host_network role, started in the background at the start):
    waited for by the first shard with hosts, once its devices are up, and added to the whole
    plan for the shards after it."""

    def __init__(self, whole: Plan) -> None:
        self.whole = whole
        self.job = None
        self.files: dict = {}

    def add(self, q: Plan) -> None:
        if self.job is not None:
            _out("waiting for the host keyfiles (ansible-playbook host_network)")
            self.files = hosts.finish(self.job, KEYFILES)
            self.job = None
            plan.add_keyfiles(self.whole, self.files)
        for name, commands in plan.add_keyfiles(q, self.files).items():
            if commands:
                run.configure(q.namespaces[name], commands, [], nft=False)


class Result:
    """The last run of one shard: its outcomes, its devices' FIBs, its memory, its seconds."""

    def __init__(self) -> None:
        self.outcomes: list[checks.Outcome] = []
        self.fibs: dict[str, list[str]] = {}
        self.mib = 0.0
        self.seconds = 0.0
        self.runs = 0


def _prove(args, folder: Path, p: Plan, lay: shard.Layout, started: float, have: int,
           since: dict | None) -> Finished:  # fmt: skip
    shards = lay.shards
    digests = prove_since.namespace_digests(p)  # before the hosts' keyfiles are added
    routers = sum(1 for n in p.namespaces.values() if n.frr)
    _out(f"{len(shards)} shard(s) of at most {lay.budget:,} MiB "
         f"({'--memory' if args.memory else f'half the {have:,} MiB available'}; FRR's daemons "
         f"and {shard.PEER_MIB} MiB per BGP session) for {routers} FRR routers")  # fmt: skip
    for s in shards:
        _out(f"  shard {s.number}: {s.label}; {s.routers} routers, {s.speakers} boundary "
             f"speakers, about {s.mib:,} MiB")  # fmt: skip
    if lay.quiet:
        _out(
            f"  {len(lay.quiet)} cables without a routing protocol cut (static next hops, "
            "management ports, between OSPF domains): their far ends hold their addresses only"
        )
    routes: dict[str, list[shard.Route]] = {}
    running = shards
    if since is not None:
        routes = prove_since.routes_of(since)
        touched = prove_since.touched(p, lay, since, now=digests)
        running = [s for s in shards if s.number in touched]
        for s in shards:
            changed = touched.get(s.number, [])
            _out(f"  shard {s.number}: " + (
                f"touched since {args.since} ({len(changed)} namespaces new or changed, e.g. "
                f"{changed[0].removeprefix(PREFIX)}): proved again" if changed else
                f"untouched since {args.since}: carried from its green proof"))  # fmt: skip
    keyfiles = Keyfiles(p)
    if any(s.hosts for s in running) and not args.no_flows:
        keyfiles.job = hosts.start(folder, KEYFILES, args.collection or ansible_collection())
    before = {d: {r.prefix for r in rs} for d, rs in routes.items()}
    fed: dict[int, dict[str, str]] = {}
    results = {s.number: Result() for s in shards}
    passes = 0
    for passes in range(1, MAX_PASSES + 1):
        ran = 0
        for s in running:
            late = keyfiles.job is not None  # the hosts get them once the devices are up
            q = shard.subplan(p, lay, s, routes)
            boundary = {n.name: n.bird for n in q.namespaces.values() if n.kind == shard.BOUNDARY}
            if fed.get(s.number) == boundary:
                continue
            fed[s.number] = boundary
            results[s.number] = _run(q, s, passes, whole=p, routes=routes,
                                     result=results[s.number], args=args,
                                     keyfiles=keyfiles if late and s.hosts else None)  # fmt: skip
            ran += 1
        if not ran:
            break
    else:
        passes += 1
    settled = passes <= MAX_PASSES
    outcomes = []
    for s in shards:
        outcomes += [_named(o, f"shard {s.number}: ") for o in results[s.number].outcomes]
        if s not in running:
            outcomes.append(_carried(p, s, routes, before))
    outcomes.append(_agree(lay, results, p))
    if not settled:
        still = Failure(message=f"still changing after {MAX_PASSES} passes")
        outcomes.append(checks.Outcome("boundaries reach a fixpoint", 0, 1, [still]))
    if args.fibs:
        fibs = {}
        for s in shards:
            fibs |= results[s.number].fibs
        Path(args.fibs).write_text(json.dumps(dict(sorted(fibs.items())), indent=1) + "\n",
                                   encoding="utf-8")  # fmt: skip
    run.down()
    seconds = time.perf_counter() - started
    peak = max((r.mib for r in results.values()), default=0.0)
    mine = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    runs = sum(r.runs for r in results.values())
    text, failed = _text(outcomes), any(not o.ok for o in outcomes)
    if not failed:
        _out(f"recorded for --since: {prove_since.write(folder, digests, routes)}")
    speakers = sum(s.speakers for s in shards)
    if since is not None:
        text += (f"--since {args.since}: {len(running)} of {len(shards)} shards proved again, "
                 "the others carried\n")  # fmt: skip
    text += (f"shards {len(shards)}, routers {routers} (each inside a shard at least once; "
             f"{speakers} boundary speakers), passes {passes - 1 if settled else MAX_PASSES} "
             f"({runs} shard runs), seconds {seconds:.0f}, peak memory {peak:,.0f} MiB of FRR "
             f"(largest shard, proportional set) + {mine:,.0f} MiB wanka\n")  # fmt: skip
    return Finished(text, failed=failed)


def _carried(p: Plan, s: shard.Shard, routes, before) -> checks.Outcome:
    """An untouched shard (--since): carried from the recorded proof, with what its boundary
    would now announce that it did not then."""
    speakers = {p.namespaces[n].device for n in shard.boundary(p, s.interior)}
    new = sum(len({r.prefix for r in routes.get(d, [])} - before.get(d, set())) for d in speakers)
    return checks.Outcome(f"shard {s.number}: untouched, carried from the recorded proof", 1, 1,
                          note=f"{new} prefixes its boundary now announces were not announced "
                          "when it was proved" if new else "")  # fmt: skip


def _named(o: checks.Outcome, prefix: str) -> checks.Outcome:
    o.name = prefix + o.name
    return o


def _text(outcomes: list[checks.Outcome]) -> str:
    lines = []
    for o in outcomes:
        mark = "ok  " if o.ok else "FAIL"
        lines.append(f"{mark} {o.name}: {o.proved}/{o.total}" + (f" ({o.note})" if o.note else ""))
        for f in o.failures[:SHOWN]:
            lines.append(f"     {f}")
        if len(o.failures) > SHOWN:
            lines.append(f"     [and {len(o.failures) - SHOWN} more]")
    return "".join(f"{line}\n" for line in lines)


def _run(
    q: Plan, s: shard.Shard, passes: int, whole: Plan, routes, result: Result, args, keyfiles=None
) -> Result:
    """One run of a shard: up, sessions, capture, FIBs, checks, down."""
    start = time.perf_counter()
    out = Result()
    out.runs = result.runs + 1
    speakers = [n for n in q.namespaces.values() if n.kind == shard.BOUNDARY and n.bird]
    inside = [n for n in q.namespaces.values() if n.frr and n.kind != shard.BOUNDARY]
    _out(f"shard {s.number}, pass {passes}: {len(q.namespaces)} namespaces, {len(q.links)} "
         f"cables, {len(inside)} routers, {len(speakers)} boundary speakers")  # fmt: skip
    clock = run.Clock()
    try:
        run.record(q)
        run.size_neighbour_table(len(q.links))
        with clock("namespaces, cables, addresses"):
            cabled = run.add(list(q.namespaces.values()), q.links)
            run.each(lambda ns: run.configure(ns, ns.commands, cabled.get(ns.name, [])),
                     list(q.namespaces.values()))  # fmt: skip
        for ns in inside:
            ns.frr = _plain_nexthops(ns.frr)
        with clock("FRR started"):
            # zebra's ECMP room as a whole twin gives it (run.up): the build's widest maximum-paths
            run.start_frr(inside, max(run.paths(n.frr) for n in whole.namespaces.values() if n.frr))
            run.each(_speak, speakers)
        with clock("sessions"):
            out.outcomes = _sessions(q, len(inside))
        if keyfiles is not None:
            keyfiles.add(q)
        out.mib = _memory(list(q.namespaces))
        names = sorted(n for n in q.namespaces if n in s.interior)
        with clock("FIBs settled, BGP captured"):
            looks, out.fibs = _converge(q, inside, names, routes)
        _out(f"shard {s.number}, pass {passes}: BGP tables and FIBs the same at look {looks}")
        with clock("ECMP, NPU ring, flows"):
            out.outcomes.append(ecmp(q, whole))
            if any(n.kind == NsKind.NPU for n in q.namespaces.values()):
                out.outcomes.append(npu_ring(q))
            if ns_name(NsKind.OUTSIDE) in s.interior and not args.no_flows:
                out.outcomes += [checks.flows(q), checks.forbidden(q)]
        # drills once every neighbour across the boundary has run (its routes announced)
        if not args.no_drills and all(n.device in routes for n in speakers):
            with clock("drills"):
                out.outcomes += prove_drills.run_drills(
                    q, s.interior, same_plane(q, whole), fibs=_fibs,
                    progress=lambda m: _out(f"shard {s.number}, pass {passes}: {m}"))  # fmt: skip
    finally:
        if args.logs and not all(o.ok for o in out.outcomes):
            _keep_logs(args.logs / f"shard-{s.number}-pass-{passes}")
        with clock("down"):
            clear(list(q.namespaces))
    out.seconds = time.perf_counter() - start
    bad = [f"{o.name} {o.proved}/{o.total}" + (f" ({o.failures[0]})" if o.failures else "")
           for o in out.outcomes if not o.ok]  # fmt: skip
    phases = ", ".join(f"{phase} {t:.0f}" for phase, t in clock.times.items())
    _out(
        f"shard {s.number}, pass {passes}: {out.seconds:.0f} s ({phases}), {out.mib:,.0f} MiB, "
        + (f"{len(bad)} check(s) failing: " + "; ".join(bad) if bad else "all checks hold")
    )
    return out


def _sessions(q: Plan, routers: int) -> list[checks.Outcome]:
    """checks.sessions, without waiting SESSIONS seconds for those that a `shutdown` line of
    the configs keeps down (checks.cable_blame names it: "... is shut down"): a fault shard
    of pod-128 otherwise waited the whole 300 s for one session that could not come up."""
    bgp, ospf = list(checks._bgp_expected(q)), list(checks._ospf_expected(q))
    start = time.monotonic()
    while time.monotonic() - start < SESSIONS:
        bgp_down, ospf_down = checks._down(q, bgp, ospf)
        if all(" is shut down" in f.text() for _, f in bgp_down + ospf_down):
            break
        time.sleep(max(checks.POLL, routers / 100))
    return checks.sessions(q, timeout=0)  # one look, the FIBs settled, the outcomes


def _plain_nexthops(frr: str) -> str:
    """zebra installs each route with its next hops, not through kernel nexthop objects
    (`no zebra nexthop kernel enable`, FRR doc/user/zebra.rst; FRR 8.4.4 here takes it). With
    them, after a drill's links came down and up, zebra held a leaf's 16 paths while the
    kernel's shared group kept the 8 that had stayed up (measured on pod-128: `show ip route`
    16, `ip route` 8), so a FIB read after a drill was not what FRR meant to install."""
    first, _, rest = frr.partition("\n")
    line = "no zebra nexthop kernel enable"
    if first.startswith("frr defaults"):  # it must stay the first line
        return f"{first}\n{line}\n{rest}"
    return f"{line}\n{frr}"


def _speak(ns) -> None:
    """The boundary's BIRD (shard.speaker), as its own user, its control socket and log beside
    the FRR daemons' (STATE/frr/<device>/)."""
    d = run.frr_dir(ns.name)
    d.mkdir(parents=True, exist_ok=True)
    run.guard(ns.bird, "BIRD", ns.name)
    (d / "bird.conf").write_text(ns.bird, encoding="utf-8")
    shutil.chown(d, "bird", "bird")
    shutil.chown(d / "bird.conf", "bird", "bird")
    sh("ip", "netns", "exec", ns.name, BIRD, "-c", str(d / "bird.conf"), "-s", str(d / "bird.ctl"),
       "-P", str(d / "bird.pid"), "-D", str(d / "bird.log"), "-u", "bird", "-g", "bird")  # fmt: skip


def _capture(inside) -> dict[str, list[shard.Route]]:
    """What each BGP device of the shard holds as best, for the boundaries that stand in for it."""
    bgp = [ns for ns in inside if "bgpd" in ns.daemons]
    with ThreadPoolExecutor(checks.LOOKERS) as pool:
        tables = list(pool.map(lambda ns: run.vtysh_json(ns.name, "show ip bgp"), bgp))
    return {ns.device: shard.captured(table) for ns, table in zip(bgp, tables, strict=True)}


def _converge(q: Plan, inside, names: list[str], routes, most: int = 8):
    """The FIBs of `names`, looked at until two looks a settled FIB apart agree, the second
    after the FIBs were quiet for COALESCE seconds; then the BGP tables captured once (a FIB
    quiet for bgpd's longest update hold-back has heard every best path: comparing the whole
    tables at every look, `show ip bgp json` of 146 routers of ~1,000 prefixes, cost more than
    the waits); return the looks taken and the FIBs."""
    looks, last = 1, _fibs(names)
    while looks < most:
        looks += 1
        settle([n.name for n in inside], quiet=COALESCE)
        now = _fibs(names)
        if now == last:
            break
        last = now
    routes.update(_capture(inside))
    return looks, last


def settle(names: list[str], quiet: float, timeout: float = 120.0) -> float:
    """Wait until no FIB of `names` has changed for `quiet` seconds (checks.settle's method, its
    looks spaced by the shard's size: 130 FIBs of ~1,000 routes dumped every 0.1 s took a core
    from the FRR daemons being waited for); return the seconds waited."""
    return checks.settle_fibs(names, quiet, timeout, every=min(1.0, max(0.1, len(names) / 200)))


def _fibs(names: list[str]) -> dict[str, list[str]]:
    with ThreadPoolExecutor(checks.LOOKERS) as pool:
        return {n.removeprefix(PREFIX): t for n, t in zip(names, pool.map(fib, names), strict=True)}


def fib(ns: str) -> list[str]:
    """A namespace's main routing table as sorted lines: destination, type, protocol, metric,
    next hops (no kernel ids)."""
    out = []
    for r in json.loads(sh("ip", "-n", ns, "-j", "route", "show") or "[]"):
        hops = r.get("nexthops") or [r]
        via = sorted(f"via {h.get('gateway', '-')} dev {h.get('dev', '-')}" for h in hops)
        flags = ",".join(sorted(r.get("flags", [])))
        out.append(f"{r['dst']} {r.get('type', 'unicast')} proto {r.get('protocol', '-')} "
                   f"metric {r.get('metric', 0)} {' '.join(via)} {flags}".rstrip())  # fmt: skip
    return sorted(out)


def _memory(names: list[str]) -> float:
    """MiB of the shard's processes (FRR), by proportional set size (shared pages split)."""
    total = 0
    for pid in run.processes(names):
        with contextlib.suppress(OSError, AttributeError):
            text = Path(f"/proc/{pid}/smaps_rollup").read_text()
            total += int(re.search(r"^Pss:\s+(\d+) kB", text, re.M).group(1))
    return total / 1024


def _keep_logs(to: Path) -> None:
    """Every FRR and BIRD log of the shard that is up (STATE/frr/<device>/*.log) copied to `to`."""
    shutil.rmtree(to, ignore_errors=True)
    shutil.copytree(
        run.STATE / "frr", to, ignore=shutil.ignore_patterns("*.api", "*.vty", "*.ctl", "*.pid")
    )
    _out(f"FRR and BIRD logs of the shard kept in {to}")


def clear(names: list[str]) -> None:
    """A shard's namespaces and processes gone, the instance still held for the next shard."""
    pids = run.processes(names)
    run._signal(pids, signal.SIGKILL)
    run._gone(pids)
    sh("ip", "-batch", "-", input="".join(f"netns del {n}\n" for n in names), check=False)
    shutil.rmtree(run.STATE / "frr", ignore_errors=True)


def same_plane(q: Plan, whole: Plan) -> dict[str, list]:
    """Each leaf of the shard -> [(each leaf of its plane in the whole build, its subnets)]."""
    planes = {}
    for link in whole.links:
        planes.setdefault(link.a[0], link.plane)
    subnets = checks.leaves(whole)
    out = {}
    for name in sorted(n for n in q.devices if n in subnets):
        mine = planes.get(ns_name(name))
        out[name] = [(o, nets) for o, nets in subnets.items() if planes.get(ns_name(o)) == mine]
    return out


def ecmp(q: Plan, whole: Plan) -> checks.Outcome:
    """Each leaf of the shard: its route to every leaf subnet of the whole build (its plane)
    with the width of the design (checks.design_width: uplinks to spines, catalog ecmp_max)."""
    out = checks.Outcome("leaf routes to every leaf subnet of the build, ECMP width of the design")
    for name, same in same_plane(q, whole).items():
        checks.leaf_width(out, q, name, fib=checks.routes(ns_name(name)), subnets=same)
    return out


def _agree(lay: shard.Layout, results: dict[int, Result], p: Plan) -> checks.Outcome:
    """A device namespace run inside several shards has the same FIB in each."""
    out = checks.Outcome("devices inside several shards have one FIB")
    seen: dict[str, tuple[int, list[str]]] = {}
    for s in lay.shards:
        for name, table in results[s.number].fibs.items():
            if name in seen:
                out.total += 1
                first, other = seen[name]
                if other == table:
                    out.proved += 1
                else:
                    diff = sorted(set(other) ^ set(table))
                    differ = f"shard {first} and shard {s.number} differ in {len(diff)} routes"
                    out.failures.append(Failure(subject=name, message=f"{differ}, e.g. {diff[0]}"))
            else:
                seen[name] = (s.number, table)
    return out


def rings(q: Plan, leaves: list[str]) -> list[list[str]]:
    """The leaves (devices) of a shard in groups whose NPUs reach one another through the shard
    alone: leaves cabled on the parameter plane to the same switches (a pod's leaves and its
    spines), each of those inside the shard. Two pods of one shard meet only at the cores, which
    run in another shard: their boundary speakers install nothing and forward nothing (measured:
    wanka-10k's shard of pods 2 and 5 timed out on exactly the 2 pairs from one pod to the other)."""
    ups: dict[str, set[str]] = {}
    for link in q.links:
        if link.plane != Plane.PARAMETER:
            continue
        for mine, other in ((link.a[0], link.b[0]), (link.b[0], link.a[0])):
            ups.setdefault(mine, set()).add(other)
    groups: dict[frozenset[str], list[str]] = {}
    for leaf in leaves:
        up = frozenset(n for n in ups.get(ns_name(leaf), ()) if q.namespaces[n].frr)
        if up and all(q.namespaces[n].kind != shard.BOUNDARY for n in up):
            groups.setdefault(up, []).append(leaf)
    return sorted(groups.values())


def npu_ring(q: Plan) -> checks.Outcome:
    """NPU 0 of the first server of each leaf of the shard to that of the next leaf of its ring
    (rings; the last to the first): real packets, each path walked through the live FIBs, parameter plane
    only (checks.npu_paths probes every pair: 5,112 walks for a 72-leaf pod; every pair's route
    and width is the ECMP check's, from the FIBs)."""
    out = checks.Outcome("NPU to NPU, each leaf to the next, parameter plane only")
    first: dict[str, tuple[str, str]] = {}
    for server in sorted(q.groups.get("npu_servers", ())):
        lldp = (q.hostvars.get(server, {}).get("npu_lldp") or [""])[0].split()
        if lldp and lldp[0] not in first and (server, "npu0") in q.ports:
            first[lldp[0]] = q.ports[(server, "npu0")]
    where = {end: ip for ip, end in q.addresses.items()}
    pairs = []
    for ring in rings(q, sorted(first)):
        ends = [(leaf, first[leaf], where[first[leaf]]) for leaf in ring if first[leaf] in where]
        pairs += list(zip(ends, ends[1:] + ends[:1], strict=True)) if len(ends) > 1 else []
    probes = [probe.Probe(a[1][0], str(a[2]), b[1][0], str(b[2]), proto="tcp",
                          port=checks.ANY_PORT, src_dev=a[1][1]) for a, b in pairs]  # fmt: skip
    cabled = checks.planes(q)
    for pr, result in zip(probes, probe.run(probes), strict=True):
        out.total += 1
        hops = walk(q, pr.src_ns, pr.src, pr.dst)[0]
        off = [f"{ns} ({', '.join(sorted(cabled[ns]))})" for ns, _ in hops
               if cabled.get(ns) != {Plane.PARAMETER}]  # fmt: skip
        wrong = checks.npu_failure(pr, result, off)
        out.failures += wrong
        out.proved += not wrong
    return out
