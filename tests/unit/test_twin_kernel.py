"""generator/twin/kernel.py: the kernel settings the twin's plan gives each namespace (no root:
the plan only). tests/consumers/test_twin_ospf.py runs the same build in real namespaces."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.cli import main
from generator.twin import kernel, plan, routing
from tests.support.examples import ROOT

OSPF_192 = ROOT / "tests" / "data" / "blueprints" / "ospf-192.yaml"
POD = ROOT / "inventories" / "pod-128"


@pytest.fixture(scope="module")
def ospf_192(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("ospf") / "ospf-192"
    assert main(["generate", str(OSPF_192), "-o", str(folder), "-q"]) == 0
    return folder


def _ospf_interfaces(cfg: Path) -> int:
    """OSPF interfaces of a rendered config, as a reader of the file counts them."""
    return len(re.findall(r"^ ospf network-type p2p$", cfg.read_text(), re.M))


def test_a_spine_with_more_than_20_ospf_links_may_join_both_groups_on_each(ospf_192):
    p = plan.plan(ospf_192, {})
    routing.apply(p)
    spines = sorted((ospf_192 / "files" / "switches").glob("par-spine-*.cfg"))
    assert spines
    for cfg in spines:
        links = _ospf_interfaces(cfg)
        assert links > 20, f"{cfg.name}: {links} OSPF links: the build no longer meets the case"
        ns = p.namespaces[plan.ns_name(cfg.stem)]
        assert "ospfd" in ns.daemons
        room = int(ns.sysctls[kernel.IGMP])
        # AllSPFRouters on each, AllDRouters where DR/BDR: two joins per interface, one socket
        assert room >= 2 * links > kernel.IGMP_DEFAULT, (cfg.name, room, links)


def test_every_router_namespace_has_room_for_its_interfaces_and_never_less_than_linux():
    p = plan.plan(POD, {})
    ends: dict[str, int] = {}
    for link in p.links:
        for ns, _ in (link.a, link.b):
            ends[ns] = ends.get(ns, 0) + 1
    for ns in p.namespaces.values():
        if ns.kind in ("switch", "router", "firewall"):
            room = int(ns.sysctls[kernel.IGMP])
            assert room >= kernel.IGMP_DEFAULT + 2 * ends.get(ns.name, 0), ns.name
        else:  # hosts, NPUs, BMCs run no routing daemon: the kernel's default stays
            assert kernel.IGMP not in ns.sysctls, ns.name


def test_the_room_stops_at_the_bound_ip_sysctl_gives():
    p = plan.Plan(Path("."))
    big = p.ns(plan.ns_name("big-spine"), "big-spine", "switch")
    peer = p.ns(plan.ns_name("leaves"), "leaves", "switch")
    p.links = [
        plan.Link((big.name, f"p{i}"), (peer.name, f"q{i}"), f"C{i}", "parameter", i)
        for i in range(3000)
    ]
    kernel.multicast_room(p)
    assert big.sysctls[kernel.IGMP] == str(kernel.IGMP_MAX) == "5459"
