"""Size a training cluster from a model: the work, the cards, the memory floor, a blueprint.

The article 十万亿参数的算力账先算到绝望 §1 and §4.1 walk through the arithmetic reproduced here:
- work: FLOPs ~= 6 x N (parameters) x D (tokens);
- effective FLOP/s per card = peak at the training precision x MFU (model FLOPs utilisation);
- card-seconds = work / effective; cards = card-seconds / training window;
- an overhead factor for restarts after failures, checkpoints and idle time (the seed plans
  10,000-12,000 cards for 7,700 of pure work);
- the memory floor of weights + gradients + Adam moments (m, v) at the training precision, before
  activations and buffers (the article 十万亿参数的算力账先算到绝望 §1.2: 200 TB per copy of 10^14 BF16 parameters);
- rounded up to whole parameter leaves (servers per leaf of the chosen server and leaf model), or
  whole supernodes.
Pure functions: the CLI (`wanka size`) prints `lines()` and writes `blueprint_text()`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import yaml

from generator.blueprint.validate import SCHEMA
from generator.catalog import Catalog, build_catalog
from generator.expand.fabric import leaf_port_plan
from generator.vocab import Role

SECONDS_PER_DAY = 86_400
HOURS_PER_YEAR = 8766.0
# Bytes per parameter of each model state: (weights, gradients, one Adam moment). "mixed" is the
# usual mixed-precision recipe: BF16 weights and gradients, FP32 master weights and FP32 moments.
PRECISIONS: dict[str, tuple[float, float, float, float]] = {
    # weights, gradients, master copy, each of the two optimizer moments
    "fp32": (4, 4, 0, 4),
    "bf16": (2, 2, 0, 2),
    "fp16": (2, 2, 0, 2),
    "fp8": (1, 1, 0, 1),
    "mixed": (2, 2, 4, 4),
}
DEFAULT_HBM_GB = 64.0  # [U] Ascend 910B HBM per card (64 GB variant; 32 GB parts exist)


class SizingError(ValueError):
    """A request that cannot be sized (unknown server, bad numbers)."""


def _schema_default(*path: str) -> str:
    node = SCHEMA
    for key in path:
        node = node["properties"][key]
    return node["default"]


def default_leaf() -> str:
    return _schema_default("networks", "parameter", "leaf", "model")


def memory_bytes(params: float, precision: str) -> dict[str, float]:
    """Weights, gradients, master copy and optimizer moments of `params` parameters, in bytes."""
    w, g, master, moment = PRECISIONS[precision]
    return {
        "weights": params * w,
        "gradients": params * g,
        "master weights": params * master,
        "optimizer (Adam m, v)": params * 2 * moment,
    }


@dataclass(frozen=True, slots=True)
class Sizing:
    params: float
    tokens: float
    days: float
    mfu: float
    card_tflops: float
    overhead: float
    server: str
    leaf: str
    precision: str
    hbm_gb: float
    supernode: int  # servers per supernode, 0 = none
    npus: int  # cards per server
    servers_per_leaf: int
    server_rate: float  # catalog failures per server per year

    # --- the arithmetic, in the order it is printed ---
    @property
    def flops(self) -> float:
        return 6 * self.params * self.tokens

    @property
    def effective(self) -> float:
        """FLOP/s one card delivers."""
        return self.card_tflops * 1e12 * self.mfu

    @property
    def card_seconds(self) -> float:
        return self.flops / self.effective

    @property
    def card_days(self) -> float:
        return self.card_seconds / SECONDS_PER_DAY

    @property
    def cards_for_work(self) -> float:
        return self.card_days / self.days

    @property
    def cards_planned(self) -> int:
        return math.ceil(self.cards_for_work * self.overhead - 1e-9)

    @property
    def memory(self) -> float:
        return sum(memory_bytes(self.params, self.precision).values())

    @property
    def cards_for_memory(self) -> int:
        return math.ceil(self.memory / (self.hbm_gb * 1e9) - 1e-9)

    @property
    def unit(self) -> int:
        """Servers in the rounding unit: whole leaves, and whole supernodes when there are any."""
        if self.supernode:
            return math.lcm(self.servers_per_leaf, self.supernode)
        return self.servers_per_leaf

    @property
    def servers(self) -> int:
        need = max(self.cards_planned, self.cards_for_memory)
        servers = math.ceil(need / self.npus)
        return max(1, math.ceil(servers / self.unit)) * self.unit

    @property
    def cards(self) -> int:
        return self.servers * self.npus

    @property
    def interruptions_per_year(self) -> float:
        """Server failures alone (the catalog's rate); `wanka generate` adds the fabric."""
        return self.servers * self.server_rate

    def lines(self) -> list[str]:
        """The arithmetic, one step a line, so a reader can follow it."""
        e = self.effective
        out = [
            f"work        6 x N x D = 6 x {self.params:.3g} parameters x {self.tokens:.3g} tokens "
            f"= {self.flops:.3g} FLOPs",
            f"per card    {self.card_tflops:g} TFLOPS ({self.precision}) x MFU {self.mfu:g} = "
            f"{e / 1e12:g} TFLOPS effective = {e:.3g} FLOP/s",
            f"card time   {self.flops:.3g} / {e:.3g} = {self.card_seconds:.3g} card-seconds "
            f"= {self.card_days:,.0f} card-days (a card running 24 h)",
            f"cards       {self.card_days:,.0f} card-days / {self.days:g} days = "
            f"{self.cards_for_work:,.0f} cards at full load",
            f"overhead    x {self.overhead:g} (restarts after failures, checkpoints, idle time) "
            f"= {self.cards_planned:,} cards",
        ]
        parts = memory_bytes(self.params, self.precision)
        terms = " + ".join(f"{k} {_bytes(v)}" for k, v in parts.items() if v)
        per_param = sum(PRECISIONS[self.precision][:3]) + 2 * PRECISIONS[self.precision][3]
        out += [
            f"memory      {self.precision}: {terms} = {_bytes(self.memory)} "
            f"({per_param:g} B/parameter, before activations and buffers)",
            f"            / {self.hbm_gb:g} GB HBM per card = at least {self.cards_for_memory:,} "
            "cards to hold the model state",
        ]
        for name in PRECISIONS:
            if name != self.precision:
                out.append(
                    f"            ({name}: {_bytes(sum(memory_bytes(self.params, name).values()))})"
                )
        need = max(self.cards_planned, self.cards_for_memory)
        servers = math.ceil(need / self.npus)
        what = f"whole leaves of {self.servers_per_leaf} servers ({self.leaf})"
        if self.supernode:
            what = f"whole supernodes of {self.supernode} servers and {what}"
        out += [
            f"servers     {need:,} cards / {self.npus} per {self.server} = {servers:,} servers",
            f"rounded     up to {what}: {self.servers:,} servers = {self.cards:,} cards",
        ]
        if self.server_rate:
            rate = self.interruptions_per_year
            out.append(
                f"failures    {self.servers:,} servers x {self.server_rate:g}/year = {rate:,.0f} "
                f"interruptions a year ({rate / 365.25:,.3g} a day, one every "
                f"{HOURS_PER_YEAR / rate:,.3g} h) from servers alone; `wanka generate` writes "
                "the whole figure to files/failure-domains.md"
            )
        return out

    def blueprint_text(self, name: str, schema_ref: str, networks: dict | None = None) -> str:
        """The blueprint; `networks`: what choose() had to set beyond the defaults."""
        compute: dict = {"server": self.server, "cards": self.cards}
        if self.supernode:
            compute["supernode"] = {"servers": self.supernode}
        bp = {
            "apiVersion": "wanka/v1",
            "kind": "Cluster",
            "metadata": {
                "name": name,
                "description": f"Sized by wanka size: {self.params:.3g} parameters, "
                f"{self.tokens:.3g} tokens, {self.days:g} days",
            },
            "compute": compute,
            "networks": networks or {},
        }
        if self.leaf != default_leaf():
            bp["networks"].setdefault("parameter", {})["leaf"] = {"model": self.leaf}
        if not bp["networks"]:
            del bp["networks"]
        head = [
            f"# yaml-language-server: $schema={schema_ref}",
            f"# Sized by `wanka size`: {self.params:.3g} parameters x {self.tokens:.3g} tokens in "
            f"{self.days:g} days, {self.card_tflops:g} TFLOPS {self.precision} cards at MFU "
            f"{self.mfu:g}:",
            f"# {self.cards_for_work:,.0f} cards of work x {self.overhead:g} overhead = "
            f"{self.cards_planned:,}; memory floor {self.cards_for_memory:,} cards; rounded up to "
            f"{self.servers:,} servers.",
            "# Everything not written here is a default (models `wanka size` kept are printed with",
            "# their reasons): review zones, storage and pools.",
        ]
        body = yaml.safe_dump(bp, sort_keys=False, default_flow_style=False, width=100)
        return "\n".join(head) + "\n" + body


def _bytes(n: float) -> str:
    for unit, size in (("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if n >= size:
            return f"{n / size:,.3g} {unit}"
    return f"{n:,.0f} B"


def servers_per_leaf(catalog: Catalog, server: str, leaf: str) -> int:
    """Servers a single-rail leaf holds at 1:1 (host lanes / NPU ports per server)."""
    host = catalog.hosts[server]
    npu = host.port("npu")
    if npu is None:
        raise SizingError(f"--server: {server} has no NPU ports")
    if leaf not in catalog.switches:
        raise SizingError(f"--leaf: unknown leaf model {leaf!r} (see `wanka catalog`)")
    plan = leaf_port_plan(
        model=catalog.switches[leaf],
        down_speed=npu.speed,
        ratio=(1, 1),
        split="auto",
        peer_links=0,
        uplinks=None,
        where=(),
    )
    per = len(plan.lanes) // npu.count
    if per < 1:
        raise SizingError(
            f"--leaf: {leaf} has {len(plan.lanes)} host lanes, {server} needs {npu.count}"
        )
    return per


def size(
    *,
    params: float,
    tokens: float,
    days: float,
    mfu: float,
    card_tflops: float = 300.0,
    overhead: float = 1.3,
    server: str = "atlas-800t-a2",
    leaf: str | None = None,
    precision: str = "bf16",
    hbm_gb: float = DEFAULT_HBM_GB,
    supernode: int = 0,
    catalog: Catalog | None = None,
) -> Sizing:
    catalog = catalog or build_catalog()
    for label, value in (
        ("--params", params),
        ("--tokens", tokens),
        ("--days", days),
        ("--card-tflops", card_tflops),
        ("--hbm-gb", hbm_gb),
    ):
        if not value > 0 or math.isinf(value):
            raise SizingError(f"{label} must be a positive number, not {value:g}")
    if not 0 < mfu <= 1:
        raise SizingError(f"--mfu is a fraction of peak: 0 < mfu <= 1, not {mfu:g}")
    if not 1 <= overhead < math.inf:
        raise SizingError(f"--overhead is a factor >= 1, not {overhead:g}")
    if precision not in PRECISIONS:
        raise SizingError(f"--precision: one of {', '.join(PRECISIONS)}")
    host = catalog.hosts.get(server)
    if host is None or host.kind != Role.NPU_SERVER:
        choices = ", ".join(n for n, h in catalog.hosts.items() if h.kind == Role.NPU_SERVER)
        raise SizingError(f"--server: unknown NPU server {server!r}; one of {choices}")
    if supernode < 0:
        raise SizingError("--supernode is a number of servers")
    leaf = leaf or default_leaf()
    sizing = Sizing(
        params=params,
        tokens=tokens,
        days=days,
        mfu=mfu,
        card_tflops=card_tflops,
        overhead=overhead,
        server=server,
        leaf=leaf,
        precision=precision,
        hbm_gb=hbm_gb,
        supernode=supernode,
        npus=host.npus,
        servers_per_leaf=servers_per_leaf(catalog, server, leaf),
        server_rate=host.failure_rate_per_year,
    )
    try:  # every figure once: one out of floating-point range is refused here, in words
        sizing.lines()
    except (OverflowError, ValueError, ZeroDivisionError) as error:
        raise SizingError(
            f"these inputs give figures out of range ({error}); "
            "check the orders of magnitude of --params, --tokens and --days"
        ) from None
    return sizing
