"""`wanka predict FOLDER`: the prediction as text (cli.py prints it; NotAnOutput for a folder it
cannot read)."""

from __future__ import annotations

import argparse
from pathlib import Path

from generator.predict import advise_placement, predict, report


def run(args: argparse.Namespace) -> str:
    if args.placement:
        advice = advise_placement(
            Path(args.folder), args.placement, size=args.size, seeds=args.seeds
        )
        from generator.predict.placement import markdown

        return markdown(args.placement, advice)
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
    return report.markdown(p) if args.format == "markdown" else report.yaml(p)
