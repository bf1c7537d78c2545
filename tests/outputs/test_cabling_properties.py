"""Properties of the cabling plan that an installer relies on, for every example blueprint."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter, defaultdict

import pytest
from hypothesis import given
from hypothesis import strategies as st

from generator.artifacts.cabling import COLUMNS
from generator.catalog import build_catalog

HOST_ROLES = ("npu", "storage", "business", "inband", "bmc")


def test_every_host_port_is_cabled_exactly_once(example):
    cluster = example.cluster
    catalog = build_catalog(example.blueprint.get("catalog"))
    expected = Counter()
    for d in cluster.devices:
        model = catalog.hosts.get(d.model)
        if model is None:
            continue
        for role in HOST_ROLES:
            spec = model.port(role)
            for port in spec.names if spec else ():
                expected[(d.name, port)] += 1
    cabled = Counter(
        (link.a_device, link.a_port)
        for link in cluster.links
        if link.a_device in cluster.device_by_name
        and cluster.device_by_name[link.a_device].role.endswith(("server", "node"))
    )
    assert cabled == expected


def test_no_switch_port_is_used_twice_and_every_port_exists(example):
    cluster = example.cluster
    catalog = build_catalog(example.blueprint.get("catalog"))
    ends = Counter()
    for link in cluster.links:
        ends[(link.a_device, link.a_port)] += 1
        ends[(link.b_device, link.b_port)] += 1
    assert [e for e, n in ends.items() if n > 1] == []
    for d in cluster.devices:
        if d.model in catalog.switches:
            physical = {p.name: p for p in catalog.switches[d.model].ports}
            for parent, split in d.splits:
                assert parent in physical, (d.name, parent)
                assert split in physical[parent].splits, (d.name, parent, split)
    for (dev, port), _ in ends.items():
        d = cluster.device_by_name[dev]
        if d.model not in catalog.switches:
            continue
        physical = {p.name for p in catalog.switches[d.model].ports} | {
            catalog.switches[d.model].mgmt_port
        }
        parent, _, lane = port.partition(":")
        assert parent in physical, (dev, port)
        if lane:
            assert parent in dict(d.splits), f"{dev} {port}: lane of a port that is not split"
            k = int(dict(d.splits)[parent].split("x")[0])
            assert 1 <= int(lane) <= k
        else:
            assert parent not in dict(d.splits), f"{dev} {port}: split port used whole"


def test_parameter_leaves_are_one_to_one(example):
    cluster = example.cluster
    if example.blueprint["networks"]["parameter"]["oversubscription"] != "1:1":
        return
    fabric = cluster.fabric("parameter")
    down, up = defaultdict(int), defaultdict(int)
    for link in cluster.links:
        if link.plane != "parameter":
            continue
        if link.kind == "host":
            down[link.b_device] += link.speed
        else:
            up[link.a_device] += link.speed
            down[link.b_device] += link.speed
    leaves = [d.name for d in cluster.devices if d.role == "leaf" and d.plane == "parameter"]
    for leaf in leaves:
        assert up[leaf] == fabric.down_lanes * fabric.down_speed  # capacity 1:1
        assert down[leaf] <= up[leaf]
        if down[leaf] == fabric.down_lanes * fabric.down_speed:
            assert down[leaf] == up[leaf]
    for spine in (d.name for d in cluster.devices if d.plane == "parameter" and d.role == "spine"):
        if fabric.tiers == 3:
            assert down[spine] == up[spine], spine


def test_breakout_legs_share_a_cable_and_a_parent_port(example):
    legs = defaultdict(list)
    for link in example.cluster.links:
        legs[link.cable_id].append(link)
    for cable_id, ls in legs.items():
        if len(ls) == 1:
            continue
        ends = {(x.b_device, x.b_port.partition(":")[0]) for x in ls} | {
            (x.a_device, x.a_port.partition(":")[0]) for x in ls
        }
        shared = [
            e
            for e in ends
            if all(
                e
                in {
                    (x.a_device, x.a_port.partition(":")[0]),
                    (x.b_device, x.b_port.partition(":")[0]),
                }
                for x in ls
            )
        ]
        assert shared, cable_id
        assert all(":" in (x.b_port + x.a_port) for x in ls), cable_id


def test_cabling_files_agree_and_have_the_documented_columns(example):
    files = {f.path: f.data for f in example.files}
    table = list(csv.reader(io.StringIO(files["files/cabling.csv"].decode())))
    assert tuple(table[0]) == COLUMNS
    records = json.loads(files["files/cabling.json"])
    assert len(records) == len(table) - 1 == len(example.cluster.links)
    assert [list(map(str, r.values())) for r in records] == table[1:]
    for r in records:
        assert r["media"] != "DAC" or r["length_m"] <= 3
        assert r["a_rack"] and r["b_rack"] and int(r["a_u"]) >= 1


def test_single_rail_puts_all_npu_ports_of_a_server_on_one_leaf(example):
    cluster = example.cluster
    if example.blueprint["networks"]["parameter"]["rail"] != "single":
        return
    leaf_of = defaultdict(set)
    for link in cluster.links:
        if link.plane == "parameter" and link.kind == "host":
            leaf_of[link.a_device].add(link.b_device)
    assert leaf_of and all(len(v) == 1 for v in leaf_of.values())
    owners = {s.name: s.owners for s in cluster.subnets}
    subnet_of = defaultdict(set)
    for a in cluster.addresses:
        if a.plane == "parameter":
            subnet_of[a.device].update(owners[a.subnet])
    assert all(subnet_of[s] == leaf_of[s] for s in leaf_of)


@pytest.mark.parametrize(
    "odd", ["", '"', "\\", "\n", "\r", "\x00", "\x7f", "\u00e9", "\u4e07"], ids=repr
)
@given(data=st.data())
def test_cabling_json_is_one_json_object_a_row(odd, data):
    """cabling.json reads back as the table, one object a line, for plain names and with one
    string holding a character JSON escapes (a quote, backslash, line break, control character,
    non-ASCII text)."""
    from generator.artifacts.cabling import CableRow, json_file

    numbers = ("a_u", "b_u", "length_m", "cassette_port", "trunk_m")
    text = st.text(alphabet="ab-/:1 ", max_size=4)
    row = st.tuples(*(st.integers(0, 99) if c in numbers else text for c in COLUMNS))
    table = data.draw(st.lists(row, min_size=1, max_size=4))
    at = data.draw(st.integers(0, len(table) - 1))
    column = data.draw(st.sampled_from([i for i, c in enumerate(COLUMNS) if c not in numbers]))
    table[at] = (*table[at][:column], table[at][column] + odd, *table[at][column + 1 :])
    lines = json_file([CableRow(*r) for r in table]).decode().split("\n")
    assert lines[0] == "[" and lines[-2:] == ["]", ""]
    rows = [json.loads(x.removesuffix(",")) for x in lines[1:-2]]
    assert rows == [dict(zip(COLUMNS, r, strict=True)) for r in table]


def _cabling_rows(files: dict) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(files["files/cabling.csv"].decode())))


def breakouts_across_racks(rows: list[dict[str, str]]) -> list[str]:
    """Cable ids of cabling.csv whose legs end in more than one rack on a side, or whose legs
    are not DAC/AOC: a breakout cable is one assembly with its fan-out end in one rack."""
    legs = defaultdict(list)
    for r in rows:
        legs[r["cable_id"]].append(r)
    return sorted(
        c
        for c, ls in legs.items()
        if len(ls) > 1
        and (
            len({r["a_rack"] for r in ls}) > 1
            or len({r["b_rack"] for r in ls}) > 1
            or {r["media"] for r in ls} - {"DAC", "AOC"}
        )
    )


def test_no_breakout_cable_has_legs_in_two_racks(example):
    """wanka-10k's BIZ-002615 (400GE into 4 x 100GE on two leaves in racks T01-17 and T01-18)
    was one such cable, 94 in all: they are trunks, cassettes and patch cords now."""
    assert breakouts_across_racks(_cabling_rows({f.path: f.data for f in example.files})) == []


def test_every_cabling_row_is_the_models_link_and_trunk(example):
    """Each row's ends, racks and U are the model's link and devices; a patch cord's trunk,
    cassette (in its switch's rack), cassette port (the leg's lane) and trunk length are the
    model's Trunk, and the legs of one trunk share its split port."""
    cluster = example.cluster
    by_name = cluster.device_by_name
    trunks = {t.trunk_id: t for t in cluster.trunks}
    rows = _cabling_rows({f.path: f.data for f in example.files})
    assert len(rows) == len(cluster.links)
    for r, x in zip(rows, cluster.links, strict=True):
        a, b = by_name[x.a_device], by_name[x.b_device]
        assert (r["a_device"], r["a_port"], r["a_rack"], int(r["a_u"])) == (
            a.name,
            x.a_port,
            a.rack,
            a.u,
        )
        assert (r["b_device"], r["b_port"], r["b_rack"], int(r["b_u"])) == (
            b.name,
            x.b_port,
            b.rack,
            b.u,
        )
        t = trunks.get(r["trunk_id"])
        if t is None:
            assert r["trunk_id"] == r["cassette"] == "" and r["cassette_port"] == "0"
            continue
        assert (r["cassette"], r["cassette_rack"], int(r["trunk_m"])) == (
            t.cassette,
            t.rack,
            t.length_m,
        )
        assert (r["b_device"], r["b_rack"]) == (t.device, t.rack)
        parent, _, lane = r["b_port"].rpartition(":")
        assert (parent, lane) == (t.port, r["cassette_port"])
        assert r["cable_id"] == f"{t.trunk_id}.{lane}"
        assert r["media"] == t.media in ("MMF", "SMF")
    legs = Counter(r["trunk_id"] for r in rows if r["trunk_id"])
    assert legs == {t.trunk_id: t.legs for t in cluster.trunks}
    assert len({t.cassette for t in cluster.trunks}) == len(cluster.trunks)


def test_bom_counts_the_trunks_cassettes_patch_cords_and_optics_of_the_cabling_plan(example):
    """bom.csv, read beside cabling.csv: a trunk and a cassette per trunk id, a patch cord per
    structured leg, and a transceiver at both ends of a direct optical cable, in each split
    port of a trunk and at the device end of each patch cord."""
    files = {f.path: f.data for f in example.files}
    rows = _cabling_rows(files)
    bom = list(csv.DictReader(io.StringIO(files["files/bom.csv"].decode())))

    def count(category: str, word: str = "") -> int:
        return sum(
            int(r["quantity"]) for r in bom if r["category"] == category and word in r["item"]
        )

    trunk_ids = {r["trunk_id"] for r in rows if r["trunk_id"]}
    cords = [r for r in rows if r["trunk_id"]]
    direct = {r["cable_id"] for r in rows if not r["trunk_id"] and r["media"] in ("MMF", "SMF")}
    assert count("cable", " trunk") == len(trunk_ids)
    assert count("cassette") == len({r["cassette"] for r in cords}) == len(trunk_ids)
    assert count("cable", " patch cord") == len(cords)
    assert count("optic") == 2 * len(direct) + len(trunk_ids) + len(cords)


def split_ports_on_two_cables(rows: list[dict[str, str]]) -> list[str]:
    """Split ports of cabling.csv whose lanes are on more than one cable (a breakout cable is a
    cable_id, a structured run its trunk_id), or that are also cabled whole: a cage holds one
    module, so none of these can be plugged in."""
    cables: dict[tuple[str, str], set[str]] = defaultdict(set)
    whole = set()
    for r in rows:
        for end in "ab":
            device, port = r[f"{end}_device"], r[f"{end}_port"]
            parent, split, _ = port.partition(":")
            if split:
                cables[device, parent].add(r["trunk_id"] or r["cable_id"])
            else:
                whole.add((device, port))
    return sorted(f"{d} {p}" for (d, p), c in cables.items() if len(c) > 1 or (d, p) in whole)


def test_each_split_port_is_one_breakout_cable_or_one_trunk(example):
    """wanka-10k had 4 such ports, all firewall hand-offs (issue 41): biz-spine-001 400GE2/0/4
    :1/:2 on an MPO trunk and :3/:4 on two 100G cables to fw-01 and fw-02; inb-core-001
    400GE1/0/7 on three 100G cables. The hand-offs are whole ports, or legs of a breakout of
    their own, now."""
    rows = _cabling_rows({f.path: f.data for f in example.files})
    assert split_ports_on_two_cables(rows) == []
    firewalls = {r["a_device"] for r in rows if r["plane"] == "border"}
    for r in rows:
        if r["a_device"] in firewalls and ":" in r["b_port"]:
            parent = r["b_port"].partition(":")[0]
            sharing = {
                x["plane"]
                for x in rows
                if x["b_device"] == r["b_device"] and x["b_port"].startswith(parent + ":")
            }
            assert sharing == {"border"}, (r["cable_id"], sharing)
    found = [f for f in example.findings if f.code == "split-ports"]
    assert [f.severity for f in found] == ["info"], found
    assert ("each on one cable" in found[0].message) == any(":" in r["b_port"] for r in rows)
