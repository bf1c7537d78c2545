"""Hardware catalog: switch, server and cable data shipped as YAML, merged with blueprint overrides."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from importlib import resources
from typing import Any

import msgspec
import yaml

from generator.model_hardware import PART_KINDS

Number = int | float  # a YAML number, kept as written (2200 stays 2200)


@dataclass(frozen=True, slots=True)
class SwitchPort:
    name: str
    speed: int  # Gb/s
    splits: tuple[str, ...]  # e.g. ("2x200GE", "4x100GE")


class _Entry(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A catalog YAML entry, read by the one typed loader (`build_catalog`, msgspec.convert):
    each field is declared once, here, with the default the YAML may leave out. The blueprint
    schema's `catalog` definitions check a blueprint's overrides, located, before this loader
    reads them merged over the shipped files."""


class PortGroup(_Entry, kw_only=True):
    """switches.yaml `ports` entry: `count` ports per card named `name` (`port_names`)."""

    name: str
    speed: int  # Gb/s
    count: int
    splits: tuple[str, ...] = ()
    slots: int = 1
    first_slot: int = 1
    cards: int = 1
    first_card: int = 1
    first_port: int = 1


Fact = dict[str, Any]  # {value, source} or {value, confirmed: false, note}
Part = dict[str, Any]  # {name, count, watts, source | confirmed: false, note}


class SwitchModel(_Entry, kw_only=True, dict=True):
    name: str = ""  # the entry's key
    vendor: str = "huawei"
    platform: str = "huawei-ce"
    description: str = ""
    height_u: int
    power_w: Number
    mgmt_port: str = "MEth0/0/0"
    port_groups: tuple[PortGroup, ...] = msgspec.field(name="ports")
    confirmed: bool = False
    source: str = ""
    failure_rate_per_year: float = 0.0  # whole-device outages per year [U]
    # Per-model facts (`facts`): release, interface_naming, ecmp_max (`maximum load-balancing`
    # limit), ecn (ai-ecn | static | none), command_families (the CLI families configs may use)
    release: Fact | None = None
    interface_naming: Fact | None = None
    ecmp_max_fact: Fact | None = msgspec.field(default=None, name="ecmp_max")  # `ecmp_max`
    ecn: Fact | None = None
    command_families_fact: Fact | None = msgspec.field(default=None, name="command_families")
    # What the BOM orders per box (generator.model_hardware.PART_KINDS: `parts`)
    boards: tuple[Part, ...] = ()
    line_cards: tuple[Part, ...] = ()
    psus: tuple[Part, ...] = ()
    fans: tuple[Part, ...] = ()
    # What to order: {part_number (bare box), airflow: {port-side-intake: PN, port-side-exhaust:
    # PN}, name (when the catalog name is a series), source | confirmed: false, note}
    order: dict[str, Any] = {}

    @cached_property
    def ports(self) -> tuple[SwitchPort, ...]:
        """Every physical port, in panel order."""
        return tuple(
            SwitchPort(port, group.speed, group.splits)
            for group in self.port_groups
            for port in port_names(msgspec.structs.asdict(group))
        )

    @cached_property
    def facts(self) -> Mapping[str, Fact]:
        """The per-model facts the entry gives, by name (SWITCH_FACTS)."""
        given = (self.release, self.interface_naming, self.ecmp_max_fact, self.ecn)
        given += (self.command_families_fact,)
        return {k: f for k, f in zip(SWITCH_FACTS, given, strict=True) if f is not None}

    @cached_property
    def parts(self) -> Mapping[str, tuple[Part, ...]]:
        """kind (PART_KINDS: boards, line_cards, psus, fans) -> its entries, the kinds given."""
        return {k: v for k in PART_KINDS if (v := getattr(self, k))}

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


SWITCH_FACTS = ("release", "interface_naming", "ecmp_max", "ecn", "command_families")


class HostPorts(_Entry, kw_only=True, dict=True):
    """servers.yaml `ports.<role>` entry."""

    role: str = ""  # the entry's key: npu | storage | business | inband | bmc
    count: int
    speed: int
    name: str = ""  # pattern with {n}; default <role>{n}

    @cached_property
    def names(self) -> tuple[str, ...]:
        """The port names, n = 0 .. count-1 (made once: every host reads them)."""
        return tuple(self.name.format(n=n) for n in range(self.count))


class HostModel(_Entry, kw_only=True):
    name: str = ""  # the entry's key
    kind: str  # npu-server | storage-node | management-node
    description: str = ""
    accelerator: str = ""
    npus: int = 0
    dies_per_npu: int = 1
    height_u: int
    power_w: Number
    cooling: tuple[str, ...] = ("air",)
    ports: dict[str, HostPorts]
    confirmed: bool = False
    source: str = ""
    failure_rate_per_year: float = 0.0  # failures per year that stop the host's work [U]
    # GB/s AllReduce bus bandwidth among a server's NPUs, 0 unknown
    intra_server_busbw: float = msgspec.field(default=0.0, name="intra_server_busbw_gbytes_s")
    # Parameter-plane subnets one server's NPU ports span, NPU k in subnet k % n (deployment rule
    # of the model); 0: no such rule (multi-die NPUs still get a subnet per die position)
    npu_subnets_per_server: int = 0
    # What the NPU NIC tool (hccn_tool) accepts: {mtu_max, refused_networks, confirmed, source}
    npu_nic: dict[str, Any] = {}
    # The storage-plane NIC: {model, driver, confirmed, source} (roles/storage_nic_qos)
    storage_nic: dict[str, Any] = {}

    def port(self, role: str) -> HostPorts | None:
        return self.ports.get(role)


class Medium(_Entry, kw_only=True):
    """cables.yaml `media` entry."""

    name: str
    max_speed: int
    max_m: Number
    description: str
    optics: dict[int, dict[str, Any]] = {}  # speed -> optic, reach
    grade: dict[str, Any] = {}  # fibre grade {value, source | note}


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
    return msgspec.convert({**d, "name": name}, SwitchModel)


def _host(name: str, d: Mapping[str, Any]) -> HostModel:
    model = msgspec.convert({**d, "name": name}, HostModel)
    ports = {
        role: msgspec.structs.replace(p, role=role, name=p.name or role + "{n}")
        for role, p in model.ports.items()
    }
    return msgspec.structs.replace(model, ports=ports)


def merged_data(overrides: Mapping[str, Any] | None = None) -> dict[str, dict[str, Any]]:
    """Shipped catalog with a blueprint's `catalog:` section merged over it (per model, per key)."""
    data = copy.deepcopy(shipped_data())
    for section, target in (("switches", "switches"), ("servers", "servers")):
        for name, entry in ((overrides or {}).get(section) or {}).items():
            data[target][name] = {**data[target].get(name, {}), **entry}
    return data


def build_catalog(overrides: Mapping[str, Any] | None = None) -> Catalog:
    """The catalog, each entry read into its typed record (msgspec.convert: a key no record
    declares, or a value of the wrong type, is refused)."""
    data = merged_data(overrides)
    cables = data["cables"]
    return Catalog(
        switches={n: _switch(n, d) for n, d in sorted(data["switches"].items())},
        hosts={n: _host(n, d) for n, d in sorted(data["servers"].items())},
        media=msgspec.convert(cables["media"], tuple[Medium, ...]),
        standard_lengths_m=tuple(cables["standard_lengths_m"]),
        breakouts=cables.get("breakouts", {}),
    )


@cache
def shipped_catalog() -> Catalog:
    """The shipped catalog, without a blueprint's overrides, read once (what the readers of a
    rendered folder look a model up in)."""
    return build_catalog()
