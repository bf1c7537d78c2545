"""Real packets between namespaces: a TCP connect or a UDP exchange to a listener on the
destination port, many at once from one process.

A socket belongs to the network namespace its creating thread was in (setns(2), CLONE_NEWNET),
and bind, connect and send use that namespace ever after. So the prober enters each namespace
only to create a socket, returns, and drives every socket of every namespace from one selector.
A TCP probe succeeds when the handshake completes; a UDP probe when the listener's answer comes
back (through a stateful firewall too); the UDP listener answers with the source address it saw,
so that source NAT on the way can be checked.
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
import selectors
import socket
import time
from dataclasses import dataclass

CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        raise OSError(ctypes.get_errno(), "setns failed")


class In:
    """`with In(name):` runs the block in network namespace `name` (this thread only)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __enter__(self) -> In:
        self.home = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
        fd = os.open(f"/run/netns/{self.name}", os.O_RDONLY)
        try:
            _setns(fd)
        finally:
            os.close(fd)
        return self

    def __exit__(self, *exc) -> None:
        try:
            _setns(self.home)
        finally:
            os.close(self.home)


def sock(ns: str, kind: int) -> socket.socket:
    with In(ns):
        s = socket.socket(socket.AF_INET, kind)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setblocking(False)
    return s


@dataclass(frozen=True, slots=True)
class Probe:
    src_ns: str
    src: str
    dst_ns: str
    dst: str
    proto: str  # tcp or udp
    port: int
    src_dev: str = ""  # SO_BINDTODEVICE: leave by this interface only


@dataclass(slots=True)
class Result:
    ok: bool
    seen_as: str = ""  # the source address the listener saw (UDP), answer received
    arrived_from: str = ""  # the source address the listener saw, answer or not (UDP)
    error: str = ""


def _raise_fd_limit() -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def run(
    probes: list[Probe], timeout: float = 3.0, chunk: int = 300, retry: bool = True
) -> list[Result]:
    """Every probe, and each that failed once more after a pause: a route that FRR installs
    while the first attempt is on its way (an ICMP unreachable from a router that had no route
    yet) is not a fault of the configs; a fault fails both times (`retry=False` where every
    probe is meant to fail)."""
    _raise_fd_limit()
    out = _chunks(probes, timeout, chunk)
    again = [i for i, r in enumerate(out) if not r.ok] if retry else []
    if again:
        time.sleep(2)
        for i, r in zip(again, _chunks([probes[i] for i in again], timeout, chunk), strict=True):
            out[i] = r
    return out


def _chunks(probes: list[Probe], timeout: float, chunk: int) -> list[Result]:
    out: list[Result] = []
    for i in range(0, len(probes), chunk):
        out += _run(probes[i : i + chunk], timeout)
    return out


def _run(probes: list[Probe], timeout: float) -> list[Result]:
    sel = selectors.DefaultSelector()
    listeners: dict[tuple, socket.socket] = {}
    results = [Result(False, error="timed out") for _ in probes]
    opened: list[socket.socket] = []
    try:
        for p in probes:
            key = (p.dst_ns, p.dst, p.proto, p.port)
            if key in listeners:
                continue
            s = sock(p.dst_ns, socket.SOCK_STREAM if p.proto == "tcp" else socket.SOCK_DGRAM)
            opened.append(s)
            try:
                s.bind((p.dst, p.port))
            except OSError as err:
                if err.errno != errno.EADDRINUSE:
                    raise
                continue  # a real server holds the port (the ZTP drill's sshd): it answers
            if p.proto == "tcp":
                s.listen(256)
            listeners[key] = s
            sel.register(s, selectors.EVENT_READ, ("listen", p.proto))
        pending = 0
        for i, p in enumerate(probes):
            s = sock(p.src_ns, socket.SOCK_STREAM if p.proto == "tcp" else socket.SOCK_DGRAM)
            opened.append(s)
            if p.src_dev and p.src_dev != "lo":
                s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, p.src_dev.encode())
            s.bind((p.src, 0))
            if p.proto == "tcp":
                code = s.connect_ex((p.dst, p.port))
                if code not in (0, errno.EINPROGRESS):
                    results[i] = Result(False, error=os.strerror(code))
                    continue
                sel.register(s, selectors.EVENT_WRITE, ("tcp", i))
            else:
                try:
                    s.sendto(f"probe {i}".encode(), (p.dst, p.port))
                except OSError as err:
                    results[i] = Result(False, error=err.strerror or str(err))
                    continue
                sel.register(s, selectors.EVENT_READ, ("udp", i))
            pending += 1
        end = time.monotonic() + timeout
        while pending and (left := end - time.monotonic()) > 0:
            for key, _ in sel.select(left):
                role, arg = key.data
                s = key.fileobj
                if role == "listen" and arg == "tcp":
                    try:
                        conn, _ = s.accept()
                        conn.close()
                    except OSError:
                        pass
                elif role == "listen":
                    try:
                        data, peer = s.recvfrom(512)
                        words = data.decode().split()
                        if len(words) == 2 and words[1].isdigit() and int(words[1]) < len(results):
                            results[int(words[1])].arrived_from = peer[0]
                        s.sendto(data + f" {peer[0]}".encode(), peer)
                    except OSError:
                        pass
                elif role == "tcp":
                    code = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
                    results[arg].ok, results[arg].error = (
                        code == 0,
                        os.strerror(code) if code else "",
                    )
                    sel.unregister(s)
                    pending -= 1
                else:
                    try:
                        data = s.recv(512).decode().split()
                        results[arg] = Result(True, seen_as=data[-1], arrived_from=data[-1])
                    except OSError as err:
                        results[arg] = Result(False, error=err.strerror or str(err))
                    sel.unregister(s)
                    pending -= 1
    finally:
        sel.close()
        for s in opened:
            s.close()
    return results
