"""Error cases as data (issue #33 item 6, as netlab's tests/errors/*.yml -> *.log): each
tests/errors/<kind>/<case>.yaml is a blueprint `wanka validate` refuses or warns about, and
<case>.txt beside it is what the user sees: `exit N` on the first line, then stderr exactly, with
the case's folder left out of the paths (as when run inside that folder). A facts file a case
names (hccl.facts) sits beside it as <case>.yml.

Run in this process through generator.cli.main. After a deliberate message change,
`python -m tests.faults.test_error_goldens --update` (or WANKA_UPDATE_GOLDENS=1 pytest ...) rewrites
the .txt files, so the change shows in review as a diff of the message. Properties that are not a
message (no traceback, nothing written, time) stay in the Python tests (test_cli,
test_blueprint_load).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from pathlib import Path

import pytest

from generator.cli import main

ERRORS = Path(__file__).resolve().parents[1] / "errors"
CASES = sorted(ERRORS.glob("*/*.yaml"))
UPDATE = os.environ.get("WANKA_UPDATE_GOLDENS") == "1"


def seen(case: Path) -> str:
    """`exit N` and stderr of `wanka validate <case>.yaml` run in the case's folder."""
    err = io.StringIO()
    cwd = os.getcwd()
    os.chdir(case.parent)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main(["validate", case.name])
    finally:
        os.chdir(cwd)
    return f"exit {code}\n" + err.getvalue().replace(f"{case.parent}{os.sep}", "")


def _id(case: Path) -> str:
    return f"{case.parent.name}/{case.stem}"


def _heavy_slow(cases: list[Path]) -> list:
    """The 65,536-card cases expand a whole large cluster (~5 s): slow, run in CI."""
    return [pytest.param(c, marks=pytest.mark.slow) if "65536" in c.stem else c for c in cases]


@pytest.mark.parametrize("case", _heavy_slow(CASES), ids=_id)
def test_error_message_is_the_expected_text(case: Path) -> None:
    golden = case.with_suffix(".txt")
    got = seen(case)
    if UPDATE:
        golden.write_text(got, encoding="utf-8")
    assert golden.is_file(), (
        f"{golden.name} missing: python -m tests.faults.test_error_goldens --update"
    )
    assert got == golden.read_text(encoding="utf-8")


def test_every_expected_text_has_its_case_and_enough_cases_exist() -> None:
    texts = sorted(ERRORS.glob("*/*.txt"))
    assert [t.with_suffix(".yaml") for t in texts] == CASES
    assert len(CASES) >= 60
    kinds = {c.parent.name for c in CASES}
    assert {"bad-input", "schema", "semantic", "expand", "checks", "facts", "catalog"} <= kinds


def update(names: list[str]) -> int:
    """Rewrite the .txt of every case (or of those named); print the ones that changed."""
    changed = 0
    for case in CASES:
        if names and _id(case) not in names and case.stem not in names:
            continue
        golden = case.with_suffix(".txt")
        got = seen(case)
        if not golden.is_file() or golden.read_text(encoding="utf-8") != got:
            golden.write_text(got, encoding="utf-8")
            print(f"updated {golden.relative_to(ERRORS.parent.parent)}")
            changed += 1
    print(f"{changed} of {len(CASES)} expected texts changed")
    return 0


if __name__ == "__main__":
    args = sys.argv[1:]
    if "--update" not in args:
        sys.exit("usage: python -m tests.faults.test_error_goldens --update [KIND/CASE ...]")
    sys.exit(update([a for a in args if a != "--update"]))
