"""`wanka verify` catches each fault of issue #13, injected into a copy of the cluster-1k output,
naming the offending file:line; and proves the flows that must exist.

One copy of inventories/cluster-1k is used per session: each test gets a folder of symbolic
links to it in which only the files its fault touches are real copies."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from generator import cli
from generator.catalog import build_catalog

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "inventories" / "cluster-1k"


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("base") / "cluster-1k"
    shutil.copytree(SOURCE, folder)
    return folder


def _linked(base: Path, dest: Path, touched: set[str]) -> Path:
    for path in base.rglob("*"):
        rel = path.relative_to(base)
        target = dest / rel
        if path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        elif rel.as_posix() in touched:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(path, target)  # verify refuses symbolic links; a hard link is the file
    return dest


def _verify(capsys, folder: Path) -> tuple[int, str]:
    code = cli.main(["verify", str(folder)])
    out = capsys.readouterr()
    return code, out.out + out.err


def _insert_before(path: Path, anchor: str, new: str) -> int:
    """Insert `new` (lines) before the first line equal to `anchor`; returns the line of the
    first inserted line."""
    lines = path.read_text().splitlines()
    i = lines.index(anchor)
    lines[i:i] = new.splitlines()
    path.write_text("\n".join(lines) + "\n")
    return i + 1


def _insert_after(path: Path, prefix: str, new: str) -> int:
    lines = path.read_text().splitlines()
    i = next(k for k, s in enumerate(lines) if s.startswith(prefix)) + 1
    lines[i:i] = new.splitlines()
    path.write_text("\n".join(lines) + "\n")
    return i + 1


def _replace(path: Path, old: str, new: str) -> int:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    line = text[: text.index(old)].count("\n") + 1
    path.write_text(text.replace(old, new, 1))
    return line


def _append(path: Path, text: str) -> int:
    lines = path.read_text().count("\n")
    with path.open("a") as fh:
        fh.write(text)
    return lines + 1


def _cabling_line(folder: Path, needle: str) -> int:
    for n, line in enumerate((folder / "files/cabling.csv").read_text().splitlines(), 1):
        if needle in line:
            return n
    raise AssertionError(needle)


PAR = "files/switches/par-leaf-0001.cfg"
BIZ = "files/switches/biz-leaf-0001.cfg"
SPINE = "files/switches/biz-spine-001.cfg"
CABLING = "files/cabling.csv"
# cluster-1k's parameter leaf and border router models name the ports (catalog/switches.yaml)
_LEAF_PORTS = build_catalog().switches["ce9860-4c-ei"].ports
LEAF_LANE = f"{_LEAF_PORTS[0].name}:1"  # first 2 x 200GE lane: npu-0001 npu0
LEAF_LAST = _LEAF_PORTS[-1].name
RTR_LAST = build_catalog().switches["ne8000-m8"].ports[-1].name
ALL = "group_vars/all.yml"
HOST1 = "host_vars/npu-0001.yml"
HOST2 = "host_vars/npu-0002.yml"

# (id, files touched, inject(folder) -> (file, line), text expected after file:line)
Fault = tuple[str, set[str], Callable[[Path], tuple[str, int]], str]
FAULTS: list[Fault] = [
    (
        "static-route-into-another-plane",
        {PAR},
        lambda f: (
            PAR,
            _insert_before(f / PAR, "commit", "ip route-static 10.100.0.0 16 10.64.128.1"),
        ),
        "static route into another plane",
    ),
    (
        "bgp-peer-on-another-plane",
        {PAR},
        lambda f: (PAR, _insert_after(f / PAR, "bgp ", " peer 10.100.128.1 as-number 65001")),
        "BGP peer 10.100.128.1 is on the business plane",
    ),
    (
        "snmpv2c-community",
        {BIZ},
        lambda f: (
            BIZ,
            _insert_before(f / BIZ, "snmp-agent trap enable", "snmp-agent community read Pub1ic"),
        ),
        "SNMP v1/v2c",
    ),
    (
        "second-vty-block-without-acl",
        {BIZ},
        lambda f: (
            BIZ,
            _insert_before(
                f / BIZ, "lldp enable", "user-interface vty 16 20\n authentication-mode aaa"
            ),
        ),
        "VTY lines without an inbound ACL",
    ),
    (
        "ansible-password-in-inventory",
        {HOST1},
        lambda f: (
            HOST1,
            _replace(
                f / HOST1,
                'ansible_host: !unsafe "10.101.0.2"\n',
                'ansible_host: !unsafe "10.101.0.2"\nansible_password: "hunter2"\n',
            )
            + 1,
        ),
        "ansible_password in clear",
    ),
    (
        "become-password-in-group-vars",
        {ALL},
        lambda f: (ALL, _append(f / ALL, "ansible_become_password: hunter2\n")),
        "ansible_become_password in clear",
    ),
    (
        "bmc-password-in-inventory",
        {HOST2},
        lambda f: (
            HOST2,
            _replace(
                f / HOST2,
                'bmc_address: !unsafe "10.102.0.3/26"\n',
                'bmc_address: !unsafe "10.102.0.3/26"\nbmc_password: "Admin9000"\n',
            )
            + 1,
        ),
        "bmc_password in clear",
    ),
    (
        "hwtacacs-shared-key-simple",
        {BIZ},
        lambda f: (
            BIZ,
            _insert_before(
                f / BIZ,
                "lldp enable",
                "hwtacacs-server template tac\n hwtacacs-server shared-key cipher T4cacs",
            )
            + 1,
        ),
        "secret in clear",
    ),
    (
        "ospf-plain-text-authentication",
        {SPINE},
        lambda f: (
            SPINE,
            _insert_after(f / SPINE, " area 0.0.0.0", "  authentication-mode simple plain 0spfKey"),
        ),
        "secret in clear",
    ),
    (
        "storage-access-nfs",
        {ALL},
        lambda f: (ALL, _replace(f / ALL, 'storage_access: !unsafe "dpc"', "storage_access: nfs")),
        "storage_access: nfs",
    ),
    (
        "border-router-cabled-into-parameter-plane",
        {CABLING},
        lambda f: (
            CABLING,
            _append(
                f / CABLING,
                f"BRD-999999,border,rtr-01,{RTR_LAST},M01-02,6,par-leaf-0001,{LEAF_LAST},"
                "T01-01,17,100GE,AOC,30\n",
            ),
        ),
        "rtr-01 (border) is cabled to par-leaf-0001 on the parameter plane",
    ),
    (
        "deleted-switch-config",
        {"files/switches/par-leaf-0003.cfg"},
        lambda f: (
            (f / "files/switches/par-leaf-0003.cfg").unlink(),
            (CABLING, _cabling_line(f, ",par-leaf-0003,")),
        )[1],
        "par-leaf-0003 is cabled but has no configuration",
    ),
    (
        "port-cabled-twice",
        {CABLING},
        lambda f: (
            CABLING,
            _append(
                f / CABLING,
                f"PAR-999999,parameter,npu-0002,eth0,T01-01,5,par-leaf-0001,{LEAF_LANE},"
                "T01-01,17,200GE,AOC,3\n",
            ),
        ),
        f"par-leaf-0001 {LEAF_LANE} is cabled twice",
    ),
    (
        "recabled-business-port-onto-a-parameter-leaf",
        {CABLING},
        lambda f: (
            CABLING,
            _replace(
                f / CABLING,
                ",npu-0001,biz0,T01-01,1,biz-leaf-0001,25GE1/0/1,",
                f",npu-0001,biz0,T01-01,1,par-leaf-0001,{LEAF_LANE},",
            ),
        ),
        "planes reach one another",
    ),
]


FAST = {"recabled-business-port-onto-a-parameter-leaf", "deleted-switch-config"}


@pytest.mark.parametrize(
    "fault",
    [pytest.param(f, marks=() if f[0] in FAST else pytest.mark.slow) for f in FAULTS],
    ids=[f[0] for f in FAULTS],
)
def test_each_injected_fault_is_named_at_its_line(fault: Fault, base, tmp_path, capsys):
    _, touched, inject, expected = fault
    folder = _linked(base, tmp_path / "cluster-1k", touched)
    file, line = inject(folder)
    code, text = _verify(capsys, folder)
    assert code == 1, text
    assert f"{folder}/{file}:{line}: " in text, text
    located = [s for s in text.splitlines() if s.startswith(f"{folder}/{file}:{line}: ")]
    assert any(expected in s for s in located), text


def test_the_clean_copy_verifies_and_counts_the_flows(base, capsys):
    code, text = _verify(capsys, base)
    assert code == 0, text
    assert "13 required flows proven" in text


def test_removing_the_oob_management_path_names_the_flows_lost(base, tmp_path, capsys):
    cores = {"files/switches/oob-core-001.cfg", "files/switches/oob-core-002.cfg"}
    folder = _linked(base, tmp_path / "cluster-1k", cores)
    for rel in cores:
        path = folder / rel
        kept = [
            s for s in path.read_text().splitlines() if not s.startswith("ip route-static 10.101.")
        ]
        path.write_text("\n".join(kept) + "\n")
    code, text = _verify(capsys, folder)
    assert code == 1
    for flow in ("ssh-switches", "snmp-trap", "ntp", "syslog", "ztp", "redfish", "ipmi"):
        assert f"required flow {flow} (" in text, text
    assert "no route toward the management-nodes leaves the oob plane" in text


@pytest.mark.slow
def test_a_firewall_without_the_rule_loses_the_flow(base, tmp_path, capsys):
    fws = {"files/border/fw-01.cfg", "files/border/fw-02.cfg"}
    folder = _linked(base, tmp_path / "cluster-1k", fws)
    for rel in fws:
        for _ in range(2):  # the interzone rule and the firewall's own (ntp-local)
            _replace(
                folder / rel,
                "service protocol udp destination-port 123",
                "service protocol udp destination-port 124",
            )
    code, text = _verify(capsys, folder)
    assert code == 1
    assert "required flow ntp (" in text and "no rule permits it" in text


@pytest.mark.slow
def test_an_uncabled_firewall_link_is_not_a_path(base, tmp_path, capsys):
    folder = _linked(base, tmp_path / "cluster-1k", {CABLING})
    path = folder / CABLING
    kept = [
        s for s in path.read_text().splitlines() if not (",border,fw-0" in s and "oob-core" in s)
    ]
    path.write_text("\n".join(kept) + "\n")
    code, text = _verify(capsys, folder)
    assert code == 1
    assert "is not cabled" in text or "out of a cabled interface" in text, text


def test_free_text_in_the_blueprint_cannot_fail_verify(tmp_path, capsys):
    """A site name with `password` in it is text, not a secret."""
    text = (ROOT / "blueprints" / "pod-128.yaml").read_text()
    assert "  site: lab-1\n" in text
    blueprint = tmp_path / "pod.yaml"
    blueprint.write_text(text.replace("  site: lab-1\n", '  site: "ops password rotation lab"\n'))
    out = tmp_path / "out"
    assert cli.main(["generate", str(blueprint), "-o", str(out), "-q"]) == 0
    capsys.readouterr()
    code, text = _verify(capsys, out)
    assert code == 0, text


@pytest.mark.parametrize(
    "name", sorted(p.name for p in (ROOT / "inventories").iterdir() if p.is_dir())
)
def test_every_cabled_device_has_a_configuration(name):
    """Switches in files/switches/, routers and firewalls in files/border/; hosts are
    configured by the inventory."""
    import csv

    from tests.support.output_readers import Outputs

    folder = ROOT / "inventories" / name
    with (folder / "files" / "cabling.csv").open() as fh:
        cabled = {row[k] for row in csv.DictReader(fh) for k in ("a_device", "b_device")}
    groups = Outputs({"hosts.yml": (folder / "hosts.yml").read_bytes()}).groups
    hosts = set().union(
        *(groups.get(g, set()) for g in ("npu_servers", "storage_nodes", "management_nodes"))
    )
    configs = {p.stem for d in ("switches", "border") for p in (folder / "files" / d).glob("*.cfg")}
    assert hosts and configs
    assert cabled - hosts - configs == set()
    assert {p.stem for p in (folder / "files" / "border").glob("*.cfg")} >= {
        d for d in cabled if d.startswith(("rtr-", "fw-"))
    }


def test_a_forked_reader_names_a_fault_as_this_process_does(base, tmp_path, capsys, monkeypatch):
    """On a large output verify reads the second half of the switch configs (and the hccn files)
    in a forked worker. Forced here on cluster-1k: a fault in that half is reported with the
    same words, file and line as when everything is read in this process."""
    import multiprocessing as mp
    import os

    import generator.verify as verify

    if "fork" not in mp.get_all_start_methods() or (os.cpu_count() or 1) < 2:
        pytest.skip("no fork start method or a single CPU")
    last = "files/switches/sto-spine-004.cfg"  # in the second half: the worker reads it
    folder = _linked(base, tmp_path / "cluster-1k", {last})
    line = _insert_before(folder / last, "commit", "snmp-agent community read Pub1ic")
    reports = []
    for threshold in (0, 10**6):  # forked, then in this process
        monkeypatch.setattr(verify, "PARALLEL_FROM_CONFIGS", threshold)
        reports.append(_verify(capsys, folder))
    assert reports[0] == reports[1]
    code, text = reports[0]
    assert code == 1 and f"{folder}/{last}:{line}: " in text and "SNMP v1/v2c" in text, text
