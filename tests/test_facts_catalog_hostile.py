"""Hostile NPU facts files and catalog overrides (#31 item 5): each refused by `wanka generate`
with exit 2, a message at the file, line, column and YAML path of the value to change, a hint,
and nothing written; and the facts of a 100,000-card A3 cluster load.

Facts are checked against a small A3 cluster written here: 8 Atlas 900 A3 nodes (8 NPUs x 2 dies
each), 2 supernodes of 4, with facts in the layout roles/npu_facts writes (yaml dump, 2-space
indent, sorted keys) made by tests/npu_facts_fixture.py (SDIDs unique per Super Pod, Super Pod
ID = supernode + 7). Catalog overrides are checked on the 16-card TINY blueprint.
"""

from __future__ import annotations

import copy
import time
from pathlib import Path

import pytest
import yaml

from generator import cli, pipeline
from generator.blueprint.facts import MAX_BYTES, load_npu_facts
from tests.conftest import ROOT, TINY
from tests.npu_facts_fixture import write_facts

DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MARK = "__RAW__"
A3_TINY = (ROOT / "blueprints" / "supernode-768.yaml").read_text()
for old, new in (
    ("servers: 96", "servers: 8"),
    ("supernode: {servers: 48}", "supernode: {servers: 4}"),
    ("count: 6}", "count: 3}"),
    ("controller: 3", "controller: 1"),
    ("name: supernode-768", "name: a3-tiny"),
):
    A3_TINY = A3_TINY.replace(old, new)


@pytest.fixture(scope="module")
def a3(tmp_path_factory) -> tuple[Path, dict]:
    """The A3 blueprint and the facts data of its 8 servers (npu-001..004 in supernode 0,
    Super Pod 7; npu-005..008 in supernode 1, Super Pod 8)."""
    folder = tmp_path_factory.mktemp("a3")
    bp = folder / "a3-tiny.yaml"
    bp.write_text(A3_TINY)
    cluster = pipeline.run(bp, emit=False).cluster
    facts = write_facts(cluster, folder / "facts.yml")
    return bp, yaml.load(facts.read_text(), LOADER)


def facts_file(tmp_path: Path, data: dict, raw: str = "") -> tuple[Path, int, int]:
    """`data` written as roles/npu_facts writes it, the value `MARK` replaced by the text `raw`;
    the file, and the line and column of that value (0, 0 without one)."""
    text = yaml.dump(data, Dumper=DUMPER, indent=2, sort_keys=True)
    line = column = 0
    for number, written in enumerate(text.splitlines(), 1):
        if MARK in written:
            line, column = number, len(written) - len(written.lstrip(" -")) + 1  # at its key
    path = tmp_path / "facts.yml"
    path.write_text(text.replace(MARK, raw))
    return path, line, column


def refused(tmp_path: Path, capsys, bp: Path, facts: Path | None = None) -> str:
    """`wanka generate` exits 2 with every line located in `located` (the facts file, else the
    blueprint), no traceback and no output folder; returns stderr."""
    out = tmp_path / "out"
    args = ["generate", str(bp), "-o", str(out)] + (["--facts", str(facts)] if facts else [])
    code = cli.main(args)
    stdout, err = capsys.readouterr()
    assert code == 2, stdout + err
    assert "Traceback" not in err and "AssertionError" not in err
    located = facts or bp
    lines = [x for x in err.strip().splitlines() if not x.startswith(("warning:", "info:"))]
    assert lines and all(x.startswith(f"{located}:") for x in lines), err
    assert not out.exists()
    return err


def set_die(data: dict, host: str, index: int, **ids) -> dict:
    data = copy.deepcopy(data)
    data["hosts"][host]["devices"][index].update(ids)
    return data


# --- facts numbers: a whole number 0..2**32-1 written as one, else what to write -------------

NUMBERS = [
    ("sdid", "32768.0", "32768.0 is a decimal fraction; sdid is a whole number", "write 32768"),
    ("chip_id", "'1'", "'1' is quoted text; chip_id is a whole number", "write 1 without quotes"),
    ("server_index", "-2", "-2 is outside 0..4294967295", "collect the facts again"),
    ("super_pod_id", "99999999999", "99999999999 is outside 0..4294967295", "collect the facts"),
    ("npu_id", "false", "false is true/false, not an id", "write the NPU ID in `npu-smi info -m`"),
    ("device_id", "[3]", "device_id is a list", "Chip Phy-ID"),
]


@pytest.mark.parametrize(("key", "raw", "message", "hint"), NUMBERS)
def test_facts_numbers_are_whole_ids(tmp_path, capsys, a3, key, raw, message, hint):
    bp, data = a3
    facts, line, column = facts_file(tmp_path, set_die(data, "npu-003", 5, **{key: MARK}), raw)
    err = refused(tmp_path, capsys, bp, facts)
    assert f"{facts}:{line}:{column}: hosts.npu-003.devices[5].{key}: {message}" in err
    assert hint in err


# --- die ids against the server model (A3: 8 NPUs x 2 dies, dies 2k, 2k+1 on NPU k) -----------

DIES = [
    # (host, {die: ids}, (die, key) of the located value, message)
    ("npu-002", {3: {"chip_id": 2}}, (3, "chip_id"), "chip_id 2: the server model has 2 dies per"),
    (
        "npu-006",
        {15: {"npu_id": 8}},
        (15, "npu_id"),
        "npu_id 8: the server model has 8 NPUs (0..7)",
    ),
    (  # NPU 2's die 0 claims to be NPU 3 chip 1, which die 7 is
        "npu-004",
        {4: {"npu_id": 3, "chip_id": 1}},
        (7, "npu_id"),
        "NPU 3 chip 1 is listed twice on npu-004 (devices[4] and [7])",
    ),
    (  # dies 2 and 11 swap NPU and chip ids: each pair once, but not the model's layout
        "npu-001",
        {2: {"npu_id": 5, "chip_id": 1}, 11: {"npu_id": 1, "chip_id": 0}},
        (2, "npu_id"),
        "device 2 is NPU 5 chip 1 here; the model puts it on NPU 1 chip 0",
    ),
]


@pytest.mark.parametrize(("host", "changes", "at", "message"), DIES)
def test_facts_die_ids_agree_with_the_server_model(
    tmp_path, capsys, a3, host, changes, at, message
):
    bp, data = a3
    for die, ids in changes.items():
        data = set_die(data, host, die, **ids)
    value = data["hosts"][host]["devices"][at[0]][at[1]]
    facts, line, column = facts_file(
        tmp_path, set_die(data, host, at[0], **{at[1]: MARK}), str(value)
    )
    err = refused(tmp_path, capsys, bp, facts)
    assert f"{facts}:{line}:{column}: hosts.{host}.devices[{at[0]}].{at[1]}: {message}" in err


def test_facts_with_fewer_dies_than_the_model_are_refused_at_the_list(tmp_path, capsys, a3):
    bp, data = a3
    data = copy.deepcopy(data)
    data["hosts"]["npu-007"]["devices"] = data["hosts"]["npu-007"]["devices"][:12]
    facts, _, _ = facts_file(tmp_path, data)
    err = refused(tmp_path, capsys, bp, facts)
    line = facts.read_text().splitlines().index("  npu-007:") + 2  # `    devices:` below it
    assert (
        f"{facts}:{line}:5: hosts.npu-007.devices: npu-007 lists 12 dies, device ids 0..11" in err
    )
    assert "the blueprint's server model gives it 16 (0..15)" in err


# --- Super Pod IDs against the blueprint's supernodes ----------------------------------------


def move(data: dict, host: str, pod: int, index: int, sdid_base: int) -> dict:
    """`host` reported in Super Pod `pod` at Server Index `index`, with SDIDs of its own."""
    data = copy.deepcopy(data)
    for k, die in enumerate(data["hosts"][host]["devices"]):
        die.update(super_pod_id=pod, server_index=index, sdid=sdid_base + k)
    return data


def test_a_node_whose_super_pod_disagrees_with_its_supernode(tmp_path, capsys, a3):
    bp, data = a3
    data = move(data, "npu-006", 9, 0, 1 << 20)  # supernode 1 reports 8; npu-006 says 9
    data["hosts"]["npu-006"]["devices"][0]["super_pod_id"] = MARK
    facts, line, column = facts_file(tmp_path, data, "9")
    err = refused(tmp_path, capsys, bp, facts)
    assert (
        f"{facts}:{line}:{column}: hosts.npu-006.devices[0].super_pod_id: npu-006 reports Super "
        "Pod ID 9; the blueprint puts it in supernode-001, whose other 3 servers report 8"
    ) in err


def test_two_supernodes_sharing_one_super_pod_id(tmp_path, capsys, a3):
    bp, data = a3
    for n, host in enumerate(("npu-005", "npu-006", "npu-007", "npu-008")):
        data = move(data, host, 7, 4 + n, (4 + n) << 22)  # indexes 4..7 of Super Pod 7
    data["hosts"]["npu-005"]["devices"][0]["super_pod_id"] = MARK
    facts, line, column = facts_file(tmp_path, data, "7")
    err = refused(tmp_path, capsys, bp, facts)
    assert (
        f"{facts}:{line}:{column}: hosts.npu-005.devices[0].super_pod_id: Super Pod ID 7 is "
        "reported in supernode-000 (npu-001) and in supernode-001 (npu-005)"
    ) in err
    assert "check compute.supernode.servers against the hardware" in err


def test_one_node_reporting_two_super_pods(tmp_path, capsys, a3):
    bp, data = a3
    facts, line, column = facts_file(tmp_path, set_die(data, "npu-002", 9, super_pod_id=MARK), "12")
    err = refused(tmp_path, capsys, bp, facts)
    assert (
        f"{facts}:{line}:{column}: hosts.npu-002.devices[9].super_pod_id: npu-002's dies report "
        "super_pod_id [7, 12]; one server has one"
    ) in err


# --- facts size: limits for real clusters, a hostile size refused before it is read -----------

HOST = "  {name}:\n    devices:\n" + "".join(
    f"    - chip_id: {d % 2}\n      device_id: {d}\n      npu_id: {d // 2}\n"
    f"      sdid: {{sdid{d}}}\n      server_index: {{index}}\n      super_pod_id: {{pod}}\n"
    for d in range(16)
)


def a3_facts(nodes: int, per_pod: int = 48) -> str:
    """Facts of `nodes` A3 nodes in the role's layout, `per_pod` nodes per Super Pod, from a
    one-node template (SDIDs as npu_facts_fixture makes them)."""
    parts = ["hosts:\n"]
    for n in range(nodes):
        pod, index = divmod(n, per_pod)
        sdids = {f"sdid{d}": (index << 22) | (d << 16) | 0x8000 for d in range(16)}
        parts.append(HOST.format(name=f"npu-{n + 1:05d}", index=index, pod=pod, **sdids))
    return "".join(parts) + "kind: NpuFacts\n"


def test_a_200_mb_facts_file_is_refused_at_once(tmp_path, capsys, a3):
    bp, _ = a3
    facts = tmp_path / "facts.yml"
    with open(facts, "wb") as f:
        f.truncate(200 * 2**20)  # sparse: nothing is written, the size is what counts
    start = time.perf_counter()
    err = refused(tmp_path, capsys, bp, facts)
    assert time.perf_counter() - start < 5
    assert f"{facts}: (document): the file is too large: 209,715,200 bytes, the limit is" in err
    assert "the facts of a 100,000-card A3 cluster are 24 MB" in err


def test_a_large_facts_file_outside_the_role_layout_is_refused_at_the_line(tmp_path, capsys, a3):
    bp, _ = a3
    text = a3_facts(2400)  # 4.6 MB: more than a blueprint may be, read only in the role's layout
    facts = tmp_path / "facts.yml"
    facts.write_text(text.replace("      sdid: 12943360\n", "      sdid: 1.2943360e+7\n", 1))
    line = text.splitlines().index("      sdid: 12943360") + 1
    err = refused(tmp_path, capsys, bp, facts)
    assert (
        f"{facts}:{line}:13: hosts.npu-00004.devices[5].sdid: `1.2943360e+7` is outside the "
        "layout roles/npu_facts writes"
    ) in err
    assert "write every id as a whole decimal number" in err
    facts.write_text(text.replace("hosts:\n", "hosts: {npu-x: {devices: []}}\nhost:\n", 1))
    err = refused(tmp_path, capsys, bp, facts)
    assert f"{facts}:1:1: (document): `hosts: {{npu-x: {{devices: []}}}}` is outside" in err


def test_many_values_in_a_small_hand_written_file_point_to_the_role_layout(tmp_path, capsys, a3):
    bp, _ = a3
    die = "{{device_id: {d}, npu_id: {n}, chip_id: {c}, sdid: {d}, super_pod_id: 0, server_index: {h}}}"
    hosts = (
        f"npu-{h:03d}: {{devices: ["
        + ", ".join(die.format(d=d, n=d // 2, c=d % 2, h=h) for d in range(16))
        + "]}"
        for h in range(600)
    )
    facts = tmp_path / "facts.yml"  # 600 nodes in flow style: 0.5 MB, 124,800 values
    facts.write_text("{kind: NpuFacts, hosts: {" + ", ".join(hosts) + "}}\n")
    err = refused(tmp_path, capsys, bp, facts)
    assert "the document has more than 100,000 values" in err
    assert "write the file in the layout roles/npu_facts writes" in err


@pytest.mark.slow
def test_the_facts_of_a_100000_card_a3_cluster_load(tmp_path):
    """12,500 A3 nodes x 16 dies: 24 MB, 1.2 million values, as roles/npu_facts writes them."""
    facts = tmp_path / "facts.yml"
    facts.write_text(a3_facts(12_500))
    size = facts.stat().st_size
    assert 20 * 2**20 < size < MAX_BYTES / 2
    start = time.process_time()
    loaded = load_npu_facts(facts)
    seconds = time.process_time() - start
    assert len(loaded.hosts) == 12_500 and seconds < 30, seconds
    last = loaded.hosts["npu-12500"]
    assert [d.device_id for d in last] == list(range(16))
    assert {(d.super_pod_id, d.server_index) for d in last} == {divmod(12_499, 48)}
    assert last[15].sdid == (12_499 % 48) << 22 | 15 << 16 | 0x8000


# --- catalog overrides: ports named once, Linux NIC names, counts, whole ports mappings ---------

A2_PORTS = {  # the shipped atlas-800t-a2 ports, written out in an override
    "npu": "{count: 8, speed: 200, name: 'npu{n}'}",
    "storage": "{count: 2, speed: 100, name: 'stor{n}'}",
    "business": "{count: 2, speed: 25, name: 'biz{n}'}",
    "inband": "{count: 1, speed: 10, name: 'mgmt{n}'}",
    "bmc": "{count: 1, speed: 1, name: 'bmc'}",
}


def catalog_refused(tmp_path: Path, capsys, section: str, model: str, lines: list[str]) -> tuple:
    """TINY with `catalog.<section>.<model>:` and `lines` under it (4-space indented); the
    blueprint and stderr of its refusal."""
    body = "".join(f"      {x}\n" for x in lines)
    bp = tmp_path / "bp.yaml"
    bp.write_text(TINY + f"catalog:\n  {section}:\n    {model}:\n" + body)
    return bp, refused(tmp_path, capsys, bp)


def server_ports(**changed: str) -> list[str]:
    ports = {**A2_PORTS, **changed}
    return ["ports:"] + [f"  {role}: {spec}" for role, spec in ports.items() if spec]


def line_of(bp: Path, text: str) -> int:
    """The line of the last line under `catalog:` that holds `text`."""
    lines = bp.read_text().splitlines()
    start = lines.index("catalog:")
    return max(n for n, x in enumerate(lines, 1) if n > start and text in x)


CARDS = "  - {name: '400GE1/{card}/{port}', cards: 4, count: 8, speed: 400}"  # as shipped
SWITCH_PORTS = [  # ce9860-4c-ei: 4 cards x 8 x 400GE named 400GE1/<card>/<n>
    (["mgmt_port: 400GE1/2/3"], "mgmt_port", "the management port 400GE1/2/3 is also a data"),
    (["ports:", CARDS, CARDS], "ports[1].name", "port 400GE1/1/1 is named twice (ports[0] names"),
    (
        ["ports:", "  - {name: '400GE1/1/{port}', count: 8, speed: 400}", CARDS],
        "ports[1].name",
        "port 400GE1/1/1 is named twice (ports[0] names it already: remove the repeated group)",
    ),
]


@pytest.mark.parametrize(("lines", "where", "message"), SWITCH_PORTS)
def test_switch_override_ports_are_named_once(tmp_path, capsys, lines, where, message):
    bp, err = catalog_refused(tmp_path, capsys, "switches", "ce9860-4c-ei", lines)
    line = line_of(bp, lines[-1].strip()) if where != "mgmt_port" else line_of(bp, "mgmt_port")
    assert f"{bp}:{line}:" in err and f"catalog.switches.ce9860-4c-ei.{where}: {message}" in err


UNIQUE = "give each port its own name"
LINUX = "dev_valid_name, net/core/dev.c"
SERVER_NAMES = [  # (role, its ports, message, hint): names twice, names Linux refuses
    ("storage", "{count: 2, speed: 100, name: 'npu{n}'}", "port npu0 is named twice", UNIQUE),
    ("bmc", "{count: 1, speed: 1, name: 'mgmt0'}", "port mgmt0 is named twice", UNIQUE),
    ("business", "{count: 2, speed: 25, name: 'biz'}", "port biz is named twice", UNIQUE),
    (
        "storage",
        "{count: 2, speed: 100, name: 'ens1f0np0-param{n}'}",
        "'ens1f0np0-param0' is not a Linux interface name: 16 characters, at most 15",
        LINUX,
    ),
    (
        "npu",
        "{count: 8, speed: 200, name: 'npu/{n}'}",
        "'npu/0' is not a Linux interface name: it holds '/'",
        LINUX,
    ),
    ("business", "{count: 2, speed: 25, name: 'bond0:{n}'}", "'bond0:0' is not a Linux", LINUX),
    ("storage", "{count: 2, speed: 100, name: 'a..{n}/..'}", "'a..0/..' is not a Linux", LINUX),
]


@pytest.mark.parametrize(("role", "ports", "message", "hint"), SERVER_NAMES)
def test_server_port_names_are_unique_linux_interface_names(
    tmp_path, capsys, role, ports, message, hint
):
    lines = server_ports(**{role: ports})
    bp, err = catalog_refused(tmp_path, capsys, "servers", "atlas-800t-a2", lines)
    line = line_of(bp, f"  {role}: ")
    column = bp.read_text().splitlines()[line - 1].index("name:") + 1
    where = f"{bp}:{line}:{column}: catalog.servers.atlas-800t-a2.ports.{role}.name"
    assert f"{where}: {message}" in err and hint in err


COUNTS = [  # (model, lines, message)
    ("atlas-900-a3-superpod-node", ["npus: 4"], "16 NPU ports, but npus 4 x dies_per_npu 2 = 8"),
    ("atlas-800t-a2", ["dies_per_npu: 2"], "8 NPU ports, but npus 8 x dies_per_npu 2 = 16"),
    ("atlas-800-9000", ["npus: 16"], "8 NPU ports, but npus 16 x dies_per_npu 1 = 16"),
]


@pytest.mark.parametrize(("model", "lines", "message"), COUNTS)
def test_npu_ports_agree_with_npus_and_dies(tmp_path, capsys, model, lines, message):
    bp, err = catalog_refused(tmp_path, capsys, "servers", model, lines)
    line = line_of(bp, f"    {model}:")  # ports.npu.count is the shipped one: at the override
    assert f"{bp}:{line}:5: catalog.servers.{model}.ports.npu.count: {message}" in err
    assert "set ports.npu.count to" in err


PARTIAL = [  # (lines under the override, message)
    (
        ["ports:", "  npu: {count: 8, speed: 400, name: 'npu{n}'}"],
        "this ports override leaves out storage, business, inband, bmc of the shipped "
        "atlas-800t-a2: an override replaces the whole ports mapping",
    ),
    (
        server_ports(bmc=""),
        "this ports override leaves out bmc of the shipped atlas-800t-a2",
    ),
    (
        ["ports: {npu: {count: 8, speed: 200}, business: {count: 2, speed: 25, name: 'b{n}'}}"],
        "this ports override leaves out storage, inband, bmc",
    ),
]


@pytest.mark.parametrize(("lines", "message"), PARTIAL)
def test_a_partial_ports_override_is_refused_where_it_is_written(tmp_path, capsys, lines, message):
    bp, err = catalog_refused(tmp_path, capsys, "servers", "atlas-800t-a2", lines)
    line = line_of(bp, "      ports:")
    assert f"{bp}:{line}:7: catalog.servers.atlas-800t-a2.ports: {message}" in err
    assert "`wanka catalog atlas-800t-a2` shows the shipped ones" in err


def test_a_new_npu_server_model_needs_the_ports_the_planes_cable(tmp_path, capsys):
    lines = [
        "kind: npu-server",
        "npus: 8",
        "height_u: 4",
        "power_w: 6000",
        "ports: {npu: {count: 8, speed: 200, name: 'npu{n}'}, bmc: {count: 1, speed: 1, name: 'bmc'}}",
    ]
    bp, err = catalog_refused(tmp_path, capsys, "servers", "my-a2", lines)
    assert (
        f"{bp}:{line_of(bp, '      ports:')}:7: catalog.servers.my-a2.ports: an npu-server needs "
        "business, inband ports"
    ) in err
