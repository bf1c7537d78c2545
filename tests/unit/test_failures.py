"""Failure domains: the analytic figures (generator/analysis/failure_domains.py and
failure_review.py, files/failure-domains.*) against brute force on a networkx graph built from
cluster.links.

The brute force knows nothing of leaves, pods or uplink shares: it removes what failed from the
graph of one plane, walks from the spine/core layer, and counts the host ports it no longer
reaches; bandwidth comes from max-flow. Every parameter-plane switch, every rack and every CDU of
the 10,240-card example is checked.
"""

from __future__ import annotations

import csv
import io
import tempfile
from collections import defaultdict
from functools import cache
from pathlib import Path

import networkx as nx
import pytest

from generator import pipeline
from generator.analysis import failure_domains, failure_review
from generator.model import Cluster
from tests.support.examples import expanded, generated

TOP = "__top__"

# The one 3-tier example is the 10,240-card one; this 128-server blueprint has the same shape in
# small (three tiers, two pods, 2x200GE breakout host cables) for the quick loop.
SMALL_THREE_TIERS = """\
apiVersion: wanka/v1
kind: Cluster
metadata: {name: three-tiers}
compute: {server: atlas-800t-a2, servers: 128}
zones:
  management: {nodes: {controller: 1}}
  storage: {nodes: {count: 2}}
networks:
  parameter:
    leaf: {model: ce9860-4c-ei, split: 2x200GE}
    spine: {model: ce9860-4c-ei}
    core: {model: ce9860-4c-ei}
    tiers: 3
"""


@cache
def _expanded(name: str) -> pipeline.Result:
    """expanded(name) for an example; SMALL_THREE_TIERS for "three-tiers"."""
    if name != "three-tiers":
        return expanded(name)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "three-tiers.yaml"
        path.write_text(SMALL_THREE_TIERS)
        return pipeline.run(path, emit=False)


class PlaneGraph:
    """One plane of the model as a networkx multigraph: host ports are nodes of their own (a NIC
    port does not route to the host's other ports), each edge carries its cable id and speed."""

    def __init__(self, cluster: Cluster, plane: str) -> None:
        self.g = nx.MultiGraph()
        self.ports: dict[str, list[tuple]] = defaultdict(list)  # host -> its port nodes
        for link in cluster.links:
            if link.plane != plane:
                continue
            a = link.a_device
            if link.kind in ("host", "mgmt"):
                a = ("port", link.a_device, link.a_port)
                self.ports[link.a_device].append(a)
            self.g.add_edge(a, link.b_device, cable=link.cable_id, speed=link.speed)
        for d in cluster.devices:
            if d.plane == plane and d.role in ("spine", "core") and d.name in self.g:
                self.g.add_edge(TOP, d.name, cable="", speed=0)
        self.switches = {n for n in self.g if isinstance(n, str) and n != TOP}
        self.cables = frozenset(e["cable"] for _, _, e in self.g.edges(data=True))
        # A port node has one neighbour, its switch: walking the switches is enough, a port is
        # reached when its switch is and its cable is intact.
        self.switch_adj = {
            n: [(m, {e["cable"] for e in es.values()}) for m, es in self.g.adj[n].items()]
            for n in (*self.switches, TOP)
        }
        self.switch_ports = {
            n: [(m, c) for m, c in adj if isinstance(m, tuple)]
            for n, adj in self.switch_adj.items()
        }
        self.cable_ports: dict[str, list[tuple]] = defaultdict(list)  # ports a cable alone carries
        for ports in self.switch_ports.values():
            for port, port_cables in ports:
                if len(port_cables) == 1:
                    self.cable_ports[next(iter(port_cables))].append(port)

    def reached(self, dead: frozenset, cables: frozenset) -> set:
        """Switches reachable from the spine/core layer once `dead` and `cables` are gone."""
        seen = {TOP}
        stack = [TOP]
        while stack:
            n = stack.pop()
            for m, edge_cables in self.switch_adj[n]:
                if isinstance(m, tuple) or m in seen or m in dead or edge_cables <= cables:
                    continue
                seen.add(m)
                stack.append(m)
        return seen

    def cut(self, dead: frozenset, cables: frozenset) -> dict[str, int]:
        """host -> its ports on this plane that lost every path to the spine/core layer (only
        running hosts)."""
        if not (dead & self.switches) and not (cables & self.cables):
            return {}  # removing host ports alone cuts nobody else
        seen = self.reached(dead, cables)
        cut_ports = {p for s in self.switches - seen for p, _ in self.switch_ports[s]}
        cut_ports |= {p for c in cables for p in self.cable_ports.get(c, ())}
        out: dict[str, int] = defaultdict(int)
        for _, host, _ in cut_ports:
            if host not in dead:
                out[host] += 1
        return dict(out)


@cache
def graphs(name: str) -> dict[str, PlaneGraph]:
    c = _expanded(name).cluster
    return {f.plane: PlaneGraph(c, f.plane) for f in c.fabrics}


@cache
def brute_force(name: str, failure: failure_domains.Failure) -> tuple[int, int]:
    """(NPU ports cut off, cards interrupted) by graph search."""
    c = _expanded(name).cluster
    g = graphs(name)
    cards = {s.name: s.npus for s in c.npu_servers}  # cards, not dies (an A3 card has two)
    dead, cables = failure.devices, failure.cables
    cut = {plane: pg.cut(dead, cables) for plane, pg in g.items()}
    interrupted = {h for h in dead if h in cards}
    interrupted |= {h for h in cut.get("parameter", {}) if h in cards}
    for plane in ("storage", "inband") + (
        ("business",) if c.settings.networks.storage.mode == "shared" else ()
    ):
        pg = g.get(plane)
        if pg is None:
            continue
        for host, n in cut[plane].items():
            if host in cards and n == len(pg.ports[host]):
                if plane == "business" and "storage" in g and host in g["storage"].ports:
                    continue
                interrupted.add(host)
    return sum(cut.get("parameter", {}).values()), sum(cards[h] for h in interrupted)


def _scenarios(name: str) -> list[failure_domains.Failure]:
    """Every switch, rack and CDU failure, and the first servers."""
    hosts = ("NPU server", "storage node", "management node")
    every = failure_review.failures(_expanded(name).cluster)
    return [f for f in every if f.kind not in hosts] + [f for f in every if f.kind == "NPU server"][
        :3
    ]


@pytest.mark.slow
def test_every_parameter_switch_rack_and_cdu_of_the_10k_example_matches_brute_force():
    name = "wanka-10k.yaml"
    c = expanded(name).cluster
    ix = failure_domains.topology(c)
    checked = defaultdict(int)
    for f in _scenarios(name):
        i = failure_domains.impact(c, f, ix)
        assert (i.npu_ports_cut, i.cards_interrupted) == brute_force(name, f), (f.kind, f.name)
        checked[f.kind] += 1
    assert checked["parameter leaf"] == 320 and checked["parameter spine"] == 80  # 5 pods x 16
    assert checked["parameter core"] == 32 and checked["CDU"] == 24
    assert checked["rack (network)"] + checked["rack (compute)"] >= 400


def test_smaller_examples_match_brute_force_too():
    for name in ("pod-128.yaml", "legacy-100card.yaml", "supernode-768.yaml", "cluster-1k.yaml"):
        c = expanded(name).cluster
        ix = failure_domains.topology(c)
        for f in _scenarios(name):
            i = failure_domains.impact(c, f, ix)
            assert (i.npu_ports_cut, i.cards_interrupted) == brute_force(name, f), (name, f.name)


@pytest.mark.parametrize("name", ["three-tiers", "pod-128.yaml", "wanka-10k.yaml"])
def test_cables_match_brute_force(name):
    """Host and uplink cables; the 10,240-card example in the slow suite (conftest), its shape in
    small (SMALL_THREE_TIERS) in the quick loop."""
    c = _expanded(name).cluster
    ix = failure_domains.topology(c)
    assert c.fabric("parameter").tiers == (2 if name == "pod-128.yaml" else 3)
    host = failure_review.cable_failures(c, "parameter", "host")
    up = failure_review.cable_failures(c, "parameter", "uplink")
    for f in (*host[:3], *host[-2:], *up[:3], *up[-2:]):
        i = failure_domains.impact(c, f, ix)
        assert (i.npu_ports_cut, i.cards_interrupted) == brute_force(name, f), f.name
    # a 2x200GE breakout cable carries two NPU ports: one cable failure cuts both
    assert failure_domains.impact(c, host[0], ix).npu_ports_cut == 2


def _max_flow(cluster: Cluster, dead: frozenset, sources: list[str], sink_roles: tuple) -> float:
    """Max flow from `sources` up the parameter plane to every alive switch of `sink_roles`."""
    g = nx.DiGraph()
    roles = {d.name: d.role for d in cluster.devices}
    for link in cluster.links:
        if link.plane != "parameter" or link.kind != "uplink":
            continue
        if link.a_device in dead or link.b_device in dead:
            continue
        cap = g.get_edge_data(link.a_device, link.b_device, {"capacity": 0})["capacity"]
        g.add_edge(link.a_device, link.b_device, capacity=cap + link.speed)
    for n in list(g):
        if roles.get(n) in sink_roles:
            g.add_edge(n, "SINK")  # no capacity attribute: unbounded
    for s in sources:
        if s in g:
            g.add_edge("SOURCE", s)
    if "SOURCE" not in g or "SINK" not in g:
        return 0.0
    return nx.maximum_flow_value(g, "SOURCE", "SINK")


@pytest.mark.slow
def test_bandwidth_lost_matches_max_flow_on_the_10k_example():
    c = expanded("wanka-10k.yaml").cluster
    ix = failure_domains.topology(c)
    leaves_of_pod = defaultdict(list)
    for d in c.devices:
        if d.plane == "parameter" and d.role == "leaf":
            leaves_of_pod[d.pod].append(d.name)
    spine = next(d for d in c.devices if d.plane == "parameter" and d.role == "spine")
    core = next(d for d in c.devices if d.plane == "parameter" and d.role == "core")
    for dev in (spine, core):
        f = failure_domains.Failure("x", dev.name, frozenset((dev.name,)))
        i = failure_domains.impact(c, f, ix)
        # pod -> cores: share of each pod's max flow lost, worst pod
        worst = 0.0
        for _pod, leaves in leaves_of_pod.items():
            before = _max_flow(c, frozenset(), leaves, ("core",))
            after = _max_flow(c, f.devices, leaves, ("core",))
            worst = max(worst, 1 - after / before)
        assert i.pod_uplink_lost == pytest.approx(worst), dev.name
        # one leaf -> the spine layer
        leaf = leaves_of_pod[dev.pod or 0][0]  # a core has no pod
        before = _max_flow(c, frozenset(), [leaf], ("spine",))
        after = _max_flow(c, f.devices, [leaf], ("spine",))
        assert i.leaf_uplink_lost == pytest.approx(1 - after / before), dev.name
    # "a spine failure takes 1/S of every leaf's uplink bandwidth": S = 16 pod spines
    f = failure_domains.Failure("x", spine.name, frozenset((spine.name,)))
    i = failure_domains.impact(c, f, ix)
    assert i.leaf_uplink_lost == pytest.approx(1 / 16) and i.cards_interrupted == 0
    pod_cards = sum(len(s.devices) for s in c.npu_servers if s.pod == spine.pod)
    assert i.cards_slowed == pod_cards == 2304


def _csv(name: str) -> dict[str, dict[str, str]]:
    files = {f.path: f.data for f in generated(name).files}
    rows = csv.DictReader(io.StringIO(files["files/failure-domains.csv"].decode()))
    return {r["class"]: r for r in rows}


@pytest.mark.slow
def test_the_emitted_worst_case_of_every_class_is_the_brute_force_maximum():
    name = "wanka-10k.yaml"
    rows = _csv(name)
    worst: dict[str, tuple[int, int]] = {}
    for f in _scenarios(name):
        cut, interrupted = brute_force(name, f)
        worst[f.kind] = max(worst.get(f.kind, (0, 0)), (interrupted, cut))
    for kind, (interrupted, cut) in worst.items():
        assert int(rows[kind]["cards_interrupted"]) == interrupted, kind
        assert int(rows[kind]["npu_ports_cut"]) == cut, kind
    # the figures the design review shows for the 10,240-card example
    assert rows["parameter leaf"]["cards_interrupted"] == "32"
    assert rows["parameter spine"]["leaf_uplink_lost"] == "0.0625"
    assert rows["parameter spine"]["cards_slowed"] == "2304"
    assert rows["parameter core"]["pod_uplink_lost"] == "0.0312"
    assert rows["parameter core"]["cards_slowed"] == "10240"
    # 14 racks (4 servers + their leaf, 24.2 kW) on the fullest of 24 N+1 CDUs, x 32 cards
    assert rows["CDU"]["cards_interrupted"] == "448"
    assert rows["inband access"]["cards_interrupted"] == "384"
    assert rows["NPU server"]["failures_per_year"] == "1536"
    assert rows["parameter leaf"]["jobs_lost_32_cards"] == "1"
    assert rows["CDU"]["jobs_lost_32_cards"] == "14"
    md = next(f for f in generated(name).files if f.path == "files/failure-domains.md")
    assert b"| the whole cluster | 10,240 | 1,280 |" in md.data


def test_mean_time_between_interruptions_at_10k_cards():
    rev = expanded("wanka-10k.yaml").analysis.failures
    job = rev.jobs[-1]
    assert job.cards == 10240 and job.servers == 1280
    # servers alone: 1,280 x 1.2 a year; the fabric, cables, racks and CDUs add to it
    assert dict(job.by_kind)["NPU server"] == pytest.approx(1536)
    assert job.per_year == pytest.approx(sum(v for _, v in job.by_kind))
    assert 4 < job.per_day < 5 and 5 < job.mtbi_hours < 6  # "several a day", MTBI of hours
    small = rev.jobs[0]  # one server
    assert small.cards == 8 and small.mtbi_hours > 1000
    assert [j.cards for j in rev.jobs] == [8, 32, 2304, 10240]


def test_seed_001_reliability_arithmetic():
    """The article 十万亿参数的算力账先算到绝望 §2.2: '单卡的年故障率哪怕只有千分之一，万卡集群里每天都会有几张卡出问题'. At 0.1% a
    year that is 10,240 x 0.001 / 365.25 = 0.028 card failures a day, one a month; several a day
    need field rates like the catalog's proxy (Llama 3: ~1.2 per 8-card server a year)."""
    assert failure_review.interruptions_per_day(0.001, 10240) == pytest.approx(0.028, abs=0.001)
    assert failure_review.interruptions_per_day(1.2 / 8, 10240) == pytest.approx(4.2, abs=0.05)


def test_multi_rail_leaf_cuts_its_ports_of_every_server_in_its_rail_group():
    """The legacy Atlas 800 (9000) rail leaf k carries NPU k and k+4 of each of its 16 servers
    (4-subnet rule), so it cuts 2 ports of each and interrupts every card."""
    c = generated("legacy-100card.yaml").cluster
    leaf = next(d for d in c.devices if d.plane == "parameter" and d.role == "leaf")
    i = failure_domains.impact(c, failure_domains.Failure("x", leaf.name, frozenset((leaf.name,))))
    assert i.npu_ports_cut == 2 * 16 and i.cards_interrupted == 128


def test_design_check_warns_over_the_share_and_the_blueprint_sets_it(tmp_path):
    from generator import pipeline
    from tests.support.examples import ROOT

    def findings(name: str, design: str):
        text = (ROOT / "blueprints" / name).read_text().split("\ndesign:", 1)[0]
        path = tmp_path / name
        path.write_text(text + design)
        return [f for f in pipeline.run(path, emit=False).findings if f.code == "failure-domain"]

    warn = [f for f in findings("cluster-1k.yaml", "") if f.severity == "warning"]
    # N+1 CDUs (expand.racks.assign_cdus): 4 of 193.6 kW, 8 racks of 32 cards each
    assert len(warn) == 1 and "CDU CDU-01: 256 (25.0%)" in warn[0].message
    assert "inband access inb-access-0001: 384 (37.5%)" in warn[0].message
    # the hint names the settings that shrink each domain, and the one that accepts them
    assert "zones.training.cdu.capacity_kw" in warn[0].message
    assert "design.max_failure_share" in warn[0].message
    assert warn[0].where == ("design", "max_failure_share")
    info = [f for f in findings("cluster-1k.yaml", "") if f.severity == "info"]
    assert "interrupted every" in info[0].message

    lenient = findings("pod-128.yaml", "\ndesign:\n  max_failure_share: 1.0\n")
    assert {f.severity for f in lenient} == {"info"}
    assert {f.severity for f in findings("pod-128.yaml", "")} == {"warning", "info"}


def test_failure_rates_come_from_the_catalog_and_can_be_overridden(tmp_path):
    from generator import pipeline
    from tests.support.examples import ROOT

    text = (ROOT / "blueprints" / "pod-128.yaml").read_text().split("\n# One pod")[0]
    bp = tmp_path / "rates.yaml"
    bp.write_text(
        text
        + "\ncatalog:\n  servers:\n    atlas-800t-a2: {failure_rate_per_year: 0.008}\n"
        + "design:\n  failure_rates: {rack: 0, cdu: 0, cable: 0}\n"
    )
    rev = pipeline.run(bp, emit=False).analysis.failures
    server = next(r for r in rev.rows if r.kind == "NPU server")
    assert server.rate == 0.008 and server.per_year == pytest.approx(16 * 0.008)
