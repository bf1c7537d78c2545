"""How every command ends: the exit codes, a `wanka:` message, progress on stderr, the design
findings of a run."""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from generator import pipeline

EXIT_OK, EXIT_DRIFT, EXIT_INVALID = 0, 1, 2
EXIT_INTERRUPTED = 130


class Progress:
    """Stage messages with elapsed time on stderr, only when stderr is a terminal (or forced)."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.start = time.perf_counter()

    def __call__(self, message: str) -> None:
        if self.enabled:
            print(
                f"[{time.perf_counter() - self.start:6.2f}s] {message}", file=sys.stderr, flush=True
            )


def fail(error: object) -> int:
    """`wanka: <error>` on stderr; the exit code of bad input."""
    print(f"wanka: {error}", file=sys.stderr)
    return EXIT_INVALID


def findings(
    result: pipeline.Result,
    verbose: bool,
    strict: bool = False,
    file: str = "",
    quiet: bool = False,
) -> int:
    """Print a run's design findings on stderr (info only with --verbose; with `quiet` not the
    warnings the blueprint accepts in writing, which the design review lists), each about a
    blueprint setting located as FILE:LINE:COL: yaml.path (`file`: the name to show for it);
    return how many fail the run: errors, and warnings too with --strict (but those of a check
    the blueprint accepts, design.accept)."""
    from generator.analysis.finding import ERROR, INFO, WARNING
    from generator.errors import located

    loaded = result.loaded
    for f in result.findings:
        if (f.severity != INFO or verbose) and not (quiet and f.accepted):
            where = located(file or loaded.file, loaded.positions, f.where) if f.where else ""
            print(f"{where}: {f.line()}" if where else f.line(), file=sys.stderr)
    failing = (ERROR, WARNING) if strict else (ERROR,)
    return sum(f.severity in failing and not f.accepted for f in result.findings)
