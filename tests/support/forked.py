"""The in-process CLI runner: `wanka ...` in a child forked from the test process, to kill, to limit
or to run beside another (tests/faults/test_command_faults.py and test_faults.py)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
import traceback
from collections.abc import Callable


class Forked:
    """A child process forked from this one, running `body` (e.g. `lambda: cli.main([...])`, what
    `wanka ...` runs) with its stdout and stderr in files: a process of its own, to kill, to
    limit or to run beside another, without starting an interpreter and importing the generator
    again (a second of CPU per `python -m generator`). The child ends with os._exit(body's
    return value); an exception in it is printed to its stderr and ends it with 70."""

    def __init__(self, body: Callable[[], int | None]) -> None:
        self._streams = (tempfile.TemporaryFile(), tempfile.TemporaryFile())  # noqa: SIM115
        self.pid = os.fork()
        if self.pid == 0:  # the child: never returns into pytest
            code = 70
            try:
                code = self._child(body)
            finally:
                os._exit(code)

    def _child(self, body: Callable[[], int | None]) -> int:
        code = 70
        for fd, f in enumerate(self._streams, start=1):
            os.dup2(f.fileno(), fd)
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        try:
            code = body() or 0
        except SystemExit as exit_:  # argparse refusing the command line
            code = exit_.code if isinstance(exit_.code, int) else 2
        except BaseException:
            traceback.print_exc()
        with contextlib.suppress(OSError, ValueError):
            sys.stdout.flush()
            sys.stderr.flush()
        return code

    def kill(self, sig: int) -> None:
        os.kill(self.pid, sig)

    def wait(self) -> subprocess.CompletedProcess:
        """returncode as subprocess reports it: the exit code, or -N when signal N ended it."""
        _, status = os.waitpid(self.pid, 0)
        texts = []
        for f in self._streams:
            f.seek(0)
            texts.append(f.read().decode(errors="replace"))
            f.close()
        return subprocess.CompletedProcess([], os.waitstatus_to_exitcode(status), *texts)
