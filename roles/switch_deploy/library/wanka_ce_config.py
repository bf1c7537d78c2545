#!/usr/bin/python
"""Converge a CloudEngine switch's running configuration to the intended one, in one commit."""

from __future__ import annotations

import os
import re

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: wanka_ce_config
short_description: Converge a Huawei CloudEngine switch to its intended configuration
description:
  - Reads C(display current-configuration) over SSH with netmiko (device type C(huawei_vrpv8),
    VRP V200/V300 two-stage commit), computes the remediation from running to intended with
    hier_config (C(Platform.HUAWEI_VRP), C(undo) negation, C(quit) to leave a view), writes a
    backup of the running configuration, enters the remediation in one system-view session and
    commits it once.
  - A line the switch rejects leaves the session with C(abort), so the uncommitted candidate is
    discarded and nothing reaches the running configuration. If the configuration read back after
    the commit still differs from the intended one, C(rollback configuration last 1) restores the
    configuration from before the commit (VRP8 configuration rollback).
  - Lines that carry secrets (C(cipher), C(irreversible-cipher)) are left out of the comparison,
    because the switch prints them encrypted; they are set by zero-touch provisioning or with
    O(secrets=true).
  - In check mode the remediation is returned (and shown with --diff) and nothing is changed.
options:
  host: {type: str, required: true, description: Management address of the switch.}
  port: {type: int, default: 22, description: SSH port.}
  username: {type: str, required: true, description: Local user with privilege level 3.}
  password: {type: str, required: true, no_log: true, description: Its password.}
  device_type: {type: str, default: huawei_vrpv8, description: netmiko device type.}
  timeout: {type: int, default: 60, description: Seconds to wait for the session and each answer.}
  intended: {type: str, required: true, description: Intended configuration, saved format.}
  backup: {type: path, required: true, description: File the running configuration is saved to.}
  secrets: {type: bool, default: false, description: Also converge lines that carry secrets.}
"""


SECRET = re.compile(r"\b(irreversible-cipher|cipher)\s+\S+")


def _config(text: str, secrets: bool):
    from hier_config import Platform, get_hconfig

    lines = [
        line
        for line in text.splitlines()
        if line.strip() and line.strip() != "return" and (secrets or not SECRET.search(line))
    ]
    return get_hconfig(Platform.HUAWEI_VRP, "\n".join(lines))


PHYSICAL = re.compile(
    r"^interface ((\d+)?GE|MEth)\S+$"
)  # ports that exist whether configured or not


def remediation(running: str, intended: str, secrets: bool) -> list[str]:
    """Lines that take the running configuration to the intended one. A physical port the plan
    does not use is cleared (its lines undone), never deleted: `undo interface` is for logical
    interfaces only."""
    from hier_config import WorkflowRemediation

    have, want = _config(running, secrets), _config(intended, secrets)
    for section in have.children:
        if PHYSICAL.match(section.text) and want.get_child(equals=section.text) is None:
            want.add_child(section.text)
    wf = WorkflowRemediation(have, want)
    return list(wf.remediation_config.dump_simple(sectional_exiting=True))


def _rejected(output: str) -> list[str]:
    """`<line>: Error: ...` for each line the switch answered with an error (VRP prints the line
    after the prompt, a caret under the fault, then `Error: ...`)."""
    out, last = [], ""
    for line in output.splitlines():
        if re.match(r"^\s*Error:", line):
            out.append(f"{_masked([last]).strip()!r}: {line.strip()}")
        elif "]" in line and not line.strip().startswith("^"):
            last = line.split("]", 1)[1].strip()
    return out


def _masked(lines: list[str]) -> str:
    return "".join(SECRET.sub(r"\1 ******", line) + "\n" for line in lines)


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "host": {"type": "str", "required": True},
            "port": {"type": "int", "default": 22},
            "username": {"type": "str", "required": True},
            "password": {"type": "str", "required": True, "no_log": True},
            "device_type": {"type": "str", "default": "huawei_vrpv8"},
            "timeout": {"type": "int", "default": 60},
            "intended": {"type": "str", "required": True},
            "backup": {"type": "path", "required": True},
            "secrets": {"type": "bool", "default": False},
        },
        supports_check_mode=True,
    )
    p = module.params
    try:
        from netmiko import ConnectHandler
    except ImportError as exc:
        module.fail_json(msg=f"netmiko and hier_config are needed on the controller: {exc}")

    conn = ConnectHandler(
        device_type=p["device_type"],
        host=p["host"],
        port=p["port"],
        username=p["username"],
        password=p["password"],
        conn_timeout=p["timeout"],
        auth_timeout=p["timeout"],
        banner_timeout=p["timeout"],
        read_timeout_override=p["timeout"],
    )
    try:
        running = conn.send_command("display current-configuration")
        lines = remediation(running, p["intended"], p["secrets"])
        result = {"changed": bool(lines), "commands": _masked(lines).splitlines()}
        if lines:
            result["diff"] = {"prepared": _masked(lines)}
        if not lines or module.check_mode:
            module.exit_json(**result)

        os.makedirs(os.path.dirname(p["backup"]) or ".", exist_ok=True)
        fd = os.open(p["backup"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(running)
        result["backup"] = p["backup"]

        commands = [line.strip() for line in lines]
        output = conn.send_config_set(commands)
        errors = _rejected(output)
        if errors:
            conn.send_command("abort", expect_string=r">")
            after = conn.send_command("display current-configuration")
            state = "unchanged" if after == running else "CHANGED, check it"
            module.fail_json(
                msg=f"{p['host']} rejected a line; the uncommitted change was discarded (abort), "
                f"running configuration {state}: " + "; ".join(errors),
                rolled_back=True,
                **result,
            )
        try:
            conn.commit()
        except ValueError as exc:
            conn.send_command("abort", expect_string=r">")
            module.fail_json(msg=f"commit failed, change discarded: {exc}", **result)

        left = remediation(
            conn.send_command("display current-configuration"), p["intended"], p["secrets"]
        )
        if left:
            conn.send_command("rollback configuration last 1", expect_string=r">")
            module.fail_json(
                msg="after the commit the switch still differs from the intended configuration; "
                "rolled back to the configuration before the commit: " + "; ".join(left[:5]),
                rolled_back=True,
                **result,
            )
        module.exit_json(**result)
    finally:
        conn.disconnect()


if __name__ == "__main__":
    main()
