"""`wanka twin export --containerlab DIR FOLDER` (issue 42 item 5), checked against containerlab's
published topology schema (tests/data/consumers/containerlab/clab.schema.json, v0.79.0) and the
rules its manual gives beside it that the schema does not enforce (endpoints "node:iface",
interface names of at most 15 characters without "/" or spaces: docs/manual/topo-def-file.md;
bind paths relative to the topology file: docs/manual/nodes.md). No runtime is needed."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
import yaml

from generator.cli import main
from generator.twin import instance, kernel, plan, routing

ROOT = Path(__file__).resolve().parents[2]
POD = ROOT / "inventories" / "pod-128"
SCHEMA = json.loads(
    (ROOT / "tests/data/consumers/containerlab/clab.schema.json").read_text(encoding="utf-8")
)


def wanka(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def _check(out: Path, name: str, folder: Path, pod: int = 0) -> dict:
    """The topology as containerlab reads it: valid against the schema, every endpoint a node
    and a Linux interface name used once, every bind a file written beside it; and the twin's
    plan in it: a node per namespace, a link per veth pair, each router's frr.conf."""
    topo = yaml.safe_load((out / f"{name}.clab.yml").read_text(encoding="utf-8"))
    errors = sorted(jsonschema.Draft7Validator(SCHEMA).iter_errors(topo), key=str)
    assert not errors, [f"{list(e.path)}: {e.message[:200]}" for e in errors[:5]]
    nodes = topo["topology"]["nodes"]
    seen = set()
    for link in topo["topology"]["links"]:
        assert len(link["endpoints"]) == 2
        for end in link["endpoints"]:
            node, _, iface = end.partition(":")
            assert node in nodes, end
            assert 0 < len(iface) <= 15 and "/" not in iface and " " not in iface, end
            assert end not in seen, f"{end}: an interface used twice"
            seen.add(end)
    for node in nodes.values():
        for bind in node.get("binds", []):
            assert (out / bind.split(":")[0]).is_file(), bind
    p = plan.plan(folder, {}, pod, bounded=False)
    routing.apply(p)
    assert len(nodes) == len(p.namespaces)
    assert len(topo["topology"]["links"]) == len(p.links)
    for ns in p.namespaces.values():
        node = ns.name.removeprefix(instance.PREFIX)
        if ns.frr:
            assert (out / name / node / "frr.conf").read_text() == ns.frr, node
            daemons = (out / name / node / "daemons").read_text().splitlines()
            assert {f"{d}=yes" for d in ns.daemons} <= set(daemons), node
    return topo


def test_pod_128_exports_a_topology_containerlab_accepts(capsys, tmp_path):
    code, out, err = wanka(capsys, "twin", "export", "--containerlab", str(tmp_path), str(POD))
    assert code == 0, err
    assert "pod-128.clab.yml: 124 nodes (34 FRR routers), 395 links" in out
    topo = _check(tmp_path, "pod-128", POD)
    nodes = topo["topology"]["nodes"]
    spine = nodes["par-spine-001"]
    assert spine["group"] == "routers" and int(spine["sysctls"][kernel.IGMP]) > 20
    assert "pod-128/par-spine-001/frr.conf:/etc/frr/frr.conf" in spine["binds"]
    assert any(c.startswith("ip address add ") for c in nodes["npu-001.npu"]["exec"])
    fw = nodes["fw-01"]
    assert "nft -f /etc/wanka/ruleset.nft" in fw["exec"]
    # each Linux name maps back to the device and port of files/cabling.csv
    rows = list(csv.DictReader((tmp_path / "pod-128" / "interfaces.csv").open()))
    ends = {tuple(e.split(":")) for link in topo["topology"]["links"] for e in link["endpoints"]}
    assert {(r["node"], r["interface"]) for r in rows} == {e for e in ends if e[0] != "outside"}
    cabled = {(r[f"{s}_device"], r[f"{s}_port"]) for _, r in plan.cabling(POD) for s in "ab"}
    named = {(r["device"], r["port"]) for r in rows}
    p = plan.plan(POD, {})
    bonds = sum(len(hv["business_bond"]["members"]) - 1 for hv in p.hostvars.values()
                if hv.get("business_bond"))  # fmt: skip
    # not named: both ends of each bond's second member (a bond runs on its first member)
    assert len(cabled - named) == 2 * bonds > 0
    # named but not cabled: the routers' hand-offs to the provider
    assert {d for d, _ in named - cabled} == {"rtr-01", "rtr-02"}, named - cabled


def test_the_same_folder_exports_the_same_bytes(capsys, tmp_path):
    for run in ("a", "b"):
        assert wanka(capsys, "twin", "export", "--containerlab", str(tmp_path / run),
                     str(POD))[0] == 0  # fmt: skip

    def tree(root: Path) -> dict[str, bytes]:
        return {str(f.relative_to(root)): f.read_bytes() for f in root.rglob("*") if f.is_file()}

    a, b = tree(tmp_path / "a"), tree(tmp_path / "b")
    assert len(a) > 60 and a == b
    assert str(ROOT) not in (tmp_path / "a" / "pod-128.clab.yml").read_text()  # no machine path


def test_an_export_replaces_an_earlier_one_whole_and_never_a_users_folder(capsys, tmp_path):
    out = tmp_path / "lab"
    assert wanka(capsys, "twin", "export", "--containerlab", str(out), str(POD),
                 "--name", "first")[0] == 0  # fmt: skip
    assert wanka(capsys, "twin", "export", "--containerlab", str(out), str(POD))[0] == 0
    assert sorted(p.name for p in out.iterdir()) == [".wanka-output", "pod-128", "pod-128.clab.yml"]
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("mine")
    code, _, err = wanka(capsys, "twin", "export", "--containerlab", str(mine), str(POD))
    assert code == 2 and err.startswith(f"wanka: {mine} holds files wanka did not write"), err
    assert "--containerlab" in err, err
    assert sorted(p.name for p in mine.iterdir()) == ["notes.txt"]


def test_a_bad_folder_is_refused_at_its_file_and_line(capsys, tmp_path):
    folder = tmp_path / "pod-128"
    shutil.copytree(POD, folder)
    cabling = folder / "files" / "cabling.csv"
    rows = cabling.read_text().splitlines()
    rows[4] = rows[4].replace(rows[4].split(",")[2], "no such device!", 1)
    cabling.write_text("\n".join(rows) + "\n")
    out = tmp_path / "lab"
    code, _, err = wanka(capsys, "twin", "export", "--containerlab", str(out), str(folder))
    assert code == 2, err
    assert err.startswith(
        f"wanka: {folder}: files/cabling.csv:5: 'no such device!' is not a device"
    )
    assert not out.exists()
    code, _, err = wanka(capsys, "twin", "export", "--containerlab", str(out), str(tmp_path))
    assert code == 2 and "is not a wanka output folder" in err and not out.exists(), err
    code, _, err = wanka(capsys, "twin", "export", "--containerlab", str(out), str(POD),
                         "--name", "a/b")  # fmt: skip
    assert code == 2 and "'a/b': a containerlab topology name" in err and "--name" in err, err


def test_help_says_what_is_written_and_how_to_run_it():
    done = subprocess.run([sys.executable, "-m", "generator", "twin", "export", "--help"],
                          cwd=ROOT, capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    for words in ("--containerlab DIR", "containerlab deploy -t", "interfaces.csv",
                  "15 characters", "clabernetes", "No root needed", "example:"):  # fmt: skip
        assert words in text, words


@pytest.mark.slow
def test_wanka_10k_exports_whole(tmp_path):
    """The 10,240-card build, which `twin up` runs one pod at a time, exported whole."""
    folder = tmp_path / "w10k"
    assert main(["generate", str(ROOT / "blueprints/wanka-10k.yaml"), "-o", str(folder), "-q"]) == 0
    out = tmp_path / "lab"
    assert main(["twin", "export", "--containerlab", str(out), str(folder)]) == 0
    topo = _check(out, "w10k", folder)
    assert len(topo["topology"]["nodes"]) > plan.MAX_NAMESPACES
