#!/usr/bin/python
"""Ansible module: bring an Ascend host's NPU NICs to a generated /etc/hccn.conf, setting only
what differs. Every value is read with `hccn_tool ... -g` first (that read is the verification
when nothing differs) and read back after each set; a value that does not stick fails the task.
A key of the file this module cannot apply fails the task before anything is set: the file is
applied whole or not at all. The NPUs of a host are handled concurrently, one thread each, with
subprocess (AnsibleModule.run_command swaps os.environ around each call: not thread-safe);
hccn_tool serialises its own writes of /etc/hccn.conf.

Command syntax from hccn_tool's source (hicann/driver hccn_tool/*.c, domain.md §2.2). A fresh NPU
has nothing to read: `-ip -g` exits 13 ("no ip was preset there") and `-gateway -g` exits 2 ("no
gateway was preset there") (tool_ops_ext.c tool_get_device_ipaddr and the gateway getter): those
read as unset. Every command fails with exit 29 while /etc/hccn.conf is missing (tool.c), so the
module creates it empty first. DCQCN is `-dcqcn -s enable <0|1> alg_mode <0|1>` (four words,
tool_dcqcn.c tool_set_dcqcn_enable) and `-s cnp_dscp <n>`; the keys it is read back from and that
`-cfg recovery` restores are dcqcn_en_enable, dcqcn_en_alg_mode and dcqcn_cnp_dscp. Values are read
defensively: the last IPv4 address, the last integer, or the last eight integers of the output.
"""

from __future__ import annotations

import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: wanka_hccn
short_description: Apply a generated hccn.conf to the NPU NICs with hccn_tool, only what differs
options:
  desired: {description: Content of the host's generated hccn.conf, type: str, required: true}
  hccn_tool: {description: Path of hccn_tool, type: str, default: /usr/local/Ascend/driver/tools/hccn_tool}
  root: {description: Root directory prefix for test doubles (exported as WANKA_ROOT), type: str, default: ''}
  cnp_dscp: {description: "DCQCN CNP DSCP to set with DCQCN enabled (-dcqcn, ext build); -1 leaves DCQCN alone", type: int, default: -1}
notes:
  - Fails naming every key of the file it cannot apply; nothing is set then.
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
    "dcqcn_en_enable",  # -dcqcn -g status (tool_dcqcn.c): `dcqcn enable status:   enable|disable`
    "dcqcn_cnp_dscp",  # -dcqcn -g cnp_dscp: `cnp_dscp     : <n>`
)
# netmask is applied with address, the DCQCN algorithm with dcqcn_en_enable
KNOWN = {*SETTINGS, "netmask", "dcqcn_en_alg_mode"}
UNSET = {"-ip": 13, "-gateway": 2}  # exit codes of a read on an NPU that was never set


class ToolError(Exception):
    """hccn_tool failed; raised in a worker thread, reported once by main()."""


def parse_conf(text: str) -> tuple[dict[int, dict[str, str]], list[str]]:
    """hccn.conf lines `<key>_<id>=<value>` -> {id: {key: value}}, and the lines that are not."""
    out: dict[int, dict[str, str]] = {}
    bad: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        key, sep, value = line.partition("=")
        name, _, device = key.rpartition("_")
        if not sep or not name or not device.isdigit():
            bad.append(line)
            continue
        out.setdefault(int(device), {})[name] = value
    return out, bad


class Tool:
    def __init__(self, path: str, root: str) -> None:
        self.path = path
        self.env = {
            **os.environ,
            "LANG": "C",
            "LC_ALL": "C",
            **({"WANKA_ROOT": root} if root else {}),
        }

    def run(self, *args: str) -> str:
        res = subprocess.run([self.path, *args], capture_output=True, text=True, env=self.env)
        if args[3:4] == ("-g",) and res.returncode == UNSET.get(args[2]):
            return ""  # nothing set yet on this NPU
        if res.returncode != 0:
            raise ToolError(
                f"hccn_tool {' '.join(args)} failed: {(res.stderr or res.stdout).strip()}"
            )
        return res.stdout

    def get(self, dev: int, key: str, want: dict[str, str]) -> str:
        i = str(dev)
        if key == "address":
            out = self.run("-i", i, "-ip", "-g")
            addr = re.search(r"ipaddr\s*:\s*([\d.]+)", out)
            mask = re.search(r"netmask\s*:\s*([\d.]+)", out)
            return f"{addr.group(1)}/{mask.group(1) if mask else ''}" if addr else ""
        if key in ("gateway", "netdetect"):
            found = IPV4.findall(self.run("-i", i, f"-{key}", "-g"))
            return found[-1] if found else ""
        if key == "mtu":
            found = INT.findall(self.run("-i", i, "-mtu", "-g"))
            return found[-1] if found else ""
        if key == "send_arp_status":
            out = self.run("-i", i, "-send_arp", "-g")
            return "1" if re.search(r"enable status:\s*enable", out) else "0"
        if key == "dcqcn_en_enable":
            out = self.run("-i", i, "-dcqcn", "-g", "status")
            return "1" if re.search(r"enable status:\s*enable", out) else "0"
        if key == "dcqcn_cnp_dscp":
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
        elif key == "dcqcn_en_enable":
            mode = want.get("dcqcn_en_alg_mode", "0")
            self.run("-i", i, "-dcqcn", "-s", "enable", want[key], "alg_mode", mode)
        elif key == "dcqcn_cnp_dscp":
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


def converge(tool: Tool, dev: int, want: dict[str, str], check: bool) -> tuple[list, list]:
    """One NPU: (changes, mismatches)."""
    changes, mismatches = [], []
    for key in SETTINGS:
        if key not in want:
            continue
        have, value = tool.get(dev, key, want), wanted_value(key, want)
        if have == value:
            continue
        changes.append({"device": dev, "setting": key, "before": have, "after": value})
        if check:
            continue
        tool.set(dev, key, want)
        after = tool.get(dev, key, want)
        if after != value:
            mismatches.append(f"NPU {dev} {key}: set {value}, hccn_tool -g reads {after}")
    return changes, mismatches


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
    tool = Tool(module.params["hccn_tool"], module.params["root"])
    if not os.path.exists(tool.path):
        module.fail_json(msg=f"{tool.path} not found: is the Ascend driver installed?")
    desired, bad = parse_conf(module.params["desired"])
    unknown = sorted({f"{k}_{d}" for d, want in desired.items() for k in want if k not in KNOWN})
    if bad or unknown:
        module.fail_json(
            msg="hccn.conf has settings this module cannot apply, nothing was set: "
            + ", ".join(bad + unknown)
            + f" (it applies {', '.join(sorted(KNOWN))})"
        )
    if module.params["cnp_dscp"] >= 0:  # DCQCN on, CNPs with the lossless class's CNP DSCP
        for want in desired.values():
            want.setdefault("dcqcn_en_enable", "1")
            want.setdefault("dcqcn_cnp_dscp", str(module.params["cnp_dscp"]))
    conf = os.path.join(module.params["root"] or "/", "etc", "hccn.conf")
    if not module.check_mode and not os.path.exists(conf):
        os.makedirs(os.path.dirname(conf), exist_ok=True)
        open(conf, "a").close()  # hccn_tool refuses every set without it (tool.c, exit 29)
    devices = sorted(desired)
    try:
        with ThreadPoolExecutor(max_workers=max(1, len(devices))) as pool:
            results = list(
                pool.map(lambda d: converge(tool, d, desired[d], module.check_mode), devices)
            )
    except ToolError as err:
        module.fail_json(msg=str(err))
    changes = [c for found, _ in results for c in found]
    mismatches = [m for _, found in results for m in found]
    if mismatches:
        module.fail_json(msg="; ".join(mismatches), changes=changes)
    diff = {
        "before": "".join(f"npu{c['device']} {c['setting']}={c['before']}\n" for c in changes),
        "after": "".join(f"npu{c['device']} {c['setting']}={c['after']}\n" for c in changes),
    }
    module.exit_json(changed=bool(changes), changes=changes, diff=diff)


if __name__ == "__main__":
    main()
