"""`wanka verify`: isolation, management ACLs, secrets and NFS proven from the rendered files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from generator import cli
from generator.verify import NotAnOutput, verify
from generator.verify.report import Report
from generator.verify.rules import secrets_in

ROOT = Path(__file__).resolve().parents[2]
INVENTORIES = sorted(p.name for p in (ROOT / "inventories").iterdir() if p.is_dir())


def _verify(capsys, folder: Path) -> tuple[int, str]:
    code = cli.main(["verify", str(folder)])
    out = capsys.readouterr()
    return code, out.out + out.err


# cluster-1k in the slow suite: tests/faults/test_verify_faults.py verifies a copy of the same files
# in the quick loop (test_the_clean_copy_verifies_and_counts_the_flows), and more
@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=pytest.mark.slow) if n == "cluster-1k" else n for n in INVENTORIES],
)
def test_every_committed_example_verifies(name, capsys):
    code, text = _verify(capsys, ROOT / "inventories" / name)
    assert code == 0, text
    assert "verified" in text


UNCOMMITTED = sorted(
    p.stem
    for p in (ROOT / "blueprints").glob("*.yaml")
    if not (ROOT / "inventories" / p.stem).is_dir()
)


@pytest.mark.slow
@pytest.mark.parametrize("name", UNCOMMITTED)
def test_every_other_example_generates_and_verifies(name, tmp_path, capsys):
    """The examples whose output is not kept in git (the 10k one, the supernode one)."""
    out = tmp_path / name
    assert (
        cli.main(["generate", str(ROOT / "blueprints" / f"{name}.yaml"), "-o", str(out), "-q"]) == 0
    )
    capsys.readouterr()
    code, text = _verify(capsys, out)
    assert code == 0, text


@pytest.fixture
def copy(tmp_path) -> Path:
    folder = tmp_path / "pod-128"
    shutil.copytree(ROOT / "inventories" / "pod-128", folder)
    return folder


def _edit(path: Path, old: str, new: str) -> int:
    """Replace the first `old` by `new`; returns the 1-based line of the edit."""
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    line = text[: text.index(old)].count("\n") + 1
    path.write_text(text.replace(old, new, 1))
    return line


def test_parameter_leaf_address_in_the_business_pool_is_a_breach(copy, capsys):
    cfg = copy / "files" / "switches" / "par-leaf-0001.cfg"
    line = _edit(cfg, " ip address 10.64.32.0 31", " ip address 10.100.9.0 31")
    code, text = _verify(capsys, copy)
    assert code == 1
    assert f"files/switches/par-leaf-0001.cfg:{line}: the business and parameter planes" in text
    assert "subnet 10.100.9.0/31" in text and "par-leaf-0001 routing domain _public_" in text


def test_host_gateway_into_another_plane_bridges_the_host(copy, capsys):
    conf = copy / "files" / "hccn" / "npu-001.conf"
    line = _edit(conf, "gateway_0=10.64.0.1", "gateway_0=10.100.0.1")
    code, text = _verify(capsys, copy)
    assert code == 1
    assert f"files/hccn/npu-001.conf:{line}: the business and parameter planes" in text


def test_a_firewall_cabled_to_the_parameter_plane_is_refused(copy, capsys):
    cabling = copy / "files" / "cabling.csv"
    with cabling.open("a") as fh:
        fh.write(
            "BRD-999999,border,fw-01,100GE1/0/9,M01-02,12,par-leaf-0001,400GE1/3/1,"
            "T01-01,17,100GE,AOC,7,,,,0,0\n"
        )
    code, text = _verify(capsys, copy)
    assert code == 1
    assert "firewall fw-01 faces the parameter plane" in text


def test_an_open_management_acl_is_refused(copy, capsys):
    cfg = copy / "files" / "switches" / "biz-leaf-0001.cfg"
    line = _edit(
        cfg,
        " rule 5 permit vpn-instance _management_vpn_ source 10.101.0.0 0.0.15.255",
        " rule 5 permit source 0.0.0.0 255.255.255.255",
    )
    code, text = _verify(capsys, copy)
    assert code == 1
    assert f"files/switches/biz-leaf-0001.cfg:{line}: ACL 2000 permits 0.0.0.0" in text


def test_ssh_without_an_acl_is_refused(copy, capsys):
    cfg = copy / "files" / "switches" / "oob-core-001.cfg"
    _edit(cfg, "ssh server acl 2000\n", "")
    code, text = _verify(capsys, copy)
    assert code == 1
    assert "oob-core-001.cfg:1: oob-core-001: no `ssh server acl`" in text


def test_a_clear_password_is_refused(copy, capsys):
    cfg = copy / "files" / "switches" / "par-leaf-0002.cfg"
    line = _edit(
        cfg,
        "password irreversible-cipher {{ vault_switch_admin_password }}",
        "password irreversible-cipher secret123",
    )
    code, text = _verify(capsys, copy)
    assert code == 1
    assert f"files/switches/par-leaf-0002.cfg:{line}: secret in clear" in text
    assert "secret123" not in text


def test_a_password_in_a_form_the_switch_refuses_stops_verify_masked(copy, capsys):
    # CE V300R023C00 local-user.json has `password irreversible-cipher` only: the switch refuses
    # `password cipher`, and verify stops at the line without printing the secret
    cfg = copy / "files" / "switches" / "par-leaf-0002.cfg"
    line = _edit(
        cfg,
        "password irreversible-cipher {{ vault_switch_admin_password }}",
        "password cipher secret123",
    )
    code, text = _verify(capsys, copy)
    assert code == 2
    assert (
        f"files/switches/par-leaf-0002.cfg:{line}: 'local-user admin password cipher ********'"
        in text
    )
    assert "secret123" not in text


def test_an_nfs_mount_is_refused(copy, capsys):
    script = copy / "files" / "hccn" / "npu-003.sh"
    lines = script.read_text().count("\n")
    with script.open("a") as fh:
        fh.write("mount -t nfs 10.96.0.200:/export /data\n")
    code, text = _verify(capsys, copy)
    assert code == 1
    assert f"files/hccn/npu-003.sh:{lines + 1}: NFS mount or export" in text


def test_a_folder_wanka_did_not_write_exits_2(tmp_path, capsys):
    (tmp_path / "hosts.yml").write_text("all: {}\n")
    code, text = _verify(capsys, tmp_path)
    assert code == 2 and "not a wanka output folder" in text
    with pytest.raises(NotAnOutput):
        verify(tmp_path / "missing")


@pytest.mark.parametrize(
    "line",
    [
        " authentication-mode simple plain 0spfKey",
        " local-user admin password irreversible-cipher Admin@123",
        "snmp-agent community read S3cretCommunity",
        " hwtacacs-server shared-key simple T4cacs",
    ],
)
def test_a_secret_in_clear_is_reported_without_the_secret(line: str) -> None:
    """The finding names the line, never the secret: verify's output lands in CI logs."""
    report = Report()
    secrets_in("files/switches/x.cfg", f"interface X\n{line}\n", report)
    [problem] = report.problems
    assert problem.line == 2 and problem.reason.startswith("secret in clear")
    assert not any(
        s in problem.render() for s in ("0spfKey", "Admin@123", "S3cretCommunity", "T4cacs")
    )
