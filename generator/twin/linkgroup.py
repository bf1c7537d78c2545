"""USG link-group on the twin: "If one interface in the logical group is faulty, the system changes
the status of the other interfaces to Down. After all the interfaces recover, the system changes
the status of the interfaces to Up" (USG admin guide, Configuring Link-Group Using the CLI,
usg.zrnko.cz/resources/admin/sec_admin_linkgroup_0003.html).

Emulated by a watcher thread while the drills run: a member is faulty when it is down or has no
carrier (its cable cut at either end) and the watcher did not set it down itself; while one is,
the others are set down (their far ends lose carrier, as the firewall's ports would go dark);
when none is, they come up again with the lines and kernel routes that name them
(run.reapply). The device's monitoring timer (10 s by default; after a recovery the members are
checked again after twice that: USG CLI link-group timer, resources/cli/link_group_timer.html)
is not emulated: the twin reacts within POLL seconds.
"""

from __future__ import annotations

import json
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from generator.twin.plan import Plan
from generator.twin.run import reapply, sh

POLL = 0.2


def groups(p: Plan) -> dict[str, list[tuple[str, str]]]:
    """'<device> link-group <id>' -> its cabled members as (namespace, interface), from each
    USG's interfaces as the reader gives them (vrp.Interface.link_group)."""
    out: dict[str, list[tuple[str, str]]] = {}
    for name, dev in sorted(p.devices.items()):
        for port, iface in dev.interfaces.items():
            if iface.link_group is not None and (name, port) in p.ports:
                out.setdefault(f"{name} link-group {iface.link_group}", []).append(
                    p.ports[name, port]
                )
    return out


def _healthy(namespaces: set[str]) -> set[tuple[str, str]]:
    """(namespace, interface) of every interface that is up with carrier: one `ip` per namespace."""
    out = set()
    for ns in sorted(namespaces):
        done = subprocess.run(
            ["ip", "-n", ns, "-j", "link", "show"], capture_output=True, text=True
        )
        for link in json.loads(done.stdout or "[]") if done.returncode == 0 else []:
            if {"UP", "LOWER_UP"} <= set(link.get("flags", [])):
                out.add((ns, link["ifname"]))
    return out


class Watcher(threading.Thread):
    def __init__(self, p: Plan, members: dict[str, list[tuple[str, str]]]) -> None:
        super().__init__(name="link-group", daemon=True)
        self.p, self.members = p, members
        self.stop = threading.Event()
        self.downed: dict[str, list[tuple[str, str]]] = {g: [] for g in members}
        self.events: list[str] = []  # what it did, for the report

    def step(self) -> None:
        healthy = _healthy({ns for members in self.members.values() for ns, _ in members})
        for group, members in self.members.items():
            mine = self.downed[group]
            faulty = [m for m in members if m not in mine and m not in healthy]
            if faulty and len(mine) + len(faulty) < len(members):
                for ns, dev in members:
                    if (ns, dev) not in mine and (ns, dev) not in faulty:
                        sh("ip", "-n", ns, "link", "set", dev, "down")
                        mine.append((ns, dev))
                self.events.append(f"{group}: {faulty[0][1]} faulty, {len(mine)} members down")
            elif not faulty and mine:
                for ns in sorted({ns for ns, _ in mine}):
                    reapply(self.p.namespaces[ns], [d for n, d in mine if n == ns])
                self.events.append(f"{group}: every member recovered, {len(mine)} members up")
                mine.clear()

    def run(self) -> None:
        while not self.stop.wait(POLL):
            self.step()


@contextmanager
def emulated(p: Plan) -> Iterator[Watcher | None]:
    """The link-groups of the plan's firewalls follow their members while the block runs; every
    member it set down is up again at the end."""
    members = groups(p)
    if not members:
        yield None
        return
    watcher = Watcher(p, members)
    watcher.start()
    try:
        yield watcher
    finally:
        watcher.stop.set()
        watcher.join()
        for mine in watcher.downed.values():
            for ns in sorted({ns for ns, _ in mine}):
                reapply(p.namespaces[ns], [d for n, d in mine if n == ns])
            mine.clear()
