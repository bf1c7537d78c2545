"""files/scheduler/: each format checked against its consumer's rules and against the cabling plan.

- Volcano HyperNodes validate against Volcano's own CRD schema (vendored in tests/data/consumers),
  plus the CRD's CEL rules, const apiVersion/kind and DNS-1123 names; the tiers form a tree.
- Slurm hostlists are expanded by an independent implementation (python-hostlist).
- MindCluster's tor_info and the Kubernetes node labels are compared with the links and devices.
"""

from __future__ import annotations

import copy
import dataclasses
import itertools
import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import cache
from pathlib import Path
from typing import Any

import hostlist as pyhostlist
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft7Validator

from generator import pipeline
from generator.artifacts import scheduler
from generator.artifacts import scheduler_topology as topology
from generator.blueprint.load import load_blueprint
from generator.blueprint.spec import blueprint_spec
from generator.blueprint.validate import SCHEMA, validate
from generator.catalog import build_catalog
from generator.errors import BlueprintError
from generator.expand.services import scheduler_settings
from generator.model import Cluster, ip
from tests.support.examples import EXAMPLES, ROOT, generated
from tests.support.output_readers import YAML

CRD = (
    Path(__file__).resolve().parents[1]
    / "data"
    / "consumers"
    / "volcano"
    / "topology.volcano.sh_hypernodes.yaml"
)
DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
LABEL_NAME = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
SELECTORS = ("exactMatch", "regexMatch", "labelMatch")
CEL_RULES = {
    "has(self.exactMatch) || has(self.regexMatch) || has(self.labelMatch)",
    "(has(self.exactMatch) ? 1 : 0) + (has(self.regexMatch) ? 1 : 0) + (has(self.labelMatch) "
    "? 1 : 0) <= 1",
}


# --- helpers ---------------------------------------------------------------------------------


def scheduler_files(result: pipeline.Result) -> dict[str, str]:
    prefix = "files/scheduler/"
    return {
        f.path.removeprefix(prefix): f.data.decode()
        for f in result.files
        if f.path.startswith(prefix)
    }


def docs(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.load_all(text, Loader=YAML) if d is not None]


def npu_servers(cluster: Cluster) -> list[str]:
    return [d.name for d in cluster.devices if d.role == "npu-server"]


def cabled_leaves(cluster: Cluster) -> dict[str, frozenset[str]]:
    """server -> the parameter leaves it is cabled to, from the cabling plan itself."""
    out: dict[str, set[str]] = {}
    for link in cluster.links:
        if link.plane == "parameter" and link.kind == "host":
            out.setdefault(link.a_device, set()).add(link.b_device)
    return {k: frozenset(v) for k, v in out.items()}


def with_scheduler(result: pipeline.Result, **settings: Any) -> Cluster:
    """The same cluster with other `scheduler` settings (the expansion does not depend on them)."""
    bp = copy.deepcopy(dict(result.blueprint))
    for section, values in settings.items():
        bp["scheduler"][section].update(values)
    resolved = scheduler_settings(blueprint_spec(bp), result.cluster.fabric("parameter"))
    return dataclasses.replace(result.cluster, scheduler=resolved)


def emitted(cluster: Cluster) -> dict[str, str]:
    return {
        f.path.removeprefix("files/scheduler/"): f.data.decode() for f in scheduler.emit(cluster)
    }


def run(tmp_path: Path, text: str) -> pipeline.Result:
    path = tmp_path / "blueprint.yaml"
    path.write_text(text, encoding="utf-8")
    return pipeline.run(path)


@pytest.fixture(params=EXAMPLES)
def result(request) -> pipeline.Result:
    return generated(request.param)


# --- Volcano HyperNodes ----------------------------------------------------------------------


@cache
def crd() -> dict[str, Any]:
    return yaml.load(CRD.read_text(encoding="utf-8"), Loader=YAML)


@cache
def hypernode_validator() -> Draft7Validator:
    """The CRD's openAPIV3Schema, tightened where the API server checks more than JSON Schema."""
    schema = copy.deepcopy(crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
    props = schema["properties"]
    props["apiVersion"]["const"] = "topology.volcano.sh/v1alpha1"
    props["kind"]["const"] = "HyperNode"
    props["metadata"].update(
        properties={
            "name": {"type": "string", "maxLength": 253, "pattern": DNS1123_SUBDOMAIN.pattern}
        },
        required=["name"],
    )
    schema["required"] = ["apiVersion", "kind", "metadata", "spec"]
    schema["not"] = {"required": ["status"]}  # status belongs to the controller
    selector = props["spec"]["properties"]["members"]["items"]["properties"]["selector"]
    selector["oneOf"] = [{"required": [key]} for key in SELECTORS]  # the CEL rules as JSON Schema
    Draft7Validator.check_schema(schema)
    return Draft7Validator(schema)


def cel_problems(doc: Mapping[str, Any]) -> list[str]:
    """The CRD's two x-kubernetes-validations rules on every member selector, evaluated here."""
    out = []
    for i, member in enumerate(doc.get("spec", {}).get("members", [])):
        given_keys = [k for k in SELECTORS if k in member.get("selector", {})]
        if not given_keys:
            out.append(
                f"member {i}: Either ExactMatch or RegexMatch or LabelMatch must be specified"
            )
        if len(given_keys) > 1:
            out.append(
                f"member {i}: Only one of ExactMatch, RegexMatch, or LabelMatch can be specified"
            )
    return out


def hypernode_problems(doc: Mapping[str, Any]) -> list[str]:
    return [e.message for e in hypernode_validator().iter_errors(doc)] + cel_problems(doc)


def hypernode_docs(cluster: Cluster, files: Mapping[str, str]) -> list[dict[str, Any]]:
    """The HyperNodes written, or (in labels mode) the ones hypernodes mode would write."""
    text = files.get("volcano/hypernodes.yaml")
    if text is None:
        text = scheduler.hypernodes_yaml(cluster, scheduler.topology(cluster))
    return docs(text)


def test_vendored_crd_has_the_cel_rules_we_emulate() -> None:
    selector = crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
        "properties"
    ]["members"]["items"]["properties"]["selector"]
    assert {v["rule"] for v in selector["x-kubernetes-validations"]} == CEL_RULES


def test_hypernode_checks_catch_what_the_api_server_rejects() -> None:
    good = {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": "leaf-1"},
        "spec": {
            "tier": 1,
            "members": [{"type": "Node", "selector": {"exactMatch": {"name": "n1"}}}],
        },
    }
    assert hypernode_problems(good) == []
    bad = [
        {**good, "kind": "Node"},
        {**good, "metadata": {"name": "Leaf_1"}},
        {**good, "spec": {"members": good["spec"]["members"]}},  # tier missing
        {**good, "spec": {"tier": 1, "members": []}},
        {**good, "spec": {"tier": -1, "members": good["spec"]["members"]}},
        {
            **good,
            "spec": {
                "tier": 1,
                "members": [{"type": "Pod", "selector": {"exactMatch": {"name": "n"}}}],
            },
        },
        {**good, "spec": {"tier": 1, "members": [{"type": "Node", "selector": {}}]}},
        {
            **good,
            "spec": {
                "tier": 1,
                "members": [
                    {
                        "type": "Node",
                        "selector": {"exactMatch": {"name": "n"}, "regexMatch": {"pattern": "n.*"}},
                    }
                ],
            },
        },
        {**good, "status": {"nodeCount": 1}},
    ]
    for doc in bad:
        assert hypernode_problems(doc), doc


def test_hypernodes_validate_against_the_volcano_crd(result: pipeline.Result) -> None:
    found = hypernode_docs(result.cluster, scheduler_files(result))
    assert found
    for doc in found:
        assert hypernode_problems(doc) == [], doc["metadata"]
        assert doc["spec"]["tierName"] in ("supernode", "leaf", "spine", "core")


def check_hypernode_tree(cluster: Cluster, found: list[dict[str, Any]]) -> None:
    names = [d["metadata"]["name"] for d in found]
    assert len(names) == len(set(names)), "HyperNode names are unique"
    tier_of = {d["metadata"]["name"]: d["spec"]["tier"] for d in found}
    tiers = sorted(set(tier_of.values()))
    assert tiers == list(range(1, len(tiers) + 1))
    node_members: Counter[str] = Counter()
    parents: Counter[str] = Counter()
    for d in found:
        tier = d["spec"]["tier"]
        for m in d["spec"]["members"]:
            name = m["selector"]["exactMatch"]["name"]
            if tier == 1:
                assert m["type"] == "Node"
                node_members[name] += 1
            else:
                assert m["type"] == "HyperNode"
                assert tier_of[name] == tier - 1, f"{d['metadata']['name']} holds {name}"
                parents[name] += 1
    assert node_members == Counter(npu_servers(cluster)), "every NPU server in one tier-1 HyperNode"
    below_top = [n for n, t in tier_of.items() if t < tiers[-1]]
    assert parents == Counter(below_top), "every HyperNode but the top ones in exactly one parent"


def test_hypernodes_form_a_tree_over_every_npu_server(result: pipeline.Result) -> None:
    check_hypernode_tree(result.cluster, hypernode_docs(result.cluster, scheduler_files(result)))


def test_tier1_is_the_cabled_leaf_or_the_supernode(result: pipeline.Result) -> None:
    cluster = result.cluster
    tier1 = [d for d in hypernode_docs(cluster, scheduler_files(result)) if d["spec"]["tier"] == 1]
    leaves = cabled_leaves(cluster)
    supernode = {d.name: d.supernode for d in cluster.devices if d.role == "npu-server"}
    for d in tier1:
        members = [m["selector"]["exactMatch"]["name"] for m in d["spec"]["members"]]
        if d["spec"]["tierName"] == "supernode":
            assert {supernode[m] for m in members} == {int(d["metadata"]["name"].split("-")[-1])}
            assert Counter(supernode.values())[supernode[members[0]]] == len(members)
        else:
            assert len({leaves[m] for m in members}) == 1, "one access unit per tier-1 HyperNode"
            assert d["metadata"]["name"].startswith(min(leaves[members[0]]))
            assert sum(1 for s in leaves.values() if s == leaves[members[0]]) == len(members)


def test_hypernodes_mode_writes_no_label_discovery(result: pipeline.Result) -> None:
    files = scheduler_files(result)
    labels_mode = result.blueprint["scheduler"]["volcano"]["mode"] == "labels"
    assert ("volcano/hypernodes.yaml" in files) != labels_mode
    assert ("volcano/volcano-controller-configmap.yaml" in files) == labels_mode
    node_labels = files["kubernetes/node-labels.yaml"]
    assert ("volcano.sh/" in node_labels.split("\n---\n", 1)[1]) == labels_mode


def test_labels_mode_describes_the_same_tiers_as_the_hypernodes(result: pipeline.Result) -> None:
    """What Volcano's label discoverer builds from the labels = the two lowest HyperNode tiers."""
    cluster = with_scheduler(result, volcano={"mode": "labels", "namespace": "vc"})
    files = emitted(cluster)
    assert "volcano/hypernodes.yaml" not in files
    (cm,) = docs(files["volcano/volcano-controller-configmap.yaml"])
    assert (cm["kind"], cm["metadata"]) == (
        "ConfigMap",
        {"name": "volcano-controller-configmap", "namespace": "vc"},
    )
    (entry,) = yaml.load(cm["data"]["volcano-controller.conf"], Loader=YAML)[
        "networkTopologyDiscovery"
    ]
    assert (entry["source"], entry["enabled"]) == ("label", True)
    ((type_name, levels),) = entry["config"]["networkTopologyTypes"].items()
    assert len(type_name) <= 20  # the discoverer skips longer type names
    keys = [x["nodeLabel"] for x in levels]
    assert keys[-1] == "kubernetes.io/hostname" and len(set(keys)) == len(keys)
    bottom_up = keys[-2::-1]

    labels = {
        d["metadata"]["name"]: d["metadata"]["labels"]
        for d in docs(files["kubernetes/node-labels.yaml"])
    }
    hyper = hypernode_docs(result.cluster, scheduler_files(result))
    by_name = {d["metadata"]["name"]: d for d in hyper}

    def nodes_under(name: str) -> frozenset[str]:
        d = by_name[name]
        names = [m["selector"]["exactMatch"]["name"] for m in d["spec"]["members"]]
        if d["spec"]["tier"] == 1:
            return frozenset(names)
        return frozenset().union(*(nodes_under(n) for n in names))

    for tier, key in enumerate(bottom_up, start=1):
        groups: dict[str, set[str]] = {}
        for node, node_labels in labels.items():
            groups.setdefault(node_labels[key], set()).add(node)
        expected = {nodes_under(d["metadata"]["name"]) for d in hyper if d["spec"]["tier"] == tier}
        assert {frozenset(g) for g in groups.values()} == expected, key
        assert all(LABEL_VALUE.match(v) and len(v) <= 63 for v in groups)


# --- Kubernetes node labels ------------------------------------------------------------------


def test_node_labels_cover_every_npu_server_with_valid_labels(result: pipeline.Result) -> None:
    cluster = result.cluster
    nodes = docs(scheduler_files(result)["kubernetes/node-labels.yaml"])
    assert [d["metadata"]["name"] for d in nodes] == npu_servers(cluster)
    hosts = build_catalog(result.blueprint.get("catalog")).hosts
    by_name = cluster.device_by_name
    for d in nodes:
        assert (d["apiVersion"], d["kind"], set(d), set(d["metadata"])) == (
            "v1",
            "Node",
            {"apiVersion", "kind", "metadata"},
            {"name", "labels"},
        )
        labels = d["metadata"]["labels"]
        for key, value in labels.items():
            prefix, _, name = key.rpartition("/")
            assert not prefix or (len(prefix) <= 253 and DNS1123_SUBDOMAIN.match(prefix)), key
            assert len(name) <= 63 and LABEL_NAME.match(name), key
            assert isinstance(value, str) and len(value) <= 63 and LABEL_VALUE.match(value), value
        device = by_name[d["metadata"]["name"]]
        model = hosts[device.model]
        assert labels["accelerator"] == "huawei-Ascend910"
        assert labels["host-arch"] == "huawei-arm"
        assert labels["workerselector"] == "dls-worker-node"
        expected_type = {
            "ascend-910": "module",
            "ascend-910b": f"module-910b-{model.npus}",
            "ascend-910c": f"module-a3-{model.npus * model.dies_per_npu}"
            + ("-super-pod" if device.supernode is not None else ""),
        }[model.accelerator]
        assert labels["accelerator-type"] == expected_type
        if device.supernode is not None:
            server = next(s for s in result.cluster.npu_servers if s.name == device.name)
            assert labels["huawei.com/topotree.superpodid"] == str(server.super_pod_id)
            assert labels["huawei.com/topotree"] == "default"
        else:
            assert not any(k.startswith("huawei.com/topotree") for k in labels)


def test_supernode_labels_match_the_rank_table_and_racks() -> None:
    result = generated("supernode-768.yaml")
    cluster = result.cluster
    nodes = {
        d["metadata"]["name"]: d["metadata"]["labels"]
        for d in docs(scheduler_files(result)["kubernetes/node-labels.yaml"])
    }
    # the Super Pod IDs of the NPU facts (test fixture: 7 and 8), as the rank table has them
    assert {v["huawei.com/topotree.superpodid"] for v in nodes.values()} == {"7", "8"}
    assert {v["huawei.com/topotree.groupid"] for v in nodes.values()} == {"0"}  # one spine layer
    racks = {}
    for name, labels in nodes.items():
        racks.setdefault(labels["huawei.com/topotree.rackid"], set()).add(
            cluster.device_by_name[name].rack
        )
    assert all(len(v) == 1 for v in racks.values()), "one rackid per rack"
    assert len(racks) == 24


# --- MindCluster basic-tor-node-cm -----------------------------------------------------------


def test_tor_info_matches_the_cabling_plan(result: pipeline.Result) -> None:
    cluster = result.cluster
    (cm,) = docs(scheduler_files(result)["mindcluster/basic-tor-node-cm.yaml"])
    assert cm["metadata"] == {"name": "basic-tor-node-cm", "namespace": "kube-system"}
    assert set(cm["data"]) == {"tor_info", "tor_level"}
    assert cm["data"]["tor_level"] == "double_layer"  # every example has spines
    info = json.loads(cm["data"]["tor_info"])
    assert list(info) == ["version", "tor_count", "server_list"] and info["version"] == "1.0"

    inband = {a.ip: a.device for a in cluster.addresses if a.plane == "inband"}
    leaf_by_loopback = {
        ip(d.loopback): d.name
        for d in cluster.devices
        if d.role == "leaf" and d.plane == "parameter"
    }
    leaves = cabled_leaves(cluster)
    hosts = build_catalog(result.blueprint.get("catalog")).hosts
    seen: list[str] = []
    for tor_id, tor in enumerate(info["server_list"]):
        assert tor["tor_id"] == tor_id
        leaf = leaf_by_loopback[tor["tor_ip"]]
        servers = [inband[ip_to_int(s["server_ip"])] for s in tor["server"]]
        assert [s["slice_id"] for s in tor["server"]] == list(range(len(servers)))
        # the servers cabled to this leaf on the parameter plane, in cabling (slot) order
        assert servers == [s for s in npu_servers(cluster) if leaf in leaves[s]]
        for entry, server in zip(tor["server"], servers, strict=True):
            assert entry["npu_count"] == hosts[cluster.device_by_name[server].model].npus
        seen += servers
    assert sorted(seen) == sorted(npu_servers(cluster)), "every NPU server under exactly one ToR"
    assert info["tor_count"] == max(len(t["server"]) for t in info["server_list"])


def ip_to_int(text: str) -> int:
    a, b, c, d = (int(x) for x in text.split("."))
    return a << 24 | b << 16 | c << 8 | d


def test_mindcluster_namespace_and_tor_level_come_from_the_blueprint() -> None:
    cluster = with_scheduler(
        generated("pod-128.yaml"),
        mindcluster={"namespace": "volcano-system", "tor_level": "single_layer"},
    )
    (cm,) = docs(emitted(cluster)["mindcluster/basic-tor-node-cm.yaml"])
    assert cm["metadata"]["namespace"] == "volcano-system"
    assert cm["data"]["tor_level"] == "single_layer"


# --- Slurm -----------------------------------------------------------------------------------


def parse_conf(text: str) -> list[dict[str, str]]:
    out = []
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            out.append(dict(field.split("=", 1) for field in line.split()))
    return out


def expand(expr: str) -> list[str]:
    names = pyhostlist.expand_hostlist(expr)
    assert len(names) == len(set(names)), expr
    return names


def check_tree(cluster: Cluster, switches: list[tuple[str, str, str]]) -> None:
    """(switch, 'nodes' | 'children', hostlist): leaves hold exactly the servers cabled to them,
    every server under one leaf switch, every switch below the root in one parent."""
    nodes = {s: set(expand(e)) for s, kind, e in switches if kind == "nodes"}
    children = {s: expand(e) for s, kind, e in switches if kind == "children"}
    assert len(nodes) + len(children) == len(switches), "switch names are unique"
    assert all(len(s) <= 64 for s, _, _ in switches)
    placed = Counter(n for members in nodes.values() for n in members)
    assert placed == Counter(npu_servers(cluster)), "every server hangs off exactly one leaf switch"
    leaves = cabled_leaves(cluster)
    groups: dict[frozenset[str], set[str]] = {}
    for server, cabled in leaves.items():
        groups.setdefault(cabled, set()).add(server)
    for switch, members in nodes.items():
        (cabled,) = {leaves[m] for m in members}
        assert members == groups[cabled], switch
        assert switch == min(cabled) or switch.startswith(min(cabled) + "-"), switch
    parents = Counter(c for cs in children.values() for c in cs)
    assert set(parents) <= set(nodes) | set(children)
    roots = (set(nodes) | set(children)) - set(parents)
    assert len(roots) == 1 and max(parents.values()) == 1


def test_topology_conf_tree_expands_to_the_cabled_servers(result: pipeline.Result) -> None:
    conf = parse_conf(scheduler_files(result)["slurm/topology.conf"])
    switches = [
        (e["SwitchName"], "nodes" if "Nodes" in e else "children", e.get("Nodes") or e["Switches"])
        for e in conf
    ]
    assert all(set(e) in ({"SwitchName", "Nodes"}, {"SwitchName", "Switches"}) for e in conf)
    check_tree(result.cluster, switches)


def supernodes(cluster: Cluster) -> dict[int, list[str]]:
    out: dict[int, list[str]] = {}
    for d in cluster.devices:
        if d.role == "npu-server" and d.supernode is not None:
            out.setdefault(d.supernode, []).append(d.name)
    return out


def check_blocks(cluster: Cluster, blocks: list[tuple[str, str]], sizes: list[int]) -> None:
    expected = supernodes(cluster)
    assert sorted(sorted(expand(e)) for _, e in blocks) == sorted(
        sorted(v) for v in expected.values()
    )
    assert sizes[0] == min(len(v) for v in expected.values())
    assert all(b == a * 2 for a, b in itertools.pairwise(sizes))
    assert sizes[-1] <= len(npu_servers(cluster))


def test_topology_block_conf_holds_one_block_per_supernode(result: pipeline.Result) -> None:
    files = scheduler_files(result)
    if not supernodes(result.cluster):
        assert "slurm/topology-block.conf" not in files
        return
    conf = parse_conf(files["slurm/topology-block.conf"])
    blocks = [(e["BlockName"], e["Nodes"]) for e in conf if "BlockName" in e]
    (sizes,) = [e["BlockSizes"] for e in conf if "BlockSizes" in e]
    check_blocks(result.cluster, blocks, [int(x) for x in sizes.split(",")])


def test_topology_yaml_holds_both_topologies(result: pipeline.Result) -> None:
    files = scheduler_files(result)
    topologies = yaml.load(files["slurm/topology.yaml"], Loader=YAML)
    by_name = {t["topology"]: t for t in topologies}
    assert [next(iter(t)) for t in topologies] == ["topology"] * len(topologies)
    assert sum(t["cluster_default"] for t in topologies) == 1
    tree = by_name["fabric"]["tree"]["switches"]
    switches = [
        (s["switch"], "nodes" if "nodes" in s else "children", s.get("nodes") or s["children"])
        for s in tree
    ]
    check_tree(result.cluster, switches)
    conf = parse_conf(files["slurm/topology.conf"])
    assert [(s, e) for s, _, e in switches] == [
        (c["SwitchName"], c.get("Nodes") or c["Switches"]) for c in conf
    ], "topology.yaml and topology.conf agree"
    if supernodes(result.cluster):
        block = by_name["supernodes"]
        assert block["cluster_default"] is True
        blocks = [(b["block"], b["nodes"]) for b in block["block"]["blocks"]]
        check_blocks(result.cluster, blocks, block["block"]["block_sizes"])
    else:
        assert set(by_name) == {"fabric"}


# --- hostlist compression ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("names", "expr"),
    [
        (["npu-001", "npu-002", "npu-003", "npu-005"], "npu-[001-003,005]"),
        (["npu-0001"], "npu-0001"),
        (["n9", "n10", "n11"], "n9,n[10-11]"),
        (["a001.lab", "a002.lab"], "a[001-002].lab"),
        (["par-leaf-0001-0008", "par-leaf-0009-0016"], "par-leaf-0001-0008,par-leaf-0009-0016"),
        (["login", "npu-2", "npu-1"], "login,npu-[1-2]"),
        ([], ""),
    ],
)
def test_hostlist_examples(names: list[str], expr: str) -> None:
    assert scheduler.hostlist(names) == expr
    assert sorted(pyhostlist.expand_hostlist(expr)) == sorted(names)


NAMES = st.lists(
    st.builds(
        lambda prefix, n, width, suffix: f"{prefix}{n:0{width}d}{suffix}",
        st.sampled_from(["npu-", "a", "par-leaf-", "x1-", "sn"]),
        st.integers(0, 2000),
        st.integers(1, 5),
        st.sampled_from(["", ".lab", "-ib"]),
    )
    | st.sampled_from(["login", "head"]),
    max_size=60,
)


@given(NAMES)
def test_hostlist_round_trips_through_python_hostlist(names: list[str]) -> None:
    expr = scheduler.hostlist(names)
    expanded = pyhostlist.expand_hostlist(expr)
    assert len(expanded) == len(set(expanded))
    assert set(expanded) == set(names)
    assert scheduler.hostlist(reversed(names)) == expr  # order of the input does not matter


# --- domains beyond the examples ---------------------------------------------------------------


POD = (ROOT / "blueprints" / "pod-128.yaml").read_text(encoding="utf-8")


def pod_with(extra_compute: str = "", parameter: str = "") -> str:
    text = POD.replace(
        '  hostname: "npu-{index:03d}"\n', '  hostname: "npu-{index:03d}"\n' + extra_compute
    )
    return text.replace(
        '    oversubscription: "1:1"\n', '    oversubscription: "1:1"\n' + parameter
    )


@pytest.mark.parametrize(
    ("extra_compute", "parameter", "tiers"),
    [
        ("  supernode: {servers: 8}\n", "", ["supernode", "spine"]),
        ("  supernode: {servers: 8}\n", "    tiers: 3\n", ["supernode", "spine", "core"]),
        ("  supernode: {servers: 2}\n", "    tiers: 3\n", ["supernode", "leaf", "spine", "core"]),
        ("", "    tiers: 3\n", ["leaf", "spine", "core"]),
    ],
)
def test_supernodes_sit_under_the_roce_domains_that_hold_them_whole(
    tmp_path: Path, extra_compute: str, parameter: str, tiers: list[str]
) -> None:
    result = run(tmp_path, pod_with(extra_compute, parameter))
    files = scheduler_files(result)
    found = docs(files["volcano/hypernodes.yaml"])
    for doc in found:
        assert hypernode_problems(doc) == []
    check_hypernode_tree(result.cluster, found)
    by_tier = {d["spec"]["tier"]: d["spec"]["tierName"] for d in found}
    assert [by_tier[t] for t in sorted(by_tier)] == tiers
    check_tree(
        result.cluster,
        [
            (
                e["SwitchName"],
                "nodes" if "Nodes" in e else "children",
                e.get("Nodes") or e["Switches"],
            )
            for e in parse_conf(files["slurm/topology.conf"])
        ],
    )


def test_a_level_that_would_split_a_domain_is_left_out() -> None:
    base = topology.Level(
        "leaf", {"g1": ["a", "b"], "g2": ["c"]}, {"a": "g1", "b": "g1", "c": "g2"}
    )
    split = {"a": "pod1", "b": "pod2", "c": "pod2"}  # g1 would sit in two pods
    top = dict.fromkeys("abc", "all")
    levels = topology._stack(base, [("spine", split), ("core", top)])
    assert [lv.tier_name for lv in levels] == ["leaf", "core"]
    assert levels[1].domains == {"all": ["g1", "g2"]}


# --- schema, determinism, speed -----------------------------------------------------------------


def test_scheduler_schema_section_has_descriptions_and_defaults() -> None:
    section = SCHEMA["properties"]["scheduler"]

    def walk(schema: Mapping[str, Any], path: str) -> Iterable[str]:
        if schema.get("type") == "object":
            if schema.get("additionalProperties") is not False:
                yield f"{path}: additionalProperties must be false"
            for key, sub in schema.get("properties", {}).items():
                yield from walk(sub, f"{path}.{key}")
        for key in ("description", "default"):
            if key not in schema:
                yield f"{path}: no {key}"

    assert list(walk(section, "scheduler")) == []


def test_scheduler_defaults_and_typos(tmp_path: Path) -> None:
    head = "apiVersion: wanka/v1\nkind: Cluster\nmetadata:\n  name: a\ncompute:\n  cards: 128\n"
    path = tmp_path / "bp.yaml"
    path.write_text(head, encoding="utf-8")
    assert validate(load_blueprint(path))["scheduler"] == {
        "volcano": {"mode": "hypernodes", "namespace": "volcano-system"},
        "mindcluster": {"namespace": "kube-system", "tor_level": "auto"},
    }
    path.write_text(
        head + "scheduler:\n  volcano: {mode: label}\n  mindcluster: {namespace: Kube}\n"
    )
    with pytest.raises(BlueprintError) as caught:
        validate(load_blueprint(path))
    text = caught.value.render()
    assert (
        "'label' is not one of 'hypernodes', 'labels'" in text and "did you mean 'labels'" in text
    )
    assert "scheduler.mindcluster.namespace" in text


def test_output_is_deterministic(result: pipeline.Result) -> None:
    again = {f.path: f.data for f in scheduler.emit(result.cluster)}
    assert again == {f.path: f.data for f in result.files if f.path.startswith("files/scheduler/")}
