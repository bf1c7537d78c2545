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
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

from generator.analysis.command_table import TRANSLATED, load_table
from generator.collection import ansible_collection
from generator.render import render
from generator.twin import grow, hosts, instance, plan, routing, run, steps
from generator.twin import pod as pods
from generator.twin.intake import Refused
from generator.twin.outcome import Finished, Outcome, Stop, TakenDown, kinds
from generator.verify.report import NotAnOutput

SHOWN = 12  # kinds of failure printed per check on the terminal (the report has all)
# Not emulated beyond the lines the command table counts under its `twin:` items (report()).
NOT_EMULATED = [
    "the CLI past the command table: a line of a known form that the device would still refuse "
    "(a value its hardware does not take, a command its software lacks) is not noticed",
    "whether a USG's service-manage alone admits what its local-zone rules deny (both are set)",
]
STAGING = instance.STATE / "keyfiles"
GROWN = instance.STATE / "keyfiles-grown"


def _quiet(message: str) -> None:
    pass


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
    say: Callable[[str], None] = _quiet,
    with_hosts: bool = True,
) -> tuple[plan.Plan, Callable[[], None]]:
    """The plan, and (`up`) the twin of it brought up, and what completes both with the hosts:
    the host_network role renders the hosts' keyfiles in the background while the devices'
    namespaces, cables and FRR come up (and what needs no host is checked); calling the second
    waits for it, adds the keyfiles to the plan and (`up`) configures the hosts from them.
    Without `with_hosts` (`twin up --no-hosts`) the role is not run and the hosts stay unconfigured,
    as the twin's state records. Progress goes to `say`."""
    clock = clock or run.Clock()
    with clock("plan and translation (no root)"):
        p = plan.plan(folder, {}, pod)  # first: a line it refuses stops the twin before anything
        routing.apply(p)
    job = (
        None
        if pod or not with_hosts
        else hosts.start(folder, keyfiles, collection or ansible_collection())
    )
    if job and not job.process:
        say(f"host keyfiles: those of an identical earlier run (cache {job.key[:12]})")
    if up:
        run.up(p, say, clock, with_hosts or bool(pod))  # a pod's twin has no hosts anyway

    def hosts_done() -> None:
        if p.hosts_done:
            return
        p.hosts_done = True
        if not with_hosts:  # --no-hosts: the hosts stay as cabled, unconfigured
            return
        with clock("host keyfiles (ansible-playbook host_network), waited for"):
            added = plan.add_keyfiles(p, hosts.finish(job, keyfiles) if job else {})
        if up and added:
            for name, commands in added.items():
                run.configure(p.namespaces[name], commands, [], nft=False)
            say("hosts configured from the host_network keyfiles")

    return p, hosts_done


def _sigterm(*_):
    raise KeyboardInterrupt


def main(args: argparse.Namespace, say: Callable[[str], None] = _quiet) -> Finished:
    """`wanka twin up|test|grow|down|exec|export|prove`: the result for the CLI to print, or
    Stop (exit 2) or TakenDown (interrupted). Progress goes to `say`."""
    if args.twin_command == "export":  # writes files only: no root, no instance
        from generator.twin import clab

        return Finished(clab.main(args))
    if args.twin_command == "prove":  # shard by shard (generator.twin.prove)
        from generator.twin import prove

        return prove.main(args, say)
    try:  # one run, one instance (generator.twin.instance): a second run of it is refused
        if args.twin_command == "down":
            names, pids = run.down()
            return Finished(
                f"removed {names} namespaces and {pids} processes (instance {instance.INSTANCE})\n"
            )
        if missing := run.missing():
            raise Stop("the twin needs " + ", ".join(missing))
        if args.twin_command == "exec":
            return _exec(args)
        instance.claim()
        if args.twin_command == "up":
            run.vacant()
    except Refused as err:
        raise Stop(str(err)) from None
    folder = Path(args.folder).resolve()
    if not (folder / "files" / "cabling.csv").is_file():
        raise Stop(f"{args.folder}: not a generated folder (no files/cabling.csv)")
    running = run.up_folder()
    if args.twin_command in ("test", "grow") and running is not None and run.hostless():
        raise Stop(_HOSTLESS.format(folder=running[0], command=args.twin_command))  # left up
    signal.signal(signal.SIGTERM, _sigterm)
    try:
        if args.twin_command == "up":
            clock = run.Clock()
            with_hosts = not getattr(args, "no_hosts", False)
            bring_up(folder, args.pod, args.collection, clock, say=say, with_hosts=with_hosts)[1]()
            return Finished(", ".join(f"{k} {v:.1f} s" for k, v in clock.times.items()) + "\n")
        if args.twin_command == "grow":
            return _grow(folder, say)
        return _test(args, folder, say)
    except pods.PodError as err:
        raise Stop(f"{args.folder}: {err}") from None
    except NotAnOutput as err:  # a file it cannot read, a line no form of the table matches
        run.abandon()  # what this run made: a refused folder leaves nothing behind
        raise Stop(f"{args.folder}/{err}") from None
    except KeyboardInterrupt:
        run.down()
        raise TakenDown from None
    except Exception:
        if args.twin_command == "up" or not getattr(args, "keep", False):
            run.down()
        raise


# `twin test` and `grow` on a twin up without its hosts: their flows would be fewer, not failed
_HOSTLESS = (
    "the twin of {folder} is up without its hosts (`wanka twin up --no-hosts`): `twin {command}` "
    "proves the hosts' flows too; run `wanka twin down`, then `wanka twin up` without --no-hosts"
)


def _grow(folder: Path, say: Callable[[str], None]) -> Finished:
    """`twin grow`: the running twin's folder and the grown one, applied; the twin is then the
    grown folder's (its state says so), and it stays up."""
    running = run.up_folder()
    if running is None or running[1]:
        raise Stop("no whole twin is up: `wanka twin up FOLDER` the smaller build first")
    if (STAGING / "hosts").is_dir():  # the keyfiles the running twin's hosts were given
        old = plan.plan(running[0], hosts.read(STAGING / "hosts"))
        routing.apply(old)
    else:
        old = build(running[0])
    new, hosts_done = bring_up(folder, up=False, keyfiles=GROWN)
    hosts_done()
    outcomes = grow.drill(old, new, say)
    run.record(new)
    shutil.rmtree(STAGING, ignore_errors=True)
    GROWN.rename(STAGING)
    return Finished(terminal(outcomes), failed=any(not o.ok for o in outcomes))


def terminal(outcomes: list[Outcome]) -> str:
    """The outcomes as the terminal shows them: each with its counts and, per check, the first
    SHOWN kinds of failure (outcome.kinds), each with how many more are like it."""
    rows = []
    for o in outcomes:
        groups = kinds(o.failures)
        rows.append(
            {
                "mark": "ok  " if o.ok else "FAIL",
                "outcome": o,
                "shown": [(count, f.text()) for count, f in groups[:SHOWN]],
                "rest": sum(count for count, _ in groups[SHOWN:]),
            }
        )
    return render("twin/outcomes.txt.j2", rows=rows)


def _test(args, folder: Path, say: Callable[[str], None]) -> Finished:
    started = time.perf_counter()
    up = run.up_folder()
    if up is not None and up != (folder.resolve(), args.pod):
        pod = f" (pod {up[1]})" if up[1] else ""
        raise Stop(f"a twin of {up[0]}{pod} is up: run `wanka twin down` first")
    collection = args.collection or ansible_collection()
    clock = run.Clock()
    made = not instance.namespaces()
    p, hosts_done = bring_up(folder, args.pod, collection, clock, up=made, say=say)
    r = steps.Run(
        p,
        folder,
        collection,
        hosts_done,
        pod=args.pod,
        drills=not args.no_drills,
        say=say,
        clock=clock,
    )
    outcomes = steps.walk(r)
    if made and not args.keep:
        with clock("down"):
            run.down()
    clock.times["total"] = time.perf_counter() - started
    say("times: " + ", ".join(f"{k} {v:.1f} s" for k, v in clock.times.items()))
    text = report(folder, p, outcomes, clock.times)
    Path(args.report).write_text(text, encoding="utf-8")
    shown = terminal(outcomes) + f"report: {args.report}\n"
    return Finished(shown, failed=any(not o.ok for o in outcomes))


def report(folder: Path, p: plan.Plan, outcomes: list[Outcome], times: dict) -> str:
    """twin-report.md (templates/twin/report.md.j2)."""
    kinds = Counter(ns.kind for ns in p.namespaces.values())
    return render(
        "twin/report.md.j2",
        name=folder.name,
        namespaces=len(p.namespaces),
        kinds=[f"{n} {kind}" for kind, n in sorted(kinds.items())],
        cables=len(p.links),
        routers=sum(1 for n in p.namespaces.values() if n.frr),
        rulesets=sum(1 for n in p.namespaces.values() if n.nft),
        outcomes=outcomes,
        failed=any(o.failures for o in outcomes),
        lines_read=read_lines(p),
        notes=p.notes,
        not_emulated=NOT_EMULATED,
        times=list(times.items()),
    )


def read_lines(p: plan.Plan) -> list[tuple[int, str, str]]:
    """Every configuration line the twin read, counted by what it does with its form (the
    command table's `twin:`): (lines, translated or the item it does not emulate, what that
    means)."""
    counts: Counter[str] = Counter()
    for dev in p.devices.values():
        counts.update(dev.lines)
    items = load_table().twin_items
    done = "reproduced in FRR, nftables, addresses, bridges and links"
    out = [(counts.pop(TRANSLATED, 0), TRANSLATED, done)]
    return out + [(n, f"not emulated: {k}", items[k]) for k, n in sorted(counts.items())]


def _exec(args) -> Finished:
    import os
    import subprocess

    names = instance.namespaces()
    ns = instance.checked_ns_name(args.device, args.part or "")
    if ns not in names:
        candidates = [n for n in names if n.startswith(instance.ns_name(args.device))]
        has = f" (has: {', '.join(candidates)})" if candidates else ""
        raise Stop(f"no twin namespace {ns}{has}")
    if not args.exec_argv:
        out = subprocess.run(["ip", "-n", ns, "-br", "link"], capture_output=True, text=True).stdout
        head = f"# {ns}: Linux interface <- port (ports map as in generator.twin.intake.ifname)\n"
        return Finished(head + out)
    command = list(args.exec_argv)
    if command[0] == "vtysh":
        command[1:1] = ["--vty_socket", str(run.frr_dir(ns))]
    done = subprocess.run(["ip", "netns", "exec", ns, *command], env=os.environ)
    return Finished(status=done.returncode)
