#!/usr/bin/python
"""Ansible module: the rest of seed 002's operations checklist, read-only, one host at a time.

check=host: NIC RSS (every storage/business NIC uses all its combined queues, `ethtool -l`),
idle-NPU power (a chip with AI Core at 0% draws no more than the limit, `npu-smi info -t common -i
<NPU ID> -c <Chip ID>` for every Ascend chip `npu-smi info -m` lists: chip 0 of an A2 NPU, both dies
of an A3 NPU),
compile-cache size (the caches hold no more than the limit) and checkpoint write throughput on
each DPC mount (`dd ... oflag=direct conv=fsync` against the mount, GNU dd's summary line).
check=plan: the acceptance plan's checklist section, read here (yaml.safe_load) and returned, so
that its strings reach the role as a registered result, which Ansible never templates (ansible-core
2.19 marks module results untrusted; <= 2.18 executor/task_executor.py wraps a registered result
with wrap_var, i.e. unsafe). The role read the plan with include_vars before, which templates
every string a task reads from it (issue #31).
check=switch_versions: every switch of a model runs the same software, from `display version`
captures (one file per switch), parsed with ntc-templates' huawei_vrp_display_version template.
Returns facts and problems; never fails itself (the role turns problems into one failure), except
on a compile-cache path the cleanup timer must never delete under (`/`, a system folder, a DPC
mount or a folder holding one): then it fails before the role installs the timer. The lists are
wanka's blueprint validation's (generator/blueprint/refusals.py; tests/faults/test_host_paths.py
keeps them equal).
"""

from __future__ import annotations

import os
import re
import subprocess

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.wanka.cluster.plugins.module_utils.npu_smi import chips

# FHS 3.0 ch. 3: the system's own trees (programs, libraries, configuration, boot files) and the
# kernel's virtual file systems (/proc, /sys, /dev) and runtime data (/run): no cache lies in them.
SYSTEM_TREES = (
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32",
    "/proc", "/run", "/sbin", "/sys", "/usr",
)  # fmt: skip
# Folders holding other people's data (FHS 3.0 ch. 3, 5): a cache may lie under them, never be one.
SYSTEM_FOLDERS = (
    "/", "/home", "/media", "/mnt", "/opt", "/root", "/srv", "/tmp", "/var",
    "/var/cache", "/var/lib", "/var/local", "/var/log", "/var/mail", "/var/opt",
    "/var/spool", "/var/tmp",
)  # fmt: skip

DOCUMENTATION = r"""
module: wanka_ops_checklist
short_description: Seed 002 checklist checks (RSS queues, idle NPU power, compile cache, checkpoint IO, switch versions)
options:
  check: {description: host, plan or switch_versions, type: str, required: true}
  plan: {description: The acceptance plan (check=plan), type: path}
  nics: {description: Storage and business NICs to check, type: list, elements: str, default: []}
  ethtool: {description: Path of ethtool, type: str, default: ethtool}
  npu_smi: {description: Path of npu-smi, type: str, default: npu-smi}
  npu_power: {description: Check the idle power of every chip npu-smi info -m lists, type: bool, default: false}
  idle_power_max_w: {description: Highest power of an idle NPU chip, type: float, default: 0}
  cache_paths: {description: Compile-cache directories, type: list, elements: path, default: []}
  cache_max_gb: {description: Largest total cache size (GB), type: float, default: 0}
  mounts: {description: DPC mountpoints (checkpoint paths), type: list, elements: path, default: []}
  checkpoint_write_gbps: {description: Lowest write throughput per mount (GB/s), type: float, default: 0}
  write_mb: {description: MiB written per mount, type: int, default: 1024}
  captures: {description: Directory of `display version` captures, one <switch>.txt each, type: path}
  root: {description: Root prefix for test doubles (exported as WANKA_ROOT), type: str, default: ''}
"""

# `ethtool -l` (ethtool(8), "Channel parameters for IFACE:" then "Pre-set maximums:" and
# "Current hardware settings:" blocks with RX/TX/Other/Combined lines).
COMBINED = re.compile(r"^Combined:\s+(\d+)", re.M)
# GNU coreutils dd summary: "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 0.52 s, 2.1 GB/s"
DD = re.compile(r"^(\d+) bytes .*copied, ([\d.]+) s", re.M)
# one `key : value` line (an empty value must not swallow the next line)
FIELD = re.compile(r"^[ \t]*([^:\n]+?)[ \t]*:[ \t]*(.*?)[ \t]*$", re.M)


def rss_problem(nic: str, text: str) -> str:
    found = COMBINED.findall(text)
    if len(found) < 2:
        return f"{nic}: cannot read combined queues from ethtool -l"
    maximum, current = int(found[0]), int(found[1])
    if current < maximum:
        return (f"{nic}: RSS uses {current} of {maximum} combined queues "
                f"(ethtool -L {nic} combined {maximum})")  # fmt: skip
    return ""


def idle_power_problem(chip: str, text: str, limit: float) -> str:
    f = dict(FIELD.findall(text))
    usage, power = f.get("Aicore Usage Rate(%)"), f.get("NPU Real-time Power(W)")
    if usage is None or power is None:
        return f"{chip}: no AI Core usage or power in npu-smi info -t common"
    if float(usage) == 0 and float(power) > limit:
        return f"{chip}: idle (AI Core 0%) but draws {float(power):g} W > {limit:g} W"
    return ""


def write_gbps(text: str) -> float:
    m = DD.search(text)
    return int(m.group(1)) / float(m.group(2)) / 1e9 if m and float(m.group(2)) > 0 else 0.0


def switch_versions(captures: str) -> tuple[dict, list[str]]:
    from ntc_templates.parse import parse_output

    found: dict[str, dict] = {}
    for name in sorted(os.listdir(captures)):
        with open(os.path.join(captures, name)) as fh:
            rows = parse_output(platform="huawei_vrp", command="display version", data=fh.read())
        if rows:
            found[name.removesuffix(".txt")] = rows[0]
    problems = []
    by_model: dict[str, dict[str, list[str]]] = {}
    for sw, r in found.items():
        version = f"{r['vrp_version']} ({r['product_version']})" + (
            f" patch {r['patch_version']}" if r.get("patch_version") else ""
        )
        by_model.setdefault(r["model"], {}).setdefault(version, []).append(sw)
    for model, versions in sorted(by_model.items()):
        if len(versions) > 1:
            common = max(versions, key=lambda v: len(versions[v]))
            for v, sws in sorted(versions.items()):
                if v != common:
                    problems.append(
                        f"{model}: {', '.join(sws)} run {v}; the other {len(versions[common])} run {common}"
                    )
    return by_model, problems


def _run(cmd: list[str], env: dict) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, env=env, check=False).stdout


def npu_power_problems(p: dict, env: dict) -> list[str]:
    table = _run([p["npu_smi"], "info", "-m"], env)
    found = chips(table)
    if not found:
        return [f"npu-smi info -m lists no NPU chip: {table.strip() or 'no output'}"]
    out = []
    for npu, chip, _ in found:
        text = _run([p["npu_smi"], "info", "-t", "common", "-i", str(npu), "-c", str(chip)], env)
        out.append(idle_power_problem(f"NPU {npu} chip {chip}", text, p["idle_power_max_w"]))
    return out


def unsafe_cache_paths(paths: list[str], mounts: list[str]) -> list[str]:
    """Why each compile-cache path is no place to delete files under (none: [])."""
    out = []
    for path in paths:
        if not path.startswith("/") or os.path.normpath(path) != path or "//" in path:
            out.append(f"{path!r} is not a normalised absolute path")
        elif path in SYSTEM_FOLDERS:
            out.append(f"{path!r} is a system folder")
        elif any(path == t or path.startswith(t + "/") for t in SYSTEM_TREES):
            out.append(f"{path!r} is inside a system tree")
        elif any(m == path or m.startswith(path + "/") for m in mounts):
            out.append(f"{path!r} is or holds a DPC mount")
    return out


def host_checks(p: dict) -> tuple[dict, list[str]]:
    env = {**os.environ, "WANKA_ROOT": p["root"]}
    problems, facts = [], {"write_gbps": {}, "cache_gb": 0.0}
    for nic in p["nics"]:
        problems.append(rss_problem(nic, _run([p["ethtool"], "-l", nic], env)))
    if p["npu_power"]:
        problems += npu_power_problems(p, env)
    total = 0
    for path in p["cache_paths"]:
        for base, _, files in os.walk(p["root"] + path):
            total += sum(os.path.getsize(os.path.join(base, f)) for f in files)
    facts["cache_gb"] = round(total / 1e9, 3)
    if p["cache_max_gb"] and total / 1e9 > p["cache_max_gb"]:
        problems.append(f"compile caches hold {total / 1e9:.1f} GB > {p['cache_max_gb']:g} GB")
    for mount in p["mounts"]:
        target = os.path.join(p["root"] + mount, ".wanka-checkpoint-test")
        cmd = [
            "dd",
            "if=/dev/zero",
            f"of={target}",
            "bs=1M",
            f"count={p['write_mb']}",
            "conv=fsync",
        ]
        out = subprocess.run(cmd, capture_output=True, text=True, check=False).stderr
        if os.path.exists(target):
            os.remove(target)
        gbps = round(write_gbps(out), 3)
        facts["write_gbps"][mount] = gbps
        if gbps < p["checkpoint_write_gbps"]:
            problems.append(
                f"checkpoint path {mount}: writes {gbps:g} GB/s < {p['checkpoint_write_gbps']:g} GB/s"
            )
    return facts, [x for x in problems if x]


def read_checklist(path: str) -> dict:
    import yaml  # the controller's (the role delegates this check to localhost)

    with open(path, encoding="utf-8") as fh:
        return yaml.safe_load(fh)["checklist"]


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "check": {
                "type": "str",
                "required": True,
                "choices": ["host", "plan", "switch_versions"],
            },
            "plan": {"type": "path"},
            "nics": {"type": "list", "elements": "str", "default": []},
            "ethtool": {"type": "str", "default": "ethtool"},
            "npu_smi": {"type": "str", "default": "npu-smi"},
            "npu_power": {"type": "bool", "default": False},
            "idle_power_max_w": {"type": "float", "default": 0},
            "cache_paths": {"type": "list", "elements": "path", "default": []},
            "cache_max_gb": {"type": "float", "default": 0},
            "mounts": {"type": "list", "elements": "path", "default": []},
            "checkpoint_write_gbps": {"type": "float", "default": 0},
            "write_mb": {"type": "int", "default": 1024},
            "captures": {"type": "path"},
            "root": {"type": "str", "default": ""},
        },
        supports_check_mode=True,
    )
    p = module.params
    unsafe = unsafe_cache_paths(p["cache_paths"], p["mounts"])
    if unsafe:
        module.fail_json(msg="refusing to clean compile caches at " + "; ".join(unsafe))
    if p["check"] == "plan":
        module.exit_json(changed=False, checklist=read_checklist(p["plan"]))
    if p["check"] == "switch_versions":
        facts, problems = switch_versions(p["captures"])
    else:
        facts, problems = host_checks(p)
    module.exit_json(changed=False, facts=facts, problems=problems)


if __name__ == "__main__":
    main()
