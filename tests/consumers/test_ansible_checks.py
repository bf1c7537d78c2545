"""Ansible checks that need no fleet: ansible-inventory over every example inventory,
ansible-lint's production profile, and the Kubernetes node labels play against the kubectl test
double (tests/fakes). Apart from tests/consumers/test_ansible.py so that pytest-xdist (--dist
loadfile) can run them on another worker while that file's fleet is configured."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.ansible_run import ansible_env
from tests.support.ansible_run import recap as _recap
from tests.support.ansible_run import tool as _tool
from tests.support.ansible_warnings import ansible_warnings

pytestmark = pytest.mark.slow  # ansible-lint and ansible-playbook runs: a minute or more of CPU

ROOT = Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "inventories" / "pod-128"
FAKES = ROOT / "tests" / "fakes" / "bin"


def test_ansible_inventory_graph_and_list_work_for_every_example():
    for inv in sorted((ROOT / "inventories").glob("*/hosts.yml")):
        for flag in ("--graph", "--list"):
            res = subprocess.run(
                [_tool("ansible-inventory"), "-i", str(inv), flag],
                capture_output=True,
                text=True,
                cwd=ROOT,
            )
            assert res.returncode == 0 and not ansible_warnings(res.stderr), (inv, res.stderr)
        listed = json.loads(
            subprocess.run(
                [_tool("ansible-inventory"), "-i", str(inv), "--list"],
                capture_output=True,
                text=True,
            ).stdout
        )
        assert listed["_meta"]["hostvars"]


def test_ansible_lint_passes_in_the_repository_root():
    """`ansible-lint` with no arguments, as a contributor runs it (.ansible-lint: production
    profile, offline): the roles, playbooks and the collection's metadata (galaxy.yml, its
    changelog) all pass."""
    res = subprocess.run(
        [_tool("ansible-lint")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-2000:]


def test_node_labels_are_applied_once_when_a_kubeconfig_is_given(tmp_path):
    log = tmp_path / "kubectl.log"
    env = ansible_env(tmp_path, KUBECTL_LOG=str(log))
    args = [
        _tool("ansible-playbook"),
        "-i",
        str(INVENTORY / "hosts.yml"),
        "playbooks/kubernetes.yml",
        "-e",
        f"node_labels_kubectl={FAKES / 'kubectl'} node_labels_kubeconfig=/etc/kube/admin.conf",
        "-e",
        f"ansible_python_interpreter={sys.executable}",
        "-c",
        "local",
    ]
    runs = [
        subprocess.run(args + extra, cwd=ROOT, env=env, capture_output=True, text=True)
        for extra in ([], [], ["--check"])
    ]
    assert all(r.returncode == 0 for r in runs), runs[0].stdout[-2000:]
    calls = log.read_text().splitlines()
    applies = [c for c in calls if " apply " in f" {c} "]
    assert len(applies) == 1 and "--server-side" in applies[0]
    assert str(INVENTORY / "files/scheduler/kubernetes/node-labels.yaml") in applies[0]
    assert sum(c for _, (_, c, _) in _recap(runs[1]).items()) == 0
