"""The twin reads every configuration line through the command table (generator/twin/vrp.py,
generator/catalog/commands.yaml `twin:`): as the device reads it, each line translated or counted
under a named item it does not emulate, and a line the table does not know refused at its
file:line. No root needed: these build the twin's plan only."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

import pytest

from generator.analysis.command_table import TRANSLATED, load_table, walk
from generator.twin import checks, plan, read_lines, routing, vrp
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
        ("snmp-agent community read public", "not a huawei-ce form of view system"),
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


@pytest.mark.slow
def test_deleting_any_translated_line_changes_what_the_twin_builds(tmp_path: Path) -> None:
    """For one instance of every translated form in pod-128 (the first config that has it), the
    twin's plan without that line (and what it opens) differs from the plan with it: a form
    called translated is acted on."""
    folder = tmp_path / "pod-128"
    shutil.copytree(POD, folder)
    base = _build(folder)
    table = load_table()
    seen: set[tuple[str, str, str]] = set()
    inert = []
    configs = sorted((folder / "files").glob("*/*.cfg"))
    for cfg in configs:
        if cfg.parent.name not in ("switches", "border"):
            continue
        text = cfg.read_text()
        platform = vrp.platform(folder, cfg)
        lines = text.splitlines()
        for read in walk(text, platform, table):
            c = read.command
            if c is None or c.twin != TRANSLATED or (c.platform, c.view, c.form) in seen:
                continue
            seen.add((c.platform, c.view, c.form))
            cut = _block(lines, read.number - 1)
            kept = [line for k, line in enumerate(lines) if k not in cut]
            cfg.write_text("\n".join(kept) + "\n")
            try:
                if _build(folder) == base:
                    inert.append(f"{cfg.name}:{read.number}: {read.text} ({c.form})")
            except vrp.Unreadable:
                pass  # the rest no longer reads: that changes what the twin does too
            except Exception as error:  # a crash: reported with the others
                inert.append(f"{cfg.name}:{read.number}: {read.text}: {error!r}")
            finally:
                cfg.write_text(text)
    assert len(seen) > 40
    assert inert == []


def test_the_report_counts_lines_by_disposition() -> None:
    p = plan.plan(POD, {})
    rows = read_lines(p)
    assert rows[2].split(" | ")[1] == TRANSLATED
    items = [row.split(" | ")[1] for row in rows[3:]]
    assert "not emulated: port-state" in items and "not emulated: qos" in items
    total = sum(int(row.split(" | ")[0].strip("| ")) for row in rows[2:])
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
