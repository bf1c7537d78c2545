"""`wanka site init FOLDER`: the site overlay `<FOLDER>.site/` with every variable a real run needs
that no generated file provides, each commented, empty where the site must fill it.

Read like `verify`: only the generated folder (never the blueprint) and the collection's roles:
- secrets: every `{{ vault_* }}` reference without a default in the generated configurations
  (files/switches, files/border, files/ztp/configs) and group_vars, and in the roles' argument_specs
  defaults; they go into `group_vars/all/vault.yml`, to be encrypted with `ansible-vault encrypt`;
- role options that are required, have no default and that no generated file defines;
- `ztp_server_identities`: one entry per switch of files/ztp/switches.yml (the switches ZTP
  builds, switch_ports.ztp_switches: none of the console-built ZTP path, docs/bring-up.md step 1),
  rack and U from its host_vars, an empty ESN to fill from the delivery list;
- `wanka_site_interfaces`: per host model, the OS interface name of every port files/cabling.csv
  cables on the business, in-band and storage planes (the ports host_network configures).

The same list, `wanka_site_required`, is written into the overlay; the first play of site.yml
(roles/site_check) fails naming each of its entries that is still empty.
"""

from __future__ import annotations

import csv
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from generator.output import MARKER, OutputError, write_file
from generator.vocab import Plane

SECRET = re.compile(r"\{\{\s*(vault_\w+)\s*\}\}")  # a bare reference: `| default(...)` is optional
# Where generated files reference secrets: the device configurations a role renders or an
# operator pastes, and the group variables.
SECRET_FILES = (
    "files/switches/*.cfg",
    "files/border/*.cfg",
    "files/ztp/configs/*.cfg",
    "group_vars/*.yml",
)
# Planes whose host ports are OS network interfaces, mapped by roles/host_network (business bond
# members, in-band mgmt0, storage NICs); the parameter plane's NPU ports are hccn_tool's, the
# out-of-band port is the BMC's.
HOST_PLANES = (Plane.BUSINESS, Plane.INBAND, Plane.STORAGE)
NEEDED = (MARKER, "hosts.yml", "group_vars/all.yml", "files/cabling.csv")


HOSTS = """\
# Extra groups of the site (optional), merged with the generated hosts.yml; a host's own values
# go into host_vars/<host>.yml here, which outrank the generated ones (README, site overlay).
all: {}
"""


class SiteError(Exception):
    """A folder wanka did not write, or an overlay file that exists (without --force)."""


@dataclass
class Needs:
    """What a real run of the folder needs from the site."""

    secrets: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # -> used by
    examples: dict[str, str] = field(default_factory=dict)  # secret -> first line that uses it
    options: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))  # -> roles
    switches: list[dict] = field(default_factory=list)  # name, rack, u, model
    ports: dict[str, dict[str, str]] = field(default_factory=dict)  # model -> port -> cable
    hosts: dict[str, list[str]] = field(default_factory=dict)  # model -> hosts
    ntp: list[str] = field(default_factory=list)

    def required(self) -> list[str]:
        """Variables (and name.key entries into their mappings) a run needs set and non-empty."""
        return sorted(
            [*self.secrets, *self.options]
            + [f"ztp_server_identities.{s['name']}" for s in self.switches]
            + [f"wanka_site_interfaces.{m}.{p}" for m, ports in self.ports.items() for p in ports]
        )


def overlay(folder: Path) -> Path:
    """`<folder>.site` beside the folder, as group_vars/all.yml's wanka_site_dir names it."""
    folder = Path(os.path.normpath(folder))
    if folder.name in ("", ".", ".."):
        folder = folder.resolve()
    return folder.with_name(folder.name + ".site")


class _Loader(yaml.SafeLoader):
    """Reads Ansible's `!unsafe` tag (generated variables carry it) as plain data."""


def _unsafe(loader: yaml.SafeLoader, node: yaml.Node):
    if isinstance(node, yaml.MappingNode):
        return loader.construct_mapping(node, deep=True)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node, deep=True)
    return loader.construct_scalar(node)


_Loader.add_constructor("!unsafe", _unsafe)


def read_yaml(path: Path):
    """A generated YAML file's data ({} when empty)."""
    return yaml.load(path.read_text(encoding="utf-8"), Loader=_Loader) or {}


def needs(folder: Path, collection: Path) -> Needs:
    """What `folder` (a generated one) needs from the site; SiteError when wanka did not write it."""
    if not folder.is_dir() or not all((folder / p).is_file() for p in NEEDED):
        raise SiteError(f"{folder} is not a wanka output folder (needs {', '.join(NEEDED)})")
    n = Needs()
    for pattern in SECRET_FILES:
        for path in sorted(folder.glob(pattern)):
            for line in path.read_text(encoding="utf-8").splitlines():
                for name in SECRET.findall(line):
                    n.secrets[name].add(pattern)
                    rel = path.relative_to(folder).as_posix()
                    n.examples.setdefault(name, f"{rel}: {line.strip()}")
    host_vars = {p.stem: read_yaml(p) for p in sorted((folder / "host_vars").glob("*.yml"))}
    provided = set().union(*host_vars.values(), _inline(read_yaml(folder / "hosts.yml")))
    for path in sorted((folder / "group_vars").glob("*.yml")):
        provided |= set(read_yaml(path))
    for spec in sorted((collection / "roles").glob("*/meta/argument_specs.yml")):
        role = spec.parent.parent.name
        for entry in (read_yaml(spec).get("argument_specs") or {}).values():
            for name, option in (entry.get("options") or {}).items():
                for secret in SECRET.findall(str(option.get("default", ""))):
                    n.secrets[secret].add(f"roles/{role} ({name})")
                if option.get("required") and "default" not in option and name not in provided:
                    n.options[name].add(f"roles/{role}: {option.get('description', '')}")
    ztp = read_yaml(folder / "files/ztp/switches.yml").get("switches") or []
    for s in sorted(ztp, key=lambda s: s["name"]):
        v = host_vars.get(s["name"], {})
        n.switches.append(
            {
                "name": s["name"],
                "rack": v.get("rack", ""),
                "u": v.get("rack_u", ""),
                "model": s.get("model", ""),
            }
        )
    with open(folder / "files/cabling.csv", newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            for end, other in (("a", "b"), ("b", "a")):
                host, port = row[f"{end}_device"], row[f"{end}_port"]
                if row["plane"] not in HOST_PLANES or not _is_host(host_vars, host):
                    continue
                model = host_vars[host].get("model", "")
                hosts = n.hosts.setdefault(model, [])
                if host not in hosts:
                    hosts.append(host)
                n.ports.setdefault(model, {}).setdefault(
                    port,
                    f"{row['plane']}, {host} {port} to {row[f'{other}_device']} "
                    f"{row[f'{other}_port']}",
                )
    names = {v.get("ansible_host"): host for host, v in host_vars.items()}
    n.ntp = [
        f"{a} ({names[a]})" if a in names else str(a)
        for a in read_yaml(folder / "group_vars/all.yml").get("ntp_servers") or ()
    ]
    for name in (*n.ports, *(s["name"] for s in n.switches)):
        if "." in str(name):  # the check walks name.key.key paths
            raise SiteError(f"{folder}: '{name}' has a dot; site_check cannot name it")
    return n


def _is_host(host_vars: dict[str, dict], name: str) -> bool:
    """A host whose OS interfaces roles/host_network configures (it reads its in-band address)."""
    return "inband_address" in host_vars.get(name, {})


def _inline(inventory: dict) -> set[str]:
    """Variable names set inline in a YAML inventory (group vars and host values)."""
    names: set[str] = set()
    for group in inventory.values():
        if not isinstance(group, dict):
            continue
        names |= set(group.get("vars") or {})
        for values in (group.get("hosts") or {}).values():
            names |= set(values or {})
        names |= _inline(group.get("children") or {})
    return names


def init(
    folder: Path, collection: Path | None = None, force: bool = False
) -> tuple[Path, list[str]]:
    """Write the overlay's files (never into `folder`); SiteError when one exists without force.
    `collection`: the roles' folder (default: the collection this wanka ships). Returns the
    overlay and the relative paths written."""
    from generator.collection import ansible_collection
    from generator.site_text import site_yml, vault_yml

    folder = Path(folder)
    n = needs(folder, collection or ansible_collection())
    site = overlay(folder)
    files = {
        "group_vars/all/site.yml": site_yml(folder, site, n),
        "group_vars/all/vault.yml": vault_yml(site, n),
        "hosts.yml": HOSTS,
    }
    there = [rel for rel in files if (site / rel).exists()]
    if there and not force:
        raise SiteError(f"{site / there[0]} exists; add --force to replace the overlay's files")
    for rel, text in files.items():
        try:
            write_file(site / rel, text.encode())
        except OutputError as err:
            raise SiteError(err) from err
    (site / "group_vars/all/vault.yml").chmod(0o600)  # secrets, once filled
    return site, list(files)
