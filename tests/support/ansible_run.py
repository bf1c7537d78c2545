"""Running the real ansible-playbook against a generated inventory plus an override inventory
(test doubles' addresses, Vault stand-ins), for the role tests."""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
# ansible_collections/wanka/cluster -> the checkout: where ansible.cfg's collections_path finds
# the wanka.cluster collection (plugins/modules, plugins/filter, plugins/module_utils)
COLLECTIONS = ROOT / ".collections"
RECAP = re.compile(
    r"^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M
)
VAULT = {  # stand-ins for the site's Ansible Vault (what the generated configs reference)
    "vault_switch_admin_password": "double-admin-pw",
    "vault_snmp_auth_key": "double-snmp-auth-key",
    "vault_snmp_priv_key": "double-snmp-priv-key",
    "vault_ztp_sftp_password": "double-ztp-sftp-pw",
    "vault_dfs_password": "double-dfs-pw",
}


def tool(name: str) -> str:
    path = shutil.which(name) or str(Path(sys.executable).parent / name)
    assert Path(path).exists(), f"{name} is a test dependency: pip install -e '.[test]'"
    return path


def plugin(kind: str, name: str):
    """The collection's module or filter plugin `name` (kind modules|filter|module_utils),
    imported under the name Ansible gives it, so that its module_utils imports resolve."""
    if str(COLLECTIONS) not in sys.path:
        sys.path.append(str(COLLECTIONS))
    return importlib.import_module(f"ansible_collections.wanka.cluster.plugins.{kind}.{name}")


def recap(res: subprocess.CompletedProcess) -> dict[str, tuple[int, int, int]]:
    """host -> (ok, changed, failed) from the PLAY RECAP."""
    return {
        h: (int(ok), int(changed), int(failed))
        for h, ok, changed, _, failed in RECAP.findall(res.stdout)
    }


def ansible_env(tmp: Path, **extra: str) -> dict[str, str]:
    """This process's environment for a real Ansible run: the checkout's ansible.cfg, Ansible's
    home, temporary files and fact cache under `tmp`, no colour; `extra` added (ANSIBLE_FORKS,
    a PATH with test doubles, a double's log)."""
    return {
        **os.environ,
        "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
        "ANSIBLE_HOME": str(tmp / "ansible-home"),
        "ANSIBLE_LOCAL_TEMP": str(tmp / "ansible-tmp"),
        "ANSIBLE_REMOTE_TEMP": str(tmp / "ansible-remote-tmp"),
        "ANSIBLE_CACHE_PLUGIN_CONNECTION": str(tmp / "facts"),
        "ANSIBLE_NOCOLOR": "1",
        **extra,
    }


def doubles_path() -> str:
    """PATH with the test doubles (tests/fakes/bin) first, then this Python's scripts."""
    from tests.support.fake_hosts import FAKES

    return f"{FAKES}:{Path(sys.executable).parent}:{os.environ['PATH']}"


def write_overrides(tmp: Path, overrides: dict) -> Path:
    """The test-doubles inventory: group vars in tmp/test-doubles.yml, each host's overrides in
    tmp/host_vars/<host>.yml. Host variables inline in an inventory file rank below the generated
    host_vars/ files, while host_vars/ of a later inventory source rank above those of an earlier
    one, so a test double's address (ansible_host, ansible_port) must be a host_vars file."""
    data = {name: dict(group) for name, group in overrides.items()}
    host_vars = tmp / "host_vars"
    for group in data.values():
        hosts = group.get("hosts") or {}
        for host, values in hosts.items():
            host_vars.mkdir(parents=True, exist_ok=True)
            (host_vars / f"{host}.yml").write_text(yaml.safe_dump(values or {}))
        if hosts:
            group["hosts"] = dict.fromkeys(hosts)
    path = tmp / "test-doubles.yml"
    path.write_text(yaml.safe_dump(data))
    return path


class Runner:
    def __init__(self, tmp: Path, inventory: Path, overrides: dict) -> None:
        self.tmp, self.inventory = tmp, inventory
        self.overrides = write_overrides(tmp, overrides)
        self.env = ansible_env(tmp, ANSIBLE_FORKS="4")

    def play(self, playbook: str, *args: str) -> subprocess.CompletedProcess:
        inventories = ["-i", str(self.inventory), "-i", str(self.overrides)]
        return subprocess.run(
            [tool("ansible-playbook"), *inventories, playbook, *args],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=900,
        )


def play_locally(
    inventory: Path, play: Path, tmp: Path, extra: dict, env: dict | None = None
) -> subprocess.CompletedProcess:
    """The real ansible-playbook running `play` on the inventory's hosts over the local
    connection, with `extra` as extra variables and Ansible's state under `tmp`; `env` adds to
    the environment (a PATH with test doubles, a fake root)."""
    return subprocess.run(
        [
            tool("ansible-playbook"),
            *("-i", str(inventory / "hosts.yml"), "-c", "local"),
            *("-e", f"ansible_python_interpreter={sys.executable}"),
            *("-e", yaml.safe_dump(extra, default_flow_style=True, width=10**6).strip()),
            str(play),
        ],
        cwd=ROOT,
        env=ansible_env(tmp, **(env or {})),
        capture_output=True,
        text=True,
        timeout=600,
    )
