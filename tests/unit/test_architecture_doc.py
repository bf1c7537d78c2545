"""docs/architecture.md says how the code is laid out today (#44 item 7): every path it names
exists, and its layer line is the order .importlinter enforces."""

from __future__ import annotations

import configparser
import re

from tests.support.examples import ROOT

DOC = ROOT / "docs" / "architecture.md"
# a path in backticks: a folder ending in `/`, or a file with an extension (`.importlinter` too)
PATH = re.compile(r"`((?:[\w.-]+/)+(?:[\w.-]+\.\w+)?|\.[\w-]+|[\w-]+\.(?:py|md|yaml|json|j2))`")


def test_every_path_the_architecture_page_names_exists():
    named = set(PATH.findall(DOC.read_text(encoding="utf-8")))
    assert len(named) > 30, sorted(named)  # the page names the layout, file by file
    missing = sorted(p for p in named if not (ROOT / p).exists())
    assert missing == [], f"docs/architecture.md names paths that do not exist: {missing}"


def test_the_architecture_page_states_the_enforced_layers():
    config = configparser.ConfigParser()
    config.read(ROOT / ".importlinter")
    enforced = [
        name.removeprefix("generator.")
        for name in config["importlinter:contract:layers"]["layers"].split()
    ]
    line = " > ".join(enforced)
    assert f"\n{line}\n" in DOC.read_text(encoding="utf-8"), line
