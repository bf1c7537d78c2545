"""Design rules for redundancy that must still work when one part fails (issue #41 item 2).

- dad_path: an M-LAG pair detects a dead peer-link over its dual-active detection (DAD) path; the
  path must carry the DAD packets, so the pair's management ports are never isolated from each
  other at layer 2.
"""

from __future__ import annotations

from collections.abc import Iterator

from generator.analysis.finding import ERROR, Finding
from generator.model import Cluster, Link
from generator.vocab import LinkKind

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
                "mlag-dad",
                f"M-LAG pair {dev.name}/{peer}: dual-active detection runs between "
                f"{mine.a_port} ports that {mine.b_device} isolates from each other "
                f"({mine.b_port}, {theirs.b_port}, one port isolation group): the detection "
                f"packets never pass and a peer-link failure leaves two masters ({DAD_PAGE})",
                ("networks", str(plane), "leaf", "mlag"),
            )
