"""`wanka twin export --containerlab DIR FOLDER`: the twin's plan as a containerlab topology, for
a build that outgrows one machine (containerlab on several hosts, or clabernetes on Kubernetes).

Everything comes from the plan the twin runs (generator.twin.plan, routing): one node per
namespace, named as the namespace without the instance prefix (par-leaf-0001,
par-leaf-0001.management_vpn, npu-001.npu); one link per veth pair; the same interface names
(plan.ifname: Linux names of at most 15 characters, deterministic, a checksum for a longer port
name), the same FRR configurations, sysctls, `ip` commands and nftables rulesets. Nothing is
computed a second time here: this module only formats the plan.

What containerlab's manual (srl-labs/containerlab v0.79.0, docs/manual/nodes.md,
docs/manual/topo-def-file.md, lab-examples/frr01) gives the format:
- `kind: linux` nodes, grouped under `topology.groups` (frr01's `routers` and `hosts`);
- `binds` of files "relative to the topology file" (nodes.md, binds): frr.conf and daemons to
  /etc/frr/ as frr01 binds them;
- `exec`: "commands to execute ... once it finishes booting", "helpful to provide some startup
  configuration for linux nodes such as IP addressing and routing" (nodes.md, exec), run in the
  `configure` stage, after the `create-links` stage attached the links (nodes.md, stages);
- `sysctls` per node (nodes.md, sysctls);
- `network-mode: none`: "deploy nodes without eth0 interface and docker networking" (nodes.md):
  no management network beside the build's own out-of-band plane, no Docker default route;
- links as `endpoints: ["node:iface", "node:iface"]`, interface names "at most 15 characters,
  spaces and forward slashes (/) not permitted" (topo-def-file.md).
The images are options; the defaults are frr01's (quay.io/frrouting/frr:10.5.1 and
wbitt/network-multitool:3.22.2). [unconfirmed]: that these images carry nft (the firewalls'
and the devices' ACL rulesets), and that a containerized zebra takes `-e` as wide as the design's
ECMP (FRR: "bounded by what you compiled FRR with", doc/user/zebra.rst).
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import yaml

from generator.output import OutputFile
from generator.twin.instance import PREFIX
from generator.twin.intake import Refused
from generator.twin.plan import Plan
from generator.twin.run import paths
from generator.vocab import NsKind

FRR_IMAGE = "quay.io/frrouting/frr:10.5.1"  # containerlab lab-examples/frr01/frr01.clab.yml
HOST_IMAGE = "wbitt/network-multitool:3.22.2"  # the same file, its `hosts` group
SCHEMA = "containerlab v0.79.0 schemas/clab.schema.json"
NAME = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9._-]*")  # clab.schema.json: `name`
FRR_DAEMONS = ("zebra", "bgpd", "ospfd", "staticd")  # the daemons file's lines the twin uses


def node_name(ns: str) -> str:
    """A namespace's node: its name without this instance's prefix."""
    return ns.removeprefix(PREFIX)


def lab_name(name: str) -> str:
    """`name` when it is a containerlab topology name; Refused otherwise."""
    if not NAME.fullmatch(name):
        raise Refused(
            f"'{name}': a containerlab topology name starts with a letter or digit and holds "
            "letters, digits, '.', '_' and '-' only (clab.schema.json `name`): give one with --name"
        )
    return name


def daemons(ns_daemons: tuple[str, ...], width: int) -> str:
    """FRR's daemons file (the format of frr01's router1/daemons): the daemons the twin starts
    in the namespace, zebra with room for `width` next hops (-e, as generator.twin.run does)."""
    out = [f"{d}={'yes' if d in ns_daemons else 'no'}" for d in FRR_DAEMONS]
    out += ["vtysh_enable=yes", f'zebra_options=" -A 127.0.0.1 -s 90000000 -e {max(width, 2)}"']
    out += [f'{d}_options=" -A 127.0.0.1"' for d in FRR_DAEMONS[1:]]
    return "\n".join(out) + "\n"


def _exec(ns, ends: list[str]) -> list[str]:
    """The namespace's `ip -batch` lines as commands, its cable `ends` up first (as
    run.configure does)."""
    out = [f"ip {ns.commands[0]}"] if ns.commands else []
    out += [f"ip link set {dev} up" for dev in ends]
    out += [f"ip {c}" for c in ns.commands[1:]]
    if ns.nft:
        out.append("nft -f /etc/wanka/ruleset.nft")
    return out


def export(
    p: Plan, name: str, frr_image: str = FRR_IMAGE, host_image: str = HOST_IMAGE
) -> list[OutputFile]:
    """The topology file `<name>.clab.yml` and, under `<name>/`, each node's files and
    interfaces.csv (node, interface, device, port: what each Linux name stands for)."""
    lab_name(name)
    width = max((paths(ns.frr) for ns in p.namespaces.values() if ns.frr), default=1)
    files: list[OutputFile] = []
    nodes: dict[str, dict] = {}
    ends: dict[str, list[str]] = {}
    for link in p.links:
        for ns_name, dev in (link.a, link.b):
            ends.setdefault(ns_name, []).append(dev)
    for ns in sorted(p.namespaces.values(), key=lambda n: n.name):
        node = node_name(ns.name)
        entry: dict = {"group": "routers" if ns.frr else "hosts"}
        binds = []
        if ns.frr:
            for file, text in (("frr.conf", ns.frr), ("daemons", daemons(ns.daemons, width))):
                files.append(OutputFile(f"{name}/{node}/{file}", text.encode()))
                binds.append(f"{name}/{node}/{file}:/etc/frr/{file}")
        if ns.nft:
            files.append(OutputFile(f"{name}/{node}/ruleset.nft", ns.nft.encode()))
            binds.append(f"{name}/{node}/ruleset.nft:/etc/wanka/ruleset.nft")
        if binds:
            entry["binds"] = binds
        if ns.sysctls:
            entry["sysctls"] = dict(sorted(ns.sysctls.items()))
        if commands := _exec(ns, ends.get(ns.name, [])):
            entry["exec"] = commands
        nodes[node] = entry
    links = [
        {"endpoints": [f"{node_name(a)}:{ia}", f"{node_name(b)}:{ib}"]}
        for (a, ia), (b, ib) in ((link.a, link.b) for link in p.links)
    ]
    topology = {
        "name": name,
        "topology": {
            "defaults": {"network-mode": "none"},
            "groups": {
                "routers": {"kind": "linux", "image": frr_image},
                "hosts": {"kind": "linux", "image": host_image},
            },
            "nodes": nodes,
            "links": links,
        },
    }
    text = yaml.dump(topology, Dumper=_Dumper, sort_keys=False, width=1000)
    files.insert(0, OutputFile(f"{name}.clab.yml", (header(p, name) + text).encode()))
    files.append(OutputFile(f"{name}/interfaces.csv", _interfaces(p)))
    return files


def header(p: Plan, name: str) -> str:
    routers = sum(1 for n in p.namespaces.values() if n.frr)
    lines = [
        f"containerlab topology of the wanka twin of {p.folder.name}"
        + (f" (pod {p.pod})" if p.pod else ""),
        f"written by `wanka twin export --containerlab`; checked against {SCHEMA}",
        f"{len(p.namespaces)} nodes ({routers} FRR routers), {len(p.links)} links; deploy: "
        f"containerlab deploy -t {name}.clab.yml",
        f"{name}/interfaces.csv: what each Linux interface name stands for (device, port)",
        *p.notes,
    ]
    hosts = any(n.kind == NsKind.HOST for n in p.namespaces.values())
    if not p.hosts_done and hosts:
        lines.append(
            "the hosts' own NICs (bond, storage, in-band) carry no address here: `twin up` "
            "renders them with the host_network role (ansible-playbook, as root); an export "
            "does not run it, the role configures them on the hosts"
        )
    return "".join(f"# {line}\n" for line in lines)


def _interfaces(p: Plan) -> bytes:
    buf = io.StringIO()
    out = csv.writer(buf, lineterminator="\n")
    out.writerow(["node", "interface", "device", "port"])
    rows = sorted(
        (node_name(ns), iface, device, port) for (device, port), (ns, iface) in p.ports.items()
    )
    out.writerows(rows)
    return buf.getvalue().encode()


class _Dumper(yaml.SafeDumper):
    """Block style, and lists indented under their key as containerlab's examples write them."""

    def increase_indent(self, flow=False, indentless=False):
        return super().increase_indent(flow, False)


def main(args) -> str:
    """`wanka twin export`: no root, nothing started; what it wrote, or twin.Stop (exit 2) for a
    folder the twin refuses."""
    from generator import output
    from generator.twin import Stop, routing
    from generator.twin import pod as pods
    from generator.twin.plan import plan
    from generator.verify.report import NotAnOutput

    folder = Path(args.folder)
    try:
        name = lab_name(args.name or folder.resolve().name)
        p = plan(folder, {}, args.pod, bounded=False)
        routing.apply(p)
        files = export(p, name, args.frr_image or FRR_IMAGE, args.host_image or HOST_IMAGE)
        output.write(Path(args.containerlab), files)
    except (Refused, pods.PodError) as err:
        raise Stop(f"{args.folder}: {err}") from None
    except NotAnOutput as err:  # a file it cannot read, a line no form of the table matches
        raise Stop(f"{args.folder}/{err}") from None
    except output.OutputError as err:
        raise Stop(str(err).replace(" with -o", " with --containerlab")) from None
    routers = sum(1 for n in p.namespaces.values() if n.frr)
    return (
        f"{Path(args.containerlab) / (name + '.clab.yml')}: {len(p.namespaces)} nodes "
        f"({routers} FRR routers), {len(p.links)} links\n"
    )
