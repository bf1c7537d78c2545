"""`wanka schema`, `wanka catalog`, `wanka ansible-path` and `wanka site`: what wanka ships, and
a site's starting folder."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from generator.cli.printing import EXIT_INVALID, EXIT_OK, fail


def ansible_path(args: argparse.Namespace) -> int:
    from generator.collection import ansible_collection

    try:
        print(ansible_collection())
    except FileNotFoundError as err:  # a broken install: say so, no traceback
        return fail(f"{err}; reinstall wanka")
    return EXIT_OK


def site(args: argparse.Namespace) -> int:
    from generator.site import SiteError, init

    try:
        site, files = init(Path(args.folder), force=args.force)
    except SiteError as err:
        return fail(err)
    print(f"{site}: {len(files)} files written; fill the empty values", file=sys.stderr)
    return EXIT_OK


def schema(args: argparse.Namespace) -> int:
    from generator.blueprint.validate import SCHEMA

    print(json.dumps(SCHEMA, indent=2))
    return EXIT_OK


def catalog(args: argparse.Namespace) -> int:
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
