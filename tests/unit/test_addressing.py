"""Every interface gets a unique address inside its plane's pool and its leaf's subnet."""

from __future__ import annotations

import ipaddress
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from generator.model import ip


def _net(pool) -> ipaddress.IPv4Network:
    return ipaddress.IPv4Network(f"{ip(pool.network)}/{pool.prefix}")


def test_addresses_unique_and_inside_their_subnet_and_pool(example):
    cluster = example.cluster
    pools = {p.plane: _net(p) for p in cluster.pools}
    subnets = {(s.plane, s.name): s for s in cluster.subnets}
    seen = Counter()
    for a in cluster.addresses:
        sn = subnets[(a.plane, a.subnet)]
        net = ipaddress.IPv4Network(f"{ip(sn.network)}/{sn.prefix}")
        addr = ipaddress.IPv4Address(a.ip)
        assert addr in net and addr != net.network_address and addr != net.broadcast_address
        assert a.gateway == sn.gateway and a.ip != sn.gateway
        assert net.subnet_of(pools[a.plane])
        seen[a.ip] += 1
    for link in cluster.links:
        if link.a_ip:
            assert link.b_ip == link.a_ip + 1 and link.a_ip % 2 == 0 and link.prefix == 31
            seen[link.a_ip] += 1
            seen[link.b_ip] += 1
    for d in cluster.devices:
        if d.loopback:
            seen[d.loopback] += 1
    for s in cluster.subnets:
        seen[s.gateway] += 1
    assert [ip(x) for x, n in seen.items() if n > 1] == []


def test_pools_do_not_overlap(example):
    nets = [_net(p) for p in example.cluster.pools]
    for i, a in enumerate(nets):
        for b in nets[i + 1 :]:
            assert not a.overlaps(b), (a, b)


def test_every_npu_port_has_an_address_on_the_leaf_it_is_cabled_to(example):
    cluster = example.cluster
    leaf_of = {
        (link.a_device, link.a_port): link.b_device
        for link in cluster.links
        if link.plane == "parameter" and link.kind == "host"
    }
    addr = {(a.device, a.port): a for a in cluster.addresses if a.plane == "parameter"}
    owners = {s.name: s.owners for s in cluster.subnets if s.plane == "parameter"}
    assert set(addr) == set(leaf_of)
    for key, leaf in leaf_of.items():
        assert leaf in owners[addr[key].subnet]


def test_routed_switches_have_asns_and_loopbacks(example):
    cluster = example.cluster
    for d in cluster.devices:
        if d.plane in ("parameter", "storage") and d.role in ("leaf", "spine", "core"):
            assert d.asn >= 4200000000 and d.loopback, d.name
    leaf_asns = [d.asn for d in cluster.devices if d.role == "leaf" and d.plane == "parameter"]
    assert len(set(leaf_asns)) == len(leaf_asns)


def test_addresses_are_stable_when_servers_are_added(tmp_path):
    """Growth appends: the 128-card pod's addresses and cables survive in a 256-card pod."""
    from pathlib import Path

    from generator import pipeline

    root = Path(__file__).resolve().parents[2]
    text = (root / "blueprints" / "pod-128.yaml").read_text().replace("cards: 128", "cards: 256")
    bigger = tmp_path / "pod-256.yaml"
    bigger.write_text(text)
    small = pipeline.run(root / "blueprints" / "pod-128.yaml", emit=False).cluster
    big = pipeline.run(bigger, emit=False).cluster
    big_addr = {(a.device, a.port): a.ip for a in big.addresses if a.plane == "parameter"}
    for a in small.addresses:
        if a.plane == "parameter":
            assert big_addr[(a.device, a.port)] == a.ip
    big_links = {
        (x.a_device, x.a_port): (x.b_device, x.b_port, x.cable_id)
        for x in big.links
        if x.plane == "parameter" and x.kind == "host"
    }
    for x in small.links:
        if x.plane == "parameter" and x.kind == "host":
            assert big_links[(x.a_device, x.a_port)] == (x.b_device, x.b_port, x.cable_id)


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_ip_prints_what_the_standard_library_prints(value):
    assert ip(value) == str(ipaddress.IPv4Address(value))
