"""Facts collected from the hardware (roles/npu_facts), read as an input beside the blueprint.

A3 rank tables need each die's SDID (`super_device_id`) and each node's Super Pod ID, which only
the hardware knows (`npu-smi info -t spod-info -i <npu> -c <chip>`, fields `SDID` and
`Super Pod ID`; HCCL rank_table_config_a3.md). The file is read with the blueprint loader (same
limits and duplicate-key rejection) and checked here; problems are located in the facts file.

    kind: NpuFacts
    hosts:
      npu-001:
        devices:
          - {device_id: 0, npu_id: 0, chip_id: 0, sdid: 16777216, super_pod_id: 0, server_index: 4}
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import jsonschema

from generator.blueprint.load import load_blueprint
from generator.errors import BlueprintError, Problem

DEVICE_KEYS = ("device_id", "npu_id", "chip_id", "sdid", "super_pod_id", "server_index")
SCHEMA = {
    "type": "object",
    "required": ["kind", "hosts"],
    "additionalProperties": False,
    "properties": {
        "kind": {"const": "NpuFacts"},
        "hosts": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["devices"],
                "additionalProperties": False,
                "properties": {
                    "devices": {
                        "type": "array",
                        "minItems": 1,
                        "items": {
                            "type": "object",
                            "required": list(DEVICE_KEYS),
                            "additionalProperties": False,
                            "properties": {
                                k: {"type": "integer", "minimum": 0} for k in DEVICE_KEYS
                            },
                        },
                    }
                },
            },
        },
    },
}


@dataclass(frozen=True, slots=True)
class DieFacts:
    device_id: int  # /dev/davinciN (Chip Phy-ID of `npu-smi info -m`)
    npu_id: int
    chip_id: int
    sdid: int  # SDID: the die's id in the SuperPoD (rank table super_device_id)
    super_pod_id: int  # Super Pod ID (rank table super_pod_id)
    server_index: int


@dataclass(frozen=True, slots=True)
class NpuFacts:
    file: str
    hosts: Mapping[str, tuple[DieFacts, ...]]  # host -> its dies, by device_id


def load_npu_facts(path: str | os.PathLike[str]) -> NpuFacts:
    loaded = load_blueprint(path)
    errors = sorted(
        jsonschema.Draft202012Validator(SCHEMA).iter_errors(loaded.data),
        key=lambda e: list(map(str, e.absolute_path)),
    )
    if errors:
        problems = [
            Problem(
                tuple(e.absolute_path),
                e.message,
                "the file roles/npu_facts writes: kind NpuFacts, hosts.<host>.devices[] with "
                + ", ".join(DEVICE_KEYS),
            )
            for e in errors[:10]
        ]
        raise BlueprintError(problems).locate(loaded.file, loaded.positions)
    hosts: dict[str, tuple[DieFacts, ...]] = {}
    for host, entry in loaded.data["hosts"].items():
        dies = sorted((DieFacts(**d) for d in entry["devices"]), key=lambda d: d.device_id)
        hosts[host] = tuple(dies)
    return NpuFacts(loaded.file, hosts)


def facts_path(bp: Mapping[str, Any], blueprint_file: str) -> str | None:
    """hccl.facts of the blueprint, relative to the blueprint's folder."""
    rel = bp["hccl"].get("facts")
    if not rel:
        return None
    return os.path.join(os.path.dirname(os.path.abspath(blueprint_file)), rel)
