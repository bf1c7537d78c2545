"""Prove isolation and hygiene from the *rendered* output folder, not from the model.

`verify(folder)` reads what `wanka generate` wrote (switch configs, hosts.yml host variables,
files/hccn/*.conf, files/cabling.csv, group_vars/all.yml pools) and builds a networkx graph:

- ("vrf", device, vrf): one L3 routing domain of a switch (the default one is "_public_");
- ("if", device, interface): one logical interface (Eth-Trunk members fold into their trunk,
  bond members into their bond); each host interface is its own domain: a host does not route
  between its planes (no forwarding setting is rendered) unless a gateway in its files points
  into another plane;
- ("vlan", device, id): a switch's broadcast domain;
- ("net", cidr): a subnet, labelled with the plane whose pool holds it.

Edges come from interface addresses, VLAN membership, Eth-Trunk/bond membership and cables;
each keeps the file and line it came from. Firewalls are the only gateways: their interfaces are
never joined to one another, and each may only face the business, in-band or out-of-band plane
(or a device without a rendered config, such as a WAN router). Two planes in one connected
component is a breach, reported with the path between them.

Also: every switch restricts SSH/STelnet, SNMP and the VTY lines with an ACL that only permits
the management pools (in-band and out-of-band); no secret is in clear in any file; nothing
mounts or exports NFS.
"""

from __future__ import annotations

from pathlib import Path

from generator.output import MARKER
from generator.verify import flows, inventory, read, rules
from generator.verify.report import NotAnOutput, Problem, Report

__all__ = ["NotAnOutput", "Problem", "Report", "verify"]


def verify(folder: Path) -> Report:
    """Every check over one output folder. Raises NotAnOutput for a folder wanka did not write."""
    folder = Path(folder)
    needed = (MARKER, "hosts.yml", "group_vars/all.yml", "files/cabling.csv")
    if not folder.is_dir() or not all((folder / p).is_file() for p in needed):
        raise NotAnOutput(f"{folder} is not a wanka output folder (needs {', '.join(needed)})")
    report = Report()
    settings = read.settings(folder)
    pools = read.pools(folder, settings)
    hostvars, groups = inventory.hosts(folder)
    firewalls = groups.get("firewalls", set())
    g = read.Graph()
    routing = read.Routing()
    fold: dict[str, str] = {}
    configured: set[str] = set()
    configs = sorted((folder / "files" / "switches").glob("*.cfg")) + sorted(
        (folder / "files" / "border").glob("*.cfg")
    )
    for path in configs:
        report.switches += 1
        configured.add(path.stem)
        ports, access = read.switch(g, folder, path, routing, gateway=path.stem in firewalls)
        rules.check_access(access, pools, report)
        for port, logical in ports.items():
            fold[f"{path.stem}\0{port}"] = logical
    for path in sorted((folder / "files" / "hccn").glob("*.conf")):
        read.hccn(g, folder, path)
    fold |= inventory.host_interfaces(g, folder, hostvars)
    report.hosts = len(hostvars)
    cabled = read.cabling(g, folder, fold)
    hosts = set().union(*(groups.get(name, set()) for name in rules.HOST_GROUPS))
    rules.completeness(cabled, configured, hosts, report)
    rules.routing(routing, pools, g.g, report)
    shared = settings.get("storage_mode") == "shared"
    rules.border_cabling(cabled, groups.get("border", set()), g.g, pools, report, shared)
    components = rules.isolation(g.g, pools, firewalls, report, shared=shared)
    flows.prove(folder, g.g, components, pools, routing, cabled, hostvars, groups, report)
    rules.settings(folder, settings, report)
    for rel, text in routing.texts.items():
        rules.secrets_in(rel, text, report)
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        if read.rel(folder, path) not in routing.texts:
            rules.secrets(folder, path, report)
    report.nodes, report.edges = g.g.number_of_nodes(), g.g.number_of_edges()
    return report
