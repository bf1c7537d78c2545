"""`wanka verify`, `wanka twin` and `wanka predict`: the judges of a rendered folder, their
results printed here."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.cli.printing import EXIT_DRIFT, EXIT_INTERRUPTED, EXIT_INVALID, EXIT_OK


def verify(args: argparse.Namespace) -> int:
    from generator.verify import NotAnOutput, printable, verify

    status = EXIT_OK
    for folder, given in ((printable(f), f) for f in args.folders):  # printed escaped
        try:
            report = verify(Path(given))
        except NotAnOutput as err:
            print(f"wanka: {err}", file=sys.stderr)
            status = EXIT_INVALID
            continue
        for problem in report.problems:
            print(f"{folder}/{problem.render()}")
        if report.problems:
            status = max(status, EXIT_DRIFT)
            print(f"{folder}: {len(report.problems)} problems", file=sys.stderr)
        else:
            print(f"{folder}: {report.summary()}")
    return status


def twin(args: argparse.Namespace) -> int:
    """`wanka twin`: its result printed, its progress on stderr as it goes."""
    from generator.twin import main
    from generator.twin.outcome import Stop, TakenDown

    label = "twin prove" if args.twin_command == "prove" else "twin"

    def say(message: str) -> None:
        print(f"{label}: {message}", file=sys.stderr, flush=True)

    try:
        done = main(args, say)
    except Stop as err:
        print(f"wanka: {err}", file=sys.stderr)
        return EXIT_INVALID
    except TakenDown:
        print("wanka: interrupted; the twin was taken down", file=sys.stderr)
        return EXIT_INTERRUPTED
    print(done.text, end="")
    if done.status is not None:  # `twin exec`: the command's own
        return done.status
    return EXIT_DRIFT if done.failed else EXIT_OK


def predict(args: argparse.Namespace) -> int:
    from generator.output import OutputError
    from generator.predict import command
    from generator.verify.report import NotAnOutput, printable

    try:
        text = command.run(args)
    except (NotAnOutput, OutputError, command.BadMargin) as err:
        print(f"wanka: {printable(str(err))}", file=sys.stderr)
        return EXIT_INVALID
    sys.stdout.write(text)
    return EXIT_OK
