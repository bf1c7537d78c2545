"""Reading `npu-smi info -m`, shared by the wanka.cluster modules wanka_npu_facts,
wanka_npu_preflight and wanka_ops_checklist (roles/thermal_guard's shell script reads the same
columns with awk).

`npu-smi info -m` lists every chip with the columns NPU ID, Chip ID, Chip Logic ID, Chip Phy-ID
(A3 only) and Chip Name; the Mcu rows carry '-' ids and are not devices. The device id HCCL and
hccn_tool use is the Phy-ID where the table has one, else the logic id (HCCL
rank_table_config_a3.md: "通过npu-smi info -l命令查出的NPU ID即为设备id ... chip_id ... npu-smi info
-m"; the A3 layout with Phy-ID as in vllm-ascend's cpu_binding unit test, which
tests/fakes/bin/npu-smi follows)."""

from __future__ import annotations


def chips(table: str) -> list[tuple[int, int, int]]:
    """(NPU ID, Chip ID, device id) of every chip of `npu-smi info -m`, in its order."""
    rows = [r.split() for r in table.splitlines() if r.strip()]
    phy = bool(rows) and "Phy-ID" in " ".join(rows[0])  # the header row
    return [
        (int(r[0]), int(r[1]), int(r[3] if phy and r[3].isdigit() else r[2]))
        for r in rows[1:]
        if len(r) >= 4 and r[0].isdigit() and r[1].isdigit() and r[2].isdigit()
    ]
