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
    from generator.analysis import Finding

EXIT_OK, EXIT_DRIFT, EXIT_INVALID = 0, 1, 2

EPILOG = """\
examples:
  wanka validate blueprints/pod-128.yaml
  wanka generate blueprints/pod-128.yaml              # -> inventories/pod-128/
  wanka generate blueprints/pod-128.yaml --check      # exit 1 and list files that would change
  wanka schema > wanka-v1.schema.json                 # JSON Schema for editors
  wanka catalog                                       # hardware models a blueprint can name
  wanka size --params 1e12 --tokens 1e13 --days 30 --mfu 0.5 --write blueprints/my.yaml

  wanka diff origin/main:blueprints/pod-128.yaml blueprints/pod-128.yaml   # for a PR comment

exit codes: 0 ok, 1 --check found drift or diff found changes, 2 invalid blueprint (FILE:LINE:COL: yaml.path: problem (hint))
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
        "--facts",
        metavar="FILE",
        help="NPU facts collected by roles/npu_facts (A3 SDIDs; default: the blueprint's hccl.facts)",
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

    r = sub.add_parser(
        "ranktable",
        help="write an HCCL rank table for a job, placed on the fewest leaves",
        description="Choose servers for a job (fewest leaves, then fewest pods/supernodes) and write its "
        "HCCL rank table. Prints the servers' spread and the tiers the job's traffic crosses on stderr.",
    )
    _job_arguments(r)
    r.add_argument(
        "-o", "--output", metavar="FILE", help="write the rank table here (default: stdout)"
    )

    pl = sub.add_parser(
        "placement",
        help="which network tier each parallel group of a job crosses",
        description="Lay a job's tp/sp/dp/pp/ep groups over its ranks (tp fastest, then sp, dp, pp) and report "
        "the widest tier each kind crosses; warns when tp, sp or ep leave the server or supernode. "
        "Defaults come from the blueprint's hccl.parallelism.",
    )
    _job_arguments(pl)
    for name, text in (
        ("tp", "tensor"),
        ("pp", "pipeline"),
        ("dp", "data (default: what is left)"),
        ("sp", "sequence"),
        ("ep", "expert"),
    ):
        pl.add_argument(f"--{name}", type=int, metavar="N", help=f"{text} parallel size")

    sz = sub.add_parser(
        "size",
        help="size a cluster from a model and write a starting blueprint",
        description="Work (6 x N x D FLOPs), cards for a training window at an MFU, the memory floor "
        "of weights + gradients + optimizer states, rounded up to whole leaves (or supernodes). "
        "Prints the arithmetic; --write saves a blueprint that validates and generates.",
    )
    sz.add_argument("--params", type=float, required=True, metavar="N", help="model parameters")
    sz.add_argument("--tokens", type=float, required=True, metavar="D", help="training tokens")
    sz.add_argument("--days", type=float, required=True, help="training window in days")
    sz.add_argument("--mfu", type=float, default=0.5, help="model FLOPs utilisation (default 0.5)")
    sz.add_argument(
        "--card-tflops",
        type=float,
        default=300.0,
        metavar="T",
        help="peak dense TFLOPS of one card at --precision (default 300)",
    )
    sz.add_argument(
        "--overhead",
        type=float,
        default=1.3,
        help="factor for restarts, checkpoints and idle time (default 1.3)",
    )
    sz.add_argument("--server", default="atlas-800t-a2", help="NPU server model (catalog name)")
    sz.add_argument("--leaf", help="parameter leaf model (default: the schema's)")
    sz.add_argument(
        "--precision",
        default="bf16",
        choices=("fp32", "bf16", "fp16", "fp8", "mixed"),
        help="training precision; mixed = bf16 + fp32 master weights and moments (default bf16)",
    )
    sz.add_argument(
        "--hbm-gb", type=float, default=64.0, help="HBM per card in GB (default 64) [U]"
    )
    sz.add_argument(
        "--supernode", type=int, default=0, metavar="SERVERS", help="servers per supernode"
    )
    sz.add_argument("--write", metavar="FILE", help="write the starting blueprint here")
    sz.add_argument("--name", help="metadata.name (default: the file name)")
    sz.add_argument("--force", action="store_true", help="replace an existing --write file")

    df = sub.add_parser(
        "diff",
        help="what changes in the build between two blueprints (for pull requests)",
        description="Compare the builds of two blueprints: cables added, removed or re-patched, devices, "
        "addresses, ASNs, ranks and switch configuration lines. Each side is a file or REF:path "
        "read with git show. Exit 1 when something changes, 0 when nothing does, 2 for invalid input.",
    )
    df.add_argument(
        "old", help="blueprint file or REF:path (e.g. origin/main:blueprints/pod-128.yaml)"
    )
    df.add_argument("new", help="blueprint file or REF:path")
    df.add_argument("--format", choices=("md", "json"), default="md", help="output (default md)")

    vf = sub.add_parser(
        "verify",
        help="prove plane isolation, management ACLs, no clear secrets, no NFS in an output folder",
        description="Read a generated folder (switch configs, hosts.yml, hccn files, cabling) and prove "
        "that the parameter, storage, business, in-band and out-of-band planes reach one another "
        "only through the border firewalls, that SSH/SNMP/VTY access is limited by an ACL to the "
        "management pools, that no secret is in clear and that nothing mounts or exports NFS. "
        "Exit 0 when all hold, 1 with each offending file:line (and graph path), 2 for a folder "
        "wanka did not write.",
    )
    vf.add_argument("folders", nargs="+", metavar="folder", help="e.g. inventories/pod-128")

    sub.add_parser("schema", help="print the blueprint JSON Schema (Draft 2020-12)")
    c = sub.add_parser("catalog", help="list hardware models a blueprint can name")
    c.add_argument("--json", action="store_true", help="machine-readable output")
    return p


def _job_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("blueprint", help="blueprint YAML file")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--servers", type=int, metavar="N", help="number of servers")
    size.add_argument(
        "--cards", type=int, metavar="N", help="number of cards (a multiple of NPUs per server)"
    )
    p.add_argument(
        "--hosts", metavar="LIST", help="comma-separated servers to choose from (default: all)"
    )
    p.add_argument("--exclude", metavar="LIST", default="", help="comma-separated drained servers")
    p.add_argument(
        "--facts",
        metavar="FILE",
        help="NPU facts collected by roles/npu_facts (A3 SDIDs; default: the blueprint's hccl.facts)",
    )


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return {
            "generate": _generate,
            "validate": _validate,
            "ranktable": _ranktable,
            "placement": _placement,
            "size": _size,
            "diff": _diff,
            "schema": _schema,
            "verify": _verify,
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
        result = pipeline.run(args.blueprint, progress, facts=args.facts)
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
        output.write(folder, result.files)
    except output.OutputError as err:
        print(f"wanka: {err}", file=sys.stderr)
        return EXIT_INVALID
    progress(f"wrote {len(result.files)} files")
    if not args.quiet:
        print(f"{folder}: {len(result.files)} files written", file=sys.stderr)
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


def _split(text: str | None) -> list[str] | None:
    return None if text is None else [h.strip() for h in text.split(",") if h.strip()]


def _select(args: argparse.Namespace):  # -> (cluster, Selection), or an exit code
    from generator import pipeline
    from generator.errors import BlueprintError
    from generator.placement import RequestError, select_servers

    try:
        cluster = pipeline.run(args.blueprint, emit=False, facts=args.facts).cluster
    except BlueprintError as err:
        print(err.render(), file=sys.stderr)
        return EXIT_INVALID
    count = args.servers
    if args.cards is not None:
        per = len(cluster.npu_servers[0].devices) if cluster.npu_servers else 1
        if args.cards % per or args.cards < 1:
            print(
                f"wanka: --cards {args.cards} is not a whole number of {per}-card servers",
                file=sys.stderr,
            )
            return EXIT_INVALID
        count = args.cards // per
    try:
        return cluster, select_servers(
            cluster, count, _split(args.hosts), _split(args.exclude) or ()
        )
    except RequestError as err:
        print(f"wanka: {err}", file=sys.stderr)
        return EXIT_INVALID


def _ranktable(args: argparse.Namespace) -> int:
    from generator.artifacts import hccl

    chosen = _select(args)
    if isinstance(chosen, int):
        return chosen
    cluster, selection = chosen
    version = hccl.rank_table_version(cluster)
    why = hccl.missing_facts(cluster, selection.servers) if version == "1.2" else ""
    if why:
        print(f"wanka: {why}", file=sys.stderr)
        return EXIT_INVALID
    data = hccl.dumps(hccl.rank_table(selection.servers, version))
    if args.output:
        from generator.output import write_file

        write_file(Path(args.output), data)
    else:
        sys.stdout.write(data.decode())
    print(f"rank table: {selection.summary()}", file=sys.stderr)
    return EXIT_OK


def _placement(args: argparse.Namespace) -> int:
    from generator.placement import RequestError, placement

    chosen = _select(args)
    if isinstance(chosen, int):
        return chosen
    cluster, selection = chosen
    preset = cluster.blueprint["hccl"].get("parallelism", {})
    sizes = {
        k: getattr(args, k) if getattr(args, k) is not None else preset.get(k)
        for k in ("tp", "pp", "dp", "sp", "ep")
    }
    try:
        reports = placement(
            cluster, selection.servers, **{k: v for k, v in sizes.items() if v is not None}
        )
    except RequestError as err:
        print(f"wanka: {err}", file=sys.stderr)
        return EXIT_INVALID
    print(f"job: {selection.summary()}")
    print(f"{'group':<6} {'size':>5} {'groups':>7}  widest tier")
    for r in reports:
        print(f"{r.kind:<6} {r.size:>5} {r.groups:>7}  {r.tier}")
    for r in reports:
        if r.warning:
            print(f"warning: {r.warning}", file=sys.stderr)
    return EXIT_OK


def _size(args: argparse.Namespace) -> int:
    import os
    import tempfile

    from generator import pipeline, sizing
    from generator.errors import BlueprintError
    from generator.output import write_file

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
        print(f"wanka: {err}", file=sys.stderr)
        return EXIT_INVALID
    for line in result.lines():
        print(line)
    if not args.write:
        return EXIT_OK
    path = Path(args.write)
    if path.exists() and not args.force:
        print(f"wanka: {path} exists; add --force to replace it", file=sys.stderr)
        return EXIT_INVALID
    schema = Path(sizing.__file__).parent / "blueprint" / "wanka-v1.schema.json"
    ref = Path(os.path.relpath(schema, path.resolve().parent)).as_posix()
    text = result.blueprint_text(args.name or path.stem, ref)
    with tempfile.TemporaryDirectory() as tmp:  # it must validate and expand before it is written
        trial = Path(tmp) / path.name
        trial.write_text(text, encoding="utf-8")
        try:
            findings = pipeline.run(trial, emit=False).findings
        except BlueprintError as err:
            print(err.render().replace(str(trial), str(path)), file=sys.stderr)
            return EXIT_INVALID
    if _report(findings, False):
        print(
            f"wanka: the sized blueprint fails its design checks; {path} not written",
            file=sys.stderr,
        )
        return EXIT_INVALID
    write_file(path, text.encode())
    print(f"{path}: written ({result.cards:,} cards); next: wanka generate {path}", file=sys.stderr)
    return EXIT_OK


def _git_blueprint(spec: str, folder: Path) -> Path:
    """REF:path from git into `folder` (same file name); ValueError says what is wrong."""
    import subprocess

    ref, _, path = spec.partition(":")
    if not ref or not path:
        raise ValueError(f"{spec}: not a file, nor REF:path")
    try:
        inside = subprocess.run(
            ["git", "rev-parse", "--is-inside-work-tree"], capture_output=True, text=True
        )
    except FileNotFoundError:
        raise ValueError(f"{spec}: git is not installed") from None
    if inside.returncode != 0:
        raise ValueError(f"{spec}: not a file, and {Path.cwd()} is not in a git repository")
    shown = subprocess.run(["git", "show", f"{ref}:{path}"], capture_output=True)
    if shown.returncode != 0:
        raise ValueError(f"{spec}: {shown.stderr.decode(errors='replace').strip()}")
    target = folder / Path(path).name
    target.write_bytes(shown.stdout)
    return target


def _diff(args: argparse.Namespace) -> int:
    import tempfile

    from generator import diff, pipeline
    from generator.errors import BlueprintError

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, spec in enumerate((args.old, args.new)):
            source = Path(spec)
            if not source.is_file():
                folder = Path(tmp) / str(i)
                folder.mkdir()
                try:
                    source = _git_blueprint(spec, folder)
                except ValueError as err:
                    print(f"wanka: {err}", file=sys.stderr)
                    return EXIT_INVALID
            try:
                result = pipeline.run(source)
            except BlueprintError as err:
                print(err.render().replace(str(source), spec), file=sys.stderr)
                return EXIT_INVALID
            if any(f.severity == "error" for f in result.findings):
                _report(result.findings, False)
                print(f"{spec}: design checks failed", file=sys.stderr)
                return EXIT_INVALID
            results.append(result)
    report = diff.compare(*results)
    if args.format == "json":
        print(json.dumps(report, indent=1, sort_keys=True))
    else:
        sys.stdout.write(diff.markdown(report))
    return EXIT_DRIFT if diff.changed(report) else EXIT_OK


def _verify(args: argparse.Namespace) -> int:
    from generator.verify import NotAnOutput, verify

    status = EXIT_OK
    for folder in args.folders:
        try:
            report = verify(Path(folder))
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
            print(
                f"{folder}: verified ({report.switches} switches, {report.hosts} hosts, "
                f"{report.nodes:,} graph nodes; planes isolated, management ACLs, no clear "
                "secrets, no NFS)"
            )
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
