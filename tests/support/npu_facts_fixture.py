"""TEST FIXTURE writer: NPU facts in the format roles/npu_facts writes (kind NpuFacts), with
SYNTHETIC ids (SDIDs unique per Super Pod; Super Pod ID = supernode index + `pod_base`). Real
facts come only from `npu-smi info -t spod-info` on the hardware; this stands in for them where a
test needs a 1.2 rank table (tests/data/npu-facts/supernode-768.yml was written by it)."""

from __future__ import annotations

from pathlib import Path

import yaml

HEADER = (
    "# TEST FIXTURE in the format roles/npu_facts writes (kind NpuFacts). The ids are SYNTHETIC,\n"
    "# not read from hardware (tests/support/npu_facts_fixture.py): SDIDs unique per Super Pod, Super Pod\n"
    "# IDs deliberately not the supernode index, to show they come from this file.\n"
)


def write_facts(cluster, path: Path, pod_base: int = 7) -> Path:
    hosts = {}
    position: dict[int, int] = {}
    for s in cluster.npu_servers:
        idx = position[s.supernode] = position.get(s.supernode, -1) + 1
        dies = max(s.dies_per_npu, 1)
        hosts[s.name] = {
            "devices": [
                {
                    "chip_id": d.device_id % dies,
                    "device_id": d.device_id,
                    "npu_id": d.device_id // dies,
                    "sdid": (idx << 22) | (d.device_id << 16) | 0x8000,
                    "server_index": idx,
                    "super_pod_id": s.supernode + pod_base,
                }
                for d in s.devices
            ]
        }
    # libyaml's dumper when there is one: the same bytes as yaml.safe_dump, three times faster
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    body = yaml.dump({"kind": "NpuFacts", "hosts": hosts}, Dumper=dumper, indent=2)
    path.write_text(HEADER + body)
    return path
