"""files/ztp/switches.yml: what zero-touch provisioning needs per switch, for roles/ztp_server.

The startup configurations themselves (files/ztp/configs/<name>.cfg) are written by the switches
emitter, which renders each configuration body once for the CLI script and the startup file; it
writes one for every switch, since roles/switch_deploy deploys day-2 changes from them. This list
holds only the switches ZTP builds (switch_ports.ztp_switches), so roles/ztp_server stages, names
in its intermediate file and leases to these alone: the ZTP path (`Cluster.ztp_path`) routes
before any ZTP request is answered and is configured from the console (docs/bring-up.md step 1).
Each switch's management address, prefix and gateway come from the model (`Device.mgmt`); the
device identities (ESN or MAC) are not design facts and come from the site at staging time.
"""

from __future__ import annotations

from collections.abc import Iterator

from generator import render
from generator.artifacts import OutputFile, emitter
from generator.artifacts.switch_ports import ztp_switches
from generator.model import Cluster, ip, netmask, network_of


def switches(cluster: Cluster) -> list[dict[str, object]]:
    out = []
    for d in ztp_switches(cluster):
        m = d.mgmt
        out.append(
            {
                "name": d.name,
                "model": d.model,
                "config": f"configs/{d.name}.cfg",
                "interface": m.interface,
                "address": ip(m.ip),
                "prefix": m.prefix,
                "gateway": ip(m.gateway) if m.gateway else "",
                "network": ip(network_of(m.ip, m.prefix)),
                "netmask": netmask(m.prefix),
            }
        )
    return out


@emitter(late=True)
def emit(cluster: Cluster, analysis: object = None) -> Iterator[OutputFile]:
    text = render.render("ztp/switches.yml.j2", cluster=cluster.name, switches=switches(cluster))
    yield OutputFile("files/ztp/switches.yml", text.encode())
