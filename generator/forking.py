"""Forked worker pools that die with their parent, and the collector pause their work runs in.

A forked worker inherits the parent's memory by copy-on-write (a 100k-card model is not pickled
through a pipe); Ctrl-C is the parent's to handle (the workers finish their queued work first),
and when the parent is killed the kernel kills the worker (PR_SET_PDEATHSIG), so no orphan prints
a traceback later.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import multiprocessing as mp
import multiprocessing.pool
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def available(workers: int) -> bool:
    """Forking pays: more than one core, and the platform can fork."""
    return workers >= 2 and "fork" in mp.get_all_start_methods()


class _Pool(multiprocessing.pool.Pool):
    """A pool whose `with` block ends by letting its workers finish (close, join), not by
    killing them (terminate): a worker killed while it sends a result holds the result queue's
    lock for ever, and the pool's task handler then waits on it for ever (a hung test run showed
    it). Work still queued runs to its end first."""

    def __exit__(self, *exc: object) -> None:
        self.close()
        self.join()


def pool(workers: int, shared: object = None) -> multiprocessing.pool.Pool:
    """A pool of `workers` forked processes; use it in a `with` block. `shared` is what
    `shared()` returns in each worker: inherited, never pickled."""
    return _Pool(
        workers,
        initializer=_start,
        initargs=(os.getpid(), shared),
        context=mp.get_context("fork"),
    )


_SHARED: list[Any] = []  # in a forked worker only: its pool's `shared` value


def shared() -> Any:
    """In a worker of `pool(workers, shared)`: that value."""
    return _SHARED[0]


def _start(parent: int, value: object) -> None:
    # A worker never runs the cyclic collector: it lives for one run, and a collection would
    # walk (and so copy) every page it inherited. Done here, not by gc.freeze() in the parent,
    # whose gc.unfreeze() after the fork would undo its caller's own freezes.
    gc.disable()
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the pool's own shutdown still applies
        pass
    else:
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)
    _SHARED.append(value)


@contextmanager
def no_cycle_collection() -> Iterator[None]:
    """The cyclic garbage collector paused: a cluster model (or a verify graph) is a large graph
    of long-lived objects without reference cycles, which the collector would traverse again and
    again while it is built and read. Reference counting still frees everything; forked
    workers inherit the pause."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
