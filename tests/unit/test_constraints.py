"""constraints.txt, the lock the README test command and .ci/run install with (issue #40 item 6):
one exact pin per distribution, every dependency pyproject.toml names pinned within its range, and
in CI (CI=true, after `pip install -c constraints.txt -e '.[test]'`) exactly what is installed:
every distribution the install needs, at its pin, and no pin it does not need."""

from __future__ import annotations

import importlib.metadata
import os
import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
CONSTRAINTS = ROOT / "constraints.txt"


def read_pins(text: str) -> dict[str, Version]:
    """name -> pinned version; a line that is not one exact pin is an error naming the line."""
    pins: dict[str, Version] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        where = f"constraints.txt:{n}: {line!r}"
        try:
            req = Requirement(line)
        except InvalidRequirement as err:
            raise AssertionError(f"{where}: {err}") from None
        (spec, *more) = list(req.specifier) or [None]
        assert spec and not more and spec.operator == "==", f"{where}: not one exact `==` pin"
        assert not (req.extras or req.marker or req.url) and "*" not in spec.version, where
        name = canonicalize_name(req.name)
        assert name not in pins, f"{where}: {name} pinned twice"
        pins[name] = Version(spec.version)
    return pins


def declared() -> list[Requirement]:
    """What pyproject.toml names: the dependencies and the `test` extra."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    return [
        Requirement(r) for r in project["dependencies"] + project["optional-dependencies"]["test"]
    ]


def test_every_dependency_pyproject_names_is_pinned_within_its_range():
    pins = read_pins(CONSTRAINTS.read_text())
    problems = []
    for req in declared():
        pin = pins.get(canonicalize_name(req.name))
        if pin is None:
            problems.append(f"{req}: no pin")
        elif not req.specifier.contains(pin, prereleases=True):
            problems.append(f"{req}: pinned {pin}")
    assert not problems, problems
    assert len(pins) > len(declared())  # their own dependencies too (pip freeze of the install)


def test_a_pin_outside_pyprojects_range_or_not_exact_is_found():
    with pytest.raises(AssertionError, match=r"constraints.txt:2: 'ruff>=0.6': not one exact"):
        read_pins("# comment\nruff>=0.6\n")
    with pytest.raises(AssertionError, match=r"constraints.txt:1: 'pyyaml 6.0.4': "):
        read_pins("pyyaml 6.0.4\n")
    with pytest.raises(AssertionError, match="pyyaml pinned twice"):
        read_pins("PyYAML==6.0.4\npyyaml==6.0.5\n")
    (pyyaml,) = (r for r in declared() if canonicalize_name(r.name) == "pyyaml")
    # 6.0.3 located deep nesting at the wrong bracket (commit 03dba29): pyproject says >= 6.0.4
    assert not pyyaml.specifier.contains(read_pins("PyYAML==6.0.3\n")["pyyaml"])


def needed() -> tuple[dict[str, list[Requirement]], list[str]]:
    """Every distribution the install of pyproject's dependencies and `test` extra brings in, as
    the installed distributions' metadata says (markers evaluated for this Python, extras
    followed), with the requirements that reach it; and what is needed but not installed."""
    reached: dict[str, list[Requirement]] = {}
    missing: set[str] = set()
    seen: set[tuple[str, str]] = set()
    todo = [(req, "") for req in declared()]  # a requirement, and the extra that asked for it
    while todo:
        req, extra = todo.pop()
        if req.marker and not req.marker.evaluate({"extra": extra}):
            continue
        name = canonicalize_name(req.name)
        reached.setdefault(name, []).append(req)
        for wanted in ("", *sorted(req.extras)):
            if (name, wanted) in seen or name in missing:
                continue
            seen.add((name, wanted))
            try:
                requires = importlib.metadata.distribution(name).requires or []
            except importlib.metadata.PackageNotFoundError:
                missing.add(name)
                continue
            todo += [(Requirement(r), wanted) for r in requires]
    return reached, sorted(missing)


def test_what_is_installed_is_the_lock():
    """CI installs with the lock: each needed distribution at its pin, within the range every
    requirement that reaches it gives, and no pin left over. Elsewhere, an install made without
    the lock skips, naming what differs."""
    pins = read_pins(CONSTRAINTS.read_text())
    reached, missing = needed()
    installed = {n: Version(importlib.metadata.version(n)) for n in reached if n not in missing}
    problems = [f"{n}: needed, not installed" for n in missing]
    problems += [f"{n}: needed, not pinned" for n in sorted(set(reached) - set(pins))]
    problems += [f"{n}: pinned, not needed" for n in sorted(set(pins) - set(reached))]
    problems += [
        f"{n}: installed {v}, pinned {pins[n]}"
        for n, v in sorted(installed.items())
        if n in pins and v != pins[n]
    ]
    problems += [
        f"{n} {pins[n]}: outside {req}"
        for n, reqs in sorted(reached.items())
        for req in reqs
        if n in pins and not req.specifier.contains(pins[n], prereleases=True)
    ]
    if problems and os.environ.get("CI") != "true":
        pytest.skip("installed without -c constraints.txt: " + "; ".join(problems[:8]))
    assert not problems, problems


def _readme_test_command() -> str:
    section = (ROOT / "README.md").read_text().split("\n## Test\n", 1)[1]
    return re.search(r"```sh\n(.*?)\n```", section, re.S)[1]


def test_ci_runs_the_readme_test_command_with_the_lock_node_and_a_timeout():
    command = _readme_test_command()
    assert "\n" not in command and "pip install -c constraints.txt -e '.[test]'" in command
    assert command.startswith("npm ci --prefix tests/node ")  # the Mermaid checks' parser
    assert re.search(r"&& timeout (--\S+ )*\d+m pytest$", command), command
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert any(line in (command, command + " || {") for line in ci), "not a line of .ci/run"
