"""`wanka predict FOLDER`: the prediction as text (the CLI prints it; NotAnOutput for a folder it
cannot read)."""

from __future__ import annotations

import argparse
from pathlib import Path

from generator.predict import advise_placement, expected, predict, report


class BadMargin(ValueError):
    """--margin outside [0, 1): the CLI says so and exits 2."""


def run(args: argparse.Namespace) -> str:
    if not 0 <= args.margin < 1:  # before minutes of prediction
        raise BadMargin(f"--margin {args.margin:g}: a share from 0 to below 1, e.g. 0.1")
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
    if args.write:  # OutputError: the CLI says so and exits 2
        target = expected.write(Path(args.folder), p, args.margin)
        return (f"wrote {target} and {target.with_suffix('.md').name} (thresholds: p5 x"
                f" (1 - {args.margin:g}))\n")  # fmt: skip
    return report.markdown(p) if args.format == "markdown" else report.yaml(p)
