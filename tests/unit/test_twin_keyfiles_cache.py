"""The twin's cache of the host_network role's output (generator.twin.hosts): a run whose inputs
are byte for byte those of an earlier run takes that run's keyfiles instead of running
ansible-playbook again (92 s of CPU for pod-128); any byte changed in what the role reads (the
checked inventory copy, the role, the collection's plugins, ansible.cfg) runs it again."""

from __future__ import annotations

import copy
import json
import shutil
from functools import partial
from pathlib import Path

import pytest

from generator.collection import ansible_collection
from generator.twin import cache, hosts, run

ROOT = Path(__file__).resolve().parents[2]
POD = ROOT / "inventories" / "pod-128"
KEYFILE = "[connection]\nid=bond0\ntype=bond\ninterface-name=bond0\n"


def _collection(tmp: Path) -> Path:
    """A collection's shape: the role, a filter plugin, ansible.cfg."""
    coll = tmp / "collection"
    for where, text in (
        ("roles/host_network/tasks/keyfiles.yml", "---\n- name: A task\n"),
        ("roles/host_network/templates/bond.nmconnection.j2", "[connection]\n"),
        ("plugins/filter/nm.py", "def f():\n    return 1\n"),
        ("ansible.cfg", "[defaults]\nforks = 50\n"),
        ("roles/other/tasks/main.yml", "---\n"),
    ):
        (coll / where).parent.mkdir(parents=True, exist_ok=True)
        (coll / where).write_text(text)
    return coll


def test_the_key_changes_with_any_byte_the_role_reads_and_only_then(tmp_path):
    copy = hosts.inventory(POD, tmp_path / "into")
    coll = _collection(tmp_path)
    key = hosts._key(copy, coll)
    assert hosts._key(copy, coll) == key
    for path in (
        copy / "host_vars" / "npu-001.yml",
        copy / "group_vars" / "all.yml",
        coll / "roles/host_network/templates/bond.nmconnection.j2",
        coll / "plugins/filter/nm.py",
        coll / "ansible.cfg",
    ):
        before = path.read_bytes()
        path.write_bytes(before + b"\n")
        assert hosts._key(copy, coll) != key, path
        path.write_bytes(before)
    assert hosts._key(copy, coll) == key
    (coll / "roles/other/tasks/main.yml").write_text("---\n- name: Not read by the role\n")
    (coll / "plugins/filter/__pycache__").mkdir()
    (coll / "plugins/filter/__pycache__/nm.cpython-311.pyc").write_bytes(b"\0compiled")
    assert hosts._key(copy, coll) == key  # another role, Python's bytecode: not inputs


def test_an_identical_run_takes_the_cached_keyfiles_and_starts_no_ansible(tmp_path, monkeypatch):
    monkeypatch.setattr(hosts, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(run, "claim", lambda: None)  # this process's instance stays free
    into = tmp_path / "into"
    earlier = tmp_path / "earlier"
    keyfile = earlier / "npu-001" / hosts.KEYFILES / "bond0.nmconnection"
    keyfile.parent.mkdir(parents=True)
    keyfile.write_text(KEYFILE)
    key = hosts._key(hosts.inventory(POD, into), ansible_collection())
    hosts._keep(earlier, key)
    shutil.rmtree(into)

    def no_ansible(*args, **kwargs):
        raise AssertionError("ansible-playbook started although the output was cached")

    monkeypatch.setattr(run, "background", no_ansible)
    job = hosts.start(POD, into, ansible_collection())
    assert (job.key, job.process) == (key, None)
    files = hosts.finish(job, into)
    assert files["npu-001"]["bond0"]["connection"]["interface-name"] == "bond0"


def test_the_cache_keeps_the_most_recently_used_entries(tmp_path, monkeypatch):
    monkeypatch.setattr(hosts, "CACHE", tmp_path / "cache")
    out = tmp_path / "out"
    (out / "npu-001").mkdir(parents=True)
    for i in range(hosts.CACHED + 3):
        hosts._keep(out, f"{i:064x}")
    kept = sorted(p.name for p in hosts.CACHE.iterdir())
    assert len(kept) == hosts.CACHED
    assert f"{hosts.CACHED + 2:064x}" in kept  # the newest stays
    assert not any(p.startswith(".") for p in kept)  # no partial copy left


@pytest.mark.parametrize("entry", ["a file", "a partial copy"])
def test_a_cache_entry_appears_whole_or_not_at_all(tmp_path, monkeypatch, entry):
    monkeypatch.setattr(hosts, "CACHE", tmp_path / "cache")
    out = tmp_path / "out"
    (out / "npu-001").mkdir(parents=True)
    (out / "npu-001" / "x").write_text("1")
    hosts.CACHE.mkdir()
    if entry == "a file":  # another instance renamed its copy into place first
        (hosts.CACHE / ("f" * 64)).mkdir()
    else:  # a copy that a killed run left half written
        (hosts.CACHE / f".{'f' * 64}.1").mkdir()
    hosts._keep(out, "f" * 64)
    assert [p.name for p in hosts.CACHE.iterdir() if not p.name.startswith(".")] == ["f" * 64]


def test_a_hosts_view_of_the_inventory_is_its_groups_and_lines_only():
    inventory = {"all": {"vars": {"a": 1}, "children": {
        "npu_servers": {"hosts": {"npu-[001:004]": None, "npu-009": {"x": 1}}},
        "parameter_leaves": {"hosts": {"par-leaf-0001": None}},
    }}}  # fmt: skip
    view = cache.host_view(inventory, "npu-002")
    assert json.loads(view) == {"all": {"vars": {"a": 1}, "children": {
        "npu_servers": {"hosts": {"npu-002": [None]}}}}}  # fmt: skip
    grown = copy.deepcopy(inventory)  # more hosts, another group: not npu-002's view
    grown["all"]["children"]["npu_servers"]["hosts"]["npu-[005:008]"] = None
    grown["all"]["children"]["parameter_spines"] = {"hosts": {"par-spine-001": None}}
    assert cache.host_view(grown, "npu-002") == view
    for change in (
        lambda inv: inv["all"]["vars"].update(a=2),  # a group variable it reads
        lambda inv: inv["all"]["children"]["npu_servers"].update(vars={"b": 1}),
        lambda inv: inv["all"]["children"]["parameter_leaves"]["hosts"].update({"npu-002": None}),
        lambda inv: inv["all"]["children"]["npu_servers"]["hosts"].update({"npu-002": {"y": 1}}),
    ):
        changed = copy.deepcopy(inventory)
        change(changed)
        assert cache.host_view(changed, "npu-002") != view


def test_a_hosts_key_changes_with_its_own_inputs_and_the_shared_ones_only(tmp_path):
    inv = hosts.inventory(POD, tmp_path / "into")
    coll = _collection(tmp_path)
    keys = hosts.host_keys(inv, coll)
    assert {"npu-001", "stor-001", "controller-01"} <= set(keys)
    assert not any(h.startswith(("par-", "sto-leaf", "oob-")) for h in keys)  # switches: not run
    own = inv / "host_vars" / "npu-001.yml"
    own.write_bytes(own.read_bytes() + b"\n")
    changed = hosts.host_keys(inv, coll)
    assert {h for h in keys if keys[h] != changed[h]} == {"npu-001"}
    (inv / "group_vars" / "all.yml").write_bytes(
        (inv / "group_vars" / "all.yml").read_bytes() + b"\n"
    )
    (coll / "roles/host_network/templates/bond.nmconnection.j2").write_text("[connection]\n\n")
    assert all(hosts.host_keys(inv, coll)[h] != changed[h] for h in keys)


def test_the_role_reads_no_other_hosts_variables():
    """What the per-host key rests on: a host's keyfiles come from its own variables only."""
    role = ROOT / "roles" / "host_network"
    for path in sorted(p for p in role.rglob("*") if p.is_file() and p.name != "README.md"):
        text = path.read_text()
        for name in ("hostvars", "groups", "play_hosts", "wanka_site_dir", "inventory_dir"):
            assert name not in text, f"{path.relative_to(ROOT)} reads {name}: hosts.host_keys"


def test_a_run_with_some_hosts_cached_runs_the_role_on_the_others_only(tmp_path, monkeypatch):
    monkeypatch.setattr(hosts, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(hosts, "HOST_CACHE", tmp_path / "host-cache")
    monkeypatch.setattr(run, "claim", lambda: None)
    into = tmp_path / "into"
    keys = hosts.host_keys(hosts.inventory(POD, into), ansible_collection())
    earlier = tmp_path / "earlier"
    (earlier / hosts.KEYFILES).mkdir(parents=True)
    (earlier / hosts.KEYFILES / "bond0.nmconnection").write_text(KEYFILE)
    hosts.cache.keep(hosts.HOST_CACHE, keys["npu-001"], partial(shutil.copytree, earlier), 8)
    started = []

    def role(name, command, env):  # the role's run as a double: what --limit names, written
        started.append(command[command.index("--limit") + 1].split(","))
        root = Path(command[command.index("-e") + 1].removeprefix("twin_root="))
        for host in started[-1]:
            (root / host / hosts.KEYFILES).mkdir(parents=True)
            (root / host / hosts.KEYFILES / "bond0.nmconnection").write_text(KEYFILE)
        return "a process"

    monkeypatch.setattr(run, "background", role)
    monkeypatch.setattr(run, "finish", lambda name, process: (0, ""))
    job = hosts.start(POD, into, ansible_collection())
    assert started == [sorted(set(keys) - {"npu-001"})]
    assert set(hosts.finish(job, into)) == set(keys)  # the cached host's keyfiles too
    shutil.rmtree(hosts.CACHE)  # no whole entry: each host's own, cached by that run
    job = hosts.start(POD, into, ansible_collection())
    assert (job.process, job.ran, len(started)) == (None, {}, 1)  # no ansible-playbook
    assert set(hosts.finish(job, into)) == set(keys)
    assert (hosts.CACHE / job.key).is_dir()  # and the whole run is an entry again
