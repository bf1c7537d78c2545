"""The text of the site overlay's files (generator/site.py finds what goes into them)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from generator import __version__

if TYPE_CHECKING:
    from generator.site import Needs

WIDTH = 99  # pyproject.toml's line length


def _q(text: object) -> str:
    """A YAML scalar (JSON strings are YAML)."""
    return json.dumps(str(text))


def _key(text: str) -> str:
    """A YAML mapping key: plain where YAML reads it back as this string, else quoted (a name
    such as `on`, `null` or `1e3` is a boolean, null or number to YAML 1.1 and Ansible)."""
    try:
        plain = yaml.safe_load(f"{text}: 0") == {text: 0}
    except yaml.YAMLError:
        plain = False
    return text if plain else _q(text)


def _head(title: str) -> str:
    return f"# -- {title} ".ljust(WIDTH, "-")


def site_yml(folder: Path, site: Path, n: Needs) -> str:
    out = [
        f"# Site variables of {folder.name}, written by `wanka site init` (wanka {__version__}):",
        "# what a real run needs that no file of the generated folder provides. Fill every empty",
        '# value ("") below and in vault.yml beside this file, encrypt vault.yml',
        f"#   ansible-vault encrypt {site}/group_vars/all/vault.yml",
        "# and give this folder as the second inventory source:",
        f"#   ansible-playbook -i {folder}/hosts.yml -i {site} site.yml --ask-vault-pass",
        "# The first play of site.yml (roles/site_check) fails naming every entry of",
        "# wanka_site_required (at the end) still empty. `wanka site init --force` rewrites this file.",
        "---",
        _head("Zero-touch provisioning: roles/ztp_server (playbooks/ztp.yml)"),
        "# Every switch ZTP serves (files/ztp/switches.yml), by the ESN of its delivery list or label",
        '# ({esn: "..."}), or else by its management MAC ({mac: "..."}), never both. Rack and U are',
        "# where the cabling plan puts it: match them with the delivery list. The switches built",
        "# from the console (docs/bring-up.md step 1) are not here: they never fetch by ZTP.",
        "ztp_server_identities:" + ("" if n.switches else " {}"),
    ]
    # the values are checked where generator/site.py reads them: names, models and ports fit a
    # key, rack, U and the cabling ends a comment
    width = max((len(_key(s["name"])) for s in n.switches), default=0)
    for s in n.switches:
        key = _key(s["name"])
        pad = " " * (width - len(key))
        out.append(f'  {key}: {{esn: ""}}{pad}  # rack {s["rack"]} U{s["u"]}, {s["model"]}')
    out += [
        "",
        _head("Host interface names: roles/host_network, roles/storage_nic_qos"),
        "# Per host model, the name the OS gives each cabled port (`ip link`, e.g. enp61s0f0); the",
        "# keys are the cabling plan's port names (files/cabling.csv), the same name where the OS",
        "# already uses it. A host that differs: host_vars/<host>.yml here (host_network_interfaces).",
        "wanka_site_interfaces:" + ("" if n.ports else " {}"),
    ]
    for model, ports in sorted(n.ports.items()):
        hosts = n.hosts[model]
        span = hosts[0] if len(hosts) == 1 else f"{min(hosts)} ... {max(hosts)}"
        out.append(f"  # {model}: {len(hosts)} host{'s' * (len(hosts) > 1)} ({span})")
        out.append(f"  {_key(model)}:")
        out += [f'    {_key(port)}: ""  # {where}' for port, where in sorted(ports.items())]
    out += [
        "host_network_interfaces: \"{{ wanka_site_interfaces[model | default('')] | default({}) }}\"",
        "",
        _head("Time"),
        f"# ntp_servers (group_vars/all.yml: {', '.join(n.ntp) or 'none'}) is where the switches and",
        "# border devices take their time from; their configurations carry it: change it in the",
        "# blueprint. Those servers follow the site's own time source, which no role here sets.",
        "",
        _head("Secrets: vault.yml beside this file"),
        "# Referenced, never copied: the configurations and role defaults name each as",
        '# "{{ vault_... }}" and the roles render them at run time (vault.yml says where):',
        *(f"#   {name}" for name in sorted(n.secrets)),
    ]
    if n.options:
        out += ["", _head("Role options that no generated file sets")]
        for name, roles in sorted(n.options.items()):
            out += [f"# {r}" for r in sorted(roles)] + [f'{name}: ""']
    out += [
        "",
        _head("What roles/site_check requires set and non-empty (from the generated folder)"),
        "# A name, or name.key entries into its mapping (an identity needs its esn or mac).",
        "wanka_site_required:",
        *(f"  - {_q(r)}" for r in n.required()),
    ]
    return "\n".join(out) + "\n"


def vault_yml(site: Path, n: Needs) -> str:
    out = [
        "# Secrets of the site (Ansible Vault), written by `wanka site init`. Fill each, e.g. with",
        "# `openssl rand -hex 16` (0-9a-f only, also safe inside the ZTP URL), then encrypt:",
        f"#   ansible-vault encrypt {site}/group_vars/all/vault.yml",
        "# and run ansible-playbook with --ask-vault-pass or --vault-password-file.",
        "---",
    ]
    for name, used in sorted(n.secrets.items()):
        out += textwrap.wrap(
            f"used by {', '.join(sorted(used))}",
            WIDTH - 2,
            initial_indent="# ",
            subsequent_indent="#   ",
        )
        if name in n.examples:
            out.append(f"# e.g. {n.examples[name]}")
        out += [f'{name}: ""', ""]
    return "\n".join(out).rstrip("\n") + "\n"
