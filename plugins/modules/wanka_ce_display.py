#!/usr/bin/python
"""Run a `display` command on a CloudEngine switch over SSH (netmiko) and return its output."""

from __future__ import annotations

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.wanka.cluster.plugins.module_utils.ce_session import (
    MAX_REPLY,
    SESSION_SPEC,
    Channel,
    SessionError,
    connect,
)

DOCUMENTATION = r"""
module: wanka_ce_display
short_description: Run a display command on a Huawei CloudEngine switch
description:
  - Opens an SSH session with netmiko (device type C(huawei_vrpv8) for VRP V200/V300) and returns
    the output of one C(display) command. Changes nothing; runs in check mode too.
  - The answer is read up to a prompt that is the last line received, at most O(max_reply) bytes
    and O(timeout) seconds.
options:
  host: {type: str, required: true, description: Management address of the switch.}
  port: {type: int, default: 22, description: SSH port.}
  username: {type: str, required: true, description: Local user.}
  password: {type: str, required: true, no_log: true, description: Its password.}
  device_type: {type: str, default: huawei_vrpv8, description: netmiko device type.}
  timeout: {type: int, default: 60, description: Seconds to wait for the session and each answer.}
  command: {type: str, required: true, description: The command, which must start with display.}
  max_reply: {type: int, default: 16777216, description: Bytes the answer may have.}
"""


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            **SESSION_SPEC,
            "command": {"type": "str", "required": True},
            "max_reply": {"type": "int", "default": MAX_REPLY},
        },
        supports_check_mode=True,
    )
    p = module.params
    if not p["command"].startswith("display "):
        module.fail_json(msg=f"only display commands are run, not {p['command']!r}")
    if "\n" in p["command"] or "\r" in p["command"]:
        module.fail_json(msg="the command is one line")
    try:
        conn = connect(module)
    except Exception as exc:  # a login that fails (no greeting end, SSH error): a message
        module.fail_json(msg=f"{p['host']}:{p['port']}: login failed: {type(exc).__name__}: {exc}")
    try:
        conn.clear_buffer()
        out = Channel(conn, p["timeout"], p["max_reply"], [p["password"]]).display(p["command"])
    except SessionError as exc:
        module.fail_json(msg=f"{p['host']}: {exc}")
    finally:
        conn.disconnect()
    module.exit_json(changed=False, stdout=out, stdout_lines=out.splitlines())


if __name__ == "__main__":
    main()
