"""Switch configurations read back and checked against the cabling plan and the host side.

The rendered .cfg files are read with the one VRP reader of verify and the twin
(generator/verify/vrp.py, through the command table): a top-level command opens a block, indented
lines nest under it, `#` lines are comments; its nesting is checked against hier_config's loader
under its Huawei VRP driver. Every example blueprint is checked: every cabled switch port exists,
is split as planned, is up and names its far end; no other port is configured; BGP peers are
cabled far ends with their ASNs; the lossless class on the switches is the one the NICs and HCCL
use; secrets never appear in clear.
"""

from __future__ import annotations

import ipaddress
import re
from collections import defaultdict
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import pytest
import yaml
from hier_config import Platform, get_hconfig, get_hconfig_driver

from generator import pipeline, render
from generator.artifacts import switches
from generator.catalog import build_catalog
from generator.structured_yaml import FastVariablesLoader
from generator.verify import vrp
from tests.support.examples import ROOT, generated

LOADER = FastVariablesLoader  # reads the inventory's `!unsafe` tags as Ansible does
LOGICAL = re.compile(r"^(Vlanif|Eth-Trunk|LoopBack)\d+$")


# ---------------------------------------------------------------------------------------------
# The configuration text read by the VRP reader (generator/verify/vrp.py), seen here as blocks of
# flattened lines


@dataclass
class Block:
    line: str
    children: list[str] = field(default_factory=list)  # one level of indentation removed


def _under(line: vrp.Line, depth: int = 0):
    """Every line under `line`, one space per level deeper than its children."""
    for child in line.children:
        yield " " * depth + child.text
        yield from _under(child, depth + 1)


def _block(line: vrp.Line) -> Block:
    """A top-level command and every line under it, one space per level deeper."""
    return Block(line.text, list(_under(line)))


@dataclass
class Parsed:
    blocks: list[Block]
    _interfaces: dict[str, Block] | None = None

    def top(self) -> list[str]:
        return [b.line for b in self.blocks]

    def find(self, prefix: str) -> list[Block]:
        return [b for b in self.blocks if b.line.startswith(prefix)]

    def interfaces(self) -> dict[str, Block]:
        if self._interfaces is None:
            out: dict[str, Block] = {}
            for b in self.find("interface "):
                name = b.line.split(" ", 1)[1]
                assert name not in out, f"interface {name} configured twice"
                out[name] = b
            self._interfaces = out
        return self._interfaces


def parse(text: str, platform: str = "huawei-ce") -> Parsed:
    return Parsed([_block(line) for line in vrp.tree(text, platform, "config")])


SAMPLE = (
    "system-view\n#\nbgp 1\n peer 10.0.0.1  as-number 2\n ipv4-family unicast\n"
    "  network 1.1.1.1 32\n  #\n#\nreturn\n"
)


def test_parser_reads_nested_blocks():
    tree = vrp.tree(SAMPLE, "huawei-ce", "sample")
    assert [c.text for c in tree] == ["bgp 1"]  # system-view, return, `#`: framing
    assert [c.text for c in tree[0].children] == [
        "peer 10.0.0.1 as-number 2",
        "ipv4-family unicast",
    ]
    network = tree[0].children[1].children[0]
    assert (network.text, network.number) == ("network 1.1.1.1 32", 6)
    assert parse(SAMPLE).find("bgp")[0].children == [
        "peer 10.0.0.1 as-number 2",
        "ipv4-family unicast",
        " network 1.1.1.1 32",
    ]


@pytest.mark.parametrize(
    "line,text",
    [
        ("#", None),
        (" #", None),
        (" #x", None),
        (" de #1", "description #1"),
        (" DESC a!", "description a!"),
    ],
)
def test_comment_lines_are_the_ones_the_huawei_driver_empties(line, text):
    rules = get_hconfig_driver(Platform.HUAWEI_VRP).rules.per_line_sub
    emptied = line
    for rule in rules:
        emptied = re.sub(rule.search, rule.replace, emptied)
    assert (not emptied.strip()) == (text is None)
    read = vrp.tree(f"interface MEth0/0/0\n{line}\n", "huawei-ce", "t")[0].children
    assert [c.text for c in read] == ([] if text is None else [text])


def test_each_section_nests_as_hier_configs_own_loader_nests_it(example_name):
    """The reader's nesting, checked against hier_config's own loader (get_hconfig, Huawei VRP)
    on each top-level command with the lines under it (a whole config it refuses: `system-view`
    comes twice). One config of each shape: configs that differ only in numbers (names,
    addresses, VLANs) nest alike, so wanka-10k's 1,000-odd switches are a few dozen shapes."""
    shapes = {
        re.sub(r"\d+", "0", text): name for name, (_, text) in configs_of(example_name).items()
    }
    for name in sorted(shapes.values()):
        text = configs_of(example_name)[name][1]
        raws = text.splitlines()
        tree = vrp.tree(text, "huawei-ce", name)
        for top in tree:
            if not top.children:
                continue
            after = range(top.number, len(raws))  # the next top-level line ends the section
            end = next((i for i in after if raws[i][:1] not in ("", " ")), len(raws))
            own = get_hconfig(Platform.HUAWEI_VRP, "\n".join(raws[top.number - 1 : end]))
            assert [(c.depth(), c.text) for c in own.all_children()] == list(_depths(top)), (
                name,
                top.number,
            )


def _depths(line: vrp.Line, depth: int = 1):
    yield depth, line.text
    for child in line.children:
        yield from _depths(child, depth + 1)


# ---------------------------------------------------------------------------------------------
# Fixtures


def _configs(result) -> dict[str, tuple[Parsed, str]]:
    files = {f.path: f.data for f in result.files}
    out = {}
    for path, data in files.items():
        if path.startswith("files/switches/") and path.endswith(".cfg"):
            text = data.decode()
            out[path.removeprefix("files/switches/").removesuffix(".cfg")] = (parse(text), text)
    return out


_parsed: dict[str, dict[str, tuple[Parsed, str]]] = {}


def configs_of(name: str) -> dict[str, tuple[Parsed, str]]:
    if name not in _parsed:
        _parsed[name] = _configs(generated(name))
    return _parsed[name]


_structured: dict[str, dict[str, object]] = {}


def structured_of(name: str) -> dict[str, object]:
    """path -> data of every structured config (files/switches/*.yml) of an example, read once
    per session by the tests here (none changes what it is given)."""
    if name not in _structured:
        _structured[name] = {
            f.path: yaml.load(f.data, Loader=LOADER)
            for f in generated(name).files
            if f.path.startswith("files/switches/") and f.path.endswith(".yml")
        }
    return _structured[name]


@pytest.fixture(params=sorted(p.name for p in (ROOT / "blueprints").glob("*.yaml")))
def example_name(request):
    return request.param


_ends_cache: dict[int, tuple] = {}  # id -> (cluster, ends): the reference keeps the id unique


def _ends(cluster):
    """switch -> [(port, far device, far port, link)] from the cabling plan (cached)."""
    if id(cluster) in _ends_cache:
        return _ends_cache[id(cluster)][1]
    out = defaultdict(list)
    _ends_cache[id(cluster)] = (cluster, out)
    for link in cluster.links:
        out[link.a_device].append((link.a_port, link.b_device, link.b_port, link))
        out[link.b_device].append((link.b_port, link.a_device, link.a_port, link))
    return out


_ce_cache: dict[int, tuple] = {}  # id -> (cluster, switches): the reference keeps the id unique


def _ce_switches(cluster):
    if id(cluster) not in _ce_cache:
        catalog = build_catalog(None)  # the examples use the built-in catalog
        found = [
            d
            for d in cluster.devices
            if d.plane and catalog.switches[d.model].platform in switches.PLATFORMS
        ]
        _ce_cache[id(cluster)] = (cluster, found)
    return list(_ce_cache[id(cluster)][1])


# ---------------------------------------------------------------------------------------------
# Coverage and structure


def test_every_switch_has_a_config_and_a_structured_config(example_name):
    result = generated(example_name)
    paths = {f.path for f in result.files}
    ce = {d.name for d in _ce_switches(result.cluster)}
    assert ce, "an example without switches"
    for name in ce:
        assert f"files/switches/{name}.cfg" in paths
        assert f"files/switches/{name}.yml" in paths
    configured = {
        p.removeprefix("files/switches/").rsplit(".", 1)[0]
        for p in paths
        if p.startswith("files/switches/")
    }
    assert configured == ce, "configs only for CloudEngine switches"


def test_structured_config_is_plain_data_and_the_yaml_reads_back(example_name):
    result = generated(example_name)
    cx = switches.context(result.cluster)
    plain = (str, int, bool, type(None))

    def check(v, where):
        if isinstance(v, dict):
            for k, x in v.items():
                assert isinstance(k, str), where
                check(x, f"{where}.{k}")
        elif isinstance(v, list):
            for n, x in enumerate(v):
                check(x, f"{where}[{n}]")
        else:
            assert isinstance(v, plain), f"{where}: {type(v).__name__}"

    kinds = {}  # one switch of each role and plane
    for dev in _ce_switches(result.cluster):
        kinds.setdefault((dev.role, dev.plane), dev)
    for dev in kinds.values():
        cfg = switches.structured_config(dev, cx)
        check(cfg, dev.name)
        assert structured_of(example_name)[f"files/switches/{dev.name}.yml"] == cfg


def test_structured_config_names_the_far_end_of_every_cabled_port(example_name):
    """Tools (the switch_config role's LLDP check) read the far ends from the .yml files."""
    result = generated(example_name)
    ends = _ends(result.cluster)
    for dev in _ce_switches(result.cluster)[:60]:
        cfg = structured_of(example_name)[f"files/switches/{dev.name}.yml"]
        got = {
            (i["name"], i["peer"]["device"], i["peer"]["port"])
            for i in cfg["interfaces"]
            if "peer" in i
        }
        assert got == {(port, far, far_port) for port, far, far_port, _ in ends[dev.name]}, dev.name


def test_each_system_view_session_ends_with_commit(example_name):
    for name, (_, text) in configs_of(example_name).items():
        # the framing lines too, which the reader moves between views by and leaves out
        top = [s.strip() for s in text.splitlines() if s[:1] not in ("", " ", "#")]
        sessions = 0
        open_session = False
        for line in top:
            if line == "system-view":
                assert not open_session, f"{name}: system-view inside a session"
                open_session, last = True, None
                sessions += 1
            elif line in ("quit", "return"):
                assert open_session and last == "commit", f"{name}: session left without commit"
                open_session = False
            last = line
        assert sessions == 2 and not open_session, name
        assert top[-1] == "return", name


# ---------------------------------------------------------------------------------------------
# The cabling plan


def test_every_cabled_port_is_configured_up_and_describes_its_far_end(example_name):
    result = generated(example_name)
    ends = _ends(result.cluster)
    for name, (parsed, _) in configs_of(example_name).items():
        ifaces = parsed.interfaces()
        planned = set()
        for port, far, far_port, _link in ends[name]:
            planned.add(port)
            assert port in ifaces, f"{name}: cabled port {port} is not configured"
            children = ifaces[port].children
            assert "undo shutdown" in children, f"{name} {port} is not brought up"
            assert "shutdown" not in children
            assert f"description to {far} {far_port}" in children, f"{name} {port}"
        physical = {n for n in ifaces if not LOGICAL.match(n)}
        assert physical - planned == set(), f"{name}: ports configured but not cabled"


def test_configured_ports_exist_on_the_switch_model(example_name):
    result = generated(example_name)
    catalog = build_catalog(result.blueprint.get("catalog"))
    for dev in _ce_switches(result.cluster):
        model = catalog.switches[dev.model]
        panel = {p.name: p for p in model.ports}
        parsed, _ = configs_of(example_name)[dev.name]
        for name in parsed.interfaces():
            if LOGICAL.match(name) or name == model.mgmt_port:
                continue
            parent, _, lane = name.partition(":")
            assert parent in panel, f"{dev.name}: {dev.model} has no port {parent}"
            if lane:
                split = dict(dev.splits)[parent]
                assert split in panel[parent].splits, f"{dev.name}: {parent} cannot split {split}"


def test_ports_are_split_as_the_plan_says(example_name):
    result = generated(example_name)
    ends = _ends(result.cluster)
    for dev in _ce_switches(result.cluster):
        parsed, _ = configs_of(example_name)[dev.name]
        split_lines = {}
        for b in parsed.find("port split "):
            m = re.fullmatch(
                r"port split dimension interface (\S+) split-type (\d)\*(\d+)GE", b.line
            )
            assert m, b.line
            split_lines[m[1]] = f"{m[2]}x{m[3]}GE"
        assert split_lines == dict(dev.splits), dev.name
        for port, *_ in ends[dev.name]:
            if ":" in port:
                parent, lane = port.split(":")
                assert parent in split_lines, f"{dev.name}: lane {port} of an unsplit port"
                assert 1 <= int(lane) <= int(split_lines[parent].split("x")[0])
            else:
                assert port not in split_lines, f"{dev.name}: {port} is split but cabled whole"


def test_splits_are_committed_before_the_sub_ports_are_configured(example_name):
    for name, (_, text) in configs_of(example_name).items():
        lines = text.splitlines()
        first_commit = lines.index("commit")
        assert all(not ln.startswith("interface ") for ln in lines[:first_commit]), name
        assert all(not ln.startswith("port split") for ln in lines[first_commit:]), name


def test_routed_ports_carry_the_planned_point_to_point_addresses(example_name):
    result = generated(example_name)
    for link in result.cluster.links:
        if not link.a_ip:
            continue
        for dev, port, addr in (
            (link.a_device, link.a_port, link.a_ip),
            (link.b_device, link.b_port, link.b_ip),
        ):
            if dev not in configs_of(example_name):
                continue
            children = configs_of(example_name)[dev][0].interfaces()[port].children
            assert f"ip address {ipaddress.IPv4Address(addr)} {link.prefix}" in children, (
                dev,
                port,
            )
            assert "undo portswitch" in children


def test_host_subnet_gateways_are_on_the_leaves(example_name):
    result = generated(example_name)
    cfgs = configs_of(example_name)
    for subnet in result.cluster.subnets:
        gateway = f"ip address {ipaddress.IPv4Address(subnet.gateway)} {subnet.prefix}"
        for owner in subnet.name.split("+"):
            if owner not in cfgs:
                continue
            vlanifs = [b for n, b in cfgs[owner][0].interfaces().items() if n.startswith("Vlanif")]
            assert [gateway in b.children for b in vlanifs] == [True], owner
            if subnet.vlan:
                assert vlanifs[0].line == f"interface Vlanif{subnet.vlan}"


# ---------------------------------------------------------------------------------------------
# Routing


def test_bgp_peers_are_cabled_far_ends_with_matching_asns(example_name):
    result = generated(example_name)
    cluster = result.cluster
    far_ends = defaultdict(dict)  # switch -> far ip -> far device
    for link in cluster.links:
        if link.a_ip:
            far_ends[link.a_device][link.b_ip] = link.b_device
            far_ends[link.b_device][link.a_ip] = link.a_device
    sessions = 0
    for name, (parsed, _) in configs_of(example_name).items():
        dev = cluster.device_by_name[name]
        bgp = parsed.find("bgp ")
        if not bgp:
            continue
        assert bgp[0].line == f"bgp {dev.asn}" and dev.asn, name
        peers = {}
        for line in bgp[0].children:
            m = re.fullmatch(r"peer (\S+) as-number (\d+)", line)
            if m:
                peers[int(ipaddress.IPv4Address(m[1]))] = int(m[2])
        assert peers, name
        assert set(peers) == set(far_ends[name]), f"{name}: peers are not the routed far ends"
        for address, asn in peers.items():
            far = cluster.device_by_name[far_ends[name][address]]
            assert asn == far.asn, f"{name}: peer {far.name} AS {asn}, model says {far.asn}"
            sessions += 1
    if result.blueprint["networks"]["parameter"]["routing"]["protocol"] == "bgp":
        assert sessions, "BGP chosen but no sessions"


def test_ecmp_is_as_wide_as_the_leaf_uplinks(example_name):
    result = generated(example_name)
    uplinks = defaultdict(int)
    for link in result.cluster.links:
        if link.kind == "uplink" and link.a_ip:
            uplinks[link.a_device] += 1
    for dev in _ce_switches(result.cluster):
        if dev.role not in ("leaf", "access") or not uplinks[dev.name]:
            continue
        text = configs_of(example_name)[dev.name][1]
        assert re.search(rf"^ {{1,2}}maximum load-balancing {uplinks[dev.name]}$", text, re.M), (
            dev.name
        )


def test_ospf_covers_every_routed_link_and_the_loopback(example_name):
    result = generated(example_name)
    routed = defaultdict(list)
    for link in result.cluster.links:
        if link.a_ip and link.plane != "border":  # firewall links are statically routed
            routed[link.a_device].append(link.a_ip)
            routed[link.b_device].append(link.b_ip)
    for name, (parsed, _) in configs_of(example_name).items():
        ospf = parsed.find("ospf ")
        if not ospf:
            continue
        nets = []
        for line in ospf[0].children:
            m = re.fullmatch(r" network (\S+) (\S+)", line)
            if m:
                host_bits = bin(int(ipaddress.IPv4Address(m[2]))).count("1")
                nets.append(ipaddress.IPv4Network(f"{m[1]}/{32 - host_bits}"))
        dev = result.cluster.device_by_name[name]
        for addr in [*routed[name], dev.loopback]:
            assert any(ipaddress.IPv4Address(addr) in n for n in nets), (name, addr)


# ---------------------------------------------------------------------------------------------
# The lossless class, switch side against host side


PHB = {0: "be", 1: "af1", 2: "af2", 3: "af3", 4: "af4", 5: "ef", 6: "cs6", 7: "cs7"}


def _lossless_on(parsed: Parsed):
    pfc = parsed.find("dcb pfc")
    if not pfc:
        return None
    enabled = {3}  # the CE default PFC profile starts with priority 3 enabled
    for line in pfc[0].children:
        m = re.fullmatch(r"(undo )?priority (\d)", line)
        if m:
            (enabled.discard if m[1] else enabled.add)(int(m[2]))
    (domain,) = parsed.find("diffserv domain ")
    dscp_map = [re.fullmatch(r"ip-dscp-inbound (\d+) phb (\S+) green", c) for c in domain.children]
    ai = [
        int(m[1])
        for b in parsed.find("ai-service")
        for c in b.children
        if (m := re.fullmatch(r" assign queue (\d) model \S+", c))
    ]
    return enabled, [(int(m[1]), m[2]) for m in dscp_map if m], domain.line.split()[-1], ai


def test_lossless_class_on_switches_equals_the_host_side(example_name):
    result = generated(example_name)
    cluster = result.cluster
    env = dict(cluster.hccl_env)
    for dev in _ce_switches(cluster):
        parsed, _ = configs_of(example_name)[dev.name]
        cls = cluster.lossless_of(dev.plane)
        found = _lossless_on(parsed)
        if cls is None:
            assert found is None, f"{dev.name}: lossless config on a plane without a lossless class"
            continue
        assert found is not None, dev.name
        pfc, dscp_map, domain, ai_queues = found
        # host side, derived from the same record: NIC PFC bitmap and the HCCL variables
        host_priorities = {p for p, bit in enumerate(cls.pfc_bitmap.split(",")) if bit == "1"}
        assert pfc == host_priorities, f"{dev.name}: switch PFC {pfc}, NIC bitmap {cls.pfc_bitmap}"
        if dev.plane == "parameter":
            assert pfc == {cls.hccl_rdma_sl} == {int(env["HCCL_RDMA_SL"])}
            assert dscp_map[0] == (cls.hccl_rdma_tc // 4, PHB[cls.hccl_rdma_sl])
            assert int(env["HCCL_RDMA_TC"]) == 4 * dscp_map[0][0]
        assert dscp_map == [(cls.dscp, PHB[cls.priority]), (cls.cnp_dscp, "cs6")]
        ecn = cluster.ecn_of(dev)  # AI ECN only on models that have it, else static ECN
        if ecn == "ai-ecn":
            assert ai_queues == [cls.priority], dev.name
        elif ecn == "static":
            assert not ai_queues and parsed.find("drop-profile "), dev.name
        # every port of the plane maps DSCP through that domain and runs PFC; Layer 2 ports trust
        # DSCP explicitly, Layer 3 ports do by default and refuse `trust dscp` (CE V300R023C00
        # "Specifying the Packet Priority Trusted on an Interface")
        plane_of = {port: link.plane for port, _, _, link in _ends(cluster)[dev.name]}
        for name, b in parsed.interfaces().items():
            if not name.startswith("MEth") and plane_of.get(name) == dev.plane:
                routed = "undo portswitch" in b.children
                assert ("trust dscp" in b.children) != routed, (dev.name, name)
                assert f"trust upstream {domain}" in b.children, (dev.name, name)
                assert "dcb pfc enable mode manual" in b.children, (dev.name, name)
                # the lossless queue shares by DRR (not the default PQ); CNPs stay in PQ 6
                assert f"qos queue {cls.queue} drr weight 50" in b.children, (dev.name, name)


def test_hccn_files_use_the_bitmap_the_switches_enable(example_name):
    result = generated(example_name)
    cls = result.cluster.lossless_of("parameter")
    confs = [
        f for f in result.files if f.path.startswith("files/hccn/") and f.path.endswith(".conf")
    ]
    for f in confs[:8]:
        bitmaps = set(re.findall(r"^bitmap_\d+=(\S+)$", f.data.decode(), re.M))
        assert bitmaps == {cls.pfc_bitmap}


# ---------------------------------------------------------------------------------------------
# M-LAG pairs


def test_mlag_members_agree(example_name):
    result = generated(example_name)
    cfgs = configs_of(example_name)
    pairs = {(k.a_device, k.b_device) for k in result.cluster.links if k.kind == "peer-link"}
    for a, b in pairs:
        pa, pb = cfgs[a][0], cfgs[b][0]
        ia, ib = pa.interfaces(), pb.interfaces()
        vlanif = [n for n in ia if n.startswith("Vlanif")]
        assert vlanif and [n for n in ib if n.startswith("Vlanif")] == vlanif
        assert ia[vlanif[0]].children[1:] == ib[vlanif[0]].children[1:], "same gateway and MAC"
        assert any(c.startswith("mac-address ") for c in ia[vlanif[0]].children)

        def trunks(ifaces):
            out = {}
            for n, blk in ifaces.items():
                if n.startswith("Eth-Trunk") and any(
                    c.startswith("dfs-group ") for c in blk.children
                ):
                    out[blk.children[0]] = (
                        n,
                        [c for c in blk.children if c.startswith("dfs-group ")],
                    )
            return out

        ta, tb = trunks(ia), trunks(ib)
        assert ta and ta == tb, f"{a}/{b}: server trunks and M-LAG ids differ"
        for p in (pa, pb):
            assert any(
                c.startswith("peer-link ") for blk in p.interfaces().values() for c in blk.children
            )
        (da,), (db,) = pa.find("dfs-group "), pb.find("dfs-group ")
        pri = {c for c in da.children if c.startswith("priority")} | {
            c for c in db.children if c.startswith("priority")
        }
        assert len(pri) == 2, "DFS priorities differ"
        sa = re.search(r"source ip (\S+).* peer (\S+)", " ".join(da.children))
        sb = re.search(r"source ip (\S+).* peer (\S+)", " ".join(db.children))
        assert (sa[1], sa[2]) == (sb[2], sb[1]), "dual-active detection addresses cross"
        # DFS packets authenticated with one shared key (CE M-LAG examples; first review #16)
        auth = {c for d in (da, db) for c in d.children if c.startswith("authentication-mode ")}
        assert auth == {"authentication-mode hmac-sha256 password {{ vault_dfs_password }}"}


# ---------------------------------------------------------------------------------------------
# Management and security


def test_out_of_band_bmc_ports_are_isolated_from_each_other(example_name):
    """BMCs and switch management ports share the out-of-band VLAN: every access port to a BMC
    is in isolation group 1, so a BMC reaches its gateway and the switches but no other BMC
    (first review finding 16; CE port isolation example `port-isolate enable group 1`); a switch
    management port is not, or the M-LAG dual-active detection between two of them is dropped
    (third review finding 2)."""
    cfgs = configs_of(example_name)
    oob = [
        d for d in generated(example_name).cluster.devices if d.plane == "oob" and d.name in cfgs
    ]
    access = [(d, b) for d in oob for b in cfgs[d.name][0].interfaces().values()
              if "port link-type access" in b.children]  # fmt: skip
    assert access
    bmcs = [(d, b) for d, b in access if any(c.endswith(" bmc") for c in b.children)]
    assert bmcs
    for d, b in access:
        isolated = "port-isolate enable group 1" in b.children
        assert isolated == ((d, b) in bmcs), f"{d.name} {b.line}"


def test_management_address_vrf_and_services(example_name):
    result = generated(example_name)
    cluster = result.cluster
    oob = {(a.device, a.port): a for a in cluster.addresses if a.plane == "oob"}
    pools = [
        ipaddress.IPv4Network(f"{ipaddress.IPv4Address(p.network)}/{p.prefix}")
        for p in cluster.pools
        if p.plane in ("inband", "oob")
    ]
    mgmt_nodes = {d.name for d in cluster.devices if d.role == "management-node"}
    inband = {
        a.device: str(ipaddress.IPv4Address(a.ip))
        for a in cluster.addresses
        if a.plane == "inband" and a.device in mgmt_nodes
    }
    catalog = build_catalog(result.blueprint.get("catalog"))
    for dev in _ce_switches(cluster):
        parsed, text = configs_of(example_name)[dev.name]
        assert parsed.find("sysname ")[0].line == f"sysname {dev.name}"
        port = catalog.switches[dev.model].mgmt_port
        address = oob.get((dev.name, port))
        ifaces = parsed.interfaces()
        if address is not None:
            children = ifaces[port].children
            assert children.index(f"ip binding vpn-instance {switches.MGMT_VRF}") < children.index(
                f"ip address {ipaddress.IPv4Address(address.ip)} {address.prefix}"
            )
            vpn = f" vpn-instance {switches.MGMT_VRF}"
            source = port
        else:  # the out-of-band plane's own switches: managed on their loopback
            assert port not in ifaces
            vpn, source = "", "LoopBack0"
        # SSH only, from the management pools only
        assert "stelnet server enable" in text and "telnet server disable" in text
        assert f"ssh server-source -i {source}" in text
        assert "ssh server acl 2000" in text
        (acl,) = parsed.find("acl number 2000")
        permitted = []
        for c in acl.children:
            m = re.fullmatch(rf"rule \d+ permit{vpn} source (\S+) (\S+)", c)
            if m:
                permitted.append(ipaddress.IPv4Network(f"{m[1]}/{m[2]}"))
            else:
                assert re.fullmatch(rf"rule \d+ deny{vpn}", c), c
        assert permitted == pools
        vty = parsed.find("user-interface vty")[0].children
        assert "protocol inbound ssh" in vty and "authentication-mode aaa" in vty
        # NTP from the controllers, syslog and SNMP traps to the monitoring nodes
        ntp = re.findall(rf"^ntp unicast-server (\S+){vpn} source-interface {source}", text, re.M)
        logs = re.findall(rf"^info-center loghost (\S+){vpn}$", text, re.M)
        traps = re.findall(
            rf"^snmp-agent target-host trap address udp-domain (\S+){vpn} params", text, re.M
        )
        controllers = sorted(n for n in inband if n.startswith("controller-")) or sorted(inband)
        monitors = sorted(n for n in inband if n.startswith("monitoring-")) or sorted(inband)
        assert ntp == [inband[n] for n in controllers]
        assert logs == traps == [inband[n] for n in monitors]
        assert "snmp-agent sys-info version v3" in text
        assert not re.search(r"community|v2c|v1\b", text)


# a Vault reference, or the command table's placeholder as the design review lists the forms
# a Vault placeholder, a masked value, or (the device's own prompt quoted in the bring-up runbook:
# "Please configure the authentication password (8-255)") the length a password must have
VAULT = r"\{\{ vault_[a-z0-9_]+ \}\}|<secret>`?,?|\(\d+-\d+\)"
# A secret follows `password`, `irreversible-cipher` or `cipher` in VRP (local users, SNMPv3
# keys, DFS/OSPF/BGP authentication); `ssh server cipher` lists algorithms, not secrets.
SECRET = re.compile(
    r"(?<!ssh server )\b(?:password|cipher)\s+(?!irreversible-cipher\b|cipher\b)(\{\{ [^}]* \}\}|\S+)"
)
SECRET_KEY = re.compile(r"password|secret|_key$|^key$|community")
KNOWN_DEFAULTS = ("Admin@123", "Huawei@123", "Changeme_123", "Huawei12#$", "admin123")


def _secret_values(data, key=""):
    if isinstance(data, dict):
        for k, v in data.items():
            yield from _secret_values(v, k)
    elif isinstance(data, list):
        for v in data:
            yield from _secret_values(v, key)
    elif SECRET_KEY.search(key):
        yield key, data


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "blueprints").glob("*.yaml")))
def test_no_secret_in_clear_in_any_output_file(name):
    result = generated(name)
    checked = 0
    for f in result.files:
        text = f.data.decode(errors="replace")
        for default in KNOWN_DEFAULTS:
            assert default not in text, f"{f.path}: a well-known default secret"
        for line in text.splitlines():
            for value in SECRET.findall(line):
                assert re.fullmatch(VAULT, value), f"{f.path}: secret in clear: {line.strip()!r}"
                checked += 1
        if f.path.startswith("files/switches/") and f.path.endswith(".yml"):
            for key, value in _secret_values(structured_of(name)[f.path]):
                assert re.fullmatch(VAULT, value), f"{f.path}: {key} in clear"
    assert checked, "no secret references found at all"


# ---------------------------------------------------------------------------------------------
# Variants the examples do not exercise: OSPF underlay, a lossless storage plane, static ECN


def _variant(tmp_path: Path) -> pipeline.Result:
    bp = yaml.safe_load((ROOT / "blueprints" / "pod-128.yaml").read_text())
    bp["metadata"]["name"] = "variant"
    nets = bp["networks"]
    nets["parameter"]["routing"] = {"protocol": "ospf"}
    nets["parameter"]["lossless"] = {"priority": 3, "dscp": 26, "ecn": "static", "mtu": 4200}
    nets["storage"]["lossless"] = {"priority": 5, "dscp": 40, "ecn": "ai-ecn", "mtu": 9000}
    path = tmp_path / "variant.yaml"
    path.write_text(yaml.safe_dump(bp))
    return pipeline.run(path)


def test_ospf_underlay_static_ecn_and_lossless_storage(tmp_path):
    result = _variant(tmp_path)
    cfgs = _configs(result)
    cluster = result.cluster
    par_leaf = next(d for d in cluster.devices if d.role == "leaf" and d.plane == "parameter")
    parsed, text = cfgs[par_leaf.name]
    assert not parsed.find("bgp ") and parsed.find("ospf 1 router-id ")
    assert "undo priority 3" not in text, "priority 3 is the CE default, nothing to undo"
    assert _lossless_on(parsed)[:2] == ({3}, [(26, "af3"), (48, "cs6")])
    assert "drop-profile wanka-ecn" in text and " qos queue 3 ecn" in text
    assert "ai-service" not in text
    uplink = next(
        b
        for n, b in parsed.interfaces().items()
        if "ip address" in " ".join(b.children)
        and not LOGICAL.match(n)
        and not n.startswith("MEth")
    )
    assert "ospf network-type p2p" in uplink.children
    sto_leaf = next(d for d in cluster.devices if d.role == "leaf" and d.plane == "storage")
    parsed, text = cfgs[sto_leaf.name]
    assert parsed.find("bgp "), "the storage plane keeps BGP (its switches have ASNs)"
    assert _lossless_on(parsed) == ({5}, [(40, "ef"), (48, "cs6")], switches.DS_DOMAIN, [5])
    assert "model ai_ecn_distributedfilestorage" in text
    biz = next(d for d in cluster.devices if d.plane == "business")
    assert "dcb pfc" not in cfgs[biz.name][1]


# ---------------------------------------------------------------------------------------------
# Determinism and packaging


def test_output_is_deterministic():
    cluster = generated("pod-128.yaml").cluster
    first = [(f.path, f.data) for f in switches.emit(cluster)]
    second = [(f.path, f.data) for f in switches.emit(cluster)]
    assert first == second


def test_templates_ship_inside_the_package():
    folder = resources.files("generator").joinpath("templates", "switches", "huawei-ce")
    names = sorted(p.name for p in folder.iterdir() if p.name.endswith(".j2"))
    assert "switch.cfg.j2" in names
    for n in names:
        source = folder.joinpath(n).read_text(encoding="utf-8")
        assert source.startswith("{#") and "Source:" in source.split("#}")[0], (
            f"{n}: no source comment"
        )
        render.template(f"switches/huawei-ce/{n}")  # compiles


def test_environment_is_strict():
    import jinja2

    env = render.environment()
    assert env.undefined is jinja2.StrictUndefined
    assert env.keep_trailing_newline and env.trim_blocks and env.lstrip_blocks
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ missing }}").render()
    assert env.from_string("{{ x.a }}|{{ x.items }}").render(x={"a": "<b>", "items": 1}) == "<b>|1"
