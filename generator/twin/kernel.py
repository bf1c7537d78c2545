"""Kernel settings a twin namespace needs for what runs in it, sized from the plan, and the
machine's neighbour table, sized from the cables of every twin up.

Multicast group joins. Linux counts one socket's joins, each (group, interface) pair, against
`net.ipv4.igmp_max_memberships` of the socket's network namespace, 20 by default, and refuses
the next with ENOBUFS: "Change the maximum number of multicast groups we can subscribe to.
Default: 20" (Linux Documentation/networking/ip-sysctl.rst, igmp_max_memberships; the count
against net->ipv4.sysctl_igmp_max_memberships is in net/ipv4/igmp.c __ip_mc_join_group, read in
gregkh/linux). ospfd joins AllSPFRouters (224.0.0.5) on every OSPF interface and AllDRouters
(224.0.0.6) where it is DR or BDR, all on its one socket (FRR ospfd/ospf_network.c,
ospf_if_add_allspfrouters on top->fd, which logs "perhaps a kernel limit on # of multicast group
memberships has been exceeded?"). From the 21st OSPF interface of a router on, the Hellos of its
neighbours never reach ospfd, and they stay in Init: measured here on a 192-card build with an
OSPF parameter plane (24 OSPF links on each spine: 20 Full, the 6th leaf's 16 Init, and 4 such
lines in each spine's ospfd.log), and in issue 42 on a 2,048-card build (business spine links
21-36). Measured too: the setting is per namespace (set in one, the host and the others keep 20).
With the room sized here: the 192-card build 248/248 adjacencies Full; cluster-1k at 2,048 cards
(36 OSPF links on each business spine, room 98) 224/224 Full and 2,336/2,336 BGP sessions, no
ENOBUFS line in the spines' ospfd.log.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections import Counter
from pathlib import Path

from generator.twin.instance import BASE, all_namespaces
from generator.twin.records import Plan
from generator.vocab import NsKind

IGMP = "net.ipv4.igmp_max_memberships"
IGMP_DEFAULT = 20  # ip-sysctl.rst: "Default: 20"
# ip-sysctl.rst: a membership report must fit one datagram, so the setting "should not be set
# higher than: (65536-24) / 12 = 5459"
IGMP_MAX = 5459
ROUTERS = frozenset({NsKind.SWITCH, NsKind.ROUTER, NsKind.FIREWALL})


def interfaces(p: Plan) -> Counter[str]:
    """Namespace -> the interfaces the plan gives it: its cable ends, its bridges (a Vlanif, a
    VLAN) and lo."""
    out: Counter[str] = Counter()
    for link in p.links:
        for ns, _ in (link.a, link.b):
            out[ns] += 1
    for ns in p.namespaces.values():
        out[ns.name] += 1 + sum(1 for c in ns.commands if c.endswith(" type bridge"))
    return out


def multicast_room(p: Plan) -> None:
    """Every router namespace may join both OSPF groups on every interface it has, on top of the
    default (never less than the kernel gives), up to the bound ip-sysctl.rst gives."""
    count = interfaces(p)
    for ns in p.namespaces.values():
        if ns.kind in ROUTERS:
            room = IGMP_DEFAULT + 2 * count[ns.name]
            ns.sysctls[IGMP] = str(min(room, IGMP_MAX))


NEIGH = Path("/proc/sys/net/ipv4/neigh/default")
NEIGH_PER_CABLE = {"gc_thresh1": 2, "gc_thresh2": 4, "gc_thresh3": 8}


SAVED_NEIGH = BASE / "neigh.json"  # the machine's values, kept while any instance is up


@contextlib.contextmanager
def _machine_lock():
    """Instances take turns at what they share on the machine (the neighbour table)."""
    BASE.mkdir(mode=0o755, parents=True, exist_ok=True)
    fd = os.open(BASE, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def size_neighbour_table(cables: int) -> None:
    """The kernel's ARP table is one table for every namespace, with its limits (gc_thresh1..3,
    by default 128/512/1024 entries) settable only in the host's namespace: past gc_thresh3 it
    drops packets (measured: cluster-1k's 2,469 cables lost a quarter of the NPU probes). Raised
    to a few entries per cable for the twin's life (never lowered while another instance is
    up); the last instance's `down` puts the machine's values back."""
    with _machine_lock():
        now = {k: int((NEIGH / k).read_text()) for k in NEIGH_PER_CABLE}
        if not SAVED_NEIGH.exists():
            SAVED_NEIGH.write_text(json.dumps(now), encoding="utf-8")
        for k, per in NEIGH_PER_CABLE.items():
            (NEIGH / k).write_text(str(max(now[k], per * cables)))


def restore_neighbour_table() -> None:
    """The machine's values back, unless another instance is still up."""
    with _machine_lock():
        if any(n.startswith("wt-") for n in all_namespaces()):
            return
        with contextlib.suppress(OSError, ValueError):
            for k, v in json.loads(SAVED_NEIGH.read_text()).items():
                (NEIGH / k).write_text(str(int(v)))
        SAVED_NEIGH.unlink(missing_ok=True)
