"""`wanka generate` (and `--check`) and `wanka validate`: the pipeline run on a blueprint."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.cli.printing import EXIT_DRIFT, EXIT_INVALID, EXIT_OK, Progress, fail, findings


def generate(args: argparse.Namespace) -> int:
    from generator import output

    show = args.progress if args.progress is not None else sys.stderr.isatty()
    progress = Progress(show)
    if args.check:
        return _check(args, progress)
    with output.Staging(args.output) as sink:  # files are written into it as they are made
        result = _generated(args, progress, sink)
        if isinstance(result, int):
            return result
        try:
            sink.commit(result.written)  # nothing is in place before this
        except output.OutputError as err:
            return fail(err)
    count = len(result.written)
    progress(f"wrote {count} files")
    if not args.quiet:
        print(f"{_folder(args, result.cluster)}: {count} files written", file=sys.stderr)
    return EXIT_OK


def _check(args: argparse.Namespace, progress: Progress) -> int:
    """generate --check: what writing would change, listed; exit 1 on drift."""
    from generator import output

    result = _generated(args, progress)
    if isinstance(result, int):
        return result
    folder = _folder(args, result.cluster)
    drift = output.check(folder, result.files)
    for line in drift.lines():
        print(line)
    if drift:
        print(
            f"{folder}: out of date ({len(drift.lines())} files); "
            f"run wanka generate {args.blueprint}",
            file=sys.stderr,
        )
        return EXIT_DRIFT
    if not args.quiet:
        print(f"{folder}: up to date", file=sys.stderr)
    return EXIT_OK


def _folder(args: argparse.Namespace, cluster) -> Path:
    from generator.output import folder_for

    return folder_for(args.output, cluster.name)


def _generated(args: argparse.Namespace, progress: Progress, sink=None):
    """pipeline.run's result for generate, or the exit code after its message (bad blueprint,
    output folder not wanka's, failed design checks)."""
    from generator import output, pipeline
    from generator.errors import BlueprintError

    try:
        result = pipeline.run(args.blueprint, progress, facts=args.facts, sink=sink)
    except BlueprintError as err:
        print(err.render(), file=sys.stderr)
        return EXIT_INVALID
    except output.OutputError as err:
        return fail(err)
    if findings(result, args.verbose, args.strict, quiet=args.quiet):
        strict = " (--strict: warnings fail too)" if args.strict else ""
        print(f"{args.blueprint}: design checks failed{strict}; nothing written", file=sys.stderr)
        return EXIT_INVALID
    return result


def validate(args: argparse.Namespace) -> int:
    from generator import pipeline
    from generator.errors import BlueprintError

    status = EXIT_OK
    for path in args.blueprints:
        try:
            result = pipeline.run(path, emit=False)
        except BlueprintError as err:
            print(err.render(), file=sys.stderr)
            status = EXIT_INVALID
            continue
        if findings(result, args.verbose, args.strict):
            status = EXIT_INVALID
        else:
            c = result.cluster
            print(f"{path}: valid ({len(c.devices):,} devices, {len(c.links):,} links)")
    return status
