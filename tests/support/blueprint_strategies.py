"""Hypothesis strategies over VALID blueprints, and the pipeline run that turns one into files.

Every blueprint drawn here is one the pipeline accepts (schema, semantics and design checks), so
a property test sees a generated cluster every time, not a rejection. Sizes stay small (16 to
2,048 cards, mostly under 256) so that hundreds of clusters generate in CI within a minute or two; the
shapes vary where outputs could disagree: server model (A2, legacy 910, A3 supernode node), rail
mode, 2 or 3 tiers, M-LAG on or off, BGP or OSPF, management node mixes (including no monitoring
node at all), storage present or not, dedicated or shared storage plane, hostname patterns.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from hypothesis import strategies as st

# Management node mixes: the schema default, minimal ones, and roles without a monitoring or
# controller node (where NTP/syslog servers must still come from somewhere, or nowhere, alike).
MANAGEMENT_MIXES = (
    None,  # the schema default {controller: 3, monitoring: 2, bastion: 2}
    {"ops": 2},
    {"controller": 1},
    {"controller": 1, "monitoring": 1, "bastion": 1},
    {"monitoring": 2},
    {"bastion": 1, "ops": 1},
    {"controller": 3, "monitoring": 2, "bastion": 2, "ops": 1},
)


@dataclass(frozen=True, slots=True)
class Drawn:
    """A blueprint as YAML text, with the shape it was drawn for (for failure messages)."""

    text: str
    shape: dict[str, Any]

    def __repr__(self) -> str:  # Hypothesis prints this for a falsifying example
        return f"Drawn(shape={self.shape!r})\n--- blueprint ---\n{self.text}"


def _dump(bp: dict[str, Any]) -> str:
    return yaml.safe_dump(bp, sort_keys=False, default_flow_style=False)


@st.composite
def _a2_or_legacy(draw, small: bool = False) -> dict[str, Any]:
    legacy = draw(st.integers(0, 5)) == 0
    server = "atlas-800-9000" if legacy else "atlas-800t-a2"
    rail = draw(st.sampled_from(("single", "multi")))
    # mostly up to 32 servers (256 cards), some up to 160, rarely 256 (2,048 cards)
    size = draw(st.integers(0, 19))
    servers = draw(
        st.integers(2, 32) if size < 14 else st.integers(33, 160) if size < 19 else st.just(256)
    )
    servers = min(servers, 16) if small else servers
    parameter: dict[str, Any] = {"rail": rail}
    if legacy:
        parameter["leaf"] = {"model": "ce8850-64cq-ei"}
        parameter["spine"] = {"model": "ce8850-64cq-ei"}
        tiers = "auto"
    else:
        parameter["leaf"] = {"model": "ce9860-4c-ei"}
        spine = draw(st.sampled_from(("ce9860-4c-ei", "ce16804", "ce16808")))
        parameter["spine"] = {"model": spine}
        tiers = draw(st.sampled_from(("auto", 2, 3)))
        if tiers == 2 and spine == "ce9860-4c-ei":
            servers = min(servers, 128)  # 32 spine ports: at most 32 leaves of 4 servers
        if tiers == 3:
            parameter["core"] = {"model": draw(st.sampled_from(("ce9860-4c-ei", "ce16804")))}
    if tiers != "auto":
        parameter["tiers"] = tiers
    parameter["oversubscription"] = draw(st.sampled_from(("1:1", "1:1", "2:1")))
    compute: dict[str, Any] = {"server": server, "servers": servers}
    training: dict[str, Any] = {}
    if legacy:
        training = {"cooling": "air", "rack": {"servers": 4, "power_kw": 20}}
    return {"compute": compute, "parameter": parameter, "training": training, "legacy": legacy}


@st.composite
def _superpod(draw, small: bool = False) -> dict[str, Any]:
    per = draw(st.sampled_from((4, 8, 12, 16) if small else (4, 8, 12, 16, 48)))
    servers = per * draw(
        st.integers(1, 1 if small else 3)
    )  # whole supernodes (the schema refuses a partial one)
    parameter = {
        "rail": "single",
        "leaf": {"model": "ce9860-4c-ei", "split": "2x200GE"},  # a 400GE port per NPU: its 2 dies
        "spine": {"model": draw(st.sampled_from(("ce9860-4c-ei", "ce16804", "ce16808")))},
    }
    return {
        "compute": {
            "server": "atlas-900-a3-superpod-node",
            "servers": servers,
            "supernode": {"servers": per},
        },
        "parameter": parameter,
        "training": {"rack": {"servers": 4, "power_kw": 35}},
        "legacy": False,
    }


@st.composite
def valid_blueprints(draw, small: bool = False) -> Drawn:
    """One blueprint the pipeline generates, as YAML text (`small`: at most 16 servers)."""
    core = draw(st.one_of(_a2_or_legacy(small), _a2_or_legacy(small), _superpod(small)))
    name = draw(st.from_regex(r"[a-z][a-z0-9]{0,8}(-[a-z0-9]{1,6})?", fullmatch=True))
    compute = dict(core["compute"])
    if draw(st.booleans()):
        compute["hostname"] = draw(
            st.sampled_from(("npu-{index:04d}", "node{index:05d}", "gpu-{index}"))
        )
        compute["index_start"] = draw(st.sampled_from((0, 1, 100)))
    if "supernode" not in compute and draw(st.booleans()):
        servers = compute.pop("servers")
        compute["cards"] = servers * 8

    parameter = dict(core["parameter"])
    parameter["routing"] = {"protocol": draw(st.sampled_from(("bgp", "ospf")))}

    zones: dict[str, Any] = {}
    if core["training"]:
        zones["training"] = core["training"]
    mix = draw(st.sampled_from(MANAGEMENT_MIXES))
    if mix is not None:
        zones["management"] = {"nodes": mix}
    storage_count = draw(st.sampled_from((0, 2, 3, 4, 6)))
    shared = core["legacy"] and draw(st.booleans())
    zones["storage"] = {
        "nodes": {"count": storage_count},
        "access": "nfs" if shared else "dpc",
    }
    networks: dict[str, Any] = {"parameter": parameter}
    mlag = draw(st.booleans())
    networks["business"] = {"leaf": {"model": "ce6865-48s8cq-ei", "mlag": mlag}}
    if shared:
        networks["storage"] = {"mode": "shared"}

    bp: dict[str, Any] = {
        "apiVersion": "wanka/v1",
        "kind": "Cluster",
        "metadata": {"name": name},
        "compute": compute,
        "zones": zones,
        "networks": networks,
    }
    shape = {
        "server": compute["server"],
        "servers": compute.get("servers", compute.get("cards", 0) // 8),
        "rail": parameter["rail"],
        "tiers": parameter.get("tiers", "auto"),
        "routing": parameter["routing"]["protocol"],
        "mlag": mlag,
        "management": mix,
        "storage": storage_count,
        "shared_storage": shared,
    }
    return Drawn(_dump(bp), shape)


def run_pipeline(text: str):
    """pipeline.Result of a blueprint given as text (written to a temporary file, since the
    loader reads a path and locates errors in it)."""
    from generator import parallel, pipeline

    with tempfile.TemporaryDirectory(prefix="wanka-bp-") as folder:
        path = Path(folder) / "blueprint.yaml"
        path.write_text(text)
        result = pipeline.run(path, emit=False)  # the files once, with the facts if it needs any
        if result.cluster.missing_facts:  # A3: the 1.2 rank table needs (synthetic) NPU facts
            from tests.support.npu_facts_fixture import write_facts

            facts = write_facts(result.cluster, Path(folder) / "npu-facts.yml")
            return pipeline.run(path, facts=facts)
        if not any(f.severity == "error" for f in result.findings):  # as pipeline.run does
            result.files = parallel.emit_all(result.cluster, result.analysis)
        return result


# --- hostile blueprints: a valid one, then mutated ---------------------------------------------

TEMPLATES = (
    "{{ lookup('pipe', 'touch /tmp/wanka-drawn-pwned') }}",
    "{% if true %}x{% endif %}",
    "{# c #}",
    "$(touch /tmp/wanka-drawn-pwned)",
    "`id`",
    "a; rm -rf /",
    "x\ny",
    "'\"",
)
HOSTILE_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.sampled_from((0, -1, 2**31, 2**63, 10**30)),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=24),
    st.text(st.characters(min_codepoint=0x80), min_size=1, max_size=12),  # unicode only
    st.sampled_from(TEMPLATES),
    st.sampled_from(("", " ", "..", "/", "a/../b", "0.0.0.0/0", "10.0.0.0/33", "\u202e", "é")),
)
HOSTILE_VALUES = st.recursive(
    HOSTILE_LEAVES,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=5,
)
MUTATIONS = ("replace", "delete", "extra", "template", "type")


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    out = [prefix] if prefix else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*prefix, i))
    return out


def _parent(bp: Any, path: tuple) -> Any:
    for part in path[:-1]:
        bp = bp[part]
    return bp


@st.composite
def hostile_blueprints(draw) -> Drawn:
    """A valid small blueprint with 1-3 mutations: a value replaced by a hostile one (wrong
    type, huge or negative number, NaN, unicode, a template or shell string), a key deleted,
    an extra key, a string turned into a template, a value wrapped in a list or mapping."""
    base = draw(valid_blueprints(small=True))
    bp = yaml.safe_load(base.text)
    done = []
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(bp)
        if not paths:
            break
        kind = draw(st.sampled_from(MUTATIONS))
        path = draw(st.sampled_from(paths))
        parent = _parent(bp, path)
        key = path[-1]
        if kind == "replace":
            parent[key] = draw(HOSTILE_VALUES)
        elif kind == "delete":
            del parent[key]
        elif kind == "extra":
            target = parent[key] if isinstance(parent[key], dict) else parent
            if isinstance(target, dict):
                target[draw(st.text(min_size=1, max_size=10))] = draw(HOSTILE_VALUES)
        elif kind == "template":
            old = parent[key]
            text = draw(st.sampled_from(TEMPLATES))
            parent[key] = f"{old}{text}" if isinstance(old, str) else text
        else:  # a scalar where a mapping is, or a mapping/list where a scalar is
            old = parent[key]
            parent[key] = [old] if not isinstance(old, (dict, list)) else draw(HOSTILE_LEAVES)
        done.append((kind, path))
    return Drawn(_dump_any(bp), {**base.shape, "mutations": done})


def _dump_any(bp: Any) -> str:
    return yaml.safe_dump(bp, sort_keys=False, default_flow_style=False, allow_unicode=True)
