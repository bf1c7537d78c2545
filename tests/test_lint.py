"""The code base stays `ruff check` and `ruff format` clean (config in pyproject.toml)."""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("args", [["check", "."], ["format", "--check", "."]])
def test_ruff(args):
    ruff = shutil.which("ruff")
    assert ruff, "ruff is a test dependency: pip install -e '.[test]'"
    res = subprocess.run([ruff, *args], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def _generator_source() -> list[tuple[Path, ast.AST]]:
    return [(p, ast.parse(p.read_text())) for p in sorted((ROOT / "generator").rglob("*.py"))]


def test_no_generated_code_private_json_names_or_hand_quoted_json_in_the_generator():
    """Serialisation goes through orjson and the json/csv modules' public API (issue #33 item 4):
    no exec/eval, no json.encoder internals, no JSON text made from `%s` forms with the quotes
    placed by hand."""
    found = []
    for path, tree in _generator_source():
        where = path.relative_to(ROOT)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") in ("exec", "eval"):
                found.append(f"{where}:{node.lineno}: {node.func.id}()")
            elif isinstance(node, ast.Attribute) and node.attr in ("encoder", "c_make_encoder"):
                found.append(f"{where}:{node.lineno}: .{node.attr}")
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and re.search(r'"%s"|":%s|"\{[a-z_]+\}"[,:]', node.value)
            ):
                found.append(f"{where}:{node.lineno}: {node.value[:40]!r}")
    assert found == []
