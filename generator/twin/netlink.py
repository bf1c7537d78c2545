"""The kernel FIBs of many namespaces read in this process over rtnetlink (netlink(7),
rtnetlink(7): an RTM_GETROUTE dump of AF_INET), to tell when they stop changing without a
subprocess per namespace per look.

A netlink socket belongs to the namespace it was created in (generator.twin.probe.In), so one
socket per namespace is opened once and dumped again on every look. The dump's bytes (with a
fixed sequence number) are compared whole: an IPv4 route dump carries no timers, so equal bytes
are an unchanged FIB."""

from __future__ import annotations

import socket
import struct

from generator.twin.probe import In

RTM_GETROUTE = 26  # linux/rtnetlink.h
NLM_F_REQUEST, NLM_F_DUMP = 0x1, 0x300  # linux/netlink.h
NLMSG_DONE, NLMSG_ERROR = 3, 2
# struct nlmsghdr (len, type, flags, seq, pid) + struct rtmsg (family, dst_len, src_len, tos,
# table, protocol, scope, type, flags)
REQUEST = struct.pack("=IHHII", 28, RTM_GETROUTE, NLM_F_REQUEST | NLM_F_DUMP, 1, 0)
REQUEST += struct.pack("=BBBBBBBBI", socket.AF_INET, 0, 0, 0, 0, 0, 0, 0, 0)


class Fibs:
    """`with Fibs(names) as fibs:` then `fibs.dump()`: namespace -> its FIB dump (bytes)."""

    def __init__(self, names: list[str]) -> None:
        self.names = names
        self.socks: dict[str, socket.socket] = {}

    def __enter__(self) -> Fibs:
        for name in self.names:
            with In(name):
                s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
            s.bind((0, 0))
            self.socks[name] = s
        return self

    def __exit__(self, *exc) -> None:
        for s in self.socks.values():
            s.close()

    def dump(self) -> dict[str, bytes]:
        return {name: _dump(s) for name, s in self.socks.items()}


def _dump(s: socket.socket) -> bytes:
    s.send(REQUEST)
    parts = []
    while True:
        data = s.recv(1 << 20)
        offset = 0
        while offset < len(data):
            length, kind = struct.unpack_from("=IH", data, offset)
            if kind == NLMSG_ERROR:
                raise OSError("rtnetlink: RTM_GETROUTE dump refused")
            if kind == NLMSG_DONE:
                return b"".join(parts)
            parts.append(data[offset : offset + length])
            offset += (length + 3) & ~3
