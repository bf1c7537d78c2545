"""`wanka predict FOLDER`: print the prediction (the command's own output, as the twin's main)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.predict import advise_placement, predict, report
from generator.verify.report import NotAnOutput, printable

EXIT_OK, EXIT_INVALID = 0, 2


def main(args: argparse.Namespace) -> int:
    if args.placement:
        try:
            advice = advise_placement(
                Path(args.folder), args.placement, size=args.size, seeds=args.seeds
            )
        except NotAnOutput as err:
            print(f"wanka: {printable(str(err))}", file=sys.stderr)
            return EXIT_INVALID
        from generator.predict.placement import markdown

        sys.stdout.write(markdown(args.placement, advice))
        return EXIT_OK
    try:
        p = predict(
            Path(args.folder),
            scopes=tuple(args.scope or ()),
            ranktable=Path(args.ranktable) if args.ranktable else None,
            size=args.size,
            seeds=args.seeds,
            qps=args.qps,
            algo=args.algo,
            with_failures=not args.no_failures,
        )
    except NotAnOutput as err:
        print(f"wanka: {printable(str(err))}", file=sys.stderr)
        return EXIT_INVALID
    sys.stdout.write(report.markdown(p) if args.format == "markdown" else report.yaml(p))
    return EXIT_OK
