"""Hostile drawn blueprints (issue #31 Done-when): a valid blueprint of any drawn shape
(tests/support/blueprint_strategies.py, at most 16 servers so that each case costs a validate, not a
large expand) mutated by Hypothesis: wrong types, huge and negative numbers, NaN, unicode, template
and shell strings, deleted and extra keys. `wanka validate` of each, in this process: no
traceback, no hang (a SIGALRM deadline per case), exit 0 with the `valid` line, or exit 2 with
every error located (`FILE:LINE:COL: yaml.path: ...`), and nothing written beside the blueprint.

Examples: 2,000 under the `ci` Hypothesis profile (CI=true), 25 otherwise (max_examples,
tests/support/profiles.py).
Measured: 2,000 examples in 283 s wall clock (46 s of CPU) on the shared 2-core machine.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import signal
import tempfile
from pathlib import Path

import pytest
from hypothesis import event, given, settings

from generator.cli import main
from tests.support.blueprint_strategies import Drawn, hostile_blueprints
from tests.support.profiles import max_examples

pytestmark = pytest.mark.slow
CASE_SECONDS = 30  # one validate of at most 16 servers takes well under a second
_DIR = Path(tempfile.mkdtemp(prefix="wanka-drawn-"))


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang(f"validate ran longer than {CASE_SECONDS} s")


def _validate(path: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(CASE_SECONDS)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["validate", str(path)])
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return code, out.getvalue(), err.getvalue()


def check(case: Drawn, folder: Path = _DIR) -> int:
    path = folder / "blueprint.yaml"
    path.write_text(case.text, encoding="utf-8", errors="surrogatepass")
    before = set(os.listdir(folder))
    code, out, err = _validate(path)
    assert "Traceback" not in err, err
    assert code in (0, 2), (code, err)
    if code == 0:
        assert out.startswith(f"{path}: valid ("), out
    else:
        located = re.compile(rf"^{re.escape(str(path))}:\d+:\d+: ")  # FILE:LINE:COL: yaml.path
        assert any(located.match(line) for line in err.splitlines()), err
        errors = [x for x in err.splitlines() if "error" in x and "design checks failed" not in x]
        unlocated = [x for x in errors if not x.startswith(f"{path}:")]
        assert not unlocated, err
    assert set(os.listdir(folder)) == before, "something was written beside the blueprint"
    return code


@settings(max_examples=max_examples(2000, 25))
@given(hostile_blueprints())
def test_hostile_drawn_blueprints_are_valid_or_refused_located(case):
    event(f"exit {check(case)}")  # --hypothesis-show-statistics: how many were accepted


def test_the_drawn_mutations_both_pass_and_fail():
    """The property meets both outcomes: some mutations are refused, some (a deleted key with a
    default, a string that stays a valid value) leave a blueprint that validates."""
    from hypothesis import Phase, find

    # about 1 mutation in 28 still validates (--hypothesis-show-statistics: 3.6 % exit 0): 200
    # draws missed one in a full run; `find` stops at the first, so 2,000 cost only when unlucky
    quick = settings(database=None, phases=[Phase.generate], max_examples=2000)
    for code in (0, 2):
        found = find(hostile_blueprints(), lambda c, code=code: check(c) == code, settings=quick)
        assert found.shape["mutations"]
