"""`wanka size` (a blueprint from a training goal) and `wanka diff` (what changes between two
blueprints)."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from generator.cli.printing import EXIT_DRIFT, EXIT_INVALID, EXIT_OK, fail, findings


def size(args: argparse.Namespace) -> int:
    from generator import pipeline, sizing, sizing_models
    from generator.blueprint.load import load_text
    from generator.catalog import build_catalog
    from generator.errors import BlueprintError
    from generator.output import OutputError, write_file

    try:
        result = sizing.size(
            params=args.params,
            tokens=args.tokens,
            days=args.days,
            mfu=args.mfu,
            card_tflops=args.card_tflops,
            overhead=args.overhead,
            server=args.server,
            leaf=args.leaf,
            precision=args.precision,
            hbm_gb=args.hbm_gb,
            supernode=args.supernode,
        )
    except sizing.SizingError as err:
        return fail(err)
    for line in result.lines():
        print(line)
    path = Path(args.write or "sized.yaml")
    if args.write and path.is_dir():
        return fail(f"{path} is a folder; give a file name")
    if args.write and path.exists() and not args.force:
        return fail(f"{path} exists; add --force to replace it")
    schema = Path(sizing.__file__).parent / "blueprint" / "wanka-v1.schema.json"
    ref = Path(os.path.relpath(schema, path.resolve().parent)).as_posix()
    try:  # the models and pools `generate` takes, found by expanding as it does
        choice = sizing_models.choose(
            lambda nets: result.blueprint_text(args.name or path.stem, ref, nets),
            lambda text: pipeline.run(load_text(text, str(path)), emit=False),
            build_catalog(),
        )
    except BlueprintError as err:  # the arithmetic stands; the blueprint cannot be built
        print(err.render().replace("<blueprint>", str(path)), file=sys.stderr)
        return EXIT_INVALID if args.write else EXIT_OK
    for line in choice.reasons:
        print(f"switches    {line}")
    if not args.write:
        return EXIT_OK
    if findings(choice.result, False):  # the result was loaded as `path`
        print(
            f"wanka: the sized blueprint fails its design checks; {path} not written",
            file=sys.stderr,
        )
        return EXIT_INVALID
    try:
        write_file(path, choice.text.encode())
    except OutputError as err:
        return fail(err)
    print(f"{path}: written ({result.cards:,} cards); next: wanka generate {path}", file=sys.stderr)
    return EXIT_OK


def diff(args: argparse.Namespace) -> int:
    import tempfile

    from generator import diff, gitshow, pipeline
    from generator.analysis.finding import ERROR
    from generator.errors import BlueprintError

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, spec in enumerate((args.old, args.new)):
            source = Path(spec)
            if not source.is_file():
                folder = Path(tmp) / str(i)
                folder.mkdir()
                try:
                    source = gitshow.show(spec, folder)
                except gitshow.GitError as err:
                    return fail(err)
            try:
                result = pipeline.run(source)
            except BlueprintError as err:
                print(err.render().replace(str(source), spec), file=sys.stderr)
                return EXIT_INVALID
            if any(f.severity == ERROR for f in result.findings):
                findings(result, False, file=spec)
                print(f"{spec}: design checks failed", file=sys.stderr)
                return EXIT_INVALID
            results.append(result)
    report = diff.compare(*results)
    if args.format == "json":
        print(json.dumps(report, indent=1, sort_keys=True))
    else:
        sys.stdout.write(diff.markdown(report))
    failed = report["disturbances"] if args.fail_on == "disturbance" else diff.changed(report)
    return EXIT_DRIFT if failed else EXIT_OK
