"""The hosts' network settings as the roles write them: the real ansible-playbook runs the
host_network role's keyfile tasks (`tasks_from: keyfiles`) for every NPU server, storage node and
management node of the folder's inventory, with a local connection and each host's files under
its own folder, and the twin reads the NetworkManager keyfiles it wrote.

Ansible runs as root here, on a folder that may come from a pull request, and it would read
whatever the inventory folder holds (host_vars folders, other extensions, links) and render every
template string in it. So it is given a copy (`inventory`): only the files wanka writes, each
read through the guarded reader, every string checked first: no control character, no template
syntax other than the four strings wanka itself writes (generator/artifacts/inventory.py), no
`ansible_*` variable wanka does not write, every host name a device name and every value that
becomes a keyfile or interface name a port name; the connection and interpreter are forced from
the command line (extra variables win over every inventory variable)."""

from __future__ import annotations

import configparser
import hashlib
import ipaddress
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from functools import partial
from importlib.metadata import version
from pathlib import Path

import yaml

from generator.twin import cache, instance, run
from generator.twin.plan import Refused, address, checked, host_names
from generator.verify import safe
from generator.verify.inventory import hosts as read_hosts

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
# the template strings wanka writes into group_vars (generator/artifacts/inventory.py): they read
# variables only; any other string with template syntax must be tagged !unsafe, as wanka tags
# every value it writes
TEMPLATES = frozenset({
    "{{ inventory_dir }}/files",
    "{{ inventory_dir | default(hostvars[groups.all[0]].inventory_dir, true) }}.site",
    "{{ ansible_playbook_python }}",
    "{{ vault_switch_admin_user | default('admin') }}",
})  # fmt: skip
ANSIBLE_VARIABLES = frozenset(
    {"ansible_host", "ansible_connection", "ansible_network_os", "ansible_user",
     "ansible_python_interpreter"}
)  # fmt: skip
MARKERS = ("{{", "{%", "{#")
MAX_VAR_FILES = 8192  # host_vars and group_vars files (pod-128: 56, a 10,240-card build ~2,700)


class AnsibleFailed(RuntimeError):
    pass


def forced() -> list[str]:
    """Extra variables every twin playbook gets: over any inventory variable (Ansible's
    variable precedence: extra vars always win), a local connection and this Python."""
    return ["-e", "ansible_connection=local", "-e", f"ansible_python_interpreter={sys.executable}"]


def inventory(folder: Path, into: Path) -> Path:
    """A checked copy of the folder's inventory (hosts.yml, group_vars/, host_vars/ of its
    hosts, files/ztp/) in `into`; return the copy's folder. Refused, located, at the first
    thing wanka does not write."""
    hostvars, _, _ = read_hosts(folder)
    host_names(folder, hostvars)
    files = [folder / "hosts.yml"]
    files += safe.listing(folder, "group_vars", ".yml")
    names = {p.name for p in safe.listing(folder, "host_vars", ".yml")}
    files += [folder / "host_vars" / f"{h}.yml" for h in sorted(hostvars) if f"{h}.yml" in names]
    if len(files) > MAX_VAR_FILES:
        raise Refused(
            f"{folder}: {len(files)} variable files; the twin reads at most {MAX_VAR_FILES}"
        )
    copy = into / "inventory"
    shutil.rmtree(copy, ignore_errors=True)
    for path in files:
        where = safe.rel(folder, path)
        text = safe.file_text(folder, path)
        _variables(where, text, safe.yaml_text(where, text))
        _write(copy / where, text)
    for host, hv in hostvars.items():
        _host(host, hv)
    switches = folder / "files" / "ztp" / "switches.yml"
    if safe.is_file(folder, "files/ztp/switches.yml"):
        text = safe.file_text(folder, switches)
        _write(copy / "files/ztp/switches.yml", text)
        for name in ztp_switches(folder):
            where = f"files/ztp/configs/{name}.cfg"
            _write(copy / where, safe.file_text(folder, folder / where))
    return copy


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _variables(where: str, text: str, data) -> None:
    """Refused at the first string of `data` that is not what wanka writes (see the module)."""
    suspect: list[str] = []
    todo = [data]
    while todo:
        item = todo.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if (
                    isinstance(key, str)
                    and key.startswith("ansible_")
                    and key not in ANSIBLE_VARIABLES
                ):
                    raise Refused(f"{_line(where, text, key)}: {key}: wanka writes no such "
                                  "Ansible variable (the twin runs Ansible as root)")  # fmt: skip
                todo += [key, value]
        elif isinstance(item, list):
            todo += item
        elif isinstance(item, str):
            if any(ord(c) < 32 or ord(c) == 127 for c in item):
                raise Refused(f"{_line(where, text, item)}: '{item[:60]}': a control character "
                              "(a line break) in a value wanka writes on one line")  # fmt: skip
            if any(m in item for m in MARKERS) and item not in TEMPLATES:
                suspect.append(item)
    if suspect:  # a template string is data only when tagged !unsafe
        for node in _scalars(where, text):
            jinja = any(m in node.value for m in MARKERS) and node.value not in TEMPLATES
            if jinja and node.tag != "!unsafe":
                raise Refused(
                    f"{where}:{node.start_mark.line + 1}: '{node.value[:60]}': template "
                    "syntax not tagged !unsafe (Ansible would run it)"
                )


def _scalars(where: str, text: str):
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as error:
        raise Refused(f"{where}: invalid YAML: {error}") from None
    todo = [root] if root is not None else []
    while todo:
        node = todo.pop()
        if isinstance(node, yaml.ScalarNode):
            yield node
        elif isinstance(node, yaml.SequenceNode):
            todo += node.value
        elif isinstance(node, yaml.MappingNode):
            todo += [n for pair in node.value for n in pair]


def _line(where: str, text: str, value: str) -> str:
    """`where:line` of the first scalar equal to `value` (`where` when none is)."""
    for node in _scalars(where, text):
        if node.value == value:
            return f"{where}:{node.start_mark.line + 1}"
    return where


def _host(host: str, hv: dict) -> None:
    """The values of a host that become keyfile names, interface names or keyfile lines."""
    where = f"host_vars/{host}.yml"
    bond = hv.get("business_bond")
    if bond:
        if not isinstance(bond, dict) or not isinstance(bond.get("members"), list):
            raise Refused(f"{where}: business_bond: not a bond as wanka writes it")
        checked("port", bond.get("name"), f"{where}: business_bond name")
        for member in bond["members"]:
            checked("port", member, f"{where}: business_bond members")
        address(bond.get("address"), f"{where}: business_bond address", ipaddress.IPv4Interface)
        address(bond.get("gateway"), f"{where}: business_bond gateway")
    for nic in hv.get("storage_nics") or []:
        if not isinstance(nic, dict):
            raise Refused(f"{where}: storage_nics: not a NIC as wanka writes it")
        checked("port", nic.get("port"), f"{where}: storage_nics port")
        address(nic.get("address"), f"{where}: storage_nics address", ipaddress.IPv4Interface)
        address(nic.get("gateway"), f"{where}: storage_nics gateway")
    for key in ("inband_address", "bmc_address"):
        if key in hv:
            address(hv[key], f"{where}: {key}", ipaddress.IPv4Interface)
    for key in ("inband_gateway", "ansible_host"):
        if key in hv:
            address(hv[key], f"{where}: {key}")
    for route in hv.get("inband_routes") or []:
        address(route, f"{where}: inband_routes", ipaddress.IPv4Network)
    for logical, name in (hv.get("host_network_interfaces") or {}).items():
        checked("port", logical, f"{where}: host_network_interfaces")
        checked("port", name, f"{where}: host_network_interfaces")


def ztp_switches(folder: Path) -> list[str]:
    """The names in files/ztp/switches.yml, in order, each entry checked (its name a device
    name, its config configs/<name>.cfg, its addresses IPv4)."""
    where = "files/ztp/switches.yml"
    data = safe.file_yaml(folder, folder / where)
    entries = data.get("switches") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise Refused(f"{where}: no `switches:` list")
    out = []
    for i, s in enumerate(entries, 1):
        at = f"{where}: switch {i}"
        if not isinstance(s, dict):
            raise Refused(f"{at}: not a mapping")
        name = checked("device", s.get("name"), at)
        if s.get("config") != f"configs/{name}.cfg":
            raise Refused(f"{at}: config '{s.get('config')}' is not configs/{name}.cfg")
        checked("port", s.get("interface"), at)
        checked("device", s.get("model"), at)
        for key in ("address", "gateway", "network", "netmask"):
            if key != "gateway" or s.get(key) != "":  # none: the role refuses it, with its name
                address(str(s.get(key)), f"{at}: {key}")
        if not isinstance(s.get("prefix"), int) or not 0 <= s["prefix"] <= 32:
            raise Refused(f"{at}: prefix '{s.get('prefix')}' is not 0 to 32")
        out.append(name)
    return out


def render(
    folder: Path, into: Path, collection: Path
) -> dict[str, dict[str, configparser.ConfigParser]]:
    """Run the collection's role, then read host -> keyfile id -> keyfile."""
    return finish(start(folder, into, collection), into)


# The role's output per input, shared by this machine's twin instances: a twin test of a folder
# whose inventory, role, plugins, ansible.cfg and Ansible are those of an earlier run takes that
# run's keyfiles instead of running the role again (pod-128: 92 s of CPU, about half of a whole
# `twin test`). The key is the SHA-256 of every byte the run reads, so a changed byte is a new run.
CACHE = instance.BASE / "cache" / "keyfiles"
CACHED = 8  # entries kept, the most recently used
# And per host: the role reads no other host's variables (no `hostvars`, `groups` or
# `play_hosts` in roles/host_network: tests/unit/test_twin_keyfiles_cache.py), so a host's
# keyfiles are a function of the role, its own variables (its host_vars file, its lines and groups
# in hosts.yml) and group_vars; a run whose whole key is new runs the role (`--limit`) only on the
# hosts whose own key is new: a grown build's run, the servers it adds (pod-128 to 256: 16 of 38
# hosts), a build beside another of the same servers, its other hosts.
HOST_CACHE = instance.BASE / "cache" / "keyfiles-host"
HOSTS_CACHED = 1024


@dataclass
class Job:
    """The role started by `start`: its process (none when it had no host to run on), and the
    hosts it runs on with their keys (None: `key`'s whole output was cached)."""

    key: str
    process: subprocess.Popen | None = None
    ran: dict[str, str] | None = None


def _key(copy: Path, collection: Path) -> str:
    digest = _common(collection)
    cache.digest_tree(digest, copy)
    return digest.hexdigest()


def _common(collection: Path):
    """A digest of what every host's run reads alike: the playbook, this Python and Ansible, the
    role, the collection's plugins and ansible.cfg."""
    digest = hashlib.sha256(PLAYBOOK.encode())
    digest.update(f"{sys.executable}\0ansible-core {version('ansible-core')}\0".encode())
    for base in (collection / "roles" / "host_network", collection / "plugins"):
        cache.digest_tree(digest, base)
    digest.update((collection / "ansible.cfg").read_bytes())
    return digest


def host_keys(copy: Path, collection: Path) -> dict[str, str]:
    """Host the playbook runs on -> the SHA-256 of what its run reads: what every run reads,
    group_vars, its host_vars file and what hosts.yml says of it (cache.host_view)."""
    _, groups, _ = read_hosts(copy)
    names = set().union(*(groups.get(g, set()) for g in HOST_GROUPS.split(":")))
    listing = safe.file_yaml(copy, copy / "hosts.yml")
    common = _common(collection)
    cache.digest_tree(common, copy / "group_vars")
    out = {}
    for host in sorted(names):
        digest = common.copy()
        own = copy / "host_vars" / f"{host}.yml"
        digest.update(b"\0host_vars\0" + (own.read_bytes() if own.is_file() else b"\0none\0"))
        digest.update(cache.host_view(listing, host).encode())
        out[host] = digest.hexdigest()
    return out


def start(folder: Path, into: Path, collection: Path) -> Job:
    """Start the collection's role in the background (generator.twin.run.background), on a
    checked copy of the folder's inventory; or, when an identical run's output is cached, copy
    that in."""
    run.claim()
    into.mkdir(parents=True, exist_ok=True)
    copy = inventory(folder, into)
    key = _key(copy, collection)
    if cache.take(CACHE, key, into / "hosts"):
        return Job(key)
    (into / "hosts").mkdir()
    ran = {h: k for h, k in host_keys(copy, collection).items()
           if not cache.take(HOST_CACHE, k, into / "hosts" / h)}  # fmt: skip
    if not ran:
        return Job(key, ran=ran)
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
        "-i", str(copy / "hosts.yml"),
        "-e", f"twin_root={into / 'hosts'}",
        "--limit", ",".join(sorted(ran)),
        *forced(),
        str(playbook),
    ]  # fmt: skip
    if not Path(command[0]).exists():
        command[0] = "ansible-playbook"
    return Job(key, run.background("keyfiles", command, env), ran)


def finish(job: Job, into: Path) -> dict[str, dict[str, configparser.ConfigParser]]:
    """Wait for the role started by `start` (and cache its output, whole and per host), then
    read host -> keyfile id -> keyfile."""
    if job.process is not None:
        code, output = run.finish("keyfiles", job.process)
        if code != 0:
            tail = "\n".join(output.strip().splitlines()[-20:])
            raise AnsibleFailed(f"ansible-playbook (host_network keyfiles) failed:\n{tail}")
    if job.ran is not None:
        for host, key in sorted(job.ran.items()):
            out = into / "hosts" / host
            if out.is_dir():
                cache.keep(HOST_CACHE, key, partial(shutil.copytree, out, symlinks=True),
                           HOSTS_CACHED)  # fmt: skip
        _keep(into / "hosts", job.key)
    return read(into / "hosts")


def _keep(hosts: Path, key: str) -> None:
    """Copy a run's output into the cache (keep)."""

    def fill(entry: Path) -> None:
        if hosts.is_dir():
            shutil.copytree(hosts, entry, symlinks=True)
        else:
            entry.mkdir()

    cache.keep(CACHE, key, fill, CACHED)


KEYFILES = "etc/NetworkManager/system-connections"
MAX_KEYFILES = 64  # per host (a bond, its members, storage NICs, in-band: 6 on an NPU server)


def read(root: Path) -> dict[str, dict[str, configparser.ConfigParser]]:
    """host -> keyfile id -> keyfile, each read through the guarded reader (the keyfiles hold
    values of the folder: a value is checked where the plan reads it, generator.twin.plan)."""
    out: dict[str, dict[str, configparser.ConfigParser]] = {}
    for host_dir in safe.listing(root, "", folders=True):
        if not host_dir.is_dir():
            continue
        host = checked("device", host_dir.name, f"keyfiles: host '{host_dir.name}'")
        paths = safe.listing(root, f"{host}/{KEYFILES}", ".nmconnection")
        if len(paths) > MAX_KEYFILES:
            raise Refused(f"{host}: {len(paths)} keyfiles; a host has at most {MAX_KEYFILES}")
        for path in paths:
            kf = configparser.ConfigParser(interpolation=None)
            where = f"keyfile {host}/{path.name} (roles/host_network)"
            try:
                kf.read_string(safe.file_text(root, path, 64 * 1024), source=where)
            except configparser.Error as error:
                raise Refused(f"{where}: not a keyfile: {error}") from None
            out.setdefault(host, {})[path.name.removesuffix(".nmconnection")] = kf
    return out
