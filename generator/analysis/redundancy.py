"""Design rules for redundancy that must still work when one part fails (issue #41 item 2).

- dad_path: an M-LAG pair detects a dead peer-link over its dual-active detection (DAD) path; the
  path must carry the DAD packets, so the pair's management ports are never isolated from each
  other at layer 2.
- firewall_paths: a pair of stateful firewalls reached by per-device floating static routes keeps
  both directions of every flow on one firewall after any single link failure: each firewall's
  border links fail together (USG link-group), so every device floats to the partner at once.
"""

from __future__ import annotations

from collections.abc import Iterator

from generator.analysis.finding import ERROR, Check, Finding
from generator.model import Cluster, Link
from generator.vocab import LinkKind, Plane, Role

# CE6800/8800 V300R023C00 configuration guide, M-LAG > Configuring an M-LAG > Configuring a DAD
# Link: "DAD packets are UDP packets forwarded at Layer 3"; the prerequisite is that the two
# devices "can communicate with each other"; the link "can be set up between Ethernet management
# interfaces". Port isolation blocks two ports of one group in one VLAN (Overview of Port
# Isolation; Example for Enabling Layer 2 Port Isolation: PC1 and PC2 "are not allowed to
# communicate with each other").
DAD_PAGE = (
    "CE V300R023C00 'Configuring a DAD Link': the two devices must reach each other; "
    "'Example for Enabling Layer 2 Port Isolation': ports of one group do not"
)


def _mgmt_link(cluster: Cluster, device: str) -> Link | None:
    return next(
        (lk for lk in cluster.links if lk.kind == LinkKind.MGMT and lk.a_device == device), None
    )


def dad_path(cluster: Cluster) -> Iterator[Finding]:
    """ERROR for every M-LAG pair whose two management ports (its DAD path) sit in one isolation
    group of one out-of-band access switch: the detection packets never pass, and a peer-link
    failure leaves two masters (split brain)."""
    by_name = cluster.device_by_name
    for dev in cluster.devices:
        peer = dev.mlag_peer
        if peer is None or dev.name > peer or dev.mgmt is None:
            continue
        mine, theirs = _mgmt_link(cluster, dev.name), _mgmt_link(cluster, peer)
        if mine is None or theirs is None or mine.b_device != theirs.b_device:
            continue  # no MEth path, or routed between two access switches
        if cluster.isolated(mine) and cluster.isolated(theirs):
            plane = by_name[dev.name].plane
            yield Finding(
                ERROR,
                Check.MLAG_DAD,
                f"M-LAG pair {dev.name}/{peer}: dual-active detection runs between "
                f"{mine.a_port} ports that {mine.b_device} isolates from each other "
                f"({mine.b_port}, {theirs.b_port}, one port isolation group): the detection "
                f"packets never pass and a peer-link failure leaves two masters ({DAD_PAGE})",
                ("networks", str(plane), "leaf", "mlag"),
            )


# USG admin guide: Overview of Stateful Inspection (resources/admin/sec_admin_session_0002.html),
# Table 1: a first packet that is not a SYN "does not create sessions and discards packets";
# Configuring Link-Group Using the CLI (resources/admin/sec_admin_linkgroup_0003.html): one member
# faulty sets the others Down, "avoiding the inconsistency of upstream and downstream paths".
STATEFUL_PAGES = (
    "USG 'Overview of Stateful Inspection' Table 1: a reply with no session is discarded; "
    "'Configuring Link-Group Using the CLI': one member faulty sets the others Down"
)


def firewall_paths(cluster: Cluster) -> Iterator[Finding]:
    """ERROR when devices reach a pair of firewalls by floating static routes (each decides on its
    own link alone) and a firewall's border links do not fail together: one link down sends a
    flow out through one firewall and its reply back through the other, which drops it."""
    firewalls = {d.name for d in cluster.devices if d.role == Role.FIREWALL}
    if len(firewalls) < 2:
        return
    behind: dict[int, str] = {}  # a firewall's address on a border link -> the firewall
    for lk in cluster.links:
        if lk.plane == Plane.BORDER:
            for dev, address in ((lk.a_device, lk.a_ip), (lk.b_device, lk.b_ip)):
                if dev in firewalls and address:
                    behind[address] = dev
    via: dict[tuple[str, str, int, int], set[str]] = {}
    for r in cluster.routes:
        if r.next_hop in behind:
            via.setdefault((r.device, r.vrf, r.network, r.prefix), set()).add(behind[r.next_hop])
    floating = sorted({key[0] for key, fws in via.items() if len(fws) > 1})
    alone = sorted(f for f in firewalls if not cluster.link_group(cluster.device_by_name[f]))
    if floating and alone:
        yield Finding(
            ERROR,
            Check.FIREWALL_SYMMETRY,
            f"{len(floating)} devices ({', '.join(floating[:3])}{', ...' if len(floating) > 3 else ''}) "
            f"float their routes between the stateful firewalls link by link, and "
            f"{', '.join(alone)} keep their other links up when one fails: one core-to-firewall "
            "link down sends a flow out through one firewall and its reply through the other, "
            f"which drops it ({STATEFUL_PAGES})",
            ("zones", "border", "firewall", "pair"),
        )
