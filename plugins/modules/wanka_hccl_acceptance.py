#!/usr/bin/python
"""Ansible module: run the acceptance plan's HCCL Test runs in batches and judge each one.

For every scope of files/acceptance/plan.yml and every unit of it (a server, a leaf, a pod, a
leaf pair, the cluster) it writes an MPI hostfile (`host:slots`), starts the plan's mpirun line,
reads HCCL Test's result table, turns the algorithm bandwidth of the largest size into bus
bandwidth and compares it with its pass threshold. Then it names the outliers: the server,
leaf, leaf pair, pod or spine/core group below its expectation, and by how much.

The threshold comes from the prediction when there is one: `expected`, the file `wanka predict
FOLDER --write` writes into the site overlay (acceptance/expected.yml: per scope and condition
busbw p5/p50/p95 and threshold = p5 x (1 - margin)); each run then also reports measured /
predicted (p50). `condition` picks the row: "as built", or a single failure the prediction
names ("spine par-spine-001 down") while that failure is in place. A scope the prediction does
not cover (or no file) is judged against the plan's expected_busbw_gbytes_s, its ceiling. A
prediction of another plan.yml (plan_sha256) is refused: the cluster was generated again.

HCCL Test output (CANN "HCCL Performance Tester" > result description, HCCLpertest_16_0006,
hiascend.com): a header line `data_size(Bytes): | avg_time(us): | alg_bandwidth(GB/s): |
check_result:` then one row per size; alg_bandwidth is data size / time, in 2^30 bytes per
second. Bus bandwidth (NCCL-tests convention, domain.md §2.5): all_reduce algbw x 2(n-1)/n,
all_gather algbw x (n-1)/n, reported in 10^9 bytes per second like the plan.
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
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
  mpirun: {description: "mpirun program (one argument: a path or a name on PATH)", type: str, default: mpirun}
  mpirun_args: {description: "Arguments put right after it, one list element each (e.g. [--allow-run-as-root])", type: list, elements: str, default: []}
  workdir: {description: Where hostfiles and raw outputs go, type: path, required: true}
  batch: {description: Runs started at once (0 = the plan's), type: int, default: 0}
  timeout: {description: Seconds one run may take, type: int, default: 3600}
  expected: {description: "wanka predict --write's expected.yml (absent: judge by the plan)", type: path}
  condition: {description: "Row of expected.yml to judge by", type: str, default: as built}
"""

# The plan's names become hostfile lines (`host:slots`), file names, Prometheus label values and
# Markdown table cells: device names (generator/names.py DEVICE_NAME) and the names wanka joins
# from them (scope "kind/op", leaf pair "a+b"), never a quote, "|", white space or line break.
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+/-]{0,254}")
KINDS = ("server", "leaf", "pod", "supernode", "cluster", "leaf-pair")
OPS = ("all_reduce", "all_gather")
PLACEHOLDERS = ("{hostfile}", "{ranks}", "{hccl_test_dir}")
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


def judge(scope: dict, unit: tuple, ranks: int, output: str, rc: int, predicted=None) -> dict:
    """One run's result; `predicted` the prediction's row for its scope ({busbw: [p5, p50,
    p95], threshold}) or None (then the plan's expected_busbw_gbytes_s is the threshold)."""
    name, leaves, servers = unit
    rows = parse_table(output)
    expected = predicted["threshold"] if predicted else scope["expected_busbw_gbytes_s"]
    result = {
        "scope": scope["name"], "kind": scope["kind"], "op": scope["op"], "unit": name,
        "leaves": leaves, "servers": servers, "ranks": ranks, "expected_busbw": expected,
        "source": "prediction" if predicted else "plan",
        "predicted_busbw": predicted["busbw"][1] if predicted else None, "ratio": None, "rc": rc,
    }  # fmt: skip
    if rc != 0 or not rows:
        return {**result, "busbw": 0.0, "shortfall_pct": 100.0, "passed": False,
                "reason": f"mpirun exited {rc}, {len(rows)} result rows"}  # fmt: skip
    top = max(rows, key=lambda r: r["data_size"])
    busbw = round(bus_bandwidth(scope["op"], top["alg_bandwidth"], ranks), 3)
    short = round(max(0.0, (expected - busbw) / expected * 100), 1) if expected else 0.0
    failed = top["check_result"] == "failed"
    passed = busbw >= expected and not failed
    reason = "" if passed else ("result check failed" if failed else f"{short}% below expected")
    ratio = round(busbw / predicted["busbw"][1], 3) if predicted and predicted["busbw"][1] else None
    return {**result, "data_size": top["data_size"], "alg_bandwidth_gib": top["alg_bandwidth"],
            "busbw": busbw, "shortfall_pct": short, "passed": passed, "reason": reason,
            "ratio": ratio}  # fmt: skip


def load_expected(path: str | None, plan_bytes: bytes, condition: str) -> dict:
    """scope name -> its row of `condition` in wanka predict's expected.yml ({} without one).
    PlanError when it is not one, was predicted from another plan, or lacks the condition."""
    if not path or not os.path.exists(path):
        return {}
    try:
        with open(path, encoding="utf-8") as fh:
            data = yaml.safe_load(fh)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise PlanError(f"{path}: {err}") from None
    if not isinstance(data, dict) or not isinstance(data.get("scopes"), dict):
        raise PlanError(f"{path}: not wanka predict's expected.yml (no scopes mapping)")
    if data.get("plan_sha256") != hashlib.sha256(plan_bytes).hexdigest():
        raise PlanError(
            f"{path}: predicted from another plan.yml (plan_sha256 differs): the cluster was"
            " generated again; run `wanka predict FOLDER --write` again"
        )
    out, conditions = {}, set()
    for name, rows in data["scopes"].items():
        if not isinstance(rows, dict):
            raise PlanError(f"{path}: scopes.{name}: a mapping of condition -> figures expected")
        conditions.update(rows)
        row = rows.get(condition)
        if row is None:
            continue
        busbw, threshold = row.get("busbw"), row.get("threshold")
        if not (
            isinstance(busbw, list) and len(busbw) == 3 and isinstance(threshold, (int, float))
        ):
            raise PlanError(
                f"{path}: scopes.{name}.{condition}: busbw [p5, p50, p95] and threshold"
            )
        out[name] = {"busbw": [float(v) for v in busbw], "threshold": float(threshold)}
    if condition not in conditions:
        raise PlanError(
            f"{path}: no condition {condition!r} (npu_acceptance_condition); it has: "
            + ", ".join(sorted(conditions))
        )
    return out


def outliers(results: list[dict]) -> list[str]:
    """The smallest thing each failure points at, named with its shortfall."""
    out: list[str] = []
    bad = [r for r in results if not r["passed"]]
    named: set[str] = set()

    def say(what: str, r: dict) -> None:
        out.append(
            f"{what}: {r['op']} busbw {r['busbw']:.1f} GB/s, expected {r['expected_busbw']:g} GB/s"
            f" ({r['shortfall_pct']:g}% short{'; ' + r['reason'] if 'check' in r['reason'] else ''})"
            + (
                f", measured/predicted {r['ratio']:g} of p50 {r['predicted_busbw']:g} GB/s"
                if r.get("ratio") is not None
                else ""
            )
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


class PlanError(Exception):
    """A plan value that does not fit where the module puts it."""


def check_plan(plan: object) -> None:
    """PlanError naming the first plan value the module cannot use as it is."""
    if not isinstance(plan, dict) or not isinstance(plan.get("scopes"), list):
        raise PlanError("plan: a mapping with a scopes list expected")
    rps = plan.get("ranks_per_server")
    if isinstance(rps, bool) or not isinstance(rps, int) or not 1 <= rps <= 64:
        raise PlanError(f"plan: ranks_per_server {rps!r} is not a number of ranks (1 to 64)")
    leaves = plan.get("leaves")
    if not isinstance(leaves, dict):
        raise PlanError("plan: leaves: a mapping of leaf -> servers expected")
    for leaf, servers in leaves.items():
        if not isinstance(servers, list):
            raise PlanError(f"plan: leaves.{leaf!r}: a list of servers expected")
        for name in (leaf, *servers):
            if not isinstance(name, str) or not NAME.fullmatch(name):
                raise PlanError(f"plan: leaves: {name!r} is not a device name")
    for i, scope in enumerate(plan["scopes"]):
        where = f"plan: scopes[{i}]"
        if not isinstance(scope, dict):
            raise PlanError(f"{where}: a mapping expected")
        if not isinstance(scope.get("name"), str) or not NAME.fullmatch(scope["name"]):
            raise PlanError(f"{where}: name {scope.get('name')!r} is not a scope name")
        if scope.get("kind") not in KINDS or scope.get("op") not in OPS:
            raise PlanError(f"{where}: kind/op {scope.get('kind')!r}/{scope.get('op')!r} unknown")
        argv(scope, where)
        units = scope.get("units")
        if units == "every server":
            continue
        if not isinstance(units, list):
            raise PlanError(f"{where}: units: 'every server' or a list expected")
        for u in units:
            name = u.get("name") if isinstance(u, dict) else u
            if not isinstance(name, str) or not NAME.fullmatch(name):
                raise PlanError(f"{where}: units: {name!r} is not a unit name")
            unit_leaves = u.get("leaves")
            if not isinstance(unit_leaves, list) or not all(
                isinstance(leaf, str) and leaf in leaves for leaf in unit_leaves
            ):
                raise PlanError(f"{where}: units: {name}: leaves must be leaves of the plan")


def argv(scope: dict, where: str) -> list[str]:
    """The scope's command as an argument list (POSIX shell words, shlex): mpirun first, and the
    program it starts the plan's HCCL Test binary, {hccl_test_dir}/bin/<op>_test."""
    command = scope.get("command")
    try:
        words = shlex.split(command) if isinstance(command, str) else []
    except ValueError as err:
        raise PlanError(f"{where}: command: {err}") from None
    program = f"{{hccl_test_dir}}/bin/{scope['op']}_test"
    if not words or words[0] != "mpirun" or program not in words:
        raise PlanError(f"{where}: command: 'mpirun ... {program} ...' expected")
    return words


def fill(words: list[str], values: dict[str, str]) -> list[str]:
    """Each {placeholder} replaced inside its own argument: a value stays one argument whatever
    it holds (";", "$(...)", a space or a newline reach no shell)."""
    out = []
    for word in words:
        for key, value in values.items():
            word = word.replace("{" + key + "}", value)
        out.append(word)
    return out


def run_scope(module, scope, plan, args, predicted=None) -> list[dict]:
    per_server = plan["ranks_per_server"]
    batch = args["batch"] or plan.get("batch", 1)
    units = units_of(scope, plan)
    words = argv(scope, scope["name"])
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
            cmd = fill(
                words,
                {"hostfile": hostfile, "ranks": str(ranks), "hccl_test_dir": args["hccl_test_dir"]},
            )
            cmd = [args["mpirun"], *args["mpirun_args"], *cmd[1:]]
            try:  # no shell: the list is the program's argv
                proc = subprocess.Popen(
                    cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
                )
            except OSError as err:
                for _, _, started, _ in running:
                    started.kill()
                module.fail_json(msg=f"cannot start {cmd[0]!r} (npu_acceptance_mpirun): {err}")
            running.append((unit, ranks, proc, safe))
        for unit, ranks, proc, safe in running:
            try:
                output, _ = proc.communicate(timeout=args["timeout"])
            except subprocess.TimeoutExpired:
                proc.kill()
                output, _ = proc.communicate()
            with open(os.path.join(args["workdir"], safe + ".out"), "w") as fh:
                fh.write(output)
            results.append(judge(scope, unit, ranks, output, proc.returncode, predicted))
    return results


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "plan": {"type": "path", "required": True},
            "kinds": {"type": "list", "elements": "str", "default": []},
            "hccl_test_dir": {"type": "path", "required": True},
            "mpirun": {"type": "str", "default": "mpirun"},
            "mpirun_args": {"type": "list", "elements": "str", "default": []},
            "workdir": {"type": "path", "required": True},
            "batch": {"type": "int", "default": 0},
            "timeout": {"type": "int", "default": 3600},
            "expected": {"type": "path", "default": None},
            "condition": {"type": "str", "default": "as built"},
        },
        supports_check_mode=True,
    )
    args = module.params
    try:
        with open(args["plan"], "rb") as fh:
            plan_bytes = fh.read()
        plan = yaml.safe_load(plan_bytes)
        check_plan(plan)
    except (OSError, yaml.YAMLError, PlanError) as err:
        module.fail_json(msg=f"{args['plan']}: {err}")
    try:
        predicted = load_expected(args["expected"], plan_bytes, args["condition"])
    except PlanError as err:
        module.fail_json(msg=str(err))
    scopes = [s for s in plan["scopes"] if not args["kinds"] or s["kind"] in args["kinds"]]
    runs = sum(len(units_of(s, plan)) for s in scopes)
    if module.check_mode:
        module.exit_json(changed=False, runs=runs, results=[], outliers=[], failed_runs=0,
                         condition=args["condition"], predicted=sorted(predicted))  # fmt: skip
    os.makedirs(args["workdir"], exist_ok=True)
    results = [
        r for s in scopes for r in run_scope(module, s, plan, args, predicted.get(s["name"]))
    ]
    failed = sum(1 for r in results if not r["passed"])
    module.exit_json(
        changed=False,
        runs=runs,
        results=results,
        outliers=outliers(results),
        failed_runs=failed,
        condition=args["condition"],
        predicted=sorted(predicted),
    )


if __name__ == "__main__":
    main()
