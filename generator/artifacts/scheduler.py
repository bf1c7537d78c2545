"""files/scheduler/: the parameter-plane topology as the job schedulers read it.

One tree of network domains is derived once from the model (the NPU servers' parameter leaves, the
leaves' pods, the servers' supernodes) and rendered for each consumer:

- volcano/hypernodes.yaml: Volcano HyperNodes (topology.volcano.sh/v1alpha1), with
  `scheduler.volcano.mode: hypernodes` (the default); with `mode: labels` instead
  volcano/volcano-controller-configmap.yaml, the controller's label-discovery entry, and the
  volcano.sh/tor|hypernode|hypercluster labels in kubernetes/node-labels.yaml (never both: Volcano
  does not mix hand-made and discovered HyperNodes, volcano-sh/volcano#3850);
- kubernetes/node-labels.yaml: the MindCluster / Ascend node labels of every NPU server;
- mindcluster/basic-tor-node-cm.yaml: switch-affinity input (tor_info, tor_level);
- slurm/topology.conf (topology/tree), slurm/topology-block.conf (topology/block, supernodes only)
  and slurm/topology.yaml (Slurm 25.05+, both topologies by name).

Domains. A server's *access unit* is what it hangs off on the parameter plane: its leaf (single
rail), or the rail group of leaves it is cabled to (multi-rail; named first-last, e.g.
par-leaf-0001-0008). Above the access units: the pod (3 tiers, `par-pod01`) and the whole fabric
(`par-spines` in 2 tiers, `par-cores` in 3). With supernodes the supernode (HCCS scale-up domain)
is the lowest domain, and above it come only those RoCE domains that hold every supernode whole.
A level that would split a domain below it (a rail group across two pods) is left out, so every
level is a strict tree: each server in exactly one domain per level, each domain in one parent.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

from generator.artifacts import OutputFile
from generator.catalog import HostModel, build_catalog
from generator.model import Cluster, Device, ip

PLANE = "parameter"
CODE = "par"  # the parameter plane's switch-name prefix (generator.expand.PLANE_CODE)
MANAGED_BY = ("app.kubernetes.io/managed-by", "wanka")
HYPERNODE_API = "topology.volcano.sh/v1alpha1"
TOPOTREE = "default"  # tree name MindCluster's resource-level-config examples use
LABEL_TOR, LABEL_HYPERNODE, LABEL_HYPERCLUSTER = (
    "volcano.sh/tor",
    "volcano.sh/hypernode",
    "volcano.sh/hypercluster",
)
# Ascend accelerator labels as the device plugin sets them (MindCluster node label reference).
ACCELERATOR = {
    "ascend-910": "huawei-Ascend910",
    "ascend-910b": "huawei-Ascend910",
    "ascend-910c": "huawei-Ascend910",
    "ascend-310": "huawei-Ascend310",
    "ascend-310p": "huawei-Ascend310P",
}
HOST_ARCH = "huawei-arm"  # assumption: every catalog NPU server has Kunpeng (Arm) CPUs
WORKER_SELECTOR = "dls-worker-node"


@dataclass(frozen=True, slots=True)
class Level:
    """One tier of domains."""

    tier_name: str  # supernode | leaf | spine | core
    domains: dict[str, list[str]]  # domain -> members (servers, or domains one level down)
    of: dict[str, str]  # server -> its domain at this level


@dataclass(frozen=True, slots=True)
class Topology:
    servers: tuple[Device, ...]  # NPU servers in model order
    access: dict[str, tuple[Device, ...]]  # access unit -> its leaves
    fabric: tuple[Level, ...]  # access units, pods (3 tiers), the whole fabric
    hyper: tuple[Level, ...]  # supernodes (when any) or access units, then what holds them whole

    @property
    def supernodes(self) -> bool:
        return self.hyper[0].tier_name == "supernode"


def topology(cluster: Cluster) -> Topology:
    """The domain tree, from the model's NPU servers (their parameter leaves) and leaves (pods)."""
    by_name = cluster.device_by_name
    servers = tuple(d for d in cluster.devices if d.role == "npu-server")
    leaves_of = {s.name: s.leaves for s in cluster.npu_servers}
    access: dict[str, tuple[Device, ...]] = {}
    unit_of: dict[str, str] = {}
    members: dict[str, list[str]] = {}
    unit_named: dict[tuple[str, ...], str] = {}  # a server's leaves -> its access unit
    for d in servers:  # model order = slot order on the leaf
        names = leaves_of.get(d.name)
        if not names:
            raise ValueError(f"NPU server {d.name} has no parameter-plane leaf")
        unit = unit_named.get(names)
        if unit is None:
            leaves = tuple(sorted((by_name[n] for n in names), key=lambda x: x.index))
            unit = leaves[0].name
            if len(leaves) > 1:
                unit += "-" + leaves[-1].name.rsplit("-", 1)[-1]
            unit_named[names] = unit
            access.setdefault(unit, leaves)
        unit_of[d.name] = unit
        members.setdefault(unit, []).append(d.name)
    members = dict(sorted(members.items(), key=lambda kv: access[kv[0]][0].index))

    fabric = cluster.fabric(PLANE)
    tiers = fabric.tiers if fabric else 2
    above: list[tuple[str, dict[str, str]]] = []
    if tiers == 3:
        pod_of: dict[str, str] = {}
        for server, unit in unit_of.items():
            pods = {leaf.pod for leaf in access[unit]}
            pod_of[server] = f"{CODE}-pod{pods.pop() + 1:02d}" if len(pods) == 1 else ""
        above.append(("spine", pod_of))
    if tiers >= 2:
        top = f"{CODE}-spines" if tiers == 2 else f"{CODE}-cores"
        above.append(("spine" if tiers == 2 else "core", dict.fromkeys(unit_of, top)))
    fabric_levels = _stack(Level("leaf", members, unit_of), above)

    supernode_of = {d.name: f"supernode-{d.supernode:03d}" for d in servers if d.supernode >= 0}
    if not supernode_of:
        return Topology(servers, access, fabric_levels, fabric_levels)
    if len(supernode_of) != len(servers):
        raise ValueError("some NPU servers are in a supernode and some are not")
    in_supernode: dict[str, list[str]] = {}
    for d in servers:
        in_supernode.setdefault(supernode_of[d.name], []).append(d.name)
    base = Level("supernode", in_supernode, supernode_of)
    return Topology(servers, access, fabric_levels, _stack(base, [("leaf", unit_of), *above]))


def _stack(base: Level, candidates: Sequence[tuple[str, dict[str, str]]]) -> tuple[Level, ...]:
    """`base`, then each candidate level (server -> domain) that holds every domain below whole."""
    levels = [base]
    for tier_name, parent_of in candidates:
        below = levels[-1]
        up: dict[str, str] = {}
        for server, child in below.of.items():
            parent = parent_of.get(server, "")
            if not parent or up.setdefault(child, parent) != parent:
                break
        else:
            domains: dict[str, list[str]] = {}
            for child, parent in up.items():
                domains.setdefault(parent, []).append(child)
            levels.append(Level(tier_name, domains, parent_of))
    return tuple(levels)


# --- hostlists ------------------------------------------------------------------------------

_LAST_NUMBER = re.compile(r"^(.*?)(\d+)(\D*)$")


def hostlist(names: Iterable[str]) -> str:
    """Slurm hostlist expression for `names`: common prefix + bracketed ranges on the last number,
    zero padding kept (`npu-[001-016,018]`). Names whose numbers differ in width go in separate
    groups, so every range has one width. Deterministic: groups sorted, ranges ascending."""
    groups: dict[tuple[str, str, int], set[int]] = {}
    plain: set[str] = set()
    for name in names:
        m = _LAST_NUMBER.match(name)
        if m:
            groups.setdefault((m[1], m[3], len(m[2])), set()).add(int(m[2]))
        else:
            plain.add(name)
    parts = sorted(plain)
    for (prefix, suffix, width), numbers in sorted(groups.items()):
        ordered = sorted(numbers)
        if len(ordered) == 1:
            parts.append(f"{prefix}{ordered[0]:0{width}d}{suffix}")
            continue
        ranges = []
        start = prev = ordered[0]
        for n in [*ordered[1:], None]:
            if n is not None and n == prev + 1:
                prev = n
                continue
            low = f"{start:0{width}d}"
            ranges.append(low if start == prev else f"{low}-{prev:0{width}d}")
            if n is not None:
                start = prev = n
        parts.append(f"{prefix}[{','.join(ranges)}]{suffix}")
    return ",".join(parts)


# --- Volcano --------------------------------------------------------------------------------


def _q(text: str) -> str:
    """A YAML double-quoted scalar (JSON strings are valid YAML)."""
    return json.dumps(text)


def _tier_lines(levels: Sequence[Level], first: int = 1) -> list[str]:
    out = []
    for tier, level in enumerate(levels, start=first):
        names = list(level.domains)
        example = names[0] + (f" .. {names[-1]}" if len(names) > 1 else "")
        out.append(f"#   tier {tier} {level.tier_name}: {len(names)} x ({example})")
    return out


def hypernodes_yaml(cluster: Cluster, topo: Topology) -> str:
    lines = [
        f"# Volcano HyperNodes of {cluster.name}: its parameter-plane topology. Generated by wanka;",
        "# do not edit. Smaller tier = closer; tier 1 holds Nodes, each higher tier the one below:",
        *_tier_lines(topo.hyper),
        "# Apply: kubectl apply -f hypernodes.yaml   (Volcano >= 1.11; tierName needs a newer CRD)",
        "# Remove: kubectl delete hypernodes -l app.kubernetes.io/managed-by=wanka",
        "# Do not enable label discovery for these nodes as well (scheduler.volcano.mode: labels is",
        "# the alternative). A job keeps inside one tier-N domain with",
        "#   spec.networkTopology: {mode: hard, highestTierAllowed: N}",
    ]
    for tier, level in enumerate(topo.hyper, start=1):
        kind = "Node" if tier == 1 else "HyperNode"  # tier 1 holds Nodes, tier k tier k-1
        for name, members in level.domains.items():
            lines += [
                "---",
                f"apiVersion: {HYPERNODE_API}",
                "kind: HyperNode",
                "metadata:",
                f"  name: {_q(name)}",
                "  labels:",
                f"    {MANAGED_BY[0]}: {MANAGED_BY[1]}",
                "spec:",
                f"  tier: {tier}",
                f"  tierName: {level.tier_name}",
                "  members:",
            ]
            lines += [
                f"  - {{type: {kind}, selector: {{exactMatch: {{name: {_q(m)}}}}}}}"
                for m in members
            ]
    return "\n".join(lines) + "\n"


def volcano_label_keys(topo: Topology) -> tuple[str, ...]:
    """Node label keys for label discovery, bottom-up: tier 1, then tier 2, with the keys Volcano
    documents for Ascend A2 (tor) and A3 (hypernode, hypercluster). A third tier (the cores above
    pods) gets no label: the scheduler's implicit cluster root stands for the whole fabric."""
    first = LABEL_HYPERNODE if topo.supernodes else LABEL_TOR
    return (first, LABEL_HYPERCLUSTER)[: len(topo.hyper)]


def controller_configmap_yaml(cluster: Cluster, topo: Topology, namespace: str) -> str:
    keys = volcano_label_keys(topo)
    conf = {
        "networkTopologyDiscovery": [
            {
                "source": "label",
                "enabled": True,
                "config": {
                    "networkTopologyTypes": {
                        ("topologyA3" if topo.supernodes else "topologyA2"): [
                            *({"nodeLabel": k} for k in reversed(keys)),
                            {"nodeLabel": "kubernetes.io/hostname"},
                        ]
                    }
                },
            }
        ]
    }
    body = yaml.safe_dump(conf, sort_keys=False, default_flow_style=False)
    lines = [
        f"# Volcano HyperNode label discovery for {cluster.name}. Generated by wanka; do not edit.",
        "# The nodes carry the labels (kubernetes/node-labels.yaml); the controller builds the",
        "# HyperNodes from them, tiers bottom-up from 1 (tierName = the label key):",
        *(f"#   tier {i} from {k}" for i, k in enumerate(keys, start=1)),
        "# This replaces the whole volcano-controller.conf: merge it by hand if yours has more.",
        "# Do not also apply static HyperNodes (scheduler.volcano.mode: hypernodes).",
        "apiVersion: v1",
        "kind: ConfigMap",
        "metadata:",
        "  name: volcano-controller-configmap",
        f"  namespace: {namespace}",
        "data:",
        "  volcano-controller.conf: |",
        *("    " + line for line in body.splitlines()),
    ]
    return "\n".join(lines) + "\n"


# --- Kubernetes node labels -----------------------------------------------------------------


def accelerator_type(model: HostModel, supernode: bool) -> str:
    """The accelerator-type label the Ascend device plugin sets, or "" when not known."""
    if model.accelerator == "ascend-910b":
        return f"module-910b-{model.npus}"
    if model.accelerator == "ascend-910c":  # the device plugin counts dies
        return f"module-a3-{model.npus * model.dies_per_npu}" + ("-super-pod" if supernode else "")
    if model.accelerator == "ascend-910":
        return "module"
    return ""


def node_labels(cluster: Cluster, topo: Topology) -> dict[str, dict[str, str]]:
    """server -> its labels, in a fixed key order."""
    hosts = build_catalog(cluster.blueprint.get("catalog")).hosts
    mode = cluster.blueprint.get("scheduler", {}).get("volcano", {}).get("mode", "hypernodes")
    racks = {
        r.name: i
        for i, r in enumerate(
            x for x in cluster.racks if x.zone == "training" and x.kind == "compute"
        )
    }
    groups = {}
    if topo.supernodes and len(topo.hyper) > 1:
        groups = {d: i for i, d in enumerate(topo.hyper[1].domains)}
    keys = volcano_label_keys(topo) if mode == "labels" else ()
    out: dict[str, dict[str, str]] = {}
    for d in topo.servers:
        model = hosts[d.model]
        labels = {}
        if model.accelerator in ACCELERATOR:
            labels["accelerator"] = ACCELERATOR[model.accelerator]
        kind = accelerator_type(model, d.supernode >= 0)
        if kind:
            labels["accelerator-type"] = kind
        labels["host-arch"] = HOST_ARCH
        labels["workerselector"] = WORKER_SELECTOR
        if d.supernode >= 0:
            labels["huawei.com/topotree"] = TOPOTREE
            labels["huawei.com/topotree.superpodid"] = str(d.supernode)
            group = topo.hyper[1].of[d.name] if groups else ""
            labels["huawei.com/topotree.groupid"] = str(groups.get(group, 0))
            if d.rack in racks:
                labels["huawei.com/topotree.rackid"] = str(racks[d.rack])
        for key, level in zip(keys, topo.hyper, strict=False):
            labels[key] = level.of[d.name]
        out[d.name] = labels
    return out


def node_labels_yaml(cluster: Cluster, topo: Topology) -> str:
    mode = cluster.blueprint.get("scheduler", {}).get("volcano", {}).get("mode", "hypernodes")
    lines = [
        f"# Kubernetes node labels of the NPU servers of {cluster.name}. Generated by wanka; do not",
        "# edit. One Node object per server holding only metadata.labels, for server-side apply:",
        "#   kubectl apply --server-side --field-manager=wanka -f node-labels.yaml",
        "# It merges these labels into the Nodes and, as field manager wanka, removes labels it set",
        "# before and no longer lists; labels others set stay. Apply after the nodes joined (apply",
        "# creates a Node object for a name not registered yet); try --dry-run=server first. A label",
        "# another manager (e.g. the device plugin) holds with a different value is reported as a",
        "# conflict, not overwritten, unless you add --force-conflicts.",
        "# accelerator, accelerator-type: as the Ascend device plugin sets them; host-arch,",
        "# workerselector: what MindCluster job nodeSelectors match (host-arch assumes Kunpeng CPUs).",
    ]
    if topo.supernodes:
        lines += [
            "# huawei.com/topotree.*: supernode (= rank table super_pod_id), the RoCE domain above it",
            "# (groupid) and compute rack (rackid, 0-based in floor order), for MindCluster",
            f"# multi-level scheduling with resource-level-config tree {TOPOTREE!r}. The device plugin",
            "# sets superpodid from the hardware: these must agree with how the SuperPoDs were set up.",
        ]
    if mode == "labels":
        lines.append(
            "# volcano.sh/*: Volcano HyperNode label discovery (volcano/volcano-controller-configmap.yaml)."
        )
    quoted: dict[tuple[str, str], str] = {}  # most label lines repeat from node to node
    for name, labels in node_labels(cluster, topo).items():
        lines += ["---", "apiVersion: v1", "kind: Node", "metadata:", f"  name: {_q(name)}"]
        lines.append("  labels:")
        for item in labels.items():
            line = quoted.get(item)
            if line is None:
                line = quoted[item] = f"    {item[0]}: {_q(item[1])}"
            lines.append(line)
    return "\n".join(lines) + "\n"


# --- MindCluster ----------------------------------------------------------------------------


def tor_level(cluster: Cluster) -> str:
    """single_layer for a leaf-only plane, double_layer with spines (MindCluster has no third
    level: a 3-tier plane is double_layer, affinity works on the leaves either way)."""
    wanted = cluster.blueprint.get("scheduler", {}).get("mindcluster", {}).get("tor_level", "auto")
    if wanted != "auto":
        return wanted
    fabric = cluster.fabric(PLANE)
    return "single_layer" if fabric and fabric.tiers <= 1 else "double_layer"


def tor_list(cluster: Cluster, topo: Topology) -> list[tuple[str, list[tuple[str, int]]]]:
    """[(tor_ip, [(server_ip, npu_count)])]: one ToR per access unit (a multi-rail group counts as
    one, by its first leaf), its servers in slot order (= slice_id), by in-band address."""
    hosts = build_catalog(cluster.blueprint.get("catalog")).hosts
    by_name = cluster.device_by_name
    inband = {s.name: ip(s.host_ip) for s in cluster.npu_servers if s.host_ip}
    return [
        (
            ip(topo.access[unit][0].loopback),
            [(inband[s], hosts[by_name[s].model].npus) for s in servers if s in inband],
        )
        for unit, servers in topo.fabric[0].domains.items()
    ]


def tor_configmap_yaml(cluster: Cluster, topo: Topology, namespace: str) -> str:
    tors = tor_list(cluster, topo)
    body = [
        "{",
        '  "version": "1.0",',
        f'  "tor_count": {max((len(s) for _, s in tors), default=0)},',
        '  "server_list": [',
    ]
    for tor_id, (tor_ip, servers) in enumerate(tors):
        body += [
            "    {",
            f'      "tor_id": {tor_id},',
            f'      "tor_ip": "{tor_ip}",',
            '      "server": [',
        ]
        body += [
            f'        {{"server_ip": "{server_ip}", "npu_count": {npus}, "slice_id": {slot}}}'
            + ("," if slot < len(servers) - 1 else "")
            for slot, (server_ip, npus) in enumerate(servers)
        ]
        body += ["      ]", "    }" + ("," if tor_id < len(tors) - 1 else "")]
    body += ["  ]", "}"]
    lines = [
        f"# MindCluster switch-affinity topology of {cluster.name}. Generated by wanka; do not edit.",
        "# One ToR per parameter-plane leaf (a multi-rail group counts as one, by its first leaf):",
        "# tor_ip = the leaf's loopback, server_ip = the server's in-band address (its node",
        "# InternalIP, which Volcano's Ascend plugin matches), slice_id = its slot on the leaf,",
        "# tor_count = servers on a full leaf. Jobs opt in with the label tor-affinity.",
        "# Apply: kubectl apply -f basic-tor-node-cm.yaml",
        "apiVersion: v1",
        "kind: ConfigMap",
        "metadata:",
        "  name: basic-tor-node-cm",
        f"  namespace: {namespace}",
        "data:",
        f"  tor_level: {tor_level(cluster)}",
        "  tor_info: |",
        *("    " + line for line in body),
    ]
    return "\n".join(lines) + "\n"


# --- Slurm ----------------------------------------------------------------------------------


def block_sizes(topo: Topology) -> list[int]:
    """The supernode size, then its doublings up to the server count (topology/block)."""
    sizes = [len(next(iter(topo.hyper[0].domains.values())))]
    while sizes[-1] * 2 <= len(topo.servers):
        sizes.append(sizes[-1] * 2)
    return sizes


def slurm_tree(topo: Topology) -> list[tuple[str, str, str]]:
    """(switch, "Nodes" | "Switches", hostlist) for topology/tree, leaves first."""
    return [
        (name, "Nodes" if i == 0 else "Switches", hostlist(members))
        for i, level in enumerate(topo.fabric)
        for name, members in level.domains.items()
    ]


def slurm_blocks(topo: Topology) -> list[tuple[str, str]]:
    return [(name, hostlist(members)) for name, members in topo.hyper[0].domains.items()]


def topology_conf(
    cluster: Cluster, topo: Topology, tree: list[tuple[str, str, str]] | None = None
) -> str:
    lines = [
        f"# Slurm topology.conf of {cluster.name}: the parameter-plane fabric for topology/tree",
        "# (slurm.conf: TopologyPlugin=topology/tree). Generated by wanka; do not edit.",
        "# Leaf switches (a multi-rail group as one) hold the nodes; above them:",
        *_tier_lines(topo.fabric),
        "# Ignored when topology.yaml exists in the same directory.",
    ]
    tree = slurm_tree(topo) if tree is None else tree
    lines += [f"SwitchName={s} {key}={expr}" for s, key, expr in tree]
    return "\n".join(lines) + "\n"


def topology_block_conf(cluster: Cluster, topo: Topology) -> str:
    lines = [
        f"# Slurm topology.conf of {cluster.name} for topology/block: one block per supernode",
        "# (HCCS scale-up domain). Install it as topology.conf with TopologyPlugin=topology/block",
        "# in slurm.conf (Slurm >= 23.11). Generated by wanka; do not edit.",
    ]
    lines += [f"BlockName={b} Nodes={expr}" for b, expr in slurm_blocks(topo)]
    lines.append("BlockSizes=" + ",".join(map(str, block_sizes(topo))))
    return "\n".join(lines) + "\n"


def topology_yaml(
    cluster: Cluster, topo: Topology, tree: list[tuple[str, str, str]] | None = None
) -> str:
    lines = [
        f"# Slurm topology.yaml of {cluster.name} (Slurm >= 25.05; topology.conf is then ignored).",
        "# Generated by wanka; do not edit. Partitions pick a topology by name (Topology=...):",
        "#   fabric: the parameter-plane leaf/spine tree (topology/tree)",
    ]
    if topo.supernodes:
        lines += [
            "#   supernodes: one block per supernode (topology/block), the cluster default",
            "- topology: supernodes",
            "  cluster_default: true",
            "  block:",
            f"    block_sizes: [{', '.join(map(str, block_sizes(topo)))}]",
            "    blocks:",
        ]
        lines += [f"    - {{block: {_q(b)}, nodes: {_q(expr)}}}" for b, expr in slurm_blocks(topo)]
    lines += [
        "- topology: fabric",
        f"  cluster_default: {'false' if topo.supernodes else 'true'}",
        "  tree:",
        "    switches:",
    ]
    lines += [
        f"    - {{switch: {_q(s)}, {'nodes' if key == 'Nodes' else 'children'}: {_q(expr)}}}"
        for s, key, expr in (slurm_tree(topo) if tree is None else tree)
    ]
    return "\n".join(lines) + "\n"


# --- emit -----------------------------------------------------------------------------------


def emit(cluster: Cluster, analysis: object = None) -> Iterator[OutputFile]:
    if cluster.fabric(PLANE) is None:
        return
    topo = topology(cluster)
    settings: Mapping[str, Any] = cluster.blueprint.get("scheduler", {})
    volcano = settings.get("volcano", {})
    mindcluster = settings.get("mindcluster", {})
    root = "files/scheduler"

    def out(path: str, text: str) -> OutputFile:
        return OutputFile(f"{root}/{path}", text.encode())

    if volcano.get("mode", "hypernodes") == "labels":
        namespace = volcano.get("namespace", "volcano-system")
        yield out(
            "volcano/volcano-controller-configmap.yaml",
            controller_configmap_yaml(cluster, topo, namespace),
        )
    else:
        yield out("volcano/hypernodes.yaml", hypernodes_yaml(cluster, topo))
    yield out("kubernetes/node-labels.yaml", node_labels_yaml(cluster, topo))
    namespace = mindcluster.get("namespace", "kube-system")
    yield out("mindcluster/basic-tor-node-cm.yaml", tor_configmap_yaml(cluster, topo, namespace))
    tree = slurm_tree(topo)
    yield out("slurm/topology.conf", topology_conf(cluster, topo, tree))
    if topo.supernodes:
        yield out("slurm/topology-block.conf", topology_block_conf(cluster, topo))
    yield out("slurm/topology.yaml", topology_yaml(cluster, topo, tree))
