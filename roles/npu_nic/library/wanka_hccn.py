#!/usr/bin/python
"""Ansible module: bring an Ascend host's NPU NICs to a generated /etc/hccn.conf, setting only
what differs. Every value is read with `hccn_tool ... -g` first (that read is the verification
when nothing differs) and read back after each set; a value that does not stick fails the task.

Command syntax from hccn_tool's help text (domain.md §2.2). The `-g` output formats beyond
`-ip -g` (`ipaddr:<ip>` / `netmask:<mask>`) are not published; values are therefore read
defensively: the last IPv4 address, the last integer, or the last eight integers of the output.
"""

from __future__ import annotations

import os
import re

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: wanka_hccn
short_description: Apply a generated hccn.conf to the NPU NICs with hccn_tool, only what differs
options:
  desired: {description: Content of the host's generated hccn.conf, type: str, required: true}
  hccn_tool: {description: Path of hccn_tool, type: str, default: /usr/local/Ascend/driver/tools/hccn_tool}
  root: {description: Root directory prefix for test doubles (exported as WANKA_ROOT), type: str, default: ''}
  cnp_dscp: {description: "DCQCN CNP DSCP to set with DCQCN enabled (-dcqcn, ext build); -1 leaves DCQCN alone", type: int, default: -1}
"""

IPV4 = re.compile(r"\b(\d{1,3}(?:\.\d{1,3}){3})\b")
INT = re.compile(r"-?\d+")

# key -> (hccn_tool option, how to read, how to set)
SETTINGS = (
    "address",
    "gateway",
    "netdetect",
    "mtu",
    "bitmap",
    "prio_tc",
    "dscp_tc",
    "send_arp_status",  # -send_arp (cmd_ext.c): `current enable status: enable|disable`
    "dcqcn",  # -dcqcn -g status (tool_dcqcn.c): `dcqcn enable status:   enable|disable`
    "cnp_dscp",  # -dcqcn -g cnp_dscp: `cnp_dscp     : <n>`
)


def parse_conf(text: str) -> dict[int, dict[str, str]]:
    out: dict[int, dict[str, str]] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        name, _, device = key.rpartition("_")
        if device.isdigit():
            out.setdefault(int(device), {})[name] = value
    return out


class Tool:
    def __init__(self, module: AnsibleModule, path: str, root: str) -> None:
        self.module, self.path = module, path
        self.env = {"WANKA_ROOT": root} if root else {}

    def run(self, *args: str) -> str:
        rc, out, err = self.module.run_command([self.path, *args], environ_update=self.env)
        if rc != 0:
            self.module.fail_json(
                msg=f"hccn_tool {' '.join(args)} failed: {(err or out).strip()}", rc=rc
            )
        return out

    def get(self, dev: int, key: str, want: dict[str, str]) -> str:
        i = str(dev)
        if key == "address":
            out = self.run("-i", i, "-ip", "-g")
            addr = re.search(r"ipaddr\s*:\s*([\d.]+)", out)
            mask = re.search(r"netmask\s*:\s*([\d.]+)", out)
            return f"{addr.group(1) if addr else ''}/{mask.group(1) if mask else ''}"
        if key in ("gateway", "netdetect"):
            found = IPV4.findall(self.run("-i", i, f"-{key}", "-g"))
            return found[-1] if found else ""
        if key == "mtu":
            found = INT.findall(self.run("-i", i, "-mtu", "-g"))
            return found[-1] if found else ""
        if key == "send_arp_status":
            out = self.run("-i", i, "-send_arp", "-g")
            return "1" if re.search(r"enable status:\s*enable", out) else "0"
        if key == "dcqcn":
            out = self.run("-i", i, "-dcqcn", "-g", "status")
            return "1" if re.search(r"enable status:\s*enable", out) else "0"
        if key == "cnp_dscp":
            found = INT.findall(self.run("-i", i, "-dcqcn", "-g", "cnp_dscp"))
            return found[-1] if found else ""
        if key in ("bitmap", "prio_tc"):
            found = INT.findall(self.run("-i", i, "-pfc" if key == "bitmap" else "-prio_tc", "-g"))
            return ",".join(found[-8:])
        dscp = want["dscp_tc"].split(":")[0]
        found = INT.findall(self.run("-i", i, "-dscp_to_tc", "-g", "dscp", dscp))
        return f"{dscp}:{found[-1]}," if found else ""

    def set(self, dev: int, key: str, want: dict[str, str]) -> None:
        i = str(dev)
        if key == "address":
            self.run("-i", i, "-ip", "-s", "address", want["address"], "netmask", want["netmask"])
        elif key in ("gateway", "netdetect"):
            self.run(
                "-i", i, f"-{key}", "-s", "gateway" if key == "gateway" else "address", want[key]
            )
        elif key == "mtu":
            self.run("-i", i, "-mtu", "-s", "size", want["mtu"])
        elif key == "bitmap":
            self.run("-i", i, "-pfc", "-s", "bitmap", want["bitmap"])
        elif key == "send_arp_status":
            self.run("-i", i, "-send_arp", "-s", "enable", want[key])
        elif key == "dcqcn":
            self.run("-i", i, "-dcqcn", "-s", "enable", want[key])
        elif key == "cnp_dscp":
            self.run("-i", i, "-dcqcn", "-s", "cnp_dscp", want[key])
        elif key == "prio_tc":
            self.run("-i", i, "-prio_tc", "-s", "map", want["prio_tc"])
        else:
            dscp, tc = want["dscp_tc"].rstrip(",").split(":")
            self.run("-i", i, "-dscp_to_tc", "-s", "dscp", dscp, "tc", tc)


def wanted_value(key: str, want: dict[str, str]) -> str:
    if key == "address":
        return f"{want['address']}/{want['netmask']}"
    return want[key]


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "desired": {"type": "str", "required": True},
            "hccn_tool": {"type": "str", "default": "/usr/local/Ascend/driver/tools/hccn_tool"},
            "root": {"type": "str", "default": ""},
            "cnp_dscp": {"type": "int", "default": -1},
        },
        supports_check_mode=True,
    )
    tool = Tool(module, module.params["hccn_tool"], module.params["root"])
    if not os.path.exists(tool.path):
        module.fail_json(msg=f"{tool.path} not found: is the Ascend driver installed?")
    desired = parse_conf(module.params["desired"])
    if module.params["cnp_dscp"] >= 0:  # DCQCN on, CNPs with the lossless class's CNP DSCP
        for want in desired.values():
            want.update(dcqcn="1", cnp_dscp=str(module.params["cnp_dscp"]))
    changes, mismatches = [], []
    for dev in sorted(desired):
        want = desired[dev]
        for key in SETTINGS:
            if key not in want:
                continue
            have = tool.get(dev, key, want)
            if have == wanted_value(key, want):
                continue
            changes.append(
                {"device": dev, "setting": key, "before": have, "after": wanted_value(key, want)}
            )
            if module.check_mode:
                continue
            tool.set(dev, key, want)
            after = tool.get(dev, key, want)
            if after != wanted_value(key, want):
                mismatches.append(
                    f"NPU {dev} {key}: set {wanted_value(key, want)}, hccn_tool -g reads {after}"
                )
    if mismatches:
        module.fail_json(msg="; ".join(mismatches), changes=changes)
    diff = {
        "before": "".join(f"npu{c['device']} {c['setting']}={c['before']}\n" for c in changes),
        "after": "".join(f"npu{c['device']} {c['setting']}={c['after']}\n" for c in changes),
    }
    module.exit_json(changed=bool(changes), changes=changes, diff=diff)


if __name__ == "__main__":
    main()
