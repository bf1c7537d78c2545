#!/usr/bin/python
"""Ansible module: one storage NIC's RoCE QoS to the storage plane's lossless class with mlnx_qos
(NVIDIA mlnx-tools, python/mlnx_qos): trust DSCP, the class's DSCP mapped to its priority, PFC on
that priority only. Every value is read first (`mlnx_qos -i IF` prints the state) and set only
where it differs; after a change it is read back and a value that does not stick fails the task.

Output read (mlnx_qos pretty_print): `Priority trust state: dscp`, the `dscp2prio mapping:` lines
`\tprio:<p> dscp:<d>,<d>,...`, and under `PFC configuration:` the row `\tenabled  0 0 0 0 1 0 0 0`.
The set options are the tool's own: `--trust dscp`, `--dscp2prio set,<dscp>,<prio>`,
`--pfc <8 comma-separated 0/1>` (trust and dscp2prio cannot be given in one call).
"""

from __future__ import annotations

import re

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: wanka_storage_qos
short_description: Trust DSCP and PFC on one priority of a storage NIC with mlnx_qos
options:
  interface: {description: Interface name, type: str, required: true}
  priority: {description: The lossless priority (PFC on it only), type: int, required: true}
  dscp: {description: DSCP of the RoCE traffic, mapped to the priority, type: int, required: true}
  mlnx_qos: {description: Path of mlnx_qos, type: str, default: /usr/bin/mlnx_qos}
  root: {description: Root directory prefix for test doubles (exported as WANKA_ROOT), type: str, default: ''}
"""

TRUST = re.compile(r"^Priority trust state:\s*(\S+)", re.M)
PRIO_DSCP = re.compile(r"^\s*prio:(\d)\s+dscp:([\d,]+)", re.M)
ENABLED = re.compile(r"^\s*enabled\s+((?:[01]\s+){7}[01])", re.M)


def parse(text: str) -> dict:
    """The state mlnx_qos prints: trust, dscp -> priority, PFC enabled per priority."""
    trust = TRUST.search(text)
    enabled = ENABLED.search(text)
    dscp_prio = {
        int(d): int(p) for p, ds in PRIO_DSCP.findall(text) for d in ds.split(",") if d.strip()
    }
    return {
        "trust": trust.group(1) if trust else "",
        "dscp_prio": dscp_prio,
        "pfc": [int(x) for x in enabled.group(1).split()] if enabled else [],
    }


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "interface": {"type": "str", "required": True},
            "priority": {"type": "int", "required": True},
            "dscp": {"type": "int", "required": True},
            "mlnx_qos": {"type": "str", "default": "/usr/bin/mlnx_qos"},
            "root": {"type": "str", "default": ""},
        },
        supports_check_mode=True,
    )
    p = module.params
    env = {"WANKA_ROOT": p["root"]} if p["root"] else {}

    def run(*args: str) -> str:
        cmd = [p["mlnx_qos"], "-i", p["interface"], *args]
        rc, out, err = module.run_command(cmd, environ_update=env)
        if rc != 0:
            module.fail_json(msg=f"{' '.join(cmd)} failed: {(err or out).strip()}", rc=rc)
        return out

    want_pfc = [1 if i == p["priority"] else 0 for i in range(8)]
    steps = {
        "trust": (lambda s: s["trust"] == "dscp", ("--trust", "dscp")),
        "dscp2prio": (
            lambda s: s["dscp_prio"].get(p["dscp"]) == p["priority"],
            ("--dscp2prio", f"set,{p['dscp']},{p['priority']}"),
        ),
        "pfc": (lambda s: s["pfc"] == want_pfc, ("--pfc", ",".join(map(str, want_pfc)))),
    }
    state = parse(run())
    changed = [name for name, (ok, _) in steps.items() if not ok(state)]
    if changed and not module.check_mode:
        for name in changed:
            run(*steps[name][1])
        state = parse(run())
        stuck = [name for name, (ok, _) in steps.items() if not ok(state)]
        if stuck:
            module.fail_json(msg=f"{p['interface']}: {', '.join(stuck)} did not stick", state=state)
    module.exit_json(changed=bool(changed), set=changed, state=state)


if __name__ == "__main__":
    main()
