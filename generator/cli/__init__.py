"""Command line: the only place that prints and picks exit codes (0 ok, 1 drift, 2 bad input).
One module per group of commands; `main` runs the one the arguments name."""

from __future__ import annotations

import os
import sys

from generator import arguments
from generator.cli import design, generation, info, jobs, judges
from generator.cli.printing import EXIT_INTERRUPTED, fail


def main(argv: list[str] | None = None) -> int:
    """Run one command; every OS error ends in a one-line message and exit 2, a closed output
    pipe ends the command quietly. The cyclic collector stays paused for the whole command (see
    forking.no_cycle_collection): after the pipeline, with the model still in memory, the first
    collection would walk every object it made, while the command reports and writes."""
    args = arguments.parser().parse_args(argv)
    from generator.forking import no_cycle_collection

    try:
        with no_cycle_collection():
            return _COMMANDS[args.command](args)
    except KeyboardInterrupt:
        print("wanka: interrupted; previous output left as it was", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `wanka diff ... | head`: the reader has gone; so do we, quietly
        _silence_stdout()
        return EXIT_PIPE
    except OSError as err:
        from generator.errors import os_error

        return fail(os_error(err))


EXIT_PIPE = 141  # as a shell reports a command ended by SIGPIPE (128 + 13)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot raise again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real file descriptor (stdout captured in-process)
        pass


_COMMANDS = {
    "generate": generation.generate,
    "validate": generation.validate,
    "ranktable": jobs.ranktable,
    "placement": jobs.placement,
    "size": design.size,
    "diff": design.diff,
    "schema": info.schema,
    "verify": judges.verify,
    "site": info.site,
    "catalog": info.catalog,
    "ansible-path": info.ansible_path,
    "twin": judges.twin,
    "predict": judges.predict,
}
