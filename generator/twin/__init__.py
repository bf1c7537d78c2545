"""`wanka twin`: a generated folder run in Linux network namespaces with real routing (FRR),
firewall policy (nftables) and DHCP/file service, judged by real packets.

The twin reads only the rendered folder (switch and border configs, cabling, the inventory, the
hccn files, and the host keyfiles the host_network role writes from it), as `wanka verify` does,
so a bug in the generator cannot hide itself. What Linux cannot emulate is listed in the report,
never claimed.
"""

from __future__ import annotations

import argparse
import shutil
import signal
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from generator.analysis.command_table import TRANSLATED, load_table
from generator.collection import ansible_collection
from generator.twin import checks, grow, hosts, plan, routing, run, steps
from generator.twin import pod as pods
from generator.twin.outcome import kinds
from generator.verify.report import NotAnOutput

SHOWN = 12  # kinds of failure printed per check on the terminal (the report has all)
# Not emulated beyond the lines the command table counts under its `twin:` items (report()).
NOT_EMULATED = [
    "the CLI past the command table: a line of a known form that the device would still refuse "
    "(a value its hardware does not take, a command its software lacks) is not noticed",
    "whether a USG's service-manage alone admits what its local-zone rules deny (both are set)",
]
STAGING = run.STATE / "keyfiles"
GROWN = run.STATE / "keyfiles-grown"


def _out(message: str) -> None:
    print(f"twin: {message}", file=sys.stderr, flush=True)


def build(
    folder: Path, pod: int = 0, collection: Path | None = None, clock: run.Clock | None = None
) -> plan.Plan:
    """The plan of a folder (of one pod of it: no hosts but NPU NICs, so no keyfiles), hosts
    configured by the roles of `collection` (default: this wanka's)."""
    p, hosts_done = bring_up(folder, pod, collection, clock, up=False)
    hosts_done()
    return p


def bring_up(
    folder: Path,
    pod: int = 0,
    collection: Path | None = None,
    clock: run.Clock | None = None,
    up: bool = True,
    keyfiles: Path = STAGING,
) -> tuple[plan.Plan, Callable[[], None]]:
    """The plan, and (`up`) the twin of it brought up, and what completes both with the hosts:
    the host_network role renders the hosts' keyfiles in the background while the devices'
    namespaces, cables and FRR come up (and what needs no host is checked); calling the second
    waits for it, adds the keyfiles to the plan and (`up`) configures the hosts from them."""
    clock = clock or run.Clock()
    with clock("plan and translation (no root)"):
        p = plan.plan(folder, {}, pod)  # first: a line it refuses stops the twin before anything
        routing.apply(p)
    job = None if pod else hosts.start(folder, keyfiles, collection or ansible_collection())
    if job and not job.process:
        _out(f"host keyfiles: those of an identical earlier run (cache {job.key[:12]})")
    if up:
        run.up(p, _out, clock)

    def hosts_done() -> None:
        if p.hosts_done:
            return
        p.hosts_done = True
        with clock("host keyfiles (ansible-playbook host_network), waited for"):
            added = plan.add_keyfiles(p, hosts.finish(job, keyfiles) if job else {})
        if up and added:
            for name, commands in added.items():
                run.configure(p.namespaces[name], commands, [], nft=False)
            _out("hosts configured from the host_network keyfiles")

    return p, hosts_done


def _sigterm(*_):
    raise KeyboardInterrupt


def main(args: argparse.Namespace) -> int:
    if args.twin_command == "export":  # writes files only: no root, no instance
        from generator.twin import clab

        return clab.main(args)
    if args.twin_command == "prove":  # in shards (generator.twin.prove)
        from generator.twin import prove

        return prove.main(args)
    try:  # one run, one instance (generator.twin.run): a second run of it is refused
        if args.twin_command == "down":
            names, pids = run.down()
            print(f"removed {names} namespaces and {pids} processes (instance {run.INSTANCE})")
            return 0
        if missing := run.missing():
            print("wanka: the twin needs " + ", ".join(missing), file=sys.stderr)
            return 2
        if args.twin_command == "exec":
            return _exec(args)
        run.claim()
        if args.twin_command == "up":
            run.vacant()
    except plan.Refused as err:
        print(f"wanka: {err}", file=sys.stderr)
        return 2
    folder = Path(args.folder).resolve()
    if not (folder / "files" / "cabling.csv").is_file():
        print(
            f"wanka: {args.folder}: not a generated folder (no files/cabling.csv)", file=sys.stderr
        )
        return 2
    signal.signal(signal.SIGTERM, _sigterm)
    try:
        if args.twin_command == "up":
            clock = run.Clock()
            bring_up(folder, args.pod, args.collection, clock)[1]()
            times = clock.times
            print(", ".join(f"{k} {v:.1f} s" for k, v in times.items()))
            return 0
        if args.twin_command == "grow":
            return _grow(folder)
        return _test(args, folder)
    except pods.PodError as err:
        print(f"wanka: {args.folder}: {err}", file=sys.stderr)
        return 2
    except NotAnOutput as err:  # a file it cannot read, a line no form of the table matches
        run.abandon()  # what this run made: a refused folder leaves nothing behind
        print(f"wanka: {args.folder}/{err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        run.down()
        print("wanka: interrupted; the twin was taken down", file=sys.stderr)
        return 130
    except Exception:
        if args.twin_command == "up" or not getattr(args, "keep", False):
            run.down()
        raise


def _grow(folder: Path) -> int:
    """`twin grow`: the running twin's folder and the grown one, applied; the twin is then the
    grown folder's (its state says so), and it stays up."""
    running = run.up_folder()
    if running is None or running[1]:
        print("wanka: no whole twin is up: `wanka twin up FOLDER` the smaller build first",
              file=sys.stderr)  # fmt: skip
        return 2
    if (STAGING / "hosts").is_dir():  # the keyfiles the running twin's hosts were given
        old = plan.plan(running[0], hosts.read(STAGING / "hosts"))
        routing.apply(old)
    else:
        old = build(running[0])
    new, hosts_done = bring_up(folder, up=False, keyfiles=GROWN)
    hosts_done()
    outcomes = grow.drill(old, new, _out)
    run.record(new)
    shutil.rmtree(STAGING, ignore_errors=True)
    GROWN.rename(STAGING)
    return _print(outcomes)


def _print(outcomes: list[checks.Outcome]) -> int:
    for o in outcomes:
        mark = "ok  " if o.ok else "FAIL"
        print(f"{mark} {o.name}: {o.proved}/{o.total}" + (f" ({o.note})" if o.note else ""))
        groups = kinds(o.failures)
        for count, example in groups[:SHOWN]:
            print(f"     {example}" + (f"  [and {count - 1} more like it]" if count > 1 else ""))
        if len(groups) > SHOWN:
            rest = sum(count for count, _ in groups[SHOWN:])
            print(f"     [and {rest} more failures of other kinds: see the report]")
    return 1 if any(not o.ok for o in outcomes) else 0


def _test(args, folder: Path) -> int:
    started = time.perf_counter()
    up = run.up_folder()
    if up is not None and up != (folder.resolve(), args.pod):
        pod = f" (pod {up[1]})" if up[1] else ""
        print(f"wanka: a twin of {up[0]}{pod} is up: run `wanka twin down` first", file=sys.stderr)
        return 2
    collection = args.collection or ansible_collection()
    clock = run.Clock()
    made = not run.namespaces()
    p, hosts_done = bring_up(folder, args.pod, collection, clock, up=made)
    r = steps.Run(
        p,
        folder,
        collection,
        hosts_done,
        pod=args.pod,
        drills=not args.no_drills,
        say=_out,
        clock=clock,
    )
    outcomes = steps.walk(r)
    if made and not args.keep:
        with clock("down"):
            run.down()
    clock.times["total"] = time.perf_counter() - started
    _out("times: " + ", ".join(f"{k} {v:.1f} s" for k, v in clock.times.items()))
    text = report(folder, p, outcomes, clock.times)
    Path(args.report).write_text(text, encoding="utf-8")
    code = _print(outcomes)
    print(f"report: {args.report}")
    return code


def report(folder: Path, p: plan.Plan, outcomes: list[checks.Outcome], times: dict) -> str:
    kinds: dict[str, int] = {}
    for ns in p.namespaces.values():
        kinds[ns.kind] = kinds.get(ns.kind, 0) + 1
    lines = [
        f"# Twin report: {folder.name}",
        "",
        f"{len(p.namespaces)} network namespaces ("
        + ", ".join(f"{v} {k}" for k, v in sorted(kinds.items()))
        + f"), {len(p.links)} cables as veth pairs, "
        f"{sum(1 for n in p.namespaces.values() if n.frr)} FRR routers, "
        f"{sum(1 for n in p.namespaces.values() if n.nft)} nftables rulesets.",
        "",
        "| check | proved | of | seconds | |",
        "|---|---|---|---|---|",
    ]
    for o in outcomes:
        lines.append(
            f"| {o.name} | {o.proved} | {o.total} | {o.seconds:.1f} | {'ok' if o.ok else 'FAIL'} {o.note} |"
        )
    lines += ["", "## Failures", ""]
    for o in outcomes:
        lines += [f"- {o.name}: {f}" for f in o.failures]
    if not any(o.failures for o in outcomes):
        lines.append("none")
    lines += ["", "## Lines read", "", *read_lines(p)]
    lines += ["", "## Emulated differently", ""] + [f"- {n}" for n in p.notes]
    lines += ["", "## Not emulated (never claimed)", ""] + [f"- {n}" for n in NOT_EMULATED]
    lines += ["", "## Times", ""] + [f"- {k}: {v:.1f} s" for k, v in times.items()]
    return "\n".join(lines) + "\n"


def read_lines(p: plan.Plan) -> list[str]:
    """Every configuration line the twin read, counted by what it does with its form (the
    command table's `twin:`): translated, or the item it does not emulate, with what that means."""
    counts: Counter[str] = Counter()
    for dev in p.devices.values():
        counts.update(dev.lines)
    items = load_table().twin_items
    out = ["| lines | twin | what it means |", "|---|---|---|"]
    done = "reproduced in FRR, nftables, addresses, bridges and links"
    out.append(f"| {counts.pop(TRANSLATED, 0)} | {TRANSLATED} | {done} |")
    out += [f"| {n} | not emulated: {k} | {items[k]} |" for k, n in sorted(counts.items())]
    return out


def _exec(args) -> int:
    import os
    import subprocess

    names = run.namespaces()
    ns = plan.checked_ns_name(args.device, args.part or "")
    if ns not in names:
        candidates = [n for n in names if n.startswith(plan.ns_name(args.device))]
        print(
            f"wanka: no twin namespace {ns}"
            + (f" (has: {', '.join(candidates)})" if candidates else ""),
            file=sys.stderr,
        )
        return 2
    if not args.exec_argv:
        out = subprocess.run(["ip", "-n", ns, "-br", "link"], capture_output=True, text=True).stdout
        print(f"# {ns}: Linux interface <- port (ports map as in generator.twin.plan.ifname)")
        print(out, end="")
        return 0
    command = list(args.exec_argv)
    if command[0] == "vtysh":
        command[1:1] = ["--vty_socket", str(run.frr_dir(ns))]
    return subprocess.run(["ip", "netns", "exec", ns, *command], env=os.environ).returncode
