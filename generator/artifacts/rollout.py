"""files/switch-rollout.yml: the batches day-2 switch changes run in (playbooks/switch-changes.yml
hands them to Ansible's `serial`).

Layer by layer (leaves and access switches first, then spines, then cores; within a role, plane by
plane), each batch takes at most MAX_LAYER_SHARE of its layer, never both members of an M-LAG pair
(the model's peer-links), and parameter-plane spines and cores go one at a time: a failed change
then never takes down a pair's redundancy or more than a share of a layer's capacity.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from generator import render
from generator.artifacts import OutputFile
from generator.model import Cluster
from generator.switch_ports import PLATFORMS

MAX_LAYER_SHARE = 0.25
ROLE_ORDER = ("leaf", "access", "spine", "core")
ONE_AT_A_TIME = {("parameter", "spine"), ("parameter", "core")}


def batches(cluster: Cluster) -> list[list[str]]:
    peer = {}
    for link in cluster.links:
        if link.kind == "peer-link":
            peer[link.a_device], peer[link.b_device] = link.b_device, link.a_device
    layers: dict[tuple[str, str], list[str]] = defaultdict(list)
    for d in cluster.devices:
        if d.platform in PLATFORMS:
            layers[(d.plane, d.role)].append(d.name)
    rank = {r: i for i, r in enumerate(ROLE_ORDER)}
    out: list[list[str]] = []
    for plane, role in sorted(layers, key=lambda k: (rank.get(k[1], len(rank)), k[1], k[0])):
        names = sorted(layers[(plane, role)])
        size = 1 if (plane, role) in ONE_AT_A_TIME else max(1, int(len(names) * MAX_LAYER_SHARE))
        mine: list[list[str]] = []
        for name in names:
            home = next(
                (b for b in mine if len(b) < size and peer.get(name) not in b),
                None,
            )
            if home is None:
                home = []
                mine.append(home)
            home.append(name)
        out.extend(mine)
    return out


def emit(cluster: Cluster, analysis: object = None) -> Iterator[OutputFile]:
    plan = batches(cluster)
    number = {name: i for i, b in enumerate(plan, start=1) for name in b}
    text = render.render(
        "ztp/switch-rollout.yml.j2",
        cluster=cluster.name,
        share=round(MAX_LAYER_SHARE * 100),
        batches=plan,
        batch_numbers=number,
    )
    yield OutputFile("files/switch-rollout.yml", text.encode())
