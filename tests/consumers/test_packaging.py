"""The package a user installs: `pip install` gives `wanka` and the wanka.cluster Ansible
collection (roles, playbooks, ansible.cfg), and the README's Ansible command works from outside
the checkout. The collection also builds with `ansible-galaxy collection build`."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import tarfile
from pathlib import Path

import pytest

from tests.support.ansible_run import tool
from tests.support.examples import TINY

pytestmark = pytest.mark.slow  # builds a wheel and a venv: tens of seconds

ROOT = Path(__file__).resolve().parents[2]
INVENTORY = "inventories/tiny/hosts.yml"


def sysconfig_paths() -> list[str]:
    """This interpreter's site-packages folders (a venv's, or the system's)."""
    return sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})


def _run(args: list[str], **kw) -> subprocess.CompletedProcess:
    res = subprocess.run(args, capture_output=True, text=True, timeout=600, **kw)
    assert res.returncode == 0, (args, res.stdout[-3000:], res.stderr[-3000:])
    return res


def test_the_collection_builds_with_ansible_galaxy(tmp_path):
    _run([tool("ansible-galaxy"), "collection", "build", "--output-path", str(tmp_path), str(ROOT)])
    (built,) = tmp_path.glob("wanka-cluster-*.tar.gz")
    with tarfile.open(built) as tar:
        names = set(tar.getnames())
    assert {
        "site.yml",
        "ansible.cfg",
        "roles/host_network/tasks/main.yml",
        "plugins/modules/wanka_ce_config.py",
        "plugins/module_utils/ce_session.py",
    } <= names
    assert not any(
        n.startswith(("generator/", "tests/", "inventories/", ".collections")) for n in names
    )


def test_pip_install_then_the_readme_ansible_command_from_outside_the_checkout(tmp_path):
    pytest.importorskip("hatchling", reason="the wheel's build backend")
    wheels = tmp_path / "wheels"
    wheel_args = ("-w", str(wheels), str(ROOT))
    _run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--no-build-isolation",
            *wheel_args,
        ]
    )
    venv = tmp_path / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    _run([base, "-m", "venv", str(venv)])
    # the dependencies come from this test environment, offline: its site-packages as plain
    # paths after the venv's own (its .pth files, the checkout's editable install among them,
    # are not run), so `generator` is the installed wheel's
    (site,) = venv.glob("lib/python*/site-packages")
    (site / "test-dependencies.pth").write_text("".join(f"{p}\n" for p in sysconfig_paths()))
    (wheel,) = wheels.glob("wanka-*.whl")
    _run([str(venv / "bin/pip"), "install", "-q", "--no-deps", str(wheel)])
    work = tmp_path / "site"  # a user's folder: no checkout anywhere near
    work.mkdir()
    (work / "tiny.yaml").write_text(TINY)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANSIBLE_", "PYTHON"))}
    env |= {"PATH": f"{venv / 'bin'}:{env['PATH']}", "ANSIBLE_HOME": str(tmp_path / "home")}
    wanka = str(venv / "bin" / "wanka")
    _run([wanka, "generate", "tiny.yaml", "-o", "inventories/tiny", "-q"], cwd=work, env=env)
    path = Path(_run([wanka, "ansible-path"], cwd=work, env=env).stdout.strip())
    assert path.is_relative_to(venv) and (path / "roles" / "npu_nic").is_dir()
    assert (path / "plugins" / "module_utils" / "npu_smi.py").is_file()
    where = _run(
        [str(venv / "bin/python"), "-c", "import generator; print(generator.__file__)"],
        cwd=work,
        env=env,
    )
    assert Path(where.stdout.strip()).is_relative_to(venv)  # the wheel's, not the checkout's
    env["ANSIBLE_CONFIG"] = str(path / "ansible.cfg")
    listed = _run(  # the README's command; --list-tasks resolves every play, role and import
        [tool("ansible-playbook"), "-i", INVENTORY, str(path / "site.yml"), "--list-tasks"],
        cwd=work,
        env=env,
    )
    assert "host_network : Write the NetworkManager keyfiles" in listed.stdout
    assert "npu_preflight : Read NPU versions" in listed.stdout
