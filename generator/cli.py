"""Command line: the only place that prints and picks exit codes (0 ok, 1 drift, 2 bad input)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from generator import arguments

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

        return _fail(os_error(err))


EXIT_PIPE = 141  # as a shell reports a command ended by SIGPIPE (128 + 13)


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot raise again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no real file descriptor (stdout captured in-process)
        pass


def _ansible_path(args: argparse.Namespace) -> int:
    from generator.collection import ansible_collection

    try:
        print(ansible_collection())
    except FileNotFoundError as err:  # a broken install: say so, no traceback
        return _fail(f"{err}; reinstall wanka")
    return EXIT_OK


def _fail(error: object) -> int:
    """`wanka: <error>` on stderr; the exit code of bad input."""
    print(f"wanka: {error}", file=sys.stderr)
    return EXIT_INVALID


def _report(
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


def _generate(args: argparse.Namespace) -> int:
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
            return _fail(err)
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
        return _fail(err)
    if _report(result, args.verbose, args.strict, quiet=args.quiet):
        strict = " (--strict: warnings fail too)" if args.strict else ""
        print(f"{args.blueprint}: design checks failed{strict}; nothing written", file=sys.stderr)
        return EXIT_INVALID
    return result


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
        if _report(result, args.verbose, args.strict):
            status = EXIT_INVALID
        else:
            c = result.cluster
            print(f"{path}: valid ({len(c.devices):,} devices, {len(c.links):,} links)")
    return status


def _split(text: str | None) -> list[str] | None:
    return None if text is None else [h.strip() for h in text.split(",") if h.strip()]


def _select(args: argparse.Namespace):  # -> (cluster, Selection), or an exit code
    from generator import pipeline
    from generator.analysis.placement import RequestError, select_servers
    from generator.errors import BlueprintError

    try:
        cluster = pipeline.run(args.blueprint, emit=False, facts=args.facts).cluster
    except BlueprintError as err:
        print(err.render(), file=sys.stderr)
        return EXIT_INVALID
    count = args.servers
    if args.cards is not None:
        per = cluster.cards_per_server or 1  # cards, not dies (an A3 card has two)
        if args.cards % per or args.cards < 1:
            return _fail(f"--cards {args.cards} is not a whole number of {per}-card servers")
        count = args.cards // per
    try:
        return cluster, select_servers(
            cluster, count, _split(args.hosts), _split(args.exclude) or ()
        )
    except RequestError as err:
        return _fail(err)


def _ranktable(args: argparse.Namespace) -> int:
    from generator.artifacts import hccl

    chosen = _select(args)
    if isinstance(chosen, int):
        return chosen
    cluster, selection = chosen
    version = hccl.rank_table_version(cluster)
    why = hccl.missing_facts(cluster, selection.servers) if version == "1.2" else ""
    if why:
        return _fail(why)
    data = hccl.dumps(hccl.rank_table(selection.servers, version))
    if args.output:
        from generator.output import OutputError, write_file

        try:
            write_file(Path(args.output), data)
        except OutputError as err:
            return _fail(err)
    else:
        sys.stdout.write(data.decode())
    print(f"rank table: {selection.summary()}", file=sys.stderr)
    return EXIT_OK


def _placement(args: argparse.Namespace) -> int:
    from generator.analysis.placement import RequestError, placement

    chosen = _select(args)
    if isinstance(chosen, int):
        return chosen
    cluster, selection = chosen
    preset = cluster.settings.parallelism  # the blueprint's hccl.parallelism
    sizes = {
        k: getattr(args, k) if getattr(args, k) is not None else preset.get(k)
        for k in ("tp", "pp", "dp", "sp", "ep")
    }
    try:
        reports = placement(
            cluster, selection.servers, **{k: v for k, v in sizes.items() if v is not None}
        )
    except RequestError as err:
        return _fail(err)
    print(f"job: {selection.summary()}")
    print(f"{'group':<6} {'size':>5} {'groups':>7}  widest tier")
    for r in reports:
        print(f"{r.kind:<6} {r.size:>5} {r.groups:>7}  {r.tier}")
    for r in reports:
        if r.warning:
            print(f"warning: {r.warning}", file=sys.stderr)
    return EXIT_OK


def _size(args: argparse.Namespace) -> int:
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
        return _fail(err)
    for line in result.lines():
        print(line)
    path = Path(args.write or "sized.yaml")
    if args.write and path.is_dir():
        return _fail(f"{path} is a folder; give a file name")
    if args.write and path.exists() and not args.force:
        return _fail(f"{path} exists; add --force to replace it")
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
    if _report(choice.result, False):  # the result was loaded as `path`
        print(
            f"wanka: the sized blueprint fails its design checks; {path} not written",
            file=sys.stderr,
        )
        return EXIT_INVALID
    try:
        write_file(path, choice.text.encode())
    except OutputError as err:
        return _fail(err)
    print(f"{path}: written ({result.cards:,} cards); next: wanka generate {path}", file=sys.stderr)
    return EXIT_OK


def _diff(args: argparse.Namespace) -> int:
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
                    return _fail(err)
            try:
                result = pipeline.run(source)
            except BlueprintError as err:
                print(err.render().replace(str(source), spec), file=sys.stderr)
                return EXIT_INVALID
            if any(f.severity == ERROR for f in result.findings):
                _report(result, False, file=spec)
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


def _verify(args: argparse.Namespace) -> int:
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


def _site(args: argparse.Namespace) -> int:
    from generator.site import SiteError, init

    try:
        site, files = init(Path(args.folder), force=args.force)
    except SiteError as err:
        return _fail(err)
    print(f"{site}: {len(files)} files written; fill the empty values", file=sys.stderr)
    return EXIT_OK


def _schema(args: argparse.Namespace) -> int:
    from generator.blueprint.validate import SCHEMA

    print(json.dumps(SCHEMA, indent=2))
    return EXIT_OK


def _catalog(args: argparse.Namespace) -> int:
    from generator.catalog import build_catalog, show
    from generator.verify import printable

    cat = build_catalog()
    if args.model and args.model not in (*cat.switches, *cat.hosts):
        near = ", ".join(show.close_names(cat, args.model)) or "none; `wanka catalog` lists all"
        print(
            f"wanka: {printable(args.model)}: no catalog model of that name (close names: {near})",
            file=sys.stderr,
        )
        return EXIT_INVALID
    data = show.describe(cat, args.model) if args.model else show.listing(cat)
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        print(show.text(data) if args.model else show.listing_text(data), end="")
    return EXIT_OK


def _twin(args: argparse.Namespace) -> int:
    """`wanka twin`: its result printed, its progress on stderr as it goes."""
    from generator import twin

    label = "twin prove" if args.twin_command == "prove" else "twin"

    def say(message: str) -> None:
        print(f"{label}: {message}", file=sys.stderr, flush=True)

    try:
        done = twin.main(args, say)
    except twin.Stop as err:
        print(f"wanka: {err}", file=sys.stderr)
        return EXIT_INVALID
    except twin.TakenDown:
        print("wanka: interrupted; the twin was taken down", file=sys.stderr)
        return EXIT_INTERRUPTED
    print(done.text, end="")
    if done.status is not None:  # `twin exec`: the command's own
        return done.status
    return EXIT_DRIFT if done.failed else EXIT_OK


def _predict(args: argparse.Namespace) -> int:
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


_COMMANDS = {
    "generate": _generate,
    "validate": _validate,
    "ranktable": _ranktable,
    "placement": _placement,
    "size": _size,
    "diff": _diff,
    "schema": _schema,
    "verify": _verify,
    "site": _site,
    "catalog": _catalog,
    "ansible-path": _ansible_path,
    "twin": _twin,
    "predict": _predict,
}
