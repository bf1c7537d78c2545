"""wanka twin prove with its OSPF unit cut (root, network namespaces, FRR): the smallest build
that generates (tests/support/examples.TINY: 16 cards, every plane), once whole and once in
250 MiB, where the unit of the management VPNs and the four OSPF domains (about 288 MiB) is cut
at its quiet cables (the in-band domain's static routes to the firewall) (generator.twin.shard.quiet_links): every device's FIB is the whole twin's,
route for route. Where a device has more equal-cost OSPF paths than its `maximum load-balancing`,
which of them ospfd installs differs between two whole twins already (measured here: biz-spine-001
to the MLAG pair's 10.100.0.0/26, 3 of 6 paths, in a different 3 each run; test_twin_prove says
the same of cluster-1k): such a route is compared by its destination and width."""

from __future__ import annotations

import json

from generator.cli import main as wanka
from generator.twin import plan
from tests.support.examples import TINY
from tests.support.twin import REAL, prove

pytestmark = REAL


def test_an_ospf_unit_cut_between_its_domains_has_the_fibs_of_the_whole_twin(tmp_path):
    (tmp_path / "tiny.yaml").write_text(TINY)
    folder = tmp_path / "tiny"
    assert wanka(["generate", str(tmp_path / "tiny.yaml"), "-o", str(folder), "-q"]) == 0
    whole, cut = tmp_path / "whole.json", tmp_path / "cut.json"
    one = prove("--memory", "100000", "--no-drills", "--fibs", str(whole), folder=folder)
    assert one.returncode == 0, one.stdout + one.stderr
    assert "shards 1," in one.stdout
    three = prove("--memory", "250", "--no-drills", "--fibs", str(cut), folder=folder)
    assert three.returncode == 0, three.stdout + three.stderr
    assert "6 cables without a routing protocol cut" in three.stderr
    assert "shards 3," in three.stdout
    capped = {d: dev.ospf.maximum_paths for d, dev in plan.plan(folder, {}).devices.items()
              if dev.ospf}  # fmt: skip
    a, b = (_fibs(json.loads(f.read_text()), capped) for f in (whole, cut))
    assert a.keys() == b.keys() and len(a) == 54
    differences = {ns: sorted(set(a[ns]) ^ set(b[ns])) for ns in a if a[ns] != b[ns]}
    assert differences == {}
    # not an empty match: the in-band core (one shard) holds its static route to the out-of-band
    # plane through the firewall (another shard); a business leaf its OSPF routes
    assert any(
        " proto static via 10.101.224." in r.replace(" metric 20", "") for r in a["inb-core-001"]
    )
    assert sum(" proto ospf " in r for r in a["biz-leaf-0001"]) > 3


def _fibs(fibs: dict[str, list[str]], capped: dict[str, int]) -> dict[str, list[str]]:
    """Each route as is, but an OSPF route as wide as its device's maximum-paths: its
    destination and width."""
    out = {}
    for ns, routes in fibs.items():
        most = capped.get(ns, 0)
        out[ns] = sorted(
            f"{r.split()[0]} proto ospf, {most} paths (its maximum-paths)"
            if most > 1 and " proto ospf " in r and r.count(" via ") == most else r
            for r in routes
        )  # fmt: skip
    return out
