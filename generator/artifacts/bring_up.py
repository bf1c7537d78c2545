"""docs/bring-up.md: the day-0 runbook of one cluster, in the order the steps depend on each other.

1. from the console: the switches between the ZTP relays and the ZTP servers (`Cluster.ztp_path`:
   the out-of-band gateways that relay, the switches above them and the in-band switches of the
   controllers' path; a relayed DHCP request has no answer until they route) and the border
   firewalls and routers (ZTP builds CloudEngine switches only, roles/ztp_server);
2. the controllers on their in-band address (the ZTP server and the relays' server-ip), BMC on
   the out-of-band plane;
3. playbooks/ztp.yml, then power on every other switch;
4. the LLDP check, the hosts, preflight, acceptance and the operations checklist;
5. what the tool assumes exists, each a role of this repository or out of scope.

Every name, address and count is the model's (generator.model); this module only formats them.
The text lives in templates/docs/bring-up.md.j2; commands use the output folder the README names,
`inventories/<cluster>/`, and its site overlay `inventories/<cluster>.site/`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from generator import render
from generator.analysis.command_table import load_table
from generator.artifacts import OutputFile, emitter
from generator.artifacts.switch_ports import ztp_switches
from generator.model import Cluster, Device, ip, network_of
from generator.vocab import Plane, Role


def _why(cluster: Cluster, dev: Device, kind: str) -> str:
    if kind == "relay":
        subnets = [s for s in cluster.subnets if s.dhcp_relay and dev.name in s.owners]
        servers = ", ".join(ip(a) for a in subnets[0].dhcp_relay)
        return (
            f"relays the ZTP DHCP of {len(subnets)} out-of-band subnet(s) to {servers}; managed "
            f"on its {dev.mgmt.interface} (no management port asks for a lease)"
        )
    if kind == "server-gateway":
        return "gateway of the controllers' in-band subnet (the ZTP servers)"
    return f"routes the {dev.plane} plane's ZTP traffic toward the firewalls"


def console_rows(cluster: Cluster) -> list[list[str]]:
    """Name, what it is, rack/U, management address, the file to paste, why from the console."""
    rows = []
    for name, kind in cluster.ztp_path:
        d = cluster.device_by_name[name]
        rows.append(
            [
                name,
                f"{d.plane} {d.role}, {d.model}",
                f"{d.rack} U{d.u}",
                f"{ip(d.mgmt.ip)} ({d.mgmt.interface})" if d.mgmt else "",
                f"files/switches/{name}.cfg",
                _why(cluster, d, kind),
            ]
        )
    for d in cluster.devices:
        if d.role.is_border:
            rows.append(
                [
                    d.name,
                    f"{d.role}, {d.model}",
                    f"{d.rack} U{d.u}",
                    f"{ip(d.mgmt.ip)} ({d.mgmt.interface})" if d.mgmt else "",
                    f"files/border/{d.name}.cfg",
                    "joins the planes (every ZTP packet crosses it); ZTP builds CE switches only",
                ]
            )
    return rows


def ztp_groups(cluster: Cluster) -> list[list[str]]:
    """The switches ZTP builds (files/ztp/switches.yml), per plane and role: count and names."""
    groups: dict[tuple[str, str], list[str]] = {}
    for d in ztp_switches(cluster):
        groups.setdefault((d.plane, d.role), []).append(d.name)
    order = {p: i for i, p in enumerate(Plane)}
    return [
        [plane, role, str(len(names)), ", ".join(names)]
        for (plane, role), names in sorted(groups.items(), key=lambda kv: (order[kv[0][0]], kv[0]))
    ]


def dhcp_rows(cluster: Cluster) -> list[list[str]]:
    """The management subnets the ZTP server leases in (one dhcp-range each): network, gateway
    (the relay), switches."""
    count: Counter[tuple[int, int, int]] = Counter(
        (network_of(d.mgmt.ip, d.mgmt.prefix), d.mgmt.prefix, d.mgmt.gateway)
        for d in ztp_switches(cluster)
        if d.mgmt.gateway
    )
    return [[f"{ip(n)}/{p}", ip(g), str(c)] for (n, p, g), c in sorted(count.items())]


def controllers(cluster: Cluster) -> list[list[str]]:
    """Each ZTP server (Services.ztp): name, in-band address/gateway, its routes, BMC address."""
    by_ip = {d.mgmt.ip: d for d in cluster.devices if d.role == Role.MANAGEMENT_NODE and d.mgmt}
    rows = []
    for a in cluster.services.ztp:
        d = by_ip[a]
        m = d.mgmt
        bmc = next(
            (x for x in cluster.addresses if x.device == d.name and x.plane == Plane.OOB), None
        )
        rows.append(
            [
                d.name,
                f"{ip(m.ip)}/{m.prefix} on {m.interface}",
                ip(m.gateway),
                ", ".join(f"{ip(n)}/{p}" for n, p in m.routes),
                f"{ip(bmc.ip)}/{bmc.prefix}" if bmc else "",
                f"{d.rack} U{d.u}",
            ]
        )
    return rows


def prompts(cluster: Cluster) -> list[list[str]]:
    """The line forms of the pasted files that ask a question when typed (the command table's
    `prompt` facts, generator/catalog/commands.yaml, each with its page): platform, form, what
    the device asks, the answer. A paste answers a question with its next line, so these are
    typed alone."""
    table = load_table()
    platforms = sorted(
        {cluster.device_by_name[n].platform for n, _kind in cluster.ztp_path}
        | {d.platform for d in cluster.devices if d.role.is_border}
    )
    return [
        [p, c.form, " / ".join(" ".join(ask.split()) for ask, _ in c.prompt),
         " / ".join(answer for _, answer in c.prompt), c.prompt_source]
        for p in platforms
        for c in table.commands.get(p, ())
        if c.prompt and c.emitted
    ]  # fmt: skip


# ansible's copy module: a device's file read as data, only its `{{ vault_* }}` placeholders
# filled (plugins/filter/wanka_vault.py, as roles/switch_deploy and border_deploy do: a file with
# any other template syntax is refused with its line, never run), into the overlay
_RENDER = (
    "content={{ lookup('ansible.builtin.file', inventory_dir ~ '/%(folder)s/' ~ inventory_hostname"
    " ~ '.cfg', rstrip=false) | wanka.cluster.wanka_vault_fill(hostvars[inventory_hostname],"
    " '%(folder)s/' ~ inventory_hostname ~ '.cfg') }}"
    " dest={{ wanka_site_dir }}/records/console/{{ inventory_hostname }}.cfg mode=0600"
)


def bring_up(cluster: Cluster) -> str:
    name = cluster.name
    console = console_rows(cluster)
    ztp = ztp_groups(cluster)
    return render.render(
        "docs/bring-up.md.j2",
        name=name,
        inv=f"-i inventories/{name}/hosts.yml -i inventories/{name}.site",
        console=console,
        prompts=prompts(cluster),
        path_switches=":".join(name for name, _kind in cluster.ztp_path),
        render_switches=_RENDER % {"folder": "files/switches"},
        render_border=_RENDER % {"folder": "files/border"},
        border=":".join(r[0] for r in console if r[4].startswith("files/border/")),
        ztp=ztp,
        ztp_count=sum(int(r[2]) for r in ztp),
        dhcp=dhcp_rows(cluster),
        controllers=controllers(cluster),
        needs_facts=cluster.host_settings.rank_table_version == "1.2",
        npu_servers=len(cluster.npu_servers),
    )


@emitter(late=True)
def emit(cluster: Cluster, analysis: object = None) -> Iterator[OutputFile]:
    yield OutputFile("docs/bring-up.md", bring_up(cluster).encode())
