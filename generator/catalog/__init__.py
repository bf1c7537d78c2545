"""Hardware catalog: switch, server and cable data shipped as YAML, merged with blueprint overrides."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

import yaml

from generator.model_hardware import PART_KINDS


@dataclass(frozen=True, slots=True)
class SwitchPort:
    name: str
    speed: int  # Gb/s
    splits: tuple[str, ...]  # e.g. ("2x200GE", "4x100GE")


@dataclass(frozen=True, slots=True)
class SwitchModel:
    name: str
    vendor: str
    platform: str
    description: str
    height_u: int
    power_w: float
    mgmt_port: str
    ports: tuple[SwitchPort, ...]  # every physical port, in panel order
    confirmed: bool
    source: str
    failure_rate_per_year: float = 0.0  # whole-device outages per year [U]
    # Per-model facts, each {value, source} or {value, confirmed: false, note}: release,
    # interface_naming, ecmp_max (`maximum load-balancing` limit), ecn (ai-ecn | static | none),
    # command_families (the CLI families configs may use on this model).
    facts: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    # What the BOM orders per box (generator.model_hardware.PART_KINDS: boards, line_cards,
    # psus, fans): kind -> entries {name, count, watts, source | confirmed: false, note}
    parts: Mapping[str, tuple[Mapping[str, Any], ...]] = field(default_factory=dict)
    # What to order: {part_number (bare box), airflow: {port-side-intake: PN, port-side-exhaust:
    # PN}, name (when the catalog name is a series), source | confirmed: false, note}
    order: Mapping[str, Any] = field(default_factory=dict)

    def fact(self, name: str, default: Any = None) -> Any:
        entry = self.facts.get(name)
        return default if entry is None else entry["value"]

    @property
    def ecmp_max(self) -> int:
        return int(self.fact("ecmp_max", 128))

    @property
    def command_families(self) -> tuple[str, ...]:
        return tuple(self.fact("command_families", ()))

    def ports_at(self, speed: int) -> tuple[SwitchPort, ...]:
        return tuple(p for p in self.ports if p.speed == speed)

    @property
    def speeds(self) -> tuple[int, ...]:
        return tuple(sorted({p.speed for p in self.ports}, reverse=True))


@dataclass(frozen=True, slots=True)
class HostPorts:
    role: str  # npu | storage | business | inband | bmc
    count: int
    speed: int
    name: str  # pattern with {n}
    names: tuple[str, ...]  # the port names, n = 0 .. count-1 (made once: every host reads them)


@dataclass(frozen=True, slots=True)
class HostModel:
    name: str
    kind: str  # npu-server | storage-node | management-node
    description: str
    accelerator: str
    npus: int
    dies_per_npu: int
    height_u: int
    power_w: float
    cooling: tuple[str, ...]
    ports: Mapping[str, HostPorts]
    confirmed: bool
    source: str
    failure_rate_per_year: float = 0.0  # failures per year that stop the host's work [U]
    intra_server_busbw: float = 0.0  # GB/s AllReduce bus bandwidth among a server's NPUs, 0 unknown
    # Parameter-plane subnets one server's NPU ports span, NPU k in subnet k % n (deployment rule
    # of the model); 0: no such rule (multi-die NPUs still get a subnet per die position)
    npu_subnets_per_server: int = 0
    # What the NPU NIC tool (hccn_tool) accepts: {mtu_max, refused_networks, confirmed, source}
    npu_nic: Mapping[str, Any] = field(default_factory=dict)
    # The storage-plane NIC: {model, driver, confirmed, source} (roles/storage_nic_qos)
    storage_nic: Mapping[str, Any] = field(default_factory=dict)

    def port(self, role: str) -> HostPorts | None:
        return self.ports.get(role)


@dataclass(frozen=True, slots=True)
class Medium:
    name: str
    max_speed: int
    max_m: float
    description: str
    optics: Mapping[int, Mapping[str, Any]] = field(default_factory=dict)  # speed -> optic, reach
    grade: Mapping[str, Any] = field(default_factory=dict)  # fibre grade {value, source | note}


@dataclass(frozen=True, slots=True)
class Catalog:
    switches: Mapping[str, SwitchModel]
    hosts: Mapping[str, HostModel]
    media: tuple[Medium, ...]
    standard_lengths_m: tuple[int, ...]
    # split (4x100GE) -> fibre (MMF/SMF) -> port_optic, leg_optic, trunk, cord, reach_m (cables.yaml)
    breakouts: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)

    def medium(self, speed: int, length_m: float) -> str:
        for m in self.media:
            if speed <= m.max_speed and length_m <= m.max_m:
                return m.name
        return "SMF"

    def optic(self, medium: str, speed: int) -> tuple[str, int]:
        """(transceiver, reach in m) of an optical medium at a link speed; ("", 0) for copper,
        AOC (its ends are part of the cable) or a speed the catalog names no optic for."""
        m = next((x for x in self.media if x.name == medium), None)
        entry = m.optics.get(speed) if m else None
        return (entry["optic"], int(entry["reach_m"])) if entry else ("", 0)

    def structured(self, split: str, length_m: float) -> tuple[str, Mapping[str, Any]]:
        """(fibre, breakout entry) of a split port cabled as a trunk, cassette and patch cords:
        the first optical medium whose max_m holds `length_m` (the last one when none does),
        and cables.yaml `breakouts` entry of the split on it ({} when the catalog names none:
        the optic-reach check then warns that the run has no transceiver)."""
        fibres = [m for m in self.media if m.optics]
        fit = next((m for m in fibres if length_m <= m.max_m), fibres[-1])
        return fit.name, self.breakouts.get(split, {}).get(fit.name, {})

    def standard_length(self, length_m: float) -> int:
        return standard_length(self.standard_lengths_m, length_m)


def standard_length(lengths: Sequence[int], length_m: float) -> int:
    """The first of the standard cable `lengths` (ascending) that holds `length_m`; beyond the
    longest, whole metres."""
    for std in lengths:
        if length_m <= std:
            return std
    return int(-(-length_m // 1))


@cache
def shipped_data() -> dict[str, Any]:
    """The catalog YAML files shipped in this package, as plain data (read with libyaml where
    PyYAML has it: the pure-Python reader took a tenth of a second on the validate path)."""
    root = resources.files(__package__)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return {
        stem: yaml.load(root.joinpath(f"{stem}.yaml").read_text(encoding="utf-8"), loader)
        for stem in ("switches", "servers", "cables")
    }


def port_names(group: Mapping[str, Any]) -> list[str]:
    """A port group's interface names: `name` with {slot}, {card} and {port} filled in, slot-major
    (`slots` slots from `first_slot`, `cards` subcards per slot from `first_card`, `count` ports
    per card from `first_port`; Huawei numbers ports slot/subcard/port)."""
    first = {k: group.get(f"first_{k}", 1) for k in ("slot", "card", "port")}
    return [
        group["name"].format(slot=slot, card=card, port=port)
        for slot in range(first["slot"], first["slot"] + group.get("slots", 1))
        for card in range(first["card"], first["card"] + group.get("cards", 1))
        for port in range(first["port"], first["port"] + group["count"])
    ]


def _switch(name: str, d: Mapping[str, Any]) -> SwitchModel:
    ports = [
        SwitchPort(port, group["speed"], tuple(group.get("splits", ())))
        for group in d["ports"]
        for port in port_names(group)
    ]
    return SwitchModel(
        name=name,
        vendor=d.get("vendor", "huawei"),
        platform=d.get("platform", "huawei-ce"),
        description=d.get("description", ""),
        height_u=d["height_u"],
        power_w=d["power_w"],
        mgmt_port=d.get("mgmt_port", "MEth0/0/0"),
        ports=tuple(ports),
        confirmed=d.get("confirmed", False),
        source=d.get("source", ""),
        failure_rate_per_year=float(d.get("failure_rate_per_year", 0.0)),
        facts={k: d[k] for k in SWITCH_FACTS if k in d},
        parts={k: tuple(d[k]) for k in PART_KINDS if d.get(k)},
        order=d.get("order") or {},
    )


SWITCH_FACTS = ("release", "interface_naming", "ecmp_max", "ecn", "command_families")


def _host(name: str, d: Mapping[str, Any]) -> HostModel:
    return HostModel(
        name=name,
        kind=d["kind"],
        description=d.get("description", ""),
        accelerator=d.get("accelerator", ""),
        npus=d.get("npus", 0),
        dies_per_npu=d.get("dies_per_npu", 1),
        height_u=d["height_u"],
        power_w=d["power_w"],
        cooling=tuple(d.get("cooling", ("air",))),
        ports={
            role: HostPorts(
                role=role,
                count=p["count"],
                speed=p["speed"],
                name=(pattern := p.get("name", role + "{n}")),
                names=tuple(pattern.format(n=n) for n in range(p["count"])),
            )
            for role, p in d["ports"].items()
        },
        confirmed=d.get("confirmed", False),
        source=d.get("source", ""),
        failure_rate_per_year=float(d.get("failure_rate_per_year", 0.0)),
        intra_server_busbw=float(d.get("intra_server_busbw_gbytes_s", 0.0)),
        npu_subnets_per_server=d.get("npu_subnets_per_server", 0),
        npu_nic=d.get("npu_nic") or {},
        storage_nic=d.get("storage_nic") or {},
    )


def merged_data(overrides: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Shipped catalog with a blueprint's `catalog:` section merged over it (per model, per key)."""
    data = copy.deepcopy(shipped_data())
    for section, target in (("switches", "switches"), ("servers", "servers")):
        for name, entry in ((overrides or {}).get(section) or {}).items():
            data[target][name] = {**data[target].get(name, {}), **entry}
    return data


def build_catalog(overrides: Mapping[str, Any] | None = None) -> Catalog:
    data = merged_data(overrides)
    cables = data["cables"]
    return Catalog(
        switches={n: _switch(n, d) for n, d in sorted(data["switches"].items())},
        hosts={n: _host(n, d) for n, d in sorted(data["servers"].items())},
        media=tuple(
            Medium(**{**m, "optics": {int(k): v for k, v in m.get("optics", {}).items()}})
            for m in cables["media"]
        ),
        standard_lengths_m=tuple(cables["standard_lengths_m"]),
        breakouts=cables.get("breakouts", {}),
    )
