"""The one exception type for user mistakes, carrying YAML locations."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

YamlPath = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong with a blueprint, located by its YAML path."""

    path: YamlPath
    message: str
    hint: str = ""
    line: int | None = None  # 1-based; filled from the loaded document's positions
    column: int | None = None


def format_path(path: YamlPath) -> str:
    """`('networks', 'parameter', 'pool')` -> `networks.parameter.pool`; list items as `[3]`."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(document)"


def position(
    positions: Mapping[YamlPath, tuple[int, int]], path: YamlPath
) -> tuple[int | None, int | None]:
    """Line and column of a YAML path, or of its nearest located ancestor (a default the
    blueprint leaves out is located at the section that would hold it)."""
    while path and path not in positions:
        path = path[:-1]
    return positions.get(path, (None, None))


def located(file: str, positions: Mapping[YamlPath, tuple[int, int]], path: YamlPath) -> str:
    """`FILE:LINE:COL: yaml.path` of a path in a loaded blueprint (`FILE` when unlocated)."""
    line, col = position(positions, path)
    where = file if line is None else f"{file}:{line}:{col or 1}"
    return f"{where}: {format_path(path)}"


class BlueprintError(Exception):
    """A blueprint that cannot be turned into a cluster. The CLI prints every problem, exits 2."""

    def __init__(self, problems: Sequence[Problem], file: str | None = None) -> None:
        self.problems = list(problems)
        self.file = file
        super().__init__(self.render())

    def locate(self, file: str, positions: Mapping[YamlPath, tuple[int, int]]) -> BlueprintError:
        """Attach file and line/column (nearest located ancestor of each path). An error that
        already names its file (one about another input, e.g. the NPU facts) is kept as it is."""
        if self.file:
            return self
        located = []
        for p in self.problems:
            line, col = (p.line, p.column) if p.line is not None else position(positions, p.path)
            located.append(Problem(p.path, p.message, p.hint, line=line, column=col))
        return BlueprintError(located, file)

    def render(self) -> str:
        lines = []
        for p in self.problems:
            where = self.file or "<blueprint>"
            if p.line is not None:
                where += f":{p.line}:{p.column or 1}"
            text = f"{where}: {format_path(p.path)}: {p.message}"
            if p.hint:
                text += f" ({p.hint})"
            lines.append(text)
        return "\n".join(lines)


def os_error(err: OSError) -> str:
    """`cannot write out/x: Permission denied` from an OSError, without a traceback."""
    names = " -> ".join(str(f) for f in (err.filename, err.filename2) if f is not None)
    if not names and (gone := _gone_cwd()) is not None:  # os.getcwd() failed: ENOENT, no name
        return (
            f"the working folder {gone} no longer exists (deleted or moved); cd to one that exists"
        )
    return f"{names}: {err.strerror or err}" if names else str(err.strerror or err)


def _gone_cwd() -> str | None:
    """The working folder's path when it has been deleted (os.getcwd fails), else None: as the
    kernel names it (/proc/self/cwd: `PATH (deleted)`), else as the shell left it in $PWD."""
    try:
        os.getcwd()
        return None
    except FileNotFoundError:
        pass
    try:
        return os.readlink("/proc/self/cwd").removesuffix(" (deleted)")
    except OSError:
        return os.environ.get("PWD") or "(its name is unknown)"
