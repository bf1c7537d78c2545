#!/usr/bin/python
"""Ansible module: run the acceptance plan's HCCL Test runs in batches and judge each one.

For every scope of files/acceptance/plan.yml and every unit of it (a server, a leaf, a pod, a
leaf pair, the cluster) it writes an MPI hostfile (`host:slots`), starts the plan's mpirun line,
reads HCCL Test's result table, turns the algorithm bandwidth of the largest size into bus
bandwidth and compares it with the plan. Then it names the outliers: the server, leaf, leaf
pair, pod or spine/core group below its expectation, and by how much.

HCCL Test output (CANN "HCCL Performance Tester" > result description, HCCLpertest_16_0006,
hiascend.com): a header line `data_size(Bytes): | avg_time(us): | alg_bandwidth(GB/s): |
check_result:` then one row per size; alg_bandwidth is data size / time, in 2^30 bytes per
second. Bus bandwidth (NCCL-tests convention, domain.md §2.5): all_reduce algbw x 2(n-1)/n,
all_gather algbw x (n-1)/n, reported in 10^9 bytes per second like the plan.
"""

from __future__ import annotations

import os
import re
import subprocess

import yaml
from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: wanka_hccl_acceptance
short_description: Run the acceptance plan's HCCL Tests in batches and judge them
options:
  plan: {description: Path of files/acceptance/plan.yml, type: path, required: true}
  kinds: {description: Scope kinds to run (empty = all), type: list, elements: str, default: []}
  hccl_test_dir: {description: HCCL Test directory (holds bin/<op>_test), type: path, required: true}
  mpirun: {description: mpirun command, type: str, default: mpirun}
  workdir: {description: Where hostfiles and raw outputs go, type: path, required: true}
  batch: {description: Runs started at once (0 = the plan's), type: int, default: 0}
  timeout: {description: Seconds one run may take, type: int, default: 3600}
"""

ROW = re.compile(r"^\s*(\d+)\s*\|\s*([\d.]+)\s*\|\s*([\d.]+)\s*\|\s*(\S+)\s*$")
GIB = 2**30


def parse_table(text: str) -> list[dict]:
    """Rows of HCCL Test's result table: data_size (bytes), avg_time_us, alg_bandwidth (GiB/s,
    as printed), check_result."""
    rows = []
    for line in text.splitlines():
        m = ROW.match(line)
        if m:
            rows.append(
                {
                    "data_size": int(m.group(1)),
                    "avg_time_us": float(m.group(2)),
                    "alg_bandwidth": float(m.group(3)),
                    "check_result": m.group(4),
                }
            )
    return rows


def bus_bandwidth(op: str, alg_gib_s: float, ranks: int) -> float:
    """Bus bandwidth in 10^9 bytes/s from HCCL Test's algorithm bandwidth (2^30 bytes/s)."""
    factor = 2 * (ranks - 1) / ranks if op == "all_reduce" else (ranks - 1) / ranks
    return alg_gib_s * GIB / 1e9 * factor


def units_of(scope: dict, plan: dict) -> list[tuple[str, list[str], list[str]]]:
    """(unit name, its leaves, its servers) of one scope."""
    leaves = plan["leaves"]
    if scope["units"] == "every server":
        return [(s, [leaf], [s]) for leaf, ss in leaves.items() for s in ss]
    return [
        (u["name"], u["leaves"], [s for leaf in u["leaves"] for s in leaves[leaf]])
        for u in scope["units"]
    ]


def judge(scope: dict, unit: tuple, ranks: int, output: str, rc: int) -> dict:
    name, leaves, servers = unit
    rows = parse_table(output)
    result = {
        "scope": scope["name"], "kind": scope["kind"], "op": scope["op"], "unit": name,
        "leaves": leaves, "servers": servers, "ranks": ranks,
        "expected_busbw": scope["expected_busbw_gbytes_s"], "rc": rc,
    }  # fmt: skip
    if rc != 0 or not rows:
        return {**result, "busbw": 0.0, "shortfall_pct": 100.0, "passed": False,
                "reason": f"mpirun exited {rc}, {len(rows)} result rows"}  # fmt: skip
    top = max(rows, key=lambda r: r["data_size"])
    busbw = round(bus_bandwidth(scope["op"], top["alg_bandwidth"], ranks), 3)
    expected = scope["expected_busbw_gbytes_s"]
    short = round(max(0.0, (expected - busbw) / expected * 100), 1) if expected else 0.0
    failed = top["check_result"] == "failed"
    passed = busbw >= expected and not failed
    reason = "" if passed else ("result check failed" if failed else f"{short}% below expected")
    return {**result, "data_size": top["data_size"], "alg_bandwidth_gib": top["alg_bandwidth"],
            "busbw": busbw, "shortfall_pct": short, "passed": passed, "reason": reason}  # fmt: skip


def outliers(results: list[dict]) -> list[str]:
    """The smallest thing each failure points at, named with its shortfall."""
    out: list[str] = []
    bad = [r for r in results if not r["passed"]]
    named: set[str] = set()

    def say(what: str, r: dict) -> None:
        out.append(
            f"{what}: {r['op']} busbw {r['busbw']:.1f} GB/s, expected {r['expected_busbw']:g} GB/s"
            f" ({r['shortfall_pct']:g}% short{'; ' + r['reason'] if 'check' in r['reason'] else ''})"
        )

    for r in bad:
        if r["kind"] == "server":
            say(f"server {r['unit']}", r)
            named.add(r["unit"])
        elif r["kind"] == "leaf":
            say(f"leaf {r['unit']}", r)
            named.update(r["leaves"])
    pair_fail: dict[str, list[dict]] = {}
    for r in bad:
        if r["kind"] == "leaf-pair":
            for leaf in r["leaves"]:
                pair_fail.setdefault(leaf, []).append(r)
    for leaf, rs in sorted(pair_fail.items()):
        if len(rs) >= 2 and leaf not in named:
            say(
                f"leaf {leaf} uplinks (both its leaf pairs slow)", min(rs, key=lambda x: x["busbw"])
            )
            named.add(leaf)
    for r in bad:
        if r["kind"] == "leaf-pair" and not set(r["leaves"]) & named:
            say(f"spine path between {' and '.join(r['leaves'])}", r)
        elif r["kind"] in ("pod", "supernode") and not set(r["leaves"]) & named:
            say(f"{r['kind']} {r['unit']} spine group", r)
        elif (
            r["kind"] == "cluster"
            and not named
            and not any(x["kind"] in ("pod", "supernode") for x in bad)
        ):
            say("cluster (spine/core tier)", r)
    return out


def run_scope(module, scope, plan, args) -> list[dict]:
    per_server = plan["ranks_per_server"]
    batch = args["batch"] or plan.get("batch", 1)
    units = units_of(scope, plan)
    results = []
    hostdir = os.path.join(args["workdir"], "hostfiles")
    os.makedirs(hostdir, exist_ok=True)
    for start in range(0, len(units), batch):
        running = []
        for unit in units[start : start + batch]:
            name, _, servers = unit
            safe = re.sub(r"[^A-Za-z0-9_.+-]", "_", f"{scope['name']}-{name}")
            hostfile = os.path.join(hostdir, safe + ".txt")
            with open(hostfile, "w") as fh:
                fh.writelines(f"{s}:{per_server}\n" for s in servers)
            ranks = len(servers) * per_server
            cmd = scope["command"].format(
                hostfile=hostfile, ranks=ranks, hccl_test_dir=args["hccl_test_dir"]
            )
            if args["mpirun"] != "mpirun":
                cmd = args["mpirun"] + cmd.removeprefix("mpirun")
            proc = subprocess.Popen(
                cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
            )
            running.append((unit, ranks, proc, safe))
        for unit, ranks, proc, safe in running:
            try:
                output, _ = proc.communicate(timeout=args["timeout"])
            except subprocess.TimeoutExpired:
                proc.kill()
                output, _ = proc.communicate()
            with open(os.path.join(args["workdir"], safe + ".out"), "w") as fh:
                fh.write(output)
            results.append(judge(scope, unit, ranks, output, proc.returncode))
    return results


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "plan": {"type": "path", "required": True},
            "kinds": {"type": "list", "elements": "str", "default": []},
            "hccl_test_dir": {"type": "path", "required": True},
            "mpirun": {"type": "str", "default": "mpirun"},
            "workdir": {"type": "path", "required": True},
            "batch": {"type": "int", "default": 0},
            "timeout": {"type": "int", "default": 3600},
        },
        supports_check_mode=True,
    )
    args = module.params
    with open(args["plan"]) as fh:
        plan = yaml.safe_load(fh)
    scopes = [s for s in plan["scopes"] if not args["kinds"] or s["kind"] in args["kinds"]]
    runs = sum(len(units_of(s, plan)) for s in scopes)
    if module.check_mode:
        module.exit_json(changed=False, runs=runs, results=[], outliers=[], failed_runs=0)
    os.makedirs(args["workdir"], exist_ok=True)
    results = [r for s in scopes for r in run_scope(module, s, plan, args)]
    failed = sum(1 for r in results if not r["passed"])
    module.exit_json(
        changed=False, runs=runs, results=results, outliers=outliers(results), failed_runs=failed
    )


if __name__ == "__main__":
    main()
