#!/usr/bin/python
"""Ansible module: the facts an A3 rank table needs, read from npu-smi. Changes nothing.

`npu-smi info -m` lists every chip: NPU ID, Chip ID, Chip Logic ID, Chip Phy-ID (A3), Chip
Name; rows whose logic id is `-` (the Mcu) are not devices. For each die, `npu-smi info -t
spod-info -i <npu> -c <chip>` prints `SDID : <n>`, `Super Pod Size`, `Super Pod ID : <n>`,
`Server Index : <n>` (HCCL rank_table_config_a3.md names SDID and Super Pod ID as the sources of
super_device_id and super_pod_id; layout as in hicann/shmem examples/rma_d2h_demo/README_en.md).
The device id is the die's physical id (/dev/davinciN): Chip Phy-ID, or Chip Logic ID when the
table has no Phy-ID column.
"""

from __future__ import annotations

import re

from ansible.module_utils.basic import AnsibleModule
from ansible_collections.wanka.cluster.plugins.module_utils.npu_smi import chips

DOCUMENTATION = r"""
module: wanka_npu_facts
short_description: Read each NPU die's device id, SDID and Super Pod ID with npu-smi
options:
  npu_smi: {description: Path of npu-smi, type: str, default: npu-smi}
  root: {description: Root directory prefix for test doubles (exported as WANKA_ROOT), type: str, default: ''}
"""

FIELD = re.compile(r"^\s*(SDID|Super Pod ID|Server Index)\s*:\s*(\d+)\s*$", re.M)


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "npu_smi": {"type": "str", "default": "npu-smi"},
            "root": {"type": "str", "default": ""},
        },
        supports_check_mode=True,
    )
    p = module.params
    env = {"WANKA_ROOT": p["root"]} if p["root"] else {}

    def run(*args: str) -> str:
        rc, out, err = module.run_command([p["npu_smi"], *args], environ_update=env)
        if rc != 0:
            module.fail_json(msg=f"npu-smi {' '.join(args)} failed: {(err or out).strip()}", rc=rc)
        return out

    devices = []
    for npu, chip, device in chips(run("info", "-m")):
        text = run("info", "-t", "spod-info", "-i", str(npu), "-c", str(chip))
        fields = dict(FIELD.findall(text))
        if len(fields) < 3:
            module.fail_json(msg=f"npu {npu} chip {chip}: no SDID/Super Pod ID in: {text.strip()}")
        devices.append(
            {
                "device_id": device,
                "npu_id": npu,
                "chip_id": chip,
                "sdid": int(fields["SDID"]),
                "super_pod_id": int(fields["Super Pod ID"]),
                "server_index": int(fields["Server Index"]),
            }
        )
    if not devices:
        module.fail_json(msg="npu-smi info -m lists no NPU dies")
    module.exit_json(
        changed=False, facts={"devices": sorted(devices, key=lambda d: d["device_id"])}
    )


if __name__ == "__main__":
    main()
