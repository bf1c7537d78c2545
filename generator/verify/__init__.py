"""Prove isolation and hygiene from the *rendered* output folder, not from the model.

`verify(folder)` reads what `wanka generate` wrote (switch configs, hosts.yml and host_vars/,
files/hccn/*.conf, files/cabling.csv, group_vars/all.yml pools) and builds a graph (read.Graph):

- ("vrf", device, vrf): one L3 routing domain of a switch (the default one is "_public_");
- ("if", device, interface): one logical interface (Eth-Trunk members fold into their trunk,
  bond members into their bond); each host interface is its own domain: a host does not route
  between its planes (no forwarding setting is rendered) unless a gateway in its files points
  into another plane;
- ("vlan", device, id): a switch's broadcast domain;
- ("net", cidr): a subnet, labelled with the plane whose pool holds it.

The required flows are proven over the cabled part of that graph (adjacency.py): an interface that
files/cabling.csv joins to no other interface of its subnet neighbours nothing, so a static
route's next hop or an adjacency over it counts for nothing (and is reported).

Edges come from interface addresses, VLAN membership, Eth-Trunk/bond membership and cables;
each keeps the file and line it came from. Firewalls are the only gateways: their interfaces are
never joined to one another, and each may only face the business, in-band or out-of-band plane
(or a device without a rendered config, such as a WAN router). Two planes in one connected
component is a breach, reported with the path between them.

Also: every switch restricts SSH/STelnet, SNMP and the VTY lines with an ACL that only permits
the management pools (in-band and out-of-band); no secret is in clear in any file; nothing
mounts or exports NFS. And what can be plugged in (physical.py): a split port's lanes are on one
breakout cable or one trunk.
"""

from __future__ import annotations

import os
from pathlib import Path

from generator import forking
from generator.output import MARKER
from generator.verify import adjacency, flows, inventory, physical, read, rules, safe
from generator.verify.report import NotAnOutput, Problem, Report, printable

__all__ = ["NotAnOutput", "Problem", "Report", "printable", "verify"]


READS = 3  # tries when another run replaces the folder while it is read


def verify(folder: Path) -> Report:
    """Every check over one output folder. Raises NotAnOutput for a folder wanka did not write.

    The folder is opened once and every file read relative to that descriptor (safe.opened).
    `wanka generate` replaces a folder by renaming a new one over it and then deletes the old
    one (generator/output.py, Staging.commit): a read that overlapped it may have lost files,
    so when the name points at another folder afterwards the read is thrown away and repeated
    on the new folder, and a folder replaced on every try is refused rather than judged."""
    folder = Path(folder)
    with forking.no_cycle_collection():
        for _ in range(READS):
            with safe.opened(folder) as fd:
                try:
                    report = _verify(folder)
                except (NotAnOutput, OSError) as error:
                    if not safe.replaced(folder, fd):
                        if isinstance(error, OSError):
                            raise safe.Damaged(f"{folder}: {error.strerror or error}") from None
                        raise
                    continue
                if not safe.replaced(folder, fd):
                    return report
    raise NotAnOutput(f"{folder}: replaced by another run on each of {READS} reads; run again")


def _verify(folder: Path) -> Report:
    needed = (MARKER, "hosts.yml", "group_vars/all.yml", "files/cabling.csv")
    if not all(safe.is_file(folder, p) for p in needed):
        raise NotAnOutput(f"{folder} is not a wanka output folder (needs {', '.join(needed)})")
    report = Report()
    configs = safe.listing(folder, "files/switches", ".cfg")
    configs += safe.listing(folder, "files/border", ".cfg")
    with _Beside(len(configs) >= PARALLEL_FROM_CONFIGS) as beside:
        # the other core reads the hccn files, the second half of the switch configs and scans
        # every file for secrets meanwhile; what it returns is added in the sequential order
        hccn = beside.run(_hccn_edges, folder)
        settings = read.settings(folder)
        pools = read.pools(folder, settings)
        hostvars, groups, lines = inventory.hosts(folder)
        firewalls = groups.get("firewalls", set())
        half = len(configs) // 2
        there = beside.run(_switches, folder, configs[half:], firewalls)
        scan = beside.run(_scan, folder)
        g = read.Graph()
        routing = read.Routing()
        here = _switches(
            folder=folder, paths=configs[:half], firewalls=firewalls, g=g, routing=routing
        )
        edges, theirs, there = there.get()
        for edge in edges:
            g.edge(*edge)
        routing.extend(theirs)
        fold: dict[str, str] = {}
        for path, (ports, access) in zip(configs, here + there, strict=True):
            report.switches += 1
            rules.check_access(access, pools, report)
            for port, logical in ports.items():
                fold[f"{path.stem}\0{port}"] = logical
        configured = {path.stem for path in configs}
        for edge in hccn.get():
            g.edge(*edge)
        fold |= inventory.host_interfaces(g, hostvars, lines)
        report.hosts = len(hostvars)
        budget = safe.CABLE_BYTES_PER_DEVICE * (len(hostvars) + len(configs))
        cabled = read.cabling(g, folder, fold, budget)
        hosts = set().union(*(groups.get(name, set()) for name in rules.HOST_GROUPS))
        rules.completeness(cabled, configured, hosts, report)
        physical.split_ports(cabled, report)
        rules.routing(routing, pools, g, report)
        shared = settings.get("storage_mode") == "shared"
        rules.border_cabling(
            cabled=cabled,
            border=groups.get("border", set()),  # vocabulary: Ansible group
            g=g,
            pools=pools,
            report=report,
            shared=shared,
        )
        components = rules.isolation(g, pools, firewalls, report, shared=shared)
        reach = adjacency.cabled_components(g, components, report)  # routes need cables
        flows.prove(
            folder=folder,
            g=g,
            components=reach,
            pools=pools,
            routing=routing,
            cabled=cabled,
            hostvars=hostvars,
            groups=groups,
            report=report,
        )
        rules.settings(folder, settings, report)
        report.problems += scan.get()
    report.nodes, report.edges = len(g.nodes), g.number_of_edges()
    return report


class _Edges(list):
    """A graph that only records its edges in order, for a reader run in another process."""

    def edge(self, a: tuple, b: tuple, where: tuple[str, int]) -> None:
        self.append((a, b, where))


def _hccn_edges(folder: Path) -> list[tuple]:
    edges = _Edges()
    for path in safe.listing(folder, "files/hccn", ".conf"):
        read.hccn(edges, folder, path)
    return edges


def _switches(folder: Path, paths: list[Path], firewalls: set[str], g=None, routing=None):
    """Device configs read into `g` and `routing`; without them (in the worker) into a list of
    edges and a Routing returned with the per-file results."""
    if g is not None:
        return [read.switch(g, folder, p, routing, gateway=p.stem in firewalls) for p in paths]
    edges, routing = _Edges(), read.Routing()
    out = [read.switch(edges, folder, p, routing, gateway=p.stem in firewalls) for p in paths]
    return edges, routing, out


def _scan(folder: Path) -> list[Problem]:
    """Clear secrets and NFS in every file (rules.secrets)."""
    report = Report()
    for path in safe.walk(folder):
        rules.secrets(folder, path, report)
    return report.problems


class _Done:
    """A result computed here, for when no worker runs."""

    def __init__(self, value) -> None:
        self.value = value

    def get(self):
        return self.value


PARALLEL_FROM_CONFIGS = 100  # switch and border configs; below, a forked reader costs more


class _Beside:
    """Runs readers in one forked worker beside this process where forking pays (a large
    output, two cores or more), else in this process; errors (Damaged) reach the caller from
    `.get()`."""

    def __init__(self, large: bool) -> None:
        self.large = large

    def __enter__(self) -> _Beside:
        forks = self.large and forking.available(os.cpu_count() or 1)
        self.pool = forking.pool(1) if forks else None
        return self

    def run(self, reader, *args):
        if self.pool is None:
            return _Done(reader(*args))
        return self.pool.apply_async(reader, args)

    def __exit__(self, *exc) -> None:
        if self.pool is not None:
            self.pool.__exit__(*exc)  # lets the worker finish (forking._Pool says why)
