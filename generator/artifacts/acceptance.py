"""files/acceptance/plan.yml: the HCCL Test runs the npu_acceptance role makes, per scope, each
with the bus bandwidth it must reach and how that number was computed (the model's Acceptance).

One compact file: the servers are listed once, under their leaf; a scope names its units by
leaves, and the role writes each run's MPI hostfile when it runs it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

from generator.artifacts import OutputFile, emitter
from generator.model import Cluster
from generator.structured_yaml import line
from generator.vocab import ScopeKind

HEADER = """\
# Acceptance plan of {name}: HCCL Test at each scope of the topology (generated; do not edit).
# Run it with: ansible-playbook -i hosts.yml playbooks/acceptance.yml
# HCCL Test prints ALGORITHM bandwidth (alg_bandwidth, "GB/s" = 2^30 bytes/s: CANN "HCCL
# Performance Tester" result description, HCCLpertest_16_0006). The role converts it to bus
# bandwidth in 10^9 bytes/s (NCCL-tests convention):
#   all_reduce busbw = algbw x 2(n-1)/n      all_gather busbw = algbw x (n-1)/n     (n ranks)
# and compares it, at the largest size (-e), with its pass threshold: the prediction's, p5 x
# (1 - margin) per scope and single failure, when `wanka predict <this folder> --write` wrote
# <this folder>.site/acceptance/expected.yml (the role then reports measured/predicted too);
# else expected_busbw_gbytes_s below, the ceiling (efficiency x the port or leaf bound).
# Units: `server` runs once on every server, `leaf` once per access unit (leaf or rail group),
# `pod`/`supernode`/`cluster` once per listed group, `leaf-pair` once per pair of neighbouring
# leaves (a leaf whose two pairs are both slow is the bad one).
"""


def plan(cluster: Cluster) -> dict[str, Any]:
    a = cluster.acceptance
    scopes = []
    for s in a.scopes:
        entry: dict[str, Any] = {
            "name": s.name,
            "kind": str(s.kind),  # plain text: yaml.safe_dump writes no StrEnum
            "op": s.op,
            "tiers": s.tiers,
            "ranks": s.ranks,
            "bound_gbytes_s": s.bound_gbytes_s,
            "expected_busbw_gbytes_s": s.expected_busbw,
            "formula": s.formula,
            "command": a.command(s),
        }
        if s.kind == ScopeKind.SERVER:
            entry["units"] = "every server"
        else:
            entry["units"] = [{"name": n, "leaves": list(ls)} for n, ls in s.units]
        scopes.append(entry)
    return {
        "cluster": cluster.name,
        "efficiency": a.efficiency,
        "ranks_per_server": a.ranks_per_server,
        "judged_at_bytes": a.max_bytes,
        "batch": a.batch,
        "checklist": {
            "checkpoint_write_gbps": a.checkpoint_write_gbps,
            "idle_power_max_w": a.idle_power_max_w,
            "compile_cache": dict(a.compile_cache),
        },
        "scopes": scopes,
        "leaves": {n: list(ss) for n, ss in a.leaves},
    }


def _text(data: dict[str, Any]) -> str:
    head = {k: v for k, v in data.items() if k not in ("scopes", "leaves")}
    out = [yaml.safe_dump(head, sort_keys=False, width=1000), "scopes:\n"]
    for s in data["scopes"]:
        units = s["units"]
        fields = {k: v for k, v in s.items() if k != "units"}
        body = yaml.safe_dump([fields], sort_keys=False, width=1000)
        out.append(body)
        if isinstance(units, str):
            out.append(f"  units: {units}\n")
        else:
            out.append("  units:\n")
            out += [f"  - {line(u)}\n" for u in units]
    out.append("leaves:\n")
    out += [f"  {name}: {line(servers)}\n" for name, servers in data["leaves"].items()]
    return "".join(out)


@emitter(late=True)
def emit(cluster: Cluster, analysis: object = None) -> Iterator[OutputFile]:
    if not cluster.acceptance.scopes:
        return
    text = HEADER.format(name=cluster.name) + _text(plan(cluster))
    yield OutputFile("files/acceptance/plan.yml", text.encode())
