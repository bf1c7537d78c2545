"""The twin of a build with more than 20 OSPF links on one device (issue 42 item 6), run for real
(root, network namespaces, FRR), and `wanka twin exec` on it as a user types it.

tests/data/blueprints/ospf-192.yaml gives each parameter spine 24 OSPF links. Before the twin
sized net.ipv4.igmp_max_memberships (generator/twin/kernel.py) the 21st join of each spine's
ospfd failed with ENOBUFS and the 6th leaf's 16 adjacencies stayed Init. The sessions need no
host: the twin is brought up with --no-hosts (no host_network role run), which `twin test` and
`twin grow` then refuse."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from generator.cli import main
from generator.twin import checks, instance, kernel, plan, run

ROOT = Path(__file__).resolve().parents[2]
OSPF_192 = ROOT / "tests" / "data" / "blueprints" / "ospf-192.yaml"
WANKA = [sys.executable, "-m", "generator"]
# this test process's instance (generator.twin.instance): its twins are the only ones it touches
ENV = {
    **os.environ,
    "WANKA_TWIN_INSTANCE": instance.INSTANCE,
    "WANKA_TWIN_STATE": str(instance.BASE),
}

needs = run.missing()
pytestmark = [
    pytest.mark.minutes,
    pytest.mark.slow,
    pytest.mark.skipif(bool(needs), reason="the twin needs " + ", ".join(needs)),
]


def _twin(*args: str, timeout: float = 900) -> subprocess.CompletedProcess:
    return subprocess.run([*WANKA, "twin", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout, env=ENV)  # fmt: skip


@pytest.fixture(scope="module")
def up(tmp_path_factory):
    folder = tmp_path_factory.mktemp("twin-ospf") / "ospf-192"
    assert main(["generate", str(OSPF_192), "-o", str(folder), "-q"]) == 0
    _twin("down")
    done = _twin("up", str(folder), "--no-hosts")  # the sessions need no host (no keyfile run)
    try:
        assert done.returncode == 0, done.stdout + done.stderr
        assert "host keyfiles" not in done.stdout + done.stderr  # the role did not run
        yield folder
    finally:
        _twin("down")
        assert run.namespaces() == []


def test_every_ospf_adjacency_of_a_spine_with_24_links_is_full(up):
    p = plan.plan(up, {})
    bgp, ospf = checks.sessions(p, timeout=120)
    assert ospf.total > 0 and ospf.proved == ospf.total, ospf.failures[:5]
    assert bgp.proved == bgp.total, bgp.failures[:5]
    # as a user sees it on the spine: `wanka twin exec` into its namespace, FRR's own answer
    done = _twin("exec", "par-spine-001", "vtysh", "-c", "show ip ospf neighbor json")
    assert done.returncode == 0, done.stderr
    states = [n["nbrState"] for group in json.loads(done.stdout)["neighbors"].values()
              for n in group]  # fmt: skip
    links = len(re.findall(r"^ ospf network-type p2p$",
                           (up / "files/switches/par-spine-001.cfg").read_text(), re.M))  # fmt: skip
    assert links > 20 and len(states) == links, (links, states)
    assert all(s.startswith("Full") for s in states), states
    done = _twin("exec", "par-spine-001", "sysctl", "-n", kernel.IGMP)
    assert done.returncode == 0 and int(done.stdout) >= 2 * links, done.stdout + done.stderr


def test_a_twin_up_without_its_hosts_is_not_tested_or_grown(up):
    """`twin test` on a twin up with --no-hosts would prove fewer flows (no host has an
    address): refused, exit 2, before anything runs; `twin grow` likewise."""
    for command in ("test", "grow"):
        done = _twin(command, str(up))
        assert done.returncode == 2, done.stdout + done.stderr
        assert "is up without its hosts (`wanka twin up --no-hosts`)" in done.stderr, done.stderr
        assert run.namespaces(), "the refusal took the twin down"
