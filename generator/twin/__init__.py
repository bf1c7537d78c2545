"""`wanka twin`: a generated folder run in Linux network namespaces with real routing (FRR),
firewall policy (nftables) and DHCP/file service, judged by real packets.

The twin reads only the rendered folder (switch and border configs, cabling, the inventory, the
hccn files, and the host keyfiles the host_network role writes from it), as `wanka verify` does,
so a bug in the generator cannot hide itself. What Linux cannot emulate is listed in the report,
never claimed.
"""

from __future__ import annotations

import argparse
import signal
import sys
import time
from pathlib import Path

from generator.collection import ansible_collection
from generator.twin import checks, drills, grow, hosts, plan, routing, run, ztp
from generator.twin import pod as pods

SHOWN = 12  # kinds of failure printed per check on the terminal (the report has all)
NOT_EMULATED = [
    "PFC, ECN/DCQCN, buffers, QoS queues and RoCE itself (the parameter plane carries TCP here)",
    "the CE/NE/USG CLI: a line a device would reject is not noticed (the configs are translated)",
    "link speeds and MTU (every cable is a veth at 1500 bytes)",
    "LACP, M-LAG, STP, LLDP and monitor-link",
    "SSH/SNMP service behaviour: a listener on the port stands for the server",
    "NQA tracking: a router's tracked default follows its link only (the provider drill cuts it)",
    "whether a USG's service-manage alone admits what its local-zone rules deny (both are set)",
]
STAGING = run.STATE / "keyfiles"


def _out(message: str) -> None:
    print(f"twin: {message}", file=sys.stderr, flush=True)


def build(folder: Path, pod: int = 0, collection: Path | None = None) -> plan.Plan:
    """The plan of a folder (of one pod of it: no hosts but NPU NICs, so no keyfiles), hosts
    configured by the roles of `collection` (default: this wanka's)."""
    keyfiles = {} if pod else hosts.render(folder, STAGING, collection or ansible_collection())
    p = plan.plan(folder, keyfiles, pod)
    routing.apply(p)
    return p


def _sigterm(*_):
    raise KeyboardInterrupt


def main(args: argparse.Namespace) -> int:
    if args.twin_command == "down":
        names, pids = run.down()
        print(f"removed {names} namespaces and {pids} processes")
        return 0
    if missing := run.missing():
        print("wanka: the twin needs " + ", ".join(missing), file=sys.stderr)
        return 2
    if args.twin_command == "exec":
        return _exec(args)
    folder = Path(args.folder).resolve()
    if not (folder / "files" / "cabling.csv").is_file():
        print(
            f"wanka: {args.folder}: not a generated folder (no files/cabling.csv)", file=sys.stderr
        )
        return 2
    signal.signal(signal.SIGTERM, _sigterm)
    try:
        if args.twin_command == "up":
            times = run.up(build(folder, args.pod, args.collection), _out)
            print(", ".join(f"{k} {v:.1f} s" for k, v in times.items()))
            return 0
        if args.twin_command == "grow":
            return _grow(folder)
        return _test(args, folder)
    except pods.PodError as err:
        print(f"wanka: {args.folder}: {err}", file=sys.stderr)
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
    old, new = build(running[0]), build(folder)
    outcomes = grow.drill(old, new, _out)
    run.record(new)
    return _print(outcomes)


def _print(outcomes: list[checks.Outcome]) -> int:
    for o in outcomes:
        mark = "ok  " if o.ok else "FAIL"
        print(f"{mark} {o.name}: {o.proved}/{o.total}" + (f" ({o.note})" if o.note else ""))
        groups = summary(o.failures)
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
    p = build(folder, args.pod, collection)
    made = not run.namespaces()
    times = run.up(p, _out) if made else {}
    outcomes = checks.sessions(p)
    outcomes[0].note = f"converged {outcomes[0].seconds:.1f} s after FRR started"
    steps = [("ecmp", checks.ecmp), ("npu", checks.npu_paths)]
    steps[1:1] = [("boundary", checks.pod_boundary)] if args.pod else [
        ("flows", checks.flows), ("forbidden", checks.forbidden)]  # fmt: skip
    for name, check in steps:
        _out(f"checking {name}")
        outcomes.append(check(p))
    if not args.no_drills:
        flow_names = {f.name for f in checks.read_flows(folder)}
        broken = {f.split(": ")[1] for o in outcomes if o.name.startswith("required flows")
                  for f in o.failures}  # fmt: skip
        outcomes += drills.run(p, flow_names - broken, _out)
    if not args.pod:  # last: its dnsmasq and sshd then hold UDP 67 and TCP 22 on the controller
        _out("ZTP drill")
        outcomes += ztp.drill(p, collection)
    times["test"] = time.perf_counter() - started - sum(times.values())
    text = report(folder, p, outcomes, times)
    Path(args.report).write_text(text, encoding="utf-8")
    if made and not args.keep:
        run.down()
    code = _print(outcomes)
    print(f"report: {args.report}")
    return code


def summary(failures: list[str]) -> list[tuple[int, str]]:
    """Failures grouped by where they come from and what they are (file:line, flow name): the
    count and the first of each group."""
    groups: dict[str, list[str]] = {}
    for f in failures:
        groups.setdefault(": ".join(f.split(": ")[:2]), []).append(f)
    return [(len(g), g[0]) for g in groups.values()]


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
    lines += ["", "## Emulated differently", ""] + [f"- {n}" for n in p.notes]
    lines += ["", "## Not emulated (never claimed)", ""] + [f"- {n}" for n in NOT_EMULATED]
    lines += ["", "## Times", ""] + [f"- {k}: {v:.1f} s" for k, v in times.items()]
    return "\n".join(lines) + "\n"


def _exec(args) -> int:
    import os
    import subprocess

    names = run.namespaces()
    ns = plan.ns_name(args.device, args.part or "")
    if ns not in names:
        candidates = [n for n in names if n.startswith(plan.ns_name(args.device))]
        print(
            f"wanka: no twin namespace {ns}"
            + (f" (has: {', '.join(candidates)})" if candidates else ""),
            file=sys.stderr,
        )
        return 2
    if not args.command:
        out = subprocess.run(["ip", "-n", ns, "-br", "link"], capture_output=True, text=True).stdout
        print(f"# {ns}: Linux interface <- port (ports map as in generator.twin.plan.ifname)")
        print(out, end="")
        return 0
    command = list(args.command)
    if command[0] == "vtysh":
        command[1:1] = ["--vty_socket", str(run.frr_dir(ns))]
    return subprocess.run(["ip", "netns", "exec", ns, *command], env=os.environ).returncode
