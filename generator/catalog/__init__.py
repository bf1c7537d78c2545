"""Hardware catalog: switch, server and cable data shipped as YAML, merged with blueprint overrides."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from importlib import resources
from typing import Annotated, Any, Literal

import msgspec
import yaml
from msgspec import Meta

from generator.vocab import HostPort, Role

Number = int | float  # a YAML number, kept as written (2200 stays 2200)
PART_KINDS = ("boards", "line_cards", "psus", "fans")  # a switch model's part lists, in BOM order


@dataclass(frozen=True, slots=True)
class SwitchPort:
    name: str
    speed: int  # Gb/s
    splits: tuple[str, ...]  # e.g. ("2x200GE", "4x100GE")


class _Entry(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """A catalog YAML entry, read by the one typed loader (`build_catalog`, msgspec.convert):
    each key is declared once, here, with its Meta (description, bounds) and the default the
    YAML may leave out; the blueprint schema's catalog definitions, which check a blueprint's
    overrides (located) before this loader reads them, are written from these declarations
    (generator/blueprint/schema.py). Meta(extra=FROM_KEY): filled from the entry's key, not
    written; extra=LOADER_DEFAULT: the schema fills no default (the record's applies when
    the model is read); extra_json_schema={"default": ...}: what validate() fills into a
    blueprint's model instead of the record's default."""


FROM_KEY = {"from_key": True}
LOADER_DEFAULT = {"fill": False}
PartNumber = Annotated[
    str,
    Meta(
        pattern=r"^[0-9A-Z][0-9A-Z-]*$",
        extra_json_schema={
            "patternErrorMessage": "a Huawei part number is digits, upper-case letters and '-', as its Hardware Description writes it, e.g. \"02353EGR\""
        },
    ),
]
Split = Annotated[
    str,
    Meta(
        pattern=r"^[1-8]x[0-9]+GE$",
        extra_json_schema={"patternErrorMessage": "use a breakout such as 4x100GE"},
    ),
]
GbPerS = Annotated[int, Meta(ge=1, le=1600)]
RackUnits = Annotated[int, Meta(ge=1, le=60, description="Rack units")]
Watts = Annotated[int, Meta(ge=0)] | Annotated[float, Meta(ge=0)]
Rate = Annotated[float, Meta(ge=0)]  # failures per year


class PortGroup(_Entry, kw_only=True):
    """switches.yaml `ports` entry: `count` ports per card named `name` (`port_names`)."""

    name: Annotated[
        str,
        Meta(
            pattern=r"^[A-Za-z0-9][A-Za-z0-9/:._-]*(\{slot\}[A-Za-z0-9/:._-]*)?(\{card\}[A-Za-z0-9/:._-]*)?\{port\}[A-Za-z0-9/:._-]*$",
            extra_json_schema={
                "patternErrorMessage": 'an interface name is letters, digits and \'/:._-\' with {port} (and {slot}, {card} before it, in that order), e.g. "400GE{slot}/0/{port}" or "400GE1/{card}/{port}"'
            },
            description="Interface name with {port}, optionally {slot} and {card} (subcard) "
            "before it: slot/subcard/port, e.g. 400GE1/{card}/{port}",
        ),
    ]
    slots: Annotated[int, Meta(ge=1, le=64, description="Slots (line cards) with this group")] = 1
    first_slot: Annotated[int, Meta(ge=0, le=1024, description="Number of the first slot")] = 1
    cards: Annotated[int, Meta(ge=1, le=16, description="Subcards per slot with this group")] = 1
    first_card: Annotated[int, Meta(ge=0, le=16, description="Number of the first subcard")] = 1
    count: Annotated[int, Meta(ge=1, le=1024, description="Ports per card")]
    first_port: Annotated[
        int,
        Meta(
            ge=0,
            le=1,
            description="Number of the first port on a card (Huawei CE boxes count from 1, "
            "VRP8 routers and chassis line cards from 0)",
        ),
    ] = 1
    speed: Annotated[GbPerS, Meta(description="Speed in Gb/s")]
    splits: tuple[Split, ...] = ()


class FactEntry(_Entry):
    """A per-model fact as the YAML writes it (the records keep it a mapping: `Fact`)."""

    value: Any
    source: str | None = None
    confirmed: bool | None = None
    note: str | None = None


class PartEntry(_Entry):
    """One entry of a part list (the records keep it a mapping: `Part`)."""

    name: Annotated[str, Meta(min_length=1)]
    count: Annotated[int, Meta(ge=1)]
    watts: Annotated[int, Meta(ge=0)] | None = None
    source: str | None = None
    confirmed: bool | None = None
    note: str | None = None
    part_number: PartNumber | None = None


class Airflow(_Entry, rename="kebab"):
    port_side_intake: PartNumber | None = None
    port_side_exhaust: PartNumber | None = None


class OrderEntry(_Entry):
    """`order` as the YAML writes it (SwitchModel keeps it a mapping)."""

    part_number: PartNumber | None = None
    airflow: Airflow | None = None
    name: Annotated[str, Meta(min_length=1)] | None = None
    source: str | None = None
    confirmed: bool | None = None
    note: str | None = None


Fact = Annotated[
    dict[str, Any],  # {value, source} or {value, confirmed: false, note}
    Meta(
        description="A hardware fact: its value and a public source, or confirmed: false",
        extra={"ref": "fact", "as": FactEntry},
    ),
]
Part = dict[str, Any]  # {name, count, watts, source | confirmed: false, note}
Parts = Annotated[
    tuple[Part, ...],
    Meta(
        description="Parts of a switch model for files/bom.csv: each with its source, or "
        "confirmed: false and a note saying what would confirm it",
        extra={"ref": "parts", "as": tuple[PartEntry, ...], **LOADER_DEFAULT},
    ),
]


class SwitchModel(_Entry, kw_only=True, dict=True):
    name: Annotated[str, Meta(extra=FROM_KEY)] = ""  # the entry's key
    # Per-model facts (`facts`): release, interface_naming, ecmp_max (`maximum load-balancing`
    # limit), ecn (ai-ecn | static | none), command_families (the CLI families configs may use)
    release: Annotated[Fact, Meta(description="Software release (e.g. V300R023C00)")] | None = None
    interface_naming: Annotated[Fact, Meta(description="How the model names its ports")] | None = (
        None
    )
    ecmp_max_fact: (
        Annotated[
            Fact,
            Meta(description="Largest `maximum load-balancing` (equal-cost paths) the model takes"),
        ]
        | None
    ) = msgspec.field(default=None, name="ecmp_max")
    ecn: (
        Annotated[
            Fact,
            Meta(
                description="ECN the model supports on the lossless queue: ai-ecn, static or none"
            ),
        ]
        | None
    ) = None
    command_families_fact: (
        Annotated[Fact, Meta(description="CLI command families configs may use on this model")]
        | None
    ) = msgspec.field(default=None, name="command_families")
    vendor: Annotated[str, Meta(description="Vendor")] = "huawei"
    platform: Annotated[
        Literal["huawei-ce", "huawei-ne", "huawei-usg"],
        Meta(
            description="Config platform: huawei-ce switches get a rendered configuration; "
            "huawei-ne routers and huawei-usg firewalls are cabled and addressed but configured "
            "by hand"
        ),
    ] = "huawei-ce"
    description: Annotated[str, Meta(description="Text")] = ""
    height_u: RackUnits
    power_w: Annotated[Watts, Meta(description="Typical power (W)")]
    mgmt_port: Annotated[
        str,
        Meta(
            pattern=r"^[A-Za-z0-9][A-Za-z0-9/:._-]*$",
            extra_json_schema={
                "patternErrorMessage": "an interface name is letters, digits and '/:._-', e.g. MEth0/0/0"
            },
            description="Management interface",
        ),
    ] = "MEth0/0/0"
    port_groups: Annotated[tuple[PortGroup, ...], Meta(min_length=1)] = msgspec.field(name="ports")
    # What the BOM orders per box (PART_KINDS: `parts`)
    boards: Annotated[
        Parts, Meta(description="Boards the BOM orders per box (MPUs, SFUs, PEMs)")
    ] = ()
    line_cards: Annotated[
        Parts, Meta(description="Line cards or subcards the BOM orders per box")
    ] = ()
    psus: Annotated[
        Parts, Meta(description="Power supplies the BOM orders per box (watts: rated output)")
    ] = ()
    fans: Annotated[Parts, Meta(description="Fan modules the BOM orders per box")] = ()
    failure_rate_per_year: Annotated[  # whole-device outages per year [U]
        Rate,
        Meta(
            description="Failures of one switch per year (whole-device outage) for the "
            "failure-domain review [U]",
            extra_json_schema={"default": 0.05},
        ),
    ] = 0.0
    confirmed: bool = False
    source: Annotated[
        str,
        Meta(description="Where the numbers come from", extra_json_schema={"default": "blueprint"}),
    ] = ""
    # What to order: {part_number (bare box), airflow: {port-side-intake: PN, port-side-exhaust:
    # PN}, name (when the catalog name is a series), source | confirmed: false, note}
    order: Annotated[
        dict[str, Any],
        Meta(
            description="What files/bom.csv orders: Huawei part numbers of the bare box and per "
            "airflow (zones.training.airflow), with the page that gives them, or confirmed: false "
            "and a note saying what would",
            extra={"as": OrderEntry, **LOADER_DEFAULT},
        ),
    ] = {}

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

    role: Annotated[str, Meta(extra=FROM_KEY)] = ""  # npu | storage | business | inband | bmc
    count: Annotated[int, Meta(ge=1, le=64, description="Ports")]
    speed: Annotated[GbPerS, Meta(description="Gb/s")]
    name: Annotated[  # "": <role>{n}
        str,
        Meta(
            pattern=r"^[A-Za-z0-9][A-Za-z0-9/:._-]*(\{n\}[A-Za-z0-9/:._-]*)?$",
            description="Port name, {n} = index",
            extra_json_schema={
                "patternErrorMessage": "a port name is letters, digits and '/:._-' with an optional {n}, e.g. npu{n}",
                "default": "port{n}",
            },
        ),
    ] = ""

    @cached_property
    def names(self) -> tuple[str, ...]:
        """The port names, n = 0 .. count-1 (made once: every host reads them)."""
        return tuple(self.name.format(n=n) for n in range(self.count))


NicCommand = Literal[
    "ip", "gateway", "netdetect", "mtu", "pfc", "prio_tc", "dscp_to_tc", "send_arp", "dcqcn"
]


class NpuNicEntry(_Entry):
    """`npu_nic` as the YAML writes it (HostModel keeps it a mapping)."""

    mtu_max: (
        Annotated[int, Meta(ge=68, le=9702, description="Highest MTU hccn_tool -mtu -s accepts")]
        | None
    ) = None
    refused_networks: (
        Annotated[
            tuple[
                Annotated[
                    str,
                    Meta(
                        pattern=r"^((25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])\.){3}(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])/([0-9]|[12][0-9]|3[0-2])$",
                        extra_json_schema={
                            "patternErrorMessage": "write an IPv4 network such as 192.168.1.0/24"
                        },
                    ),
                ],
                ...,
            ],
            Meta(description="IPv4 networks hccn_tool -ip -s refuses as an NPU address"),
        ]
        | None
    ) = None
    confirmed: bool = True
    source: Annotated[str, Meta(description="Where the limits come from")] | None = None
    commands: (
        Annotated[
            tuple[NicCommand, ...],
            Meta(
                description="The hccn_tool settings (-<name> -s) a public source shows for this "
                "model; the NIC script sets no other (default: every one wanka knows)",
                extra_json_schema={"uniqueItems": True},
            ),
        ]
        | None
    ) = None
    commands_source: (
        Annotated[str, Meta(description="The public source that shows `commands` for this model")]
        | None
    ) = None


class StorageNicEntry(_Entry):
    """`storage_nic` as the YAML writes it (HostModel keeps it a mapping)."""

    model: Annotated[str, Meta(description="NIC model, e.g. ConnectX-6 Dx")]
    driver: Annotated[str, Meta(description="Kernel driver of the NIC's ports, e.g. mlx5_core")]
    confirmed: bool = False
    source: Annotated[str, Meta(description="Where the NIC model comes from")] | None = None


# The members of the vocabulary as the schema's enums (msgspec reads a Literal of strings, not
# of enum members): a host model's kind and its port roles, in the vocabulary's order
HostKind = Literal[tuple(r.value for r in Role if r.is_host)]
PortRole = Literal[tuple(p.value for p in HostPort)]


class HostModel(_Entry, kw_only=True):
    name: Annotated[str, Meta(extra=FROM_KEY)] = ""  # the entry's key
    kind: HostKind
    description: Annotated[str, Meta(description="Text")] = ""
    accelerator: Annotated[str, Meta(description="Accelerator family")] = ""
    npus: Annotated[int, Meta(ge=0, le=64, description="NPUs")] = 0
    dies_per_npu: Annotated[int, Meta(ge=1, le=4, description="Dies per NPU")] = 1
    # Parameter-plane subnets one server's NPU ports span, NPU k in subnet k % n (deployment rule
    # of the model); 0: no such rule (multi-die NPUs still get a subnet per die position)
    npu_subnets_per_server: Annotated[
        int,
        Meta(
            ge=0,
            le=16,
            description="Parameter-plane subnets a server's NPU ports span, NPU k in subnet "
            "k % n (Atlas 800 model 9000: 4, NPU i and i+4 together); 0: no rule",
        ),
    ] = 0
    height_u: RackUnits
    power_w: Annotated[Watts, Meta(description="Max power (W)")]
    cooling: tuple[Literal["air", "liquid"], ...] = ("air",)
    ports: dict[PortRole, HostPorts]
    # What the NPU NIC tool (hccn_tool) accepts: {mtu_max, refused_networks, confirmed, source}
    npu_nic: Annotated[
        dict[str, Any],
        Meta(
            description="What the NPU NIC tool (hccn_tool) of this model accepts, from its "
            "source: the highest MTU and the networks it refuses as an NPU address",
            extra={"as": NpuNicEntry, **LOADER_DEFAULT},
        ),
    ] = {}
    # GB/s AllReduce bus bandwidth among a server's NPUs, 0 unknown
    intra_server_busbw: Annotated[
        Rate,
        Meta(
            description="AllReduce bus bandwidth among one server's NPUs (HCCS), GB/s: the "
            "acceptance plan's one-server expectation [U]",
            extra=LOADER_DEFAULT,
        ),
    ] = msgspec.field(default=0.0, name="intra_server_busbw_gbytes_s")
    # The storage-plane NIC: {model, driver, confirmed, source} (roles/storage_nic_qos)
    storage_nic: Annotated[
        dict[str, Any],
        Meta(
            description="The storage-plane NIC: its model and the Linux driver of its ports "
            "(ethtool -i); roles/storage_nic_qos configures only mlx5_core and refuses any other",
            extra={"as": StorageNicEntry, **LOADER_DEFAULT},
        ),
    ] = {}
    failure_rate_per_year: Annotated[  # failures per year that stop the host's work [U]
        Rate,
        Meta(
            description="Failures of one host per year that stop its work (accelerators, HBM, "
            "NICs, board, PSU) for the failure-domain review [U]",
            extra=LOADER_DEFAULT,
        ),
    ] = 0.0
    confirmed: bool = False
    source: Annotated[
        str,
        Meta(description="Where the numbers come from", extra_json_schema={"default": "blueprint"}),
    ] = ""

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


class CatalogSection(_Entry):
    """A blueprint's `catalog:` section as it is written (build_catalog reads the mapping)."""

    switches: Annotated[
        dict[str, SwitchModel], Meta(description="Add or override switch models")
    ] = {}
    servers: Annotated[
        dict[str, HostModel],
        Meta(description="Add or override server, storage-node and management-node models"),
    ] = {}


# The records and types the blueprint schema writes once under `$defs` and refers to
SCHEMA_DEFS: dict[str, Any] = {
    "parts": Parts,
    "fact": Fact,
    "switch_model": SwitchModel,
    "host_model": HostModel,
}


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
