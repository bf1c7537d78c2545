"""The twin's cache of the ztp_server role's output (generator.twin.ztp): a run whose inputs are
byte for byte those of an earlier run of the same instance takes that run's files (the file root,
dnsmasq's and sshd's drop-ins) instead of running ansible-playbook again (~30 s of CPU on
pod-128); any byte changed in what the role reads runs it again; the files the SFTP account reads
as its group go to this twin's account, whose ids change with each twin."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from generator.collection import ansible_collection
from generator.twin import hosts, ztp

ROOT = Path(__file__).resolve().parents[2]
POD = ROOT / "inventories" / "pod-128"
NOBODY = (65534, 65534)  # the SFTP account's ids in these tests (root can give files away)


def _collection(tmp: Path) -> Path:
    """A collection's shape: the playbook, the role, a filter plugin, ansible.cfg."""
    coll = tmp / "collection"
    for where, text in (
        ("playbooks/ztp.yml", "---\n- name: ZTP\n  hosts: controller\n"),
        ("roles/ztp_server/tasks/main.yml", "---\n- name: A task\n"),
        ("roles/ztp_server/templates/dnsmasq.conf.j2", "port=0\n"),
        ("plugins/filter/wanka_vault.py", "def f():\n    return 1\n"),
        ("ansible.cfg", "[defaults]\nforks = 50\n"),
        ("roles/host_network/tasks/main.yml", "---\n"),
    ):
        (coll / where).parent.mkdir(parents=True, exist_ok=True)
        (coll / where).write_text(text)
    return coll


def _base(tmp: Path) -> tuple[Path, Path]:
    base = tmp / "ztp"
    (base / "run").mkdir(parents=True)
    (base / "run" / "overrides.yml").write_text('{"all": {"vars": {"wanka_root": "/x"}}}')
    return base, hosts.inventory(POD, base)


def _output(base: Path) -> None:
    """What the role writes: the file root (its staged configs group-readable by the account),
    the dnsmasq and sshd drop-ins."""
    root = base / "srv" / "ztp"
    root.mkdir(parents=True)
    os.chmod(base / "srv", 0o755)
    os.chmod(root, 0o755)
    (root / "par-leaf-0001.cfg").write_text("sysname par-leaf-0001\n")
    os.chmod(root / "par-leaf-0001.cfg", 0o640)
    os.chown(root / "par-leaf-0001.cfg", 0, NOBODY[1])
    (root / "SHA256SUMS").write_text("0" * 64 + "  par-leaf-0001.cfg\n")
    (base / "etc" / "dnsmasq.d").mkdir(parents=True)
    (base / "etc" / "dnsmasq.d" / "wanka-ztp.conf").write_text("port=0\n")


def test_the_key_changes_with_any_byte_the_role_reads_and_only_then(tmp_path):
    base, inventory = _base(tmp_path)
    coll = _collection(tmp_path)
    command = ["ansible-playbook", "-e", "ztp_server_host=controller-01"]
    key = ztp._key(base, inventory, coll, command)
    assert ztp._key(base, inventory, coll, command) == key
    assert ztp._key(base, inventory, coll, [*command[:2], "ztp_server_host=controller-02"]) != key
    for path in (
        base / "run" / "overrides.yml",
        inventory / "host_vars" / "controller-01.yml",
        inventory / "files" / "ztp" / "switches.yml",
        coll / "playbooks" / "ztp.yml",
        coll / "roles/ztp_server/templates/dnsmasq.conf.j2",
        coll / "plugins/filter/wanka_vault.py",
        coll / "ansible.cfg",
    ):
        before = path.read_bytes()
        path.write_bytes(before + b"\n")
        assert ztp._key(base, inventory, coll, command) != key, path
        path.write_bytes(before)
    assert ztp._key(base, inventory, coll, command) == key
    _output(base)  # an earlier run's output, which the role reads (its stamp, what differs)
    earlier = ztp._key(base, inventory, coll, command)
    assert earlier != key
    (coll / "roles/host_network/tasks/main.yml").write_text("---\n- name: Not read\n")
    (base / "run" / "leases").write_text("what dnsmasq writes\n")
    assert ztp._key(base, inventory, coll, command) == earlier  # another role, the drill's files


def test_a_cached_output_comes_back_whole_with_the_accounts_files_given_to_it(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(ztp, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(ztp, "_sftp_ids", lambda: NOBODY)
    base = tmp_path / "earlier"
    _output(base)
    assert not ztp._restore(base, "a" * 64)  # not cached: the role runs
    assert not (base / "srv").exists()  # nothing half restored
    _output(base)
    ztp._keep(base, "a" * 64)
    owners = json.loads((ztp.CACHE / ("a" * 64) / ztp.OWNERS).read_text())
    assert owners == {"srv/ztp/par-leaf-0001.cfg": [False, True]}
    later = tmp_path / "later"
    monkeypatch.setattr(ztp, "_sftp_ids", lambda: (NOBODY[0], NOBODY[1] - 1))  # a new account
    assert ztp._restore(later, "a" * 64)
    staged = later / "srv" / "ztp" / "par-leaf-0001.cfg"
    assert staged.read_text() == "sysname par-leaf-0001\n"
    st = staged.stat()
    assert (stat.S_IMODE(st.st_mode), st.st_uid, st.st_gid) == (0o640, 0, NOBODY[1] - 1)
    root = (later / "srv" / "ztp").stat()  # sshd's chroot: root-owned, not group-writable
    assert (stat.S_IMODE(root.st_mode), root.st_uid) == (0o755, 0)
    assert (later / "etc" / "dnsmasq.d" / "wanka-ztp.conf").read_text() == "port=0\n"
    assert sorted(p.name for p in later.iterdir()) == ["etc", "srv"]


@pytest.mark.parametrize("where", ["/etc/passwd", "../../x"])
def test_an_entry_naming_a_path_outside_it_is_refused(tmp_path, monkeypatch, where):
    monkeypatch.setattr(ztp, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(ztp, "_sftp_ids", lambda: NOBODY)
    _output(tmp_path / "earlier")
    ztp._keep(tmp_path / "earlier", "b" * 64)
    (ztp.CACHE / ("b" * 64) / ztp.OWNERS).write_text(json.dumps({where: [True, True]}))
    with pytest.raises(ztp.Refused, match="not a path inside the entry"):
        ztp._restore(tmp_path / "later", "b" * 64)


def test_the_collection_has_what_the_key_reads():
    coll = ansible_collection()
    for path in ("playbooks/ztp.yml", "roles/ztp_server/tasks/main.yml", "ansible.cfg"):
        assert (coll / path).is_file(), path
