"""The twin reads every configuration line through the command table (generator/twin/vrp.py,
generator/catalog/commands.yaml `twin:`): as the device reads it, each line translated or counted
under a named item it does not emulate, and a line the table does not know refused at its
file:line. No root needed: these build the twin's plan only."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest

from generator.analysis.command_table import TRANSLATED, load_table, walk
from generator.twin import checks, plan, read_lines, routing, vrp
from generator.verify import vrp as reader
from generator.verify.report import NotAnOutput
from tests.support.examples import ROOT

POD = ROOT / "inventories" / "pod-128"
CLUSTER = ROOT / "inventories" / "cluster-1k"


def test_every_form_has_a_twin_disposition_and_every_item_says_what_it_means() -> None:
    table = load_table()
    forms = [c for commands in table.commands.values() for c in commands]
    assert all(c.twin == TRANSLATED or c.twin in table.twin_items for c in forms), [
        (c.platform, c.form) for c in forms if not c.twin
    ]
    used = {c.twin for c in forms}
    assert set(table.twin_items) <= used, "an item no form uses"
    assert all(len(text) > 20 for text in table.twin_items.values())


@pytest.mark.parametrize("folder", [POD, CLUSTER], ids=lambda p: p.name)
def test_no_line_of_the_examples_is_read_past(folder: Path) -> None:
    """Every line of every switch and border config is counted under one disposition: the
    counts add up to the lines of the files (less blank lines), and each item is named."""
    devices = vrp.devices(folder)
    counted = sum(sum(d.lines.values()) for d in devices.values())
    files = [
        *(folder / "files" / "switches").glob("*.cfg"),
        *(folder / "files/border").glob("*.cfg"),
    ]
    lines = sum(1 for f in files for line in f.read_text().splitlines() if line.strip())
    assert counted == lines
    assert Counter(d for dev in devices.values() for d in dev.lines)[TRANSLATED] > 0


CLI_SPELLINGS = """\
system-view
interface Vlanif10
 ip address 10.9.1.1 24
Interface Vlanif20
 IP Address 10.9.2.1 24
int   Vlanif30
 ip add 10.9.3.1 255.255.255.0
ip route-static 0.0.0.0 0 10.9.1.254
ip  route-static 10.9.0.0 16 10.9.2.254 pref 70
ip route-st 10.8.0.0 16 10.9.3.254
commit
"""


def _folder_with(tmp_path: Path, name: str, text: str, source: Path = POD) -> Path:
    """A copy of an example whose config `name` is replaced by `text`."""
    folder = tmp_path / source.name
    shutil.copytree(source, folder)
    (folder / "files" / "switches" / f"{name}.cfg").write_text(text, encoding="utf-8")
    return folder


def test_lines_read_as_the_device_reads_them(tmp_path: Path) -> None:
    """Case, incomplete keywords and runs of whitespace, as the CE CLI takes them (architecture
    review 3, section 2.8: verify read 3 interfaces and 3 routes here, the twin 1 and 1)."""
    folder = _folder_with(tmp_path, "oob-core-001", CLI_SPELLINGS)
    dev = vrp.device(folder, folder / "files" / "switches" / "oob-core-001.cfg")
    assert sorted(dev.interfaces) == ["Vlanif10", "Vlanif20", "Vlanif30"]
    assert [str(a) for i in dev.interfaces.values() for a in i.addresses] == [
        "10.9.1.1/24",
        "10.9.2.1/24",
        "10.9.3.1/24",
    ]
    assert [(str(s.network), s.preference) for s in dev.statics] == [
        ("0.0.0.0/0", 60),
        ("10.9.0.0/16", 70),
        ("10.8.0.0/16", 60),
    ]


@pytest.mark.parametrize(
    ("line", "why"),
    [
        (" undo portswich", "not a huawei-ce form of view interface"),  # typo
        (" maximum load-balance 16", "not a huawei-ce form of view interface"),
        ("maximum load-balancing 16", "not a huawei-ce form of view system"),  # wrong view
        (" mtu 9601", "9601 out of range 46-9600"),
        ("telnet server enable", "not a huawei-ce form of view system"),  # VRP8's form
    ],
)
def test_a_line_outside_the_table_stops_the_twin_at_its_file_and_line(
    tmp_path: Path, line: str, why: str
) -> None:
    cfg = POD / "files" / "switches" / "par-leaf-0001.cfg"
    lines = cfg.read_text().splitlines()
    at = next(i for i, text in enumerate(lines) if text.startswith("interface ")) + 1
    lines.insert(at, line)
    folder = _folder_with(tmp_path, "par-leaf-0001", "\n".join(lines) + "\n")
    with pytest.raises(vrp.Unreadable) as caught:
        plan.plan(folder, {})
    assert str(caught.value).startswith(f"files/switches/par-leaf-0001.cfg:{at + 1}: ")
    assert why in str(caught.value)


def _digest(p: plan.Plan) -> str:
    """What the twin would build: every namespace's commands, FRR and nftables text, sysctls,
    the links, and the DHCP relays its ZTP drill runs."""
    h = hashlib.sha256()
    for name, ns in sorted(p.namespaces.items()):
        h.update(
            repr((name, ns.kind, ns.commands, ns.frr, ns.nft, sorted(ns.sysctls.items()))).encode()
        )
    h.update(repr(sorted((link.a, link.b) for link in p.links)).encode())
    h.update(repr([(d.name, i.name, a, s) for d, i, a, s in checks.relays(p)]).encode())
    return h.hexdigest()


def _build(folder: Path) -> str:
    p = plan.plan(folder, {})
    routing.apply(p)
    return _digest(p)


def _block(lines: list[str], i: int) -> range:
    """Line i and the lines indented under it."""
    depth = len(lines[i]) - len(lines[i].lstrip(" "))
    end = i + 1
    while end < len(lines) and len(lines[end]) - len(lines[end].lstrip(" ")) > depth:
        end += 1
    return range(i, end)


TRIES = 8  # instances of one form tried before it counts as not acted on


def _mutated(lines: list[str], i: int, form: str) -> list[str] | None:
    """The lines with line i's first address (not 0.0.0.0) changed in its second octet (10.101.0.0 ->
    10.100.0.0: another network for any mask of /16 or longer), or None for a form without
    an address (deleting it is the test then)."""
    if "<ip>" not in form:
        return None
    found = re.finditer(r"\b(\d+)\.(\d+)(\.\d+\.\d+)\b", lines[i])
    m = next((m for m in found if m[0] != "0.0.0.0"), None)  # a default route: its next hop
    if m is None:
        return None  # `area 0.0.0.0`: the backbone, which deleting tests
    line = f"{lines[i][: m.start()]}{m[1]}.{int(m[2]) ^ 1}{m[3]}{lines[i][m.end() :]}"
    return [*lines[:i], line, *lines[i + 1 :]]


@pytest.mark.slow
def test_deleting_or_changing_any_translated_line_changes_what_the_twin_builds(
    tmp_path: Path,
) -> None:
    """For every translated form in pod-128, deleting one of its lines (and what it opens), and
    changing its first address, each change the twin's plan for some instance of the form (up to
    TRIES of them: a line at its default, such as `portswitch` on an Ethernet port, changes
    nothing on the device either): a form called translated is acted on, value included."""
    folder = tmp_path / "pod-128"
    shutil.copytree(POD, folder)
    base = _build(folder)
    table = load_table()
    left: dict[tuple[str, str, str, str], list[str]] = {}  # form, edit -> instances tried
    done: set[tuple[str, str, str, str]] = set()
    for cfg in sorted((folder / "files").glob("*/*.cfg")):
        if cfg.parent.name not in ("switches", "border"):
            continue
        text = cfg.read_text()
        lines = text.splitlines()
        for read in walk(text, reader.platform(folder, cfg), table):
            c = read.command
            if c is None or c.twin != TRANSLATED:
                continue
            edits = {
                "deleted": [
                    ln for k, ln in enumerate(lines) if k not in _block(lines, read.number - 1)
                ],
                "mutated": _mutated(lines, read.number - 1, c.form),
            }
            for how, edited in edits.items():
                key = (c.platform, c.view, c.form, how)
                if edited is None or key in done or len(left.get(key, ())) >= TRIES:
                    continue
                cfg.write_text("\n".join(edited) + "\n")
                try:
                    acted = _build(folder) != base
                except NotAnOutput:
                    acted = True  # the rest no longer reads: the twin refuses the folder
                except Exception as error:  # a crash is a failure of its own
                    acted, how = False, f"{how}: {error!r}"
                finally:
                    cfg.write_text(text)
                if acted:
                    done.add(key)
                    left.pop(key, None)
                else:
                    left.setdefault(key, []).append(f"{cfg.name}:{read.number}: {read.text} {how}")
    assert len({key[:3] for key in done}) > 40
    assert left == {}


def test_the_report_counts_lines_by_disposition() -> None:
    p = plan.plan(POD, {})
    rows = read_lines(p)
    assert rows[0][1] == TRANSLATED
    items = [twin for _, twin, _ in rows[1:]]
    assert "not emulated: layer2" in items and "not emulated: qos" in items
    total = sum(count for count, _, _ in rows)
    assert total == sum(sum(d.lines.values()) for d in p.devices.values())


def test_twin_test_refuses_the_folder_at_the_line_before_it_starts_anything(
    tmp_path: Path,
) -> None:
    """`wanka twin test` on a folder with a line no form matches: exit 2, the file:line and
    why, no traceback, and nothing started (the plan is read before any namespace or helper)."""
    from generator.twin import run

    if run.missing():
        pytest.skip("the twin needs " + ", ".join(run.missing()))
    cfg = POD / "files" / "switches" / "par-leaf-0001.cfg"
    text = cfg.read_text().replace("undo portswitch", "undo portswich", 1)
    folder = _folder_with(tmp_path, "par-leaf-0001", text)
    line = text.splitlines().index(" undo portswich") + 1
    state = tempfile.mkdtemp(prefix="wt", dir="/tmp")  # short: FRR's socket paths are bounded
    env = {**os.environ, "WANKA_TWIN_STATE": state}
    done = subprocess.run(
        [sys.executable, "-m", "generator", "twin", "test", str(folder), "--no-drills"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert f"files/switches/par-leaf-0001.cfg:{line}: 'undo portswich'" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "twin-report.md").exists()
    assert not os.path.exists(state) or not os.listdir(state), "the twin left its state"
    shutil.rmtree(state, ignore_errors=True)


def _edited(tmp_path: Path, name: str, edit) -> tuple[Path, list[str]]:
    """A copy of pod-128 whose switch config `name` has its lines passed through `edit`."""
    lines = (POD / "files" / "switches" / f"{name}.cfg").read_text().splitlines()
    lines = edit(lines)
    return _folder_with(tmp_path, name, "\n".join(lines) + "\n"), lines


def test_a_layer3_line_on_a_layer2_port_is_refused_as_the_device_refuses_it(tmp_path: Path) -> None:
    """Without its `undo portswitch`, an Ethernet port stays in Layer 2 mode (portswitch.json),
    where `ip address` is no command: refused at its line, not silently given the address."""
    folder, lines = _edited(
        tmp_path, "par-leaf-0001", lambda ls: [x for x in ls if x != " undo portswitch"]
    )
    port = next(i for i, x in enumerate(lines) if x.startswith("interface 400GE1/3/1"))
    at = next(i for i, x in enumerate(lines) if i > port and x.startswith(" ip address")) + 1
    with pytest.raises(vrp.Unreadable, match=rf"par-leaf-0001.cfg:{at}: 'ip address .*Layer 2"):
        plan.plan(folder, {})


def test_an_eth_trunk_without_portswitch_takes_no_access_vlan(tmp_path: Path) -> None:
    """An Eth-Trunk starts in Layer 3 mode (the guide's Eth-Trunk example shows its
    `portswitch`): `port default vlan` under it without `portswitch` is refused."""

    def drop_first_trunk_portswitch(lines: list[str]) -> list[str]:
        at = next(i for i, x in enumerate(lines) if x.startswith("interface Eth-Trunk1"))
        return [x for i, x in enumerate(lines) if not (i > at and x == " portswitch")]

    folder, _ = _edited(tmp_path, "biz-leaf-0001", drop_first_trunk_portswitch)
    with pytest.raises(vrp.Unreadable, match=r"port default vlan .*Layer 3 mode"):
        plan.plan(folder, {})


def test_a_sub_port_of_a_port_not_split_does_not_exist(tmp_path: Path) -> None:
    folder, lines = _edited(
        tmp_path,
        "par-leaf-0001",
        lambda ls: [x for x in ls if "split dimension interface 400GE1/1/1 " not in x],
    )
    at = next(i for i, x in enumerate(lines) if x.startswith("interface 400GE1/1/1:")) + 1
    with pytest.raises(vrp.Unreadable, match=rf":{at}: 'interface 400GE1/1/1:1': .*not split"):
        plan.plan(folder, {})


def test_a_binding_to_a_vpn_not_created_is_refused(tmp_path: Path) -> None:
    def drop_vpns(lines: list[str]) -> list[str]:
        starts = [i for i, x in enumerate(lines) if x.startswith("ip vpn-instance")]
        gone = {k for i in starts for k in _block(lines, i)}
        return [x for i, x in enumerate(lines) if i not in gone]

    folder, lines = _edited(tmp_path, "par-leaf-0001", drop_vpns)
    at = next(i for i, x in enumerate(lines) if "ip binding vpn-instance" in x) + 1
    with pytest.raises(vrp.Unreadable, match=rf":{at}: .*no VPN instance"):
        plan.plan(folder, {})


def _firewall(tmp_path: Path, edit) -> str:
    """fw-01's nftables ruleset in the twin after `edit` of its config lines."""
    cfg = POD / "files" / "border" / "fw-01.cfg"
    folder = tmp_path / "pod-128"
    shutil.copytree(POD, folder)
    (folder / "files/border/fw-01.cfg").write_text(
        "\n".join(edit(cfg.read_text().splitlines())) + "\n"
    )
    p = plan.plan(folder, {})
    routing.apply(p)
    return p.namespaces[plan.ns_name("fw-01")].nft


def test_the_firewall_matches_rules_in_order_deny_included(tmp_path: Path) -> None:
    """A deny rule above a permit shadows it (first match), every `service` line counts, a
    predefined `service ospf` is IP protocol 89, traffic inside one zone is permitted, and the
    rest gets the configured default action."""

    def deny_first_and_two_services(lines: list[str]) -> list[str]:
        at = lines.index(" rule name ssh-switches")
        block = lines[at : lines.index("  action permit", at) + 1]
        denied = [x.replace("rule name ssh-switches", "rule name no-ssh") for x in block]
        denied[-1] = "  action deny"
        more = [*block[:-1], "  service protocol tcp destination-port 830", block[-1]]
        return [*lines[:at], *denied, *more, *lines[at + len(block) :]]

    nft = _firewall(tmp_path, deny_first_and_two_services).splitlines()
    deny = next(i for i, x in enumerate(nft) if x.endswith(' no-ssh"'))
    permits = [i for i, x in enumerate(nft) if x.endswith(' ssh-switches"')]
    assert "tcp dport 22 counter drop" in nft[deny] and len(permits) == 2 and deny < min(permits)
    assert "tcp dport 830 counter accept" in nft[permits[1]]
    assert "meta l4proto 89 counter accept" in next(
        x for x in nft if x.endswith(' ospf-local-out"')
    )
    assert any(x.endswith('accept comment "intrazone"') for x in nft)
    assert "policy drop;" in "\n".join(nft)
    opened = _firewall(
        tmp_path / "b",
        lambda ls: [
            *ls[: ls.index("security-policy") + 1],
            " default action permit",
            *ls[ls.index("security-policy") + 1 :],
        ],
    )
    assert "policy accept;" in opened


def test_an_unknown_predefined_service_is_refused(tmp_path: Path) -> None:
    with pytest.raises(vrp.Unreadable, match="a predefined service the twin does not know"):
        _firewall(tmp_path, lambda ls: [x.replace("  service ospf", "  service bgp") for x in ls])


def test_the_ecmp_width_to_prove_comes_from_the_cabling_and_the_catalog(tmp_path: Path) -> None:
    """Not from the config that must provide it: a leaf cabled to spines 16 times (pod-128's
    par-leaf-0001) must show 16 next hops whatever its `maximum load-balancing` says; one
    uplink cable fewer in cabling.csv makes it 15."""
    p = plan.plan(POD, {})
    assert checks.design_width(p, "par-leaf-0001") == (16, 128)
    folder = tmp_path / "pod-128"
    shutil.copytree(POD, folder)
    cabling = folder / "files" / "cabling.csv"
    rows = cabling.read_text().splitlines()
    uplink = next(i for i, r in enumerate(rows) if "par-leaf-0001" in r and "par-spine-" in r)
    cabling.write_text("\n".join(rows[:uplink] + rows[uplink + 1 :]) + "\n")
    assert checks.design_width(plan.plan(folder, {}), "par-leaf-0001") == (15, 128)


def test_a_session_down_across_a_mispatched_cable_names_the_cabling_row(tmp_path: Path) -> None:
    """Two uplinks of par-leaf-0001 patched to each other's spine ports (cabling.csv rows
    swapped on the far side): the BGP peers over them are blamed on those rows, not on the
    configs' `peer` lines; the peers over the other uplinks are not blamed."""
    folder = tmp_path / "pod-128"
    shutil.copytree(POD, folder)
    cabling = folder / "files" / "cabling.csv"
    rows = cabling.read_text().splitlines()
    first, second = (i for i, r in enumerate(rows) if r.startswith(("PAR-000065,", "PAR-000066,")))
    a, b = rows[first].split(","), rows[second].split(",")
    a[6:8], b[6:8] = b[6:8], a[6:8]  # b_device, b_port
    rows[first], rows[second] = ",".join(a), ",".join(b)
    cabling.write_text("\n".join(rows) + "\n")
    p = plan.plan(folder, {})
    leaf = p.devices["par-leaf-0001"]
    blamed = {peer: checks.cable_blame(p, leaf, str(peer)) for peer, _, _ in leaf.bgp.peers}
    named = sorted(b.line for b in blamed.values() if b)
    assert named == [first + 1, second + 1], blamed
    assert all(
        b.file == "files/cabling.csv" and "another subnet" in b.message
        for b in blamed.values()
        if b
    )
    good = plan.plan(POD, {})
    peers = good.devices["par-leaf-0001"].bgp.peers
    assert all(
        checks.cable_blame(good, good.devices["par-leaf-0001"], str(a)) is None for a, _, _ in peers
    )
