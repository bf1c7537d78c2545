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
import ipaddress
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from generator.names import DEVICE_NAME
from generator.output import MARKER, OutputError, write_file
from generator.verify.report import printable
from generator.vocab import Plane

# a bare reference: `| default(...)` is optional; ASCII only, as Ansible variable names are
SECRET = re.compile(r"\{\{\s*(vault_[A-Za-z0-9_]+)\s*\}\}")
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
    """A folder wanka did not write, a value in it that does not fit where it goes, an overlay
    that is not a real folder, or an overlay file that exists (without --force)."""


# What a value read from the generated folder may hold, by where it goes. The overlay's YAML
# takes each as a mapping key or inside a comment; the same values reach dnsmasq.conf, the ZTP
# intermediate file and the NetworkManager keyfiles through the roles, which check them again.
# - a switch or host name: a device name as `wanka generate` makes them (generator/names.py
#   DEVICE_NAME), also the <hostname> field of dnsmasq's `dhcp-host=[<hwaddr>][,...][,<ipaddr>]
#   [,<hostname>]` line, whose fields are separated by commas and where # starts a comment outside
#   quotes (dnsmasq(8) 2.90, --dhcp-host and "CONFIG FILE");
# - a port name: a Linux interface name (host_network writes it as `interface-name=` where the site
#   gives no other): at most 15 characters (IFNAMSIZ 16 with the NUL), not "." or "..", no "/", ":"
#   or white space (Linux net/core/dev.c dev_valid_name); "." also splits site_check's paths;
# - a host model: a catalog model name (letters, digits, "-", "_"; no "." for site_check's paths);
# - rack and U: written in a YAML comment, which a line break ends ("b-break", YAML 1.2 §5.4;
#   PyYAML also takes U+0085, U+2028 and U+2029 as breaks): printable characters only.
PORT = re.compile(r"[A-Za-z0-9_-]{1,15}")
MODEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
RACK = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,62}")
LONGEST = 200  # characters of a value written into a comment (rack, NTP server, cabling ends)


def _fits(pattern: re.Pattern, value: object) -> bool:
    return isinstance(value, str) and pattern.fullmatch(value) is not None


def _refuse(where: str, what: str, value: object, rule: str) -> SiteError:
    shown = f"'{printable(value)}'" if isinstance(value, str) else printable(repr(value))
    return SiteError(f"{where}: {what} {shown} {rule}")


def _comment_safe(value: object) -> bool:
    text = str(value)
    return len(text) <= LONGEST and text.isprintable()


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


def _read(folder: Path, rel: str, kind: type = dict):
    """read_yaml of folder/rel, a SiteError naming the file when it is not a readable mapping
    (or `kind`)."""
    path = folder / rel
    try:
        data = read_yaml(path) if path.exists() else kind()
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise SiteError(f"{path}: cannot read it: {printable(str(err).splitlines()[0])}") from err
    if not isinstance(data, kind):
        raise SiteError(f"{path}: a YAML {kind.__name__} expected, not {type(data).__name__}")
    return data


def needs(folder: Path, collection: Path) -> Needs:
    """What `folder` (a generated one) needs from the site; SiteError when wanka did not write it
    or when a value in it does not fit where the overlay and the roles write it."""
    if not folder.is_dir() or not all((folder / p).is_file() for p in NEEDED):
        raise SiteError(f"{folder} is not a wanka output folder (needs {', '.join(NEEDED)})")
    n = Needs()
    for pattern in SECRET_FILES:
        for path in sorted(folder.glob(pattern)):
            rel = path.relative_to(folder).as_posix()
            for line in path.read_text(encoding="utf-8").splitlines():
                for name in SECRET.findall(line):
                    n.secrets[name].add(pattern)
                    # a comment line in vault.yml: str.splitlines splits at every YAML line break;
                    # other controls (PyYAML refuses them even in a comment) and a file name with
                    # a line break are written escaped (verify's printable)
                    n.examples.setdefault(name, printable(f"{rel}: {line.strip()}"))
    host_vars = {
        p.stem: _read(folder, p.relative_to(folder).as_posix())
        for p in sorted((folder / "host_vars").glob("*.yml"))
    }
    provided = set().union(*host_vars.values(), _inline(_read(folder, "hosts.yml")))
    for path in sorted((folder / "group_vars").glob("*.yml")):
        provided |= set(_read(folder, path.relative_to(folder).as_posix()))
    for spec in sorted((collection / "roles").glob("*/meta/argument_specs.yml")):
        role = spec.parent.parent.name
        for entry in (read_yaml(spec).get("argument_specs") or {}).values():
            for name, option in (entry.get("options") or {}).items():
                for secret in SECRET.findall(str(option.get("default", ""))):
                    n.secrets[secret].add(f"roles/{role} ({name})")
                if option.get("required") and "default" not in option and name not in provided:
                    n.options[name].add(f"roles/{role}: {option.get('description', '')}")
    n.switches = _switches(folder, host_vars)
    _ports(folder, host_vars, n)
    n.ntp = _ntp(folder, host_vars)
    return n


def _switches(folder: Path, host_vars: dict[str, dict]) -> list[dict]:
    """files/ztp/switches.yml's switches with rack, U and model, each value checked."""
    where = f"{folder}/files/ztp/switches.yml"
    listed = _read(folder, "files/ztp/switches.yml").get("switches") or []
    if not isinstance(listed, list) or not all(isinstance(s, dict) for s in listed):
        raise SiteError(f"{where}: switches: a list of mappings expected")
    out = []
    for i, s in enumerate(listed):
        name = s.get("name")
        if not _fits(DEVICE_NAME, name):
            raise _refuse(
                f"{where}: switches[{i}]",
                "name",
                name,
                "is not a device name (a-z, 0-9 and '-', at most 63 characters): it becomes a "
                "YAML key in the overlay and the host name of a dnsmasq dhcp-host line",
            )
        v = host_vars.get(name, {})
        rack, u, model = v.get("rack", ""), v.get("rack_u", ""), s.get("model", "")
        at = f"{folder}/host_vars/{name}.yml"
        if rack != "" and not _fits(RACK, rack):
            raise _refuse(at, "rack", rack, "is not a rack name (letters, digits, '-', '_', '.')")
        if u != "" and (isinstance(u, bool) or not isinstance(u, int) or not 0 <= u <= 99):
            raise _refuse(at, "rack_u", u, "is not a rack unit (a whole number 0 to 99)")
        if model != "" and not _fits(MODEL, model):
            raise _refuse(f"{where}: switches[{i}]", "model", model, "is not a catalog model name")
        out.append({"name": name, "rack": rack, "u": u, "model": model})
    return sorted(out, key=lambda s: s["name"])


def _ports(folder: Path, host_vars: dict[str, dict], n: Needs) -> None:
    """The host ports files/cabling.csv cables on the planes host_network configures."""
    path = folder / "files/cabling.csv"
    columns = ("plane", "a_device", "a_port", "b_device", "b_port")
    try:
        with open(path, newline="", encoding="utf-8") as fh:
            reader = csv.DictReader(fh)
            missing = [c for c in columns if c not in (reader.fieldnames or ())]
            if missing:
                raise SiteError(f"{path}: no column {', '.join(missing)}")
            for line, row in enumerate(reader, 2):
                _port_row(path, line, row, host_vars=host_vars, n=n)
    except (OSError, UnicodeDecodeError, csv.Error) as err:
        raise SiteError(f"{path}: cannot read it: {printable(str(err))}") from err


def _port_row(path: Path, line: int, row: dict, host_vars: dict[str, dict], n: Needs) -> None:
    for end, other in (("a", "b"), ("b", "a")):
        host, port = row[f"{end}_device"], row[f"{end}_port"]
        if row["plane"] not in HOST_PLANES or not _is_host(host_vars, host):
            continue
        where = f"{path} line {line}"
        if not _fits(DEVICE_NAME, host):
            raise _refuse(where, f"{end}_device", host, "is not a device name")
        if not _fits(PORT, port) or port in (".", ".."):
            raise _refuse(
                where,
                f"{end}_port",
                port,
                "is not an interface name (1 to 15 of A-Z a-z 0-9 '_' '-': Linux dev_valid_name,"
                " IFNAMSIZ)",
            )
        model = host_vars[host].get("model", "")
        if not _fits(MODEL, model):
            raise _refuse(f"{path.parent.parent}/host_vars/{host}.yml", "model", model,
                          "is not a catalog model name")  # fmt: skip
        far = f"{row[f'{other}_device']} {row[f'{other}_port']}"
        if not _comment_safe(far):
            raise _refuse(where, f"{other}_device/{other}_port", far,
                          "holds a line break or control character (written in a YAML comment)")  # fmt: skip
        hosts = n.hosts.setdefault(model, [])
        if host not in hosts:
            hosts.append(host)
        n.ports.setdefault(model, {}).setdefault(port, f"{row['plane']}, {host} {port} to {far}")


def _ntp(folder: Path, host_vars: dict[str, dict]) -> list[str]:
    """group_vars/all.yml's NTP servers (IP addresses: the switch and border configurations
    carry them), each named by the host that has that address."""
    servers = _read(folder, "group_vars/all.yml").get("ntp_servers") or []
    if not isinstance(servers, list):
        raise SiteError(f"{folder}/group_vars/all.yml: ntp_servers: a list expected")
    names = {v.get("ansible_host"): host for host, v in host_vars.items()}
    out = []
    for i, a in enumerate(servers):
        try:
            ipaddress.ip_address(a)
        except ValueError:
            raise _refuse(f"{folder}/group_vars/all.yml", f"ntp_servers[{i}]", a,
                          "is not an IP address") from None  # fmt: skip
        out.append(f"{a} ({names[a]})" if _fits(DEVICE_NAME, names.get(a)) else str(a))
    return out


def _real_folder(site: Path, files: dict[str, str]) -> None:
    """SiteError unless every path init writes through is a real folder or file of the overlay:
    the overlay, a folder on the way or a file that is a symbolic link would take the writes (and
    --force's replacements) wherever it points; a file where a folder goes stops them halfway."""
    for rel in files:
        path = site
        for part in ("", *Path(rel).parts):
            path = path / part if part else path
            last = path == site / rel
            if path.is_symlink():
                raise SiteError(
                    f"{path} is a symbolic link (to {printable(os.readlink(path))}); site init "
                    "writes only into a real folder beside the generated one: remove the link"
                )
            if not last and path.exists() and not path.is_dir():
                raise SiteError(f"{path} is a file, where site init writes a folder")
            if last and path.exists() and not path.is_file():
                raise SiteError(f"{path} is not a regular file; site init writes a file there")


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
    if not str(folder).isprintable():
        raise SiteError(f"{printable(str(folder))}: a folder name with a control character or "
                        "line break (the overlay's comments name it)")  # fmt: skip
    n = needs(folder, collection or ansible_collection())
    site = overlay(folder)
    files = {
        "group_vars/all/site.yml": site_yml(folder, site, n),
        "group_vars/all/vault.yml": vault_yml(site, n),
        "hosts.yml": HOSTS,
    }
    _real_folder(site, files)
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
