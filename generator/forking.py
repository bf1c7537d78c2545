"""Forked worker pools that die with their parent.

A forked worker inherits the parent's memory by copy-on-write (a 100k-card model is not pickled
through a pipe); Ctrl-C is the parent's to handle (the pool is then terminated), and when the
parent is killed the kernel kills the worker (PR_SET_PDEATHSIG), so no orphan prints a traceback
later.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import multiprocessing as mp
import multiprocessing.pool
import os
import signal
from collections.abc import Callable
from typing import Any

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def available(workers: int) -> bool:
    """Forking pays: more than one core, and the platform can fork."""
    return workers >= 2 and "fork" in mp.get_all_start_methods()


def pool(
    workers: int, initializer: Callable[..., None] | None = None, initargs: tuple = ()
) -> multiprocessing.pool.Pool:
    """A pool of `workers` forked processes; use it in a `with` block. The parent's objects are
    frozen out of the garbage collector while it forks, so a worker's collections do not touch
    (and copy) every inherited page (gc.freeze, Python docs: "to avoid copy-on-write")."""
    gc.freeze()
    try:
        return mp.get_context("fork").Pool(
            workers, initializer=_start, initargs=(os.getpid(), initializer, initargs)
        )
    finally:
        gc.unfreeze()


def _start(parent: int, initializer: Callable[..., None] | None, initargs: tuple[Any, ...]):
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the pool's own shutdown still applies
        pass
    else:
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)
    if initializer is not None:
        initializer(*initargs)
