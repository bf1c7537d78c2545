"""`wanka ranktable` and `wanka placement`: a job's servers chosen from the built cluster."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from generator.cli.printing import EXIT_INVALID, EXIT_OK, fail


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
            return fail(f"--cards {args.cards} is not a whole number of {per}-card servers")
        count = args.cards // per
    try:
        return cluster, select_servers(
            cluster, count, _split(args.hosts), _split(args.exclude) or ()
        )
    except RequestError as err:
        return fail(err)


def ranktable(args: argparse.Namespace) -> int:
    from generator.artifacts import hccl

    chosen = _select(args)
    if isinstance(chosen, int):
        return chosen
    cluster, selection = chosen
    version = hccl.rank_table_version(cluster)
    why = hccl.missing_facts(cluster, selection.servers) if version == "1.2" else ""
    if why:
        return fail(why)
    data = hccl.dumps(hccl.rank_table(selection.servers, version))
    if args.output:
        from generator.output import OutputError, write_file

        try:
            write_file(Path(args.output), data)
        except OutputError as err:
            return fail(err)
    else:
        sys.stdout.write(data.decode())
    print(f"rank table: {selection.summary()}", file=sys.stderr)
    return EXIT_OK


def placement(args: argparse.Namespace) -> int:
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
        return fail(err)
    print(f"job: {selection.summary()}")
    print(f"{'group':<6} {'size':>5} {'groups':>7}  widest tier")
    for r in reports:
        print(f"{r.kind:<6} {r.size:>5} {r.groups:>7}  {r.tier}")
    for r in reports:
        if r.warning:
            print(f"warning: {r.warning}", file=sys.stderr)
    return EXIT_OK
