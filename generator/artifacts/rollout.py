"""files/switch-rollout.yml: the batches day-2 switch changes run in (playbooks/switch-changes.yml
hands them to Ansible's `serial`), as the analysis computed them (generator/analysis/rolling.py:
layer by layer, at most a share of a layer per batch, never both members of an M-LAG pair,
parameter-plane spines and cores one at a time).
"""

from __future__ import annotations

from collections.abc import Iterator

from generator import render
from generator.analysis import Analysis
from generator.analysis.rolling import MAX_LAYER_SHARE
from generator.artifacts import OutputFile, emitter
from generator.model import Cluster


@emitter(analysis=True, late=True)
def emit(cluster: Cluster, analysis: Analysis) -> Iterator[OutputFile]:
    plan = [list(b) for b in analysis.rolling.switch_batches]
    number = {name: i for i, b in enumerate(plan, start=1) for name in b}
    text = render.render(
        "ztp/switch-rollout.yml.j2",
        cluster=cluster.name,
        share=round(MAX_LAYER_SHARE * 100),
        batches=plan,
        batch_numbers=number,
    )
    yield OutputFile("files/switch-rollout.yml", text.encode())
