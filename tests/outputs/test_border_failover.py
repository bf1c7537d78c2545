"""A border router that loses its provider link stops attracting outbound traffic: the routers and
firewalls run OSPF area 0 on the links between them, each router advertises a default route only
while its own static default toward the provider is up (`default-route-advertise` without
`always`), and the firewalls' static defaults float above OSPF as a backup. (The twin's drill
`cut provider link` is the real-software proof: tests/consumers/test_twin.py.)"""

from __future__ import annotations

import csv
import ipaddress
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ("pod-128", "cluster-1k", "legacy-100card")
OSPF_EXTERNAL = 150  # VRP's default preference of OSPF external routes (the routers' defaults)


def _ospf(text: str) -> tuple[str, bool, set[ipaddress.IPv4Network]]:
    block = re.search(r"^ospf 1 router-id (\S+)\n((?: .*\n)+)", text, re.M)
    assert block, "no ospf process"
    body = block.group(2)
    nets = {
        ipaddress.ip_network(f"{a}/{w}")
        for a, w in re.findall(r"^  network (\S+) (\S+)$", body, re.M)
    }
    return block.group(1), " default-route-advertise\n" in body, nets


@pytest.mark.parametrize("name", EXAMPLES)
def test_routers_advertise_a_conditional_default_to_the_firewalls_over_every_cabled_link(name):
    folder = ROOT / "inventories" / name
    border = folder / "files" / "border"
    plan = list(csv.DictReader((folder / "files" / "ip-plan.csv").open()))
    routers = sorted(p.stem for p in border.glob("rtr-*.cfg"))
    firewalls = sorted(p.stem for p in border.glob("fw-*.cfg"))
    assert routers and firewalls
    ends: dict[str, set[str]] = {}  # each border subnet of the ip plan -> its devices
    for r in plan:
        if r["plane"] == "border":
            ends.setdefault(r["subnet"], set()).add(r["device"])
    links = {  # the firewall-router links: a subnet with a router and a firewall in it
        ipaddress.ip_network(net): devs
        for net, devs in ends.items()
        if devs & set(routers) and devs & set(firewalls)
    }
    ids = set()
    for dev in routers + firewalls:
        text = (border / f"{dev}.cfg").read_text()
        router_id, advertises, nets = _ospf(text)
        ids.add(router_id)
        assert advertises == (dev in routers), dev
        assert nets == {net for net, devs in links.items() if dev in devs}, dev
        for net in nets:  # each OSPF link is point-to-point, as on the switches
            mine = next(
                r["address"] for r in plan if r["device"] == dev and r["subnet"] == str(net)
            )
            port = re.search(rf"^ ip address {mine} 31\n ospf network-type p2p$", text, re.M)
            assert port, (dev, net)
    assert len(ids) == len(routers) + len(firewalls), "router IDs repeat"


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_firewalls_static_defaults_only_back_up_the_routers_ospf_defaults(name):
    border = ROOT / "inventories" / name / "files" / "border"
    for fw in sorted(border.glob("fw-*.cfg")):
        defaults = re.findall(r"^ip route-static 0\.0\.0\.0 0 \S+(?: preference (\d+))?$",
                              fw.read_text(), re.M)  # fmt: skip
        assert defaults and all(int(p or 60) > OSPF_EXTERNAL for p in defaults), fw.name
