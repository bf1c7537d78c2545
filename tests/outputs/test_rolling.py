"""Rolling batches by failure domain, read from the inventory as Ansible batches it: with
`serial: N`, batch k of a play is hosts [kN, (k+1)N) of its group in hosts.yml order."""

from __future__ import annotations

import re

import pytest
import yaml

from tests.support.examples import generated
from tests.support.output_readers import YAML, Outputs

PEER = re.compile(r"^ description peer-link to (\S+)$", re.M)


def _outputs(name: str) -> Outputs:
    return Outputs({f.path: f.data for f in generated(name).files})


def _order(o: Outputs, group: str) -> list[str]:
    return list(yaml.load(o.text("hosts.yml"), Loader=YAML)["all"]["children"][group]["hosts"])


def _batches(hosts: list[str], size: int) -> list[list[str]]:
    return [hosts[i : i + size] for i in range(0, len(hosts), size)]


@pytest.mark.parametrize("name", ["pod-128.yaml", "cluster-1k.yaml"])  # legacy: one leaf group
def test_batches_never_hold_two_servers_of_one_leaf_group_while_the_size_allows(name):
    o = _outputs(name)
    leaf_groups = {g: hosts for g, hosts in o.groups.items() if g.startswith("leaf_")}
    domain = {
        h: frozenset(g for g, hosts in leaf_groups.items() if h in hosts)
        for h in o.groups["npu_servers"]
    }
    order = _order(o, "npu_servers")
    assert sorted(order) == sorted(o.groups["npu_servers"])
    domains = set(domain.values())
    assert len(domains) > 1
    for size in range(2, len(domains) + 1):
        for batch in _batches(order, size):
            assert len({domain[h] for h in batch}) == len(batch), (size, batch)


@pytest.mark.parametrize("name", ["pod-128.yaml", "cluster-1k.yaml"])
def test_batches_never_hold_both_members_of_an_m_lag_pair(name):
    o = _outputs(name)
    peer = {sw: m.group(1) for sw, text in o.configs.items() for m in PEER.finditer(text)}
    assert peer, "the example has M-LAG pairs"
    groups = {g for g in o.groups if g.endswith(("_leaves", "_access", "_spines", "_cores"))}
    checked = 0
    for group in groups:
        order = _order(o, group)
        pairs = {frozenset((a, b)) for a, b in peer.items() if a in order and b in order}
        for size in range(1, len(pairs) + 1):
            for batch in _batches(order, size):
                assert not any(p <= set(batch) for p in pairs), (group, size, batch)
                checked += 1
    assert checked
