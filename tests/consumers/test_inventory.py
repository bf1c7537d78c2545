"""The generated Ansible inventory as Ansible reads it: hosts.yml lists members only (host ranges
where names run on), every host's variables come from host_vars/<host>.yml."""

from __future__ import annotations

import json
import os
import subprocess
from functools import cache
from pathlib import Path

import yaml

from tests.support.ansible_run import tool
from tests.support.ansible_warnings import PYTHON_WARNING, ansible_warnings
from tests.support.output_readers import YAML, inventory_vars

ROOT = Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "inventories" / "pod-128"


@cache  # the same command on the same committed files prints the same: run it once per session
def _listed(*args: str) -> str:
    env = {**os.environ, "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1"}
    res = subprocess.run(
        [tool("ansible-inventory"), *args, "--list"], capture_output=True, text=True, env=env
    )
    assert res.returncode == 0 and not ansible_warnings(res.stderr), res.stderr
    return res.stdout


def _ansible_inventory(*args: str) -> dict:
    """The listing, each value Ansible holds as `!unsafe` (written {"__ansible_unsafe": value},
    ansible-core 2.19 _internal/_json/_profiles/_legacy.py) read as its value."""
    return json.loads(_listed(*args), object_hook=_unwrap)


def _unwrap(d: dict):
    return d["__ansible_unsafe"] if d.keys() == {"__ansible_unsafe"} else d


def test_an_ansible_warning_fails_the_checks_and_a_python_warning_does_not(tmp_path):
    """The checks above fail on Ansible's own warnings (here: a source it cannot parse, printed
    in colour), not on a library's Python warning on the same stderr."""
    none = tmp_path / "none.yml"
    env = {**os.environ, "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"), "ANSIBLE_FORCE_COLOR": "1"}
    res = subprocess.run(
        [tool("ansible-inventory"), "-i", str(none), "--list"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert ansible_warnings(res.stderr)[:1] == [
        f"[WARNING]: Unable to parse {none} as an inventory source"
    ], res.stderr
    assert ansible_warnings(PYTHON_WARNING) == []
    listed = subprocess.run(
        [tool("ansible-inventory"), "-i", str(INVENTORY / "hosts.yml"), "--graph"],
        capture_output=True,
        text=True,
        env={**env, "PYTHONWARNINGS": "always"},  # every Python warning printed, none Ansible's
    )
    assert listed.returncode == 0 and not ansible_warnings(listed.stderr), listed.stderr


def test_hosts_yml_has_no_host_variables_and_every_host_has_its_file():
    data = yaml.load((INVENTORY / "hosts.yml").read_text(), Loader=YAML)

    def values(group: dict) -> list:
        found = [v for v in (group.get("hosts") or {}).values() if v]
        for child in (group.get("children") or {}).values():
            found += values(child or {})
        return found

    assert values(data["all"]) == []
    groups = data["all"]["children"]
    assert any("[" in line for g in groups.values() for line in (g or {}).get("hosts") or {})
    listed = _ansible_inventory("-i", str(INVENTORY / "hosts.yml"))
    hosts = set(listed["_meta"]["hostvars"])
    assert {p.stem for p in (INVENTORY / "host_vars").glob("*.yml")} == hosts
    assert set(listed["npu_servers"]["hosts"]) == {f"npu-{i:03d}" for i in range(1, 17)}


def test_ansible_reads_each_hosts_variables_from_its_host_vars_file():
    ours = inventory_vars(INVENTORY)
    listed = _ansible_inventory("-i", str(INVENTORY / "hosts.yml"))["_meta"]["hostvars"]
    for host, values in ours.items():
        for key, value in values.items():
            assert listed[host][key] == value, (host, key)
    assert listed["npu-001"]["ansible_host"] == "10.101.0.2"
