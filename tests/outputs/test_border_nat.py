"""The business plane leaves through the provider with addresses the provider can route back:
each firewall source-NATs the business pool to its own section of the NAT pool (by default the
upper half of zones.border.provider), and the border routers route each section back to the
firewall that owns it. `wanka verify` fails an output whose firewalls send private addresses out.
"""

from __future__ import annotations

import csv
import ipaddress
import re
import shutil
from pathlib import Path

import pytest
import yaml

from generator import cli, pipeline
from generator.errors import BlueprintError
from generator.structured_yaml import FastVariablesLoader

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ("pod-128", "cluster-1k", "legacy-100card")
POD = (ROOT / "blueprints" / "pod-128.yaml").read_text()


def _nat(text: str) -> tuple[ipaddress.IPv4Network, dict[str, str]]:
    """A firewall's NAT section (as one network) and its nat-policy rule's lines."""
    group = re.search(
        r"^nat address-group (\S+)\n section 0 (\S+) (\S+)\n route enable$", text, re.M
    )
    assert group, "no nat address-group with one section and route enable"
    first, last = ipaddress.ip_address(group.group(2)), ipaddress.ip_address(group.group(3))
    (section,) = ipaddress.summarize_address_range(first, last)
    policy = re.search(r"^nat-policy\n rule name (\S+)\n((?:  .*\n)+)", text, re.M)
    assert policy, "no nat-policy rule"
    lines = dict(s.strip().split(" ", 1) for s in policy.group(2).splitlines())
    assert lines["action"] == f"source-nat address-group {group.group(1)}"
    return section, lines


def _routes(text: str) -> dict[str, str]:
    return {
        f"{m.group(1)}/{m.group(2)}": m.group(3)
        for m in re.finditer(r"^ip route-static (\S+) (\d+) (\S+)$", text, re.M)
    }


@pytest.mark.parametrize("name", EXAMPLES)
def test_each_firewall_translates_the_business_pool_to_its_section_routed_back_to_it(name):
    folder = ROOT / "inventories" / name
    pools = yaml.load((folder / "group_vars" / "all.yml").read_text(), FastVariablesLoader)["pools"]
    business = ipaddress.ip_network(pools["business"])
    provider = ipaddress.ip_network(pools["provider"])
    handoffs, nat_pool = provider.subnets()  # default NAT pool: the provider block's upper half
    plan = list(csv.DictReader((folder / "files" / "ip-plan.csv").open()))
    sections = {}
    for fw in ("fw-01", "fw-02"):
        section, rule = _nat((folder / "files" / "border" / f"{fw}.cfg").read_text())
        assert rule["source-zone"] == "business" and rule["destination-zone"] == "untrust"
        assert rule["source-address"] == f"{business.network_address} {business.prefixlen}"
        assert section.subnet_of(nat_pool) and not section.overlaps(handoffs)
        sections[fw] = section
    assert not sections["fw-01"].overlaps(sections["fw-02"])
    for rtr in ("rtr-01", "rtr-02"):
        routes = _routes((folder / "files" / "border" / f"{rtr}.cfg").read_text())
        mine = {r["subnet"] for r in plan if r["device"] == rtr and r["plane"] == "border"}
        for fw, section in sections.items():
            hop = routes[str(section)]
            # the next hop is the firewall's end of the link this router is cabled to it by
            assert any(
                r["address"] == hop and r["device"] == fw and r["subnet"] in mine for r in plan
            ), (rtr, fw, hop)


def test_the_way_out_is_in_the_design_review():
    text = (ROOT / "inventories" / "pod-128" / "docs" / "README.md").read_text()
    assert "## The way out" in text
    assert "| fw-01 | source NAT | 100.64.0.4/31 |" in text
    assert "| fw-02 | source NAT | 100.64.0.6/31 |" in text


def test_verify_fails_firewalls_that_send_private_addresses_out(tmp_path, capsys):
    folder = tmp_path / "pod-128"
    shutil.copytree(ROOT / "inventories" / "pod-128", folder)
    for fw in ("fw-01", "fw-02"):
        path = folder / "files" / "border" / f"{fw}.cfg"
        text = path.read_text()
        path.write_text(re.sub(r"^nat-policy\n(?: .*\n)+", "", text, flags=re.M))
    code = cli.main(["verify", str(folder)])
    out = capsys.readouterr()
    text = out.out + out.err
    assert code == 1, text
    assert "required flow internet (business-hosts -> outside" in text
    assert "private addresses (no nat-policy rule translates them" in text


def test_a_given_nat_pool_is_split_between_the_firewalls(tmp_path):
    path = tmp_path / "bp.yaml"
    old = "    provider: 100.64.0.0/29"
    assert old in POD
    path.write_text(POD.replace(old, f"{old}\n    nat: 203.0.113.0/28"))
    cluster = pipeline.run(path, emit=False).cluster
    assert [
        (n.device, str(ipaddress.ip_address(n.network)), n.prefix) for n in cluster.source_nat
    ] == [
        ("fw-01", "203.0.113.0", 29),
        ("fw-02", "203.0.113.8", 29),
    ]


def test_a_provider_block_without_room_for_the_nat_pool_is_located(tmp_path):
    path = tmp_path / "bp.yaml"
    path.write_text(POD.replace("provider: 100.64.0.0/29", "provider: 100.64.0.0/30"))
    with pytest.raises(BlueprintError) as caught:
        pipeline.run(path, emit=False)
    (problem,) = [
        p for p in caught.value.problems if tuple(p.path) == ("zones", "border", "provider")
    ]
    assert "NAT pool" in problem.message and "zones.border.nat" in (problem.hint or "")
    assert problem.line == next(
        n for n, s in enumerate(path.read_text().splitlines(), 1) if "provider: 100.64.0.0/30" in s
    )
