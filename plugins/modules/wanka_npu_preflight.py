#!/usr/bin/python
"""Ansible module: the seed checklist's pre-flight checks on one Ascend host, read-only.

Reads `npu-smi info -t board|health|ecc|common` and `hccn_tool -link|-mtu|-lldp -g` per NPU die and
compares them with what the blueprint and the cabling plan say. hccn_tool takes the die's device
id, npu-smi the NPU id and chip id: `npu-smi info -m` maps one to the other (an A3 node has 8 NPUs
of 2 dies, device ids 0..15; `-i` is the NPU id 0..7: HCCL rank_table_config_a3.md "通过npu-smi
info -l命令查出的NPU ID即为设备id ... chip_id ... npu-smi info -m"; the same reading as roles/npu_facts). Returns the facts and a list of
problems (never fails itself; the role turns problems into one clear per-host failure).
Field names of npu-smi's `key : value` output follow MindCluster's collector script and Huawei's
npu-smi reference (domain.md §5); hccn_tool `-g` formats beyond `-ip -g` are read defensively.
"""

from __future__ import annotations

import re

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.wanka.cluster.plugins.module_utils.npu_smi import chips

DOCUMENTATION = r"""
module: wanka_npu_preflight
short_description: Pre-flight checks of an Ascend host against the blueprint and cabling plan
options:
  lldp: {description: Expected LLDP neighbour of NPU i as "<switch> <port>" (inventory npu_lldp), type: list, elements: str, required: true}
  driver: {description: Required driver version, type: str, required: true}
  firmware: {description: Required firmware version, type: str, required: true}
  temperature_max_c: {description: Highest allowed NPU temperature, type: int, required: true}
  mtu: {description: Planned NPU NIC MTU, type: int, required: true}
  cnp_dscp: {description: CNP DSCP DCQCN must use (lossless class), type: int, required: true}
  npu_smi: {description: Path of npu-smi, type: str, default: npu-smi}
  hccn_tool: {description: Path of hccn_tool, type: str, default: /usr/local/Ascend/driver/tools/hccn_tool}
  root: {description: Root directory prefix for test doubles (exported as WANKA_ROOT), type: str, default: ''}
"""

FIELD = re.compile(r"^\s*([^:]+?)\s*:\s*(.*?)\s*$")


def fields(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        m = FIELD.match(line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


def _count(ecc: dict[str, str], prefix: str) -> int:
    return max((int(v) for k, v in ecc.items() if k.startswith(prefix) and v.isdigit()), default=0)


def lldp_neighbour(text: str) -> tuple[str, str]:
    """(system name, port id) from hccn_tool -lldp -g TLV output."""
    system = port = ""
    lines = [line.strip() for line in text.splitlines()]
    for i, line in enumerate(lines):
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if line.startswith("System Name TLV"):
            system = nxt
        elif line.startswith("Port ID TLV"):
            port = nxt.split(":", 1)[1].strip() if ":" in nxt else nxt
    return system, port


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "lldp": {"type": "list", "elements": "str", "required": True},
            "driver": {"type": "str", "required": True},
            "firmware": {"type": "str", "required": True},
            "temperature_max_c": {"type": "int", "required": True},
            "mtu": {"type": "int", "required": True},
            "cnp_dscp": {"type": "int", "required": True},
            "npu_smi": {"type": "str", "default": "npu-smi"},
            "hccn_tool": {"type": "str", "default": "/usr/local/Ascend/driver/tools/hccn_tool"},
            "root": {"type": "str", "default": ""},
        },
        supports_check_mode=True,
    )
    p = module.params
    env = {"WANKA_ROOT": p["root"]} if p["root"] else {}

    def run(*args: str) -> str:
        rc, out, err = module.run_command(list(args), environ_update=env)
        if rc != 0:
            module.fail_json(msg=f"{' '.join(args)} failed: {(err or out).strip()}")
        return out

    problems: list[str] = []
    warnings: list[str] = []
    facts: list[dict] = []
    chip_of = {d: (str(n), str(c)) for n, c, d in chips(run(p["npu_smi"], "info", "-m"))}
    for n, expected in enumerate(p["lldp"]):
        i = str(n)
        if n not in chip_of:
            problems.append(
                f"device {n}: npu-smi info -m lists no such die (the plan has {expected})"
            )
            continue
        npu, chip = chip_of[n]
        want_system, _, want_port = expected.partition(" ")
        # the NPU's board (driver and firmware versions); a chip's board entry has no Software
        # Version (Huawei npu-smi reference npusmi_008/009)
        board = fields(run(p["npu_smi"], "info", "-t", "board", "-i", npu))
        health = fields(run(p["npu_smi"], "info", "-t", "health", "-i", npu, "-c", chip))
        ecc = fields(run(p["npu_smi"], "info", "-t", "ecc", "-i", npu, "-c", chip))
        common = fields(run(p["npu_smi"], "info", "-t", "common", "-i", npu, "-c", chip))
        link = run(p["hccn_tool"], "-i", i, "-link", "-g")
        mtu = re.findall(r"\d+", run(p["hccn_tool"], "-i", i, "-mtu", "-g"))
        system, port = lldp_neighbour(run(p["hccn_tool"], "-i", i, "-lldp", "-g"))
        # Multi-bit errors and isolated (retired) pages fail the card; corrected single-bit
        # counts only warn (review finding 22). Field names as npu-smi -t ecc prints them
        # (`HBM Double Bit Error Count`, `... Aggregate Total Err Cnt`, `... Isolated Pages ...`).
        hbm = _count(ecc, "HBM Double Bit")
        isolated = sum(int(v) for k, v in ecc.items() if "Isolated" in k and v.isdigit())
        single = _count(ecc, "HBM Single Bit")
        dcqcn = run(p["hccn_tool"], "-i", i, "-dcqcn", "-g", "status")
        cnp = re.findall(r"\d+", run(p["hccn_tool"], "-i", i, "-dcqcn", "-g", "cnp_dscp"))
        tls = re.search(r"tls switch\[(\d)\]", run(p["hccn_tool"], "-i", i, "-tls", "-g"))
        temp = int(re.findall(r"-?\d+", common.get("Temperature(C)", "0"))[0] or 0)
        fact = {
            "id": int(i),
            "driver": board.get("Software Version", ""),
            "firmware": board.get("Firmware Version", ""),
            "health": health.get("Health Status", ""),
            "hbm_ecc_errors": hbm,
            "hbm_isolated_pages": isolated,
            "hbm_single_bit_errors": single,
            "dcqcn": bool(re.search(r"enable status:\s*enable", dcqcn)),
            "cnp_dscp": int(cnp[-1]) if cnp else -1,
            "tls": int(tls.group(1)) if tls else -1,
            "temperature_c": temp,
            "link_up": bool(re.search(r"\bUP\b", link, re.IGNORECASE)),
            "mtu": int(mtu[-1]) if mtu else 0,
            "lldp": {"system": system, "port": port},
        }
        facts.append(fact)
        where = f"NPU {i}" if (npu, chip) == (i, "0") else f"device {i} (NPU {npu} chip {chip})"
        if fact["driver"] != p["driver"]:
            problems.append(
                f"{where} driver {fact['driver'] or 'unknown'}, blueprint wants {p['driver']}"
            )
        if fact["firmware"] != p["firmware"]:
            problems.append(
                f"{where} firmware {fact['firmware'] or 'unknown'}, blueprint wants {p['firmware']}"
            )
        if fact["health"] != "OK":
            problems.append(
                f"{where} health {fact['health'] or 'unknown'} ({health.get('Error Information', 'NA')})"
            )
        if hbm or isolated:
            problems.append(
                f"{where} has {hbm} multi-bit HBM ECC errors and {isolated} isolated pages: "
                "replace the card before training"
            )
        elif single:
            warnings.append(f"{where} corrected {single} single-bit HBM ECC errors: watch it")
        if not fact["dcqcn"]:
            problems.append(f"{where} DCQCN is off: RoCE ignores ECN marks and PFC storms follow")
        if fact["cnp_dscp"] != p["cnp_dscp"]:
            problems.append(
                f"{where} CNP DSCP {fact['cnp_dscp']}, the lossless class says {p['cnp_dscp']}"
            )
        if temp > p["temperature_max_c"]:
            problems.append(f"{where} at {temp} C, over the {p['temperature_max_c']} C limit")
        if not fact["link_up"]:
            problems.append(f"{where} link is down")
        if fact["mtu"] != p["mtu"]:
            problems.append(f"{where} MTU {fact['mtu']}, planned {p['mtu']}")
        if (system, port) != (want_system, want_port):
            problems.append(
                f"{where} LLDP neighbour is {system or '?'} {port or '?'}, the cabling plan says {expected}"
            )
    module.exit_json(changed=False, npus=facts, problems=problems, warnings_found=warnings)


if __name__ == "__main__":
    main()
