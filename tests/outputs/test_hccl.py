"""HCCL: rank tables obey the reader's rules, agree with hccn files, cabling and the IP plan;
jobs land on the fewest leaves; parallel groups are checked against the scale-up domain."""

from __future__ import annotations

import copy
import ipaddress
import json
from collections import Counter

import pytest

from generator import pipeline
from generator.analysis.placement import RequestError, placement, select_servers
from generator.artifacts import hccl
from generator.artifacts.hccl import rank_table, rank_table_problems
from generator.cli import main
from generator.model import ip, network_of
from tests.support.examples import ROOT, expanded, generated
from tests.support.npu_facts_fixture import write_facts

SUPERNODE_BP = """\
apiVersion: wanka/v1
kind: Cluster
metadata: {name: sn-test}
compute: {server: atlas-900-a3-superpod-node, servers: 96, supernode: {servers: 48}}
zones:
  training: {rack: {servers: 4, power_kw: 30}}
networks:
  parameter: {leaf: {model: ce9860-4c-ei}, spine: {model: ce16808}}
"""


def files_of(result) -> dict[str, bytes]:
    return {f.path: f.data for f in result.files}


def parse_hccn(text: str) -> dict[int, dict[str, str]]:
    out: dict[int, dict[str, str]] = {}
    for line in text.splitlines():
        key, value = line.split("=", 1)
        name, _, n = key.rpartition("_")
        out.setdefault(int(n), {})[name] = value
    return out


@pytest.fixture(scope="module")
def supernode(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sn")
    path = folder / "sn.yaml"
    path.write_text(SUPERNODE_BP)
    # the 1.2 table needs NPU facts from the hardware: a synthetic test fixture stands in
    facts = write_facts(pipeline.run(path, emit=False).cluster, folder / "facts.yml")
    result = pipeline.run(path, facts=facts, emit=False)
    # the tests read the rank table only: the bytes `wanka generate` writes (emitters are pure)
    result.files = list(hccl.emit(result.cluster, result.analysis))
    return result


# --- the reader's rules ----------------------------------------------------------------------


def test_every_example_rank_table_obeys_every_reader_rule(example):
    table = json.loads(files_of(example)["files/hccl/rank_table.json"])
    assert rank_table_problems(table) == []
    assert table["version"] == (
        "1.2" if any(s.supernode is not None for s in example.cluster.npu_servers) else "1.0"
    )
    assert table["status"] == "completed" and table["server_count"] == str(
        len(table["server_list"])
    )


def _break(table, fn):
    broken = copy.deepcopy(table)
    fn(broken)
    return rank_table_problems(broken)


BREAKERS = {
    "scalar not a string": (
        lambda t: t["server_list"][0]["device"][0].update(rank_id=0),
        "not a string",
    ),
    "version missing": (lambda t: t.pop("version"), "version missing"),
    "status initializing": (lambda t: t.update(status="initializing"), "status"),
    "server_count wrong": (lambda t: t.update(server_count="3"), "server_count"),
    "server_count missing": (lambda t: t.pop("server_count"), "server_count missing"),
    "empty server_list": (lambda t: t.update(server_list=[]), "server_list"),
    "duplicate server_id": (
        lambda t: t["server_list"][1].update(server_id=t["server_list"][0]["server_id"]),
        "not unique",
    ),
    "long server_id": (lambda t: t["server_list"][0].update(server_id="x" * 65), "64"),
    "bad host_ip": (lambda t: t["server_list"][0].update(host_ip="10.0.0.300"), "host_ip"),
    # strict dotted quads, as ipaddress reads them: no leading zero, no short form
    "host_ip leading zero": (lambda t: t["server_list"][0].update(host_ip="10.0.0.01"), "host_ip"),
    "short device_ip": (
        lambda t: t["server_list"][0]["device"][0].update(device_ip="10.1"),
        "not an IPv4 address",
    ),
    "device_id out of range": (
        lambda t: t["server_list"][0]["device"][0].update(device_id="16"),
        "device_id",
    ),
    "device_ip repeated": (
        lambda t: t["server_list"][1]["device"][0].update(
            device_ip=t["server_list"][0]["device"][0]["device_ip"]
        ),
        "also used",
    ),
    "device_ip missing": (
        lambda t: (
            [s.pop("host_ip") for s in t["server_list"]]
            and t["server_list"][0]["device"][0].pop("device_ip")
        ),
        "device_ip missing",
    ),
    "unequal IP counts": (
        lambda t: t["server_list"][0]["device"][0].update(device_ip="10.9.9.1,10.9.9.2"),
        "different numbers of device IPs",
    ),
    "rank gap": (lambda t: t["server_list"][-1]["device"][-1].update(rank_id="9999"), "0..N-1"),
    "interleaved ranks": (
        lambda t: (
            t["server_list"][0]["device"][-1].update(rank_id="8"),
            t["server_list"][1]["device"][0].update(rank_id="7"),
        ),
        "interleave",
    ),
    "device_port out of range": (
        lambda t: t["server_list"][0]["device"][0].update(device_port="70000"),
        "device_port",
    ),
    "different device counts": (lambda t: t["server_list"][-1]["device"].pop(), "device counts"),
}


@pytest.mark.parametrize("case", sorted(BREAKERS))
def test_validator_rejects_each_broken_rule(case):
    table = json.loads(files_of(generated("pod-128.yaml"))["files/hccl/rank_table.json"])
    fn, needle = BREAKERS[case]
    found = _break(table, fn)
    assert any(needle in p for p in found), found


def test_supernode_blueprint_gets_a_valid_version_1_2_table(supernode):
    table = json.loads(files_of(supernode)["files/hccl/rank_table.json"])
    assert table["version"] == "1.2" and rank_table_problems(table) == []
    pods = table["super_pod_list"]
    assert len(pods) == 2 and {len(p["server_list"]) for p in pods} == {48}
    listed = [m["server_id"] for p in pods for m in p["server_list"]]
    assert sorted(listed) == sorted(s["server_id"] for s in table["server_list"])
    for pod in pods:
        members = {m["server_id"] for m in pod["server_list"]}
        sdids = [
            d["super_device_id"]
            for s in table["server_list"]
            if s["server_id"] in members
            for d in s["device"]
        ]
        assert len(sdids) == len(set(sdids)) == 48 * 16  # 16 dies (ranks) per A3 node


SUPERPOD_BREAKERS = {
    "super_device_id missing": (
        lambda t: t["server_list"][0]["device"][0].pop("super_device_id"),
        "super_device_id missing",
    ),
    "pod sizes differ": (
        lambda t: t["super_pod_list"][0]["server_list"].pop(),
        "different numbers of servers",
    ),
    "unknown pod member": (
        lambda t: t["super_pod_list"][0]["server_list"].append({"server_id": "1.2.3.4"}),
        "not in server_list",
    ),
    "super_device_id repeats": (
        lambda t: t["server_list"][0]["device"][1].update(
            super_device_id=t["server_list"][0]["device"][0]["super_device_id"]
        ),
        "repeats",
    ),
    "duplicate pod id": (
        lambda t: t["super_pod_list"][1].update(
            super_pod_id=t["super_pod_list"][0]["super_pod_id"]
        ),
        "not unique",
    ),
    "pods interleaved": (
        lambda t: t["server_list"].insert(1, t["server_list"].pop(60)),
        "contiguously",
    ),
}


@pytest.mark.parametrize("case", sorted(SUPERPOD_BREAKERS))
def test_validator_rejects_each_broken_superpod_rule(supernode, case):
    table = json.loads(files_of(supernode)["files/hccl/rank_table.json"])
    fn, needle = SUPERPOD_BREAKERS[case]
    found = _break(table, fn)
    assert any(needle in p for p in found), found


# --- cross-checks: rank table <-> hccn <-> cabling <-> IP plan -------------------------------------


def test_rank_table_hccn_cabling_and_ip_plan_agree(example):
    cluster, files = example.cluster, files_of(example)
    table = json.loads(files["files/hccl/rank_table.json"])
    host_of = {ip(a.ip): a.device for a in cluster.addresses if a.plane == "inband"}
    cabled = {
        (x.a_device, x.a_port): x.b_device
        for x in cluster.links
        if x.plane == "parameter" and x.kind == "host"
    }
    plan = {(a.device, a.port): a for a in cluster.addresses if a.plane == "parameter"}
    subnets = {s.name: s for s in cluster.subnets if s.plane == "parameter"}
    lossless = cluster.lossless_of("parameter")
    for server in table["server_list"]:
        host = host_of[server["server_id"]]
        assert server["host_ip"] == server["server_id"]
        conf = parse_hccn(files[f"files/hccn/{host}.conf"].decode())
        assert sorted(conf) == [int(d["device_id"]) for d in server["device"]]
        for dev in server["device"]:
            n = int(dev["device_id"])
            port = f"npu{n}"
            assert conf[n]["address"] == dev["device_ip"] == ip(plan[(host, port)].ip)
            leaf = cabled[(host, port)]
            subnet = next(  # A3: a leaf owns a subnet per die position
                s
                for s in subnets.values()
                if leaf in s.owners
                and s.network == network_of(int(ipaddress.IPv4Address(dev["device_ip"])), s.prefix)
            )
            assert conf[n]["gateway"] == conf[n]["netdetect"] == ip(subnet.gateway)
            assert (
                conf[n]["bitmap"] == lossless.pfc_bitmap
                and conf[n]["dscp_tc"] == f"{lossless.dscp}:{lossless.tc},"
            )
            assert conf[n]["mtu"] == str(lossless.mtu)
        commands = files[f"files/hccn/{host}.sh"].decode()
        for dev in server["device"]:
            assert f"-i {dev['device_id']} -ip -s address {dev['device_ip']} netmask" in commands


def test_rank_order_follows_the_physical_topology(example):
    servers = example.cluster.npu_servers
    leaf_index = {
        d.name: d.index
        for d in example.cluster.devices
        if d.role == "leaf" and d.plane == "parameter"
    }
    keys = [(s.supernode, s.pod, leaf_index[s.leaves[0]]) for s in servers]
    assert keys == sorted(keys)
    table = json.loads(files_of(example)["files/hccl/rank_table.json"])
    ranks = [int(d["rank_id"]) for s in table["server_list"] for d in s["device"]]
    assert ranks == list(range(len(ranks)))


def test_hccl_environment_is_derived_from_the_lossless_class_and_in_band_network(example):
    cluster, files = example.cluster, files_of(example)
    lossless = cluster.lossless_of("parameter")
    base = example.blueprint["hccl"]["if_base_port"]
    sysctl = files["files/hccl/sysctl-hccl.conf"].decode()
    assert f"net.ipv4.ip_local_reserved_ports = {base}-{base + 31}" in sysctl
    inband = {a.device: ip(a.ip) for a in cluster.addresses if a.plane == "inband"}
    for s in cluster.npu_servers[:50]:
        env = dict(
            line.removeprefix("export ").split("=", 1)
            for line in files[f"files/hccl/env/{s.name}.sh"].decode().splitlines()
            if line.startswith("export ")
        )
        assert env["HCCL_RDMA_SL"] == str(lossless.priority) and env["HCCL_RDMA_TC"] == str(
            4 * lossless.dscp
        )
        assert env["HCCL_IF_IP"] == inband[s.name] and env["HCCL_IF_BASE_PORT"] == str(base)
        for key, value in example.blueprint["hccl"]["env"].items():
            assert env[key] == str(value)


# --- job placement ------------------------------------------------------------------------------


def _fewest_leaves(cluster, count, excluded=()):
    free = Counter(s.leaves for s in cluster.npu_servers if s.name not in excluded)
    sizes = sorted(free.values(), reverse=True)
    return next(k for k in range(1, len(sizes) + 1) if sum(sizes[:k]) >= count)


def test_a_64_server_job_on_10k_spans_the_fewest_leaves():
    cluster = expanded("wanka-10k.yaml").cluster  # the model only: no files, about a second
    sel = select_servers(cluster, 64)
    assert len(sel.servers) == 64 and sel.leaves == 16 == _fewest_leaves(cluster, 64)
    assert sel.pods == 1 and sel.tier == "spine"
    table = rank_table(sel.servers)
    assert rank_table_problems(table) == [] and table["server_count"] == "64"


@pytest.mark.parametrize("seed", range(5))
def test_jobs_around_drained_servers_still_use_the_fewest_leaves(seed):
    import random

    cluster = expanded("wanka-10k.yaml").cluster
    rng = random.Random(seed)
    drained = rng.sample([s.name for s in cluster.npu_servers], 200)
    count = rng.randint(10, 600)
    sel = select_servers(cluster, count, exclude=drained)
    assert len(sel.servers) == count and not {s.name for s in sel.servers} & set(drained)
    assert sel.leaves == _fewest_leaves(cluster, count, drained)


def test_job_inside_one_pod_when_it_fits():
    cluster = expanded("wanka-10k.yaml").cluster
    sel = select_servers(cluster, 250)  # a pod: 72 leaves x 4 servers = 288 servers
    assert sel.pods == 1 and sel.tier == "spine"
    assert select_servers(cluster, 300).pods == 2


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--servers", "2000"], "2000 servers requested but only 128 available"),
        (["--hosts", "npu-0001,nope-1"], "unknown NPU server: nope-1"),
        (["--hosts", "npu-0001", "--exclude", "npu-0001"], "every candidate is excluded"),
        (["--cards", "12"], "not a whole number of 8-card servers"),
    ],
)
def test_bad_job_requests_are_refused_clearly(args, message, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    code = main(["ranktable", "blueprints/cluster-1k.yaml", *args])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err


def test_ranktable_command_writes_a_valid_job_table(tmp_path, capsys, monkeypatch):
    out = tmp_path / "job.json"
    monkeypatch.chdir(ROOT)
    code = main(["ranktable", "blueprints/cluster-1k.yaml", "--cards", "512", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "64 servers on 16 leaf switches, 1 pod" in err
    table = json.loads(out.read_text())
    assert rank_table_problems(table) == [] and len(table["server_list"]) == 64


def test_placement_warns_when_tensor_parallel_leaves_the_server():
    cluster = expanded("wanka-10k.yaml").cluster
    servers = select_servers(cluster, 64).servers
    ok = {r.kind: r for r in placement(cluster, servers, tp=8, pp=4)}
    assert ok["tp"].tier == "server" and not ok["tp"].warning and ok["dp"].size == 16
    bad = {r.kind: r for r in placement(cluster, servers, tp=16, pp=4)}
    assert bad["tp"].tier == "leaf" and "keep tp <= 8" in bad["tp"].warning
    assert not bad["pp"].warning  # pipeline traffic may cross the fabric
    with pytest.raises(RequestError, match="must divide dp"):
        placement(cluster, servers, tp=8, pp=4, ep=3)
    with pytest.raises(RequestError, match="ranks"):
        placement(cluster, servers, tp=8, pp=4, dp=3)


@pytest.mark.parametrize(
    "sizes",
    [{"tp": 8, "pp": 4}, {"tp": 2, "sp": 2, "pp": 2, "ep": 4}, {"tp": 16}, {"pp": 8}, {"dp": 1024}],
    ids=str,
)
def test_placement_reports_the_widest_tier_of_every_group(sizes):
    """Each kind's tier is the widest that any of its groups crosses (checked here group by
    group, against groups made independently of placement's), kinds of single ranks are left
    out; the servers are spread over several pods, so some groups reach the core."""
    from itertools import product

    from generator.analysis.placement import TIERS, tier_of

    cluster = expanded("wanka-10k.yaml").cluster
    servers = cluster.npu_servers[::10]
    where = [(s, d) for s in servers for d in range(len(s.devices))]
    tp, sp, pp, ep = (sizes.get(k, 1) for k in ("tp", "sp", "pp", "ep"))
    dp = len(where) // (tp * sp * pp)
    groups: dict[str, dict[tuple, list[int]]] = {k: {} for k in ("tp", "sp", "dp", "pp", "ep")}
    for t, s, d, p in product(range(tp), range(sp), range(dp), range(pp)):
        rank = t + tp * (s + sp * (d + dp * p))
        for kind, key in (
            ("tp", (s, d, p)),
            ("sp", (t, d, p)),
            ("dp", (t, s, p)),
            ("pp", (t, s, d)),
            ("ep", (t, s, d // ep, p)),
        ):
            groups[kind].setdefault(key, []).append(rank)
    expected = {
        kind: TIERS[max(TIERS.index(tier_of(cluster, [where[r] for r in g])) for g in gs.values())]
        for kind, gs in groups.items()
        if len(next(iter(gs.values()))) > 1
    }
    reports = {r.kind: r.tier for r in placement(cluster, servers, **sizes)}
    assert reports == expected and "core" in reports.values()


def test_supernode_scale_up_domain_is_the_supernode(supernode):
    cluster = supernode.cluster
    # 16 ranks (dies) per A3 node: tp=32 spans two nodes, inside one supernode
    reports = {r.kind: r for r in placement(cluster, cluster.npu_servers, tp=32, sp=2, pp=2)}
    assert reports["tp"].tier == "supernode" and not reports["tp"].warning
    assert not reports["sp"].warning  # tp*sp = 64 ranks, inside a 768-rank supernode


def test_blueprint_parallelism_is_a_design_check():
    found = {f.code: f for f in expanded("wanka-10k.yaml").findings if f.code == "parallelism"}
    assert found and found["parallelism"].severity == "info"


def test_inconsistent_lossless_settings_stop_the_run(tmp_path, capsys):
    text = (ROOT / "blueprints" / "pod-128.yaml").read_text() + "hccl:\n  env: {HCCL_RDMA_SL: 3}\n"
    bp = tmp_path / "bad.yaml"
    bp.write_text(text)
    code = main(["generate", str(bp), "-o", str(tmp_path / "o")])  # in this process: no imports
    err = capsys.readouterr().err
    assert code == 2 and "HCCL_RDMA_SL" in err and not (tmp_path / "o").exists()
    assert "Traceback" not in err
