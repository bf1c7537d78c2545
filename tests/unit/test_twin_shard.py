"""generator/twin/shard.py: a rendered build cut into shards that fit a memory budget, and the BGP
speakers at each shard's boundary (plans only: no root, nothing runs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from generator.twin import plan, prove, routing, shard
from tests.support.examples import render_example

ROOT = Path(__file__).resolve().parents[2]
CLUSTER = ROOT / "inventories" / "cluster-1k"
CAPTURE = ROOT / "tests" / "data" / "captures" / "frr-show-ip-bgp-json.json"


@pytest.fixture(scope="module")
def cluster():
    p = plan.plan(CLUSTER, {})
    routing.apply(p)
    return p


def _devices(p):
    return {n for n, ns in p.namespaces.items() if ns.kind in shard.DEVICE_KINDS}


def _covered(p, lay):
    """Every device namespace is inside at least one shard, and each shard fits the budget."""
    inside = set().union(*(s.interior for s in lay.shards))
    assert inside == _devices(p)
    assert all(s.mib <= lay.budget for s in lay.shards)


def _uncut(p, lay):
    """A cable that is not an eBGP session (OSPF, static, VLAN) never crosses a shard's edge."""
    for i, link in enumerate(p.links):
        a, b = link.a[0], link.b[0]
        if i in lay.bgp_links or a not in lay.unit or b not in lay.unit:
            continue
        assert lay.unit[a] == lay.unit[b], link
        for s in lay.shards:
            assert (a in s.interior) == (b in s.interior), (s.number, link)


def test_cluster_1k_within_a_few_gib_is_one_shard_the_unsharded_twin(cluster):
    lay = shard.layout(cluster, 100_000)
    assert len(lay.shards) == 1 and lay.shards[0].speakers == 0
    assert lay.shards[0].routers == sum(1 for ns in cluster.namespaces.values() if ns.frr) == 77
    _covered(cluster, lay)


def test_cluster_1k_in_1500_mib_cuts_the_parameter_plane_at_bgp_sessions_only(cluster):
    lay = shard.layout(cluster, 1500)
    _covered(cluster, lay)
    _uncut(cluster, lay)
    assert len(lay.shards) == 3
    cut = [s for s in lay.shards if s.speakers]
    assert len(cut) == 2  # the spines with 22 leaves, the spines with the other 10
    spines = {plan.ns_name(f"par-spine-00{k}") for k in range(1, 5)}
    assert all(spines <= s.interior for s in cut)
    leaves = [{n for n in s.interior if "par-leaf" in n and "." not in n} for s in cut]
    assert not leaves[0] & leaves[1] and len(leaves[0] | leaves[1]) == 32
    assert [s.speakers for s in cut] == [10, 22]  # the leaves of the other shard, as speakers
    # the OSPF planes with the border and every management VPN stay whole, with storage merged
    ospf = [s for s in lay.shards if plan.ns_name("rtr-01") in s.interior]
    assert len(ospf) == 1 and plan.ns_name("biz-leaf-0001") in ospf[0].interior
    assert plan.ns_name("par-leaf-0001", "_management_vpn_") in ospf[0].interior
    assert plan.ns_name("sto-spine-001") in ospf[0].interior


def test_a_budget_below_what_cannot_be_cut_is_refused_naming_it(cluster):
    # the four spines with their 128 sessions each, and every leaf a speaker: about 1,184 MiB
    with pytest.raises(shard.TooLarge, match=r"4 routers that cannot be cut \(par-spine-001 "
                       r"\.\.\. par-spine-004\) need about 1,184 MiB, over the 1,000 MiB"):  # fmt: skip
        shard.layout(cluster, 1000)


def test_a_boundary_speaker_announces_what_its_device_held_with_its_path(cluster):
    lay = shard.layout(cluster, 1500)
    first = lay.shards[0]
    outside = sorted(
        d for d in cluster.devices
        if d.startswith("par-leaf") and plan.ns_name(d) not in first.interior
    )[0]  # fmt: skip
    leaf = cluster.devices[outside]
    own = leaf.bgp.networks[0]
    spine_as = str(cluster.devices["par-spine-001"].bgp.asn)
    held = [
        shard.Route(str(own), "", "IGP"),
        shard.Route("10.9.0.0/24", "4200001005", "incomplete"),
        shard.Route("10.9.2.0/24", "4200001007 4200001008", "EGP"),
        shard.Route("10.9.1.0/24", f"{spine_as} 4200001006", "IGP"),  # every peer would drop it
    ]
    q = shard.subplan(cluster, lay, first, {outside: held})
    ns = q.namespaces[plan.ns_name(outside)]
    assert ns.kind == shard.BOUNDARY and ns.daemons == ("bird",)
    conf = ns.bird
    peers = [str(peer) for peer, _, _ in leaf.bgp.peers]
    for peer in peers:  # its sessions toward the spines of the shard, as the leaf's AS
        assert f"  local as {leaf.bgp.asn};\n  neighbor {peer} as {spine_as};" in conf
    assert conf.count("  ipv4 { import none; export all; };") == len(peers)  # keeps nothing heard
    assert f"  route {own} blackhole;\n" in conf  # its own: no path, origin IGP
    # BIRD's prepend puts an AS in front: the held path's last AS first
    assert (
        "  route 10.9.0.0/24 blackhole { bgp_path.prepend(4200001005); "
        "bgp_origin = ORIGIN_INCOMPLETE; };"
    ) in conf
    assert (
        "  route 10.9.2.0/24 blackhole { bgp_path.prepend(4200001008); "
        "bgp_path.prepend(4200001007); bgp_origin = ORIGIN_EGP; };"
    ) in conf
    assert "10.9.1.0/24" not in conf
    # the stand-in holds the leaf's addresses on its cables to the spines, and nothing else
    addresses = [c for c in ns.commands if c.startswith("address add")]
    assert len(addresses) == len(peers)
    assert not q.devices.keys() - {cluster.namespaces[n].device for n in first.interior}
    for link in q.links:
        assert link.a[0] in q.namespaces and link.b[0] in q.namespaces


def test_the_best_routes_are_read_from_frr_s_own_json():
    """A capture of FRR 8.4.4 (Debian 12) `show ip bgp json` on cluster-1k's par-leaf-0001,
    trimmed to three prefixes: its own subnet and two learned over four spines (ECMP)."""
    routes = shard.captured(json.loads(CAPTURE.read_text()))
    assert [r.prefix for r in routes] == ["10.64.0.0/26", "10.64.0.64/26", "10.64.0.128/26"]
    own = [r for r in routes if r.path == ""]
    learned = [r for r in routes if r.path]
    assert own and learned
    assert [r.path for r in learned] == ["4200000001 4200001001", "4200000001 4200001002"]
    assert {r.origin for r in routes} == {"IGP"}


@pytest.fixture(scope="module")
def w10k(tmp_path_factory):
    folder = render_example(tmp_path_factory, "shard10k", "wanka-10k")
    p = plan.plan(folder, {}, bounded=False)
    routing.apply(p)
    return folder, p


@pytest.mark.slow
def test_wanka_10k_is_cut_in_pods_each_with_its_spines_and_the_cores(w10k):
    folder, p = w10k
    with pytest.raises(plan.Refused, match="one twin makes at most"):
        plan.plan(folder, {})
    lay = shard.layout(p, 6000)
    _covered(p, lay)
    _uncut(p, lay)
    public = {plan.ns_name(d) for d in p.devices}  # not the management VPNs (one OSPF unit)
    cores = {n for n in public if "par-core" in n}
    for k in range(1, 6):  # a pod (its leaves and 16 spines) is never cut at 6,000 MiB
        spines = {n for n in public if f"par-pod0{k}-spine" in n}
        home = [s for s in lay.shards if spines & s.interior]
        assert len(spines) == 16 and len(home) == 1 and spines <= home[0].interior
        # the pod and all 32 cores are over 6,000 MiB: the cores run apart, speakers at its edge
        assert home[0].speakers >= 32 and not cores <= home[0].interior
    assert sum(1 for s in lay.shards if s.interior & cores) >= 2  # 32 cores: 5,120 sessions
    # the shards holding cores run last in a pass: the next pass's pods hear every pod through them
    for budget in (6000, 11000):  # the cores alone; the cores with a pod (the default on 24 GiB)
        lay = shard.layout(p, budget)
        hubs = [s.number for s in lay.shards if s.interior & cores]
        assert hubs and min(hubs) > max(s.number for s in lay.shards if s.number not in hubs)


@pytest.mark.slow
def test_the_npu_ring_of_a_shard_of_two_pods_stays_inside_each_pod(w10k):
    """At 8,600 MiB pods 2 and 5 share a shard and meet only at the cores, which run elsewhere
    (their speakers forward nothing): one ring per pod, every pair joined by the pod's spines."""
    _, p = w10k
    lay = shard.layout(p, 8600)
    two = next(s for s in lay.shards if "par-pod02-spine 16, par-pod05-spine 16" in s.label)
    q = shard.subplan(p, lay, two, {})
    leaves = sorted(d for d in q.devices if d.startswith("par-leaf"))
    rings = prove.rings(q, leaves)
    assert (
        sorted(len(r) for r in rings) == [32, 72] and sorted(x for r in rings for x in r) == leaves
    )
    for ring in rings:
        spines = {
            frozenset(lk.b[0] for lk in q.links if lk.a[0] == plan.ns_name(leaf) and "spine" in lk.b[0])
            | frozenset(lk.a[0] for lk in q.links if lk.b[0] == plan.ns_name(leaf) and "spine" in lk.a[0])
            for leaf in ring
        }  # fmt: skip
        assert len(spines) == 1 and len(next(iter(spines))) == 16  # one pod's 16 spines


@pytest.fixture(scope="module")
def pod():
    p = plan.plan(ROOT / "inventories" / "pod-128", {})
    routing.apply(p)
    return p


def test_a_unit_over_the_budget_is_cut_between_its_ospf_domains_only(pod):
    """pod-128's management VPNs with the business, in-band, out-of-band and border OSPF domains
    are one unit of about 324 MiB; in 300 it is cut at cables between two FRR namespaces that no
    OSPF adjacency crosses (static next hops): every OSPF adjacency stays inside one shard, a
    management VPN with its out-of-band access switch, and the stand-in of a cut cable's far end
    holds its address on it."""
    whole = shard.layout(pod, 400)
    assert not whole.quiet
    lay = shard.layout(pod, 300)
    _covered(pod, lay)
    assert lay.quiet and not lay.quiet & lay.bgp_links
    ospf = shard.ospf_links(pod)
    assert ospf and not ospf & lay.quiet
    for i in ospf:  # an adjacency is never cut
        a, b = pod.links[i].a[0], pod.links[i].b[0]
        assert all((a in s.interior) == (b in s.interior) for s in lay.shards), pod.links[i]
    oob = next(s for s in lay.shards if plan.ns_name("inb-core-001") in s.interior)
    assert plan.ns_name("biz-spine-001") not in oob.interior  # the unit is cut
    cut = [i for i in lay.quiet
           if (pod.links[i].a[0] in oob.interior) != (pod.links[i].b[0] in oob.interior)]  # fmt: skip
    assert cut
    q = shard.subplan(pod, lay, oob, {})
    held = 0
    for i in cut:
        link = pod.links[i]
        far = link.b if link.a[0] in oob.interior else link.a
        ns = q.namespaces[far[0]]
        assert ns.kind == shard.BOUNDARY and not ns.frr
        mine = [c for c in pod.namespaces[far[0]].commands
                if c.startswith("address add") and c.endswith(f" dev {far[1]}")]  # fmt: skip
        assert all(c in ns.commands for c in mine)
        held += len(mine)
    assert held  # a firewall's address on its static route's cable to an in-band core
    vpn = [k for k in pod.links if ".management_vpn" in k.a[0] + k.b[0]
           and k.a[0] in lay.unit and k.b[0] in lay.unit]  # fmt: skip
    assert len(vpn) > 20  # a management VPN runs with the access switch it is cabled to
    for link in vpn:
        for s in lay.shards:
            assert (link.a[0] in s.interior) == (link.b[0] in s.interior), link
