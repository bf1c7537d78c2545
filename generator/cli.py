"""Command line: the only place that prints and picks exit codes (0 ok, 1 drift, 2 bad input)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from generator import __version__

if TYPE_CHECKING:
    from generator.checks import Finding

EXIT_OK, EXIT_DRIFT, EXIT_INVALID = 0, 1, 2

EPILOG = """\
examples:
  wanka validate blueprints/pod-128.yaml
  wanka generate blueprints/pod-128.yaml              # -> inventories/pod-128/
  wanka generate blueprints/pod-128.yaml --check      # exit 1 and list files that would change
  wanka schema > wanka-v1.schema.json                 # JSON Schema for editors
  wanka catalog                                       # hardware models a blueprint can name

exit codes: 0 ok, 1 --check found drift, 2 invalid blueprint (FILE:LINE:COL: yaml.path: problem (hint))
"""


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


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="wanka",
        description="Expand one cluster blueprint into cabling plans, configs, rank tables and inventories.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("--version", action="version", version=f"wanka {__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    g = sub.add_parser(
        "generate",
        help="expand a blueprint into its output folder",
        description="Validate, expand, check and write every artifact of a blueprint.",
    )
    g.add_argument("blueprint", help="blueprint YAML file")
    g.add_argument(
        "-o", "--output", metavar="DIR", help="output folder (default inventories/<metadata.name>)"
    )
    g.add_argument(
        "--check",
        action="store_true",
        help="write nothing; exit 1 and list files that would change",
    )
    g.add_argument(
        "--progress",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="stage progress on stderr (default: when stderr is a terminal)",
    )
    g.add_argument(
        "-q",
        "--quiet",
        action="store_true",
        help="no summary line (warnings and errors still print)",
    )
    g.add_argument(
        "-v", "--verbose", action="store_true", help="also print informational design findings"
    )

    v = sub.add_parser(
        "validate",
        help="check blueprints without writing anything",
        description="Schema, semantic and design checks; writes nothing.",
    )
    v.add_argument("blueprints", nargs="+", metavar="blueprint")
    v.add_argument(
        "-v", "--verbose", action="store_true", help="also print informational design findings"
    )

    sub.add_parser("schema", help="print the blueprint JSON Schema (Draft 2020-12)")
    c = sub.add_parser("catalog", help="list hardware models a blueprint can name")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return {
            "generate": _generate,
            "validate": _validate,
            "schema": _schema,
            "catalog": _catalog,
        }[args.command](args)
    except KeyboardInterrupt:
        print("wanka: interrupted; previous output left as it was", file=sys.stderr)
        return 130


def _report(findings: list[Finding], verbose: bool) -> int:
    """Print design findings on stderr (info only when verbose); return the number of errors."""
    for f in findings:
        if f.severity != "info" or verbose:
            print(f.line(), file=sys.stderr)
    return sum(f.severity == "error" for f in findings)


def _generate(args: argparse.Namespace) -> int:
    from generator import output, pipeline
    from generator.errors import BlueprintError

    show = args.progress if args.progress is not None else sys.stderr.isatty()
    progress = Progress(show)
    try:
        result = pipeline.run(args.blueprint, progress)
    except BlueprintError as err:
        print(err.render(), file=sys.stderr)
        return EXIT_INVALID
    if _report(result.findings, args.verbose):
        print(f"{args.blueprint}: design checks failed; nothing written", file=sys.stderr)
        return EXIT_INVALID
    folder = Path(args.output) if args.output else Path("inventories") / result.cluster.name
    if args.check:
        drift = output.check(folder, result.files)
        for line in drift.lines():
            print(line)
        if drift:
            print(
                f"{folder}: out of date ({len(drift.lines())} files); run wanka generate {args.blueprint}",
                file=sys.stderr,
            )
            return EXIT_DRIFT
        if not args.quiet:
            print(f"{folder}: up to date", file=sys.stderr)
        return EXIT_OK
    try:
        drift = output.write(folder, result.files)
    except output.OutputError as err:
        print(f"wanka: {err}", file=sys.stderr)
        return EXIT_INVALID
    progress(f"wrote {len(result.files)} files")
    if not args.quiet:
        changed = len(drift.lines())
        print(f"{folder}: {len(result.files)} files, {changed} changed", file=sys.stderr)
    return EXIT_OK


def _validate(args: argparse.Namespace) -> int:
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
        if _report(result.findings, args.verbose):
            status = EXIT_INVALID
        else:
            c = result.cluster
            print(f"{path}: valid ({len(c.devices):,} devices, {len(c.links):,} links)")
    return status


def _schema(args: argparse.Namespace) -> int:
    from generator.blueprint.validate import SCHEMA

    print(json.dumps(SCHEMA, indent=2))
    return EXIT_OK


def _catalog(args: argparse.Namespace) -> int:
    from generator.catalog import build_catalog

    cat = build_catalog()
    rows = [
        {"model": m.name, "type": "switch", "description": m.description, "confirmed": m.confirmed}
        for m in cat.switches.values()
    ] + [
        {"model": m.name, "type": m.kind, "description": m.description, "confirmed": m.confirmed}
        for m in cat.hosts.values()
    ]
    if args.json:
        print(json.dumps(rows, indent=2))
        return EXIT_OK
    width = max(len(r["model"]) for r in rows)
    for r in rows:
        mark = "" if r["confirmed"] else "  [unconfirmed]"
        print(f"{r['model']:<{width}}  {r['type']:<15}  {r['description']}{mark}")
    return EXIT_OK
