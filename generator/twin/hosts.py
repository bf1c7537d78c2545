"""The hosts' network settings as the roles write them: the real ansible-playbook runs the
host_network role's keyfile tasks (`tasks_from: keyfiles`) for every NPU server, storage node and
management node of the folder's inventory, with a local connection and each host's files under
its own folder, and the twin reads the NetworkManager keyfiles it wrote."""

from __future__ import annotations

import configparser
import os
import subprocess
import sys
from pathlib import Path

from generator.twin import run

HOST_GROUPS = "npu_servers:storage_nodes:management_nodes"
PLAYBOOK = f"""\
- name: Render the host_network keyfiles for the twin
  hosts: {HOST_GROUPS}
  connection: local
  gather_facts: false
  tasks:
    - name: This host's folder for the keyfiles
      ansible.builtin.file:
        path: "{{{{ twin_root }}}}/{{{{ inventory_hostname }}}}/etc/NetworkManager/system-connections"
        state: directory
        mode: "0700"
    - name: The role's keyfile tasks, into this host's folder
      ansible.builtin.include_role:
        name: host_network
        tasks_from: keyfiles
      vars:
        host_network_root: "{{{{ twin_root }}}}/{{{{ inventory_hostname }}}}"
"""


class AnsibleFailed(RuntimeError):
    pass


def render(
    folder: Path, into: Path, collection: Path
) -> dict[str, dict[str, configparser.ConfigParser]]:
    """Run the collection's role, then read host -> keyfile id -> keyfile."""
    return finish(start(folder, into, collection), into)


def start(folder: Path, into: Path, collection: Path) -> subprocess.Popen:
    """Start the collection's role in the background (generator.twin.run.background)."""
    into.mkdir(parents=True, exist_ok=True)
    playbook = into / "keyfiles.yml"
    playbook.write_text(PLAYBOOK, encoding="utf-8")
    env = dict(os.environ)
    env |= {
        "ANSIBLE_CONFIG": str(collection / "ansible.cfg"),
        "ANSIBLE_ROLES_PATH": str(collection / "roles"),
        "ANSIBLE_PYTHON_INTERPRETER": sys.executable,
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_LOCALHOST_WARNING": "false",
    }
    command = [
        str(Path(sys.executable).with_name("ansible-playbook")),
        "-i", str(folder / "hosts.yml"),
        "-e", f"twin_root={into / 'hosts'}",
        str(playbook),
    ]  # fmt: skip
    if not Path(command[0]).exists():
        command[0] = "ansible-playbook"
    return run.background("keyfiles", command, env)


def finish(job: subprocess.Popen, into: Path) -> dict[str, dict[str, configparser.ConfigParser]]:
    """Wait for the role started by `start`, then read host -> keyfile id -> keyfile."""
    code, output = run.finish("keyfiles", job)
    if code != 0:
        tail = "\n".join(output.strip().splitlines()[-20:])
        raise AnsibleFailed(f"ansible-playbook (host_network keyfiles) failed:\n{tail}")
    return read(into / "hosts")


def read(root: Path) -> dict[str, dict[str, configparser.ConfigParser]]:
    out: dict[str, dict[str, configparser.ConfigParser]] = {}
    for path in sorted(root.glob("*/etc/NetworkManager/system-connections/*.nmconnection")):
        kf = configparser.ConfigParser(interpolation=None)
        kf.read_string(path.read_text(encoding="utf-8"), source=str(path))
        out.setdefault(path.parts[len(root.parts)], {})[path.stem] = kf
    return out
