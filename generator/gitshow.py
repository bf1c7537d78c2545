"""Read `REF:path` from git for `wanka diff`, without letting the argument become a git option.

`git show <arg>` takes an argument starting with `-` as an option (`--output=FILE` writes a
file), so a ref or path starting with `-` is refused, the object name is resolved with
`git rev-parse --verify --end-of-options` (an option after it is a name, git >= 2.24) and the
blob is read with `git cat-file blob <object id>`, where the id is 40 (or 64) hex digits.
Git never runs a pager or asks for input here: stdin is closed and GIT_PAGER is cat.
"""

from __future__ import annotations

import os
import posixpath
import re
import subprocess
from pathlib import Path

from generator.blueprint.load import load_text
from generator.errors import BlueprintError
from generator.verify.report import printable

MAX_BYTES = 4 * 1024 * 1024  # the blueprint loader's limit; git output beyond it is refused
_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


class GitError(ValueError):
    """A REF:path that cannot be read; the message says why."""


def split_spec(spec: str) -> tuple[str, str]:
    """`REF:path` -> (ref, path); GitError when it is not one, or a part starts with `-`."""
    if not spec:
        raise GitError("'' (an empty argument): not a file, nor REF:path; give OLD and NEW")
    ref, _, path = spec.partition(":")
    shown = printable(spec)  # one line on the terminal, whatever the argument holds
    if not ref or not path:
        raise GitError(f"{shown}: not a file, nor REF:path")
    for part, word in ((ref, "ref"), (path, "path")):
        if part.startswith("-"):
            raise GitError(
                f"{shown}: a {word} cannot start with '-' (it would be read as an option)"
            )
        if "\0" in part or "\n" in part:
            raise GitError(f"{shown}: a {word} cannot hold a NUL or line break")
    return ref, path


def show(spec: str, folder: Path) -> Path:
    """The file REF:path written into `folder` at its path in the tree, and the NPU facts file
    its hccl.facts names, when relative, from the same tree at REF beside it (as `wanka
    generate` reads it beside the blueprint's own location); GitError says what is wrong."""
    ref, path = split_spec(spec)
    data = _blob(spec, ref, path)
    full = _in_tree(spec, path)
    target = _write(folder, full, data)
    facts = _facts_of(data, spec)
    if facts and not posixpath.isabs(facts):
        if "\0" in facts or "\n" in facts:
            raise GitError(f"{printable(spec)}: hccl.facts cannot hold a NUL or line break")
        at = posixpath.normpath(posixpath.join(posixpath.dirname(full), facts))
        if at == ".." or at.startswith("../"):
            raise GitError(
                f"{printable(spec)}: hccl.facts {printable(facts)} is outside the repository"
            )
        _write(folder, at, _blob(f"{ref}:{at}", ref, at))
    return target


def _blob(spec: str, ref: str, path: str) -> bytes:
    oid = _git(spec, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}:{path}")
    oid = oid.decode("ascii", errors="replace").strip()
    if not _OBJECT_ID.fullmatch(oid):
        raise GitError(f"{printable(spec)}: git gave no object id for it")
    return _git(spec, "cat-file", "blob", oid)


def _in_tree(spec: str, path: str) -> str:
    """`path` of REF:path from the top of the tree: git reads `./x` and `../x` from the current
    folder (its prefix in the work tree), any other path from the top (gitrevisions(7))."""
    if path.startswith(("./", "../")):
        prefix = _git(spec, "rev-parse", "--show-prefix").decode(errors="replace").strip()
        path = posixpath.join(prefix, path)
    full = posixpath.normpath(path)
    if full in ("", ".") or full == ".." or full.startswith(("../", "/")):
        raise GitError(f"{printable(spec)}: not a file path")
    return full


def _write(folder: Path, path: str, data: bytes) -> Path:
    target = folder.joinpath(*path.split("/"))
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target


def _facts_of(data: bytes, spec: str) -> str | None:
    """hccl.facts of a blueprint, when it loads (else the pipeline reports what is wrong)."""
    try:
        loaded = load_text(data, spec)
    except BlueprintError:
        return None
    hccl = loaded.data.get("hccl")
    facts = hccl.get("facts") if isinstance(hccl, dict) else None
    return facts if isinstance(facts, str) and facts else None


def _git(spec: str, *args: str) -> bytes:
    env = {**os.environ, "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"}
    try:
        done = subprocess.run(
            ["git", *args], capture_output=True, stdin=subprocess.DEVNULL, env=env, timeout=60
        )
    except FileNotFoundError:
        raise GitError(f"{printable(spec)}: git is not installed") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"{printable(spec)}: git did not answer within 60 s") from None
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        reason = said[-1] if said else f"no such ref or path (git exit {done.returncode})"
        if "not a git repository" in reason:
            reason = f"not a file, and {Path.cwd()} is not in a git repository"
        raise GitError(f"{printable(spec)}: {reason}")
    if len(done.stdout) > MAX_BYTES:
        raise GitError(f"{printable(spec)}: larger than {MAX_BYTES:,} bytes; not a blueprint")
    return done.stdout
