"""Compiled templates are kept between runs in the user's cache folder (generator.render), and a
run without a usable cache folder renders the same bytes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jinja2.bccache

ROOT = Path(__file__).resolve().parents[1]
# renders an autoescaped page template with markup in its data; prints the cache and the page
RENDER = """
from generator import render
row = dict(y1=1, y2=2, text="<row & 1>", where="y 0")
rack = dict(x=0, y=0, w=1, h=1, fill="#fff", tx=0, ty=0, text="T01-01", title="T01-01")
page = render.render("docs/floor.svg.j2", racks=[rack], rows=[row], cdus=[], width=9, height=9)
render.template("switches/huawei-ce/switch.cfg.j2")
print(type(render.environment().bytecode_cache).__name__, repr(page))
"""


def _render(env: dict[str, str]) -> str:
    run = subprocess.run(
        [sys.executable, "-c", RENDER],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return run.stdout.strip()


def test_templates_compiled_once_are_read_back_from_the_cache_folder(tmp_path):
    first = _render({"XDG_CACHE_HOME": str(tmp_path)})
    assert "&lt;row &amp; 1&gt;" in first  # escaped when compiled ...
    cached = sorted((tmp_path / "wanka").glob("templates-*/__jinja2_*.cache"))
    assert first.startswith("_QuietBytecodeCache ") and len(cached) >= 2
    stamps = {p: p.stat().st_mtime_ns for p in cached}
    assert _render({"XDG_CACHE_HOME": str(tmp_path)}) == first  # ... and when read back
    assert {p: p.stat().st_mtime_ns for p in cached} == stamps  # read, not written again


def test_without_a_usable_cache_folder_templates_are_compiled_each_run(tmp_path):
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("")
    reference = _render({"XDG_CACHE_HOME": str(tmp_path / "ok")}).split(" ", 1)[1]
    assert _render({"XDG_CACHE_HOME": str(blocked)}) == f"NoneType {reference}"
    # a relative XDG_CACHE_HOME is ignored (XDG Base Directory spec); the home is not a folder
    no_home = _render({"XDG_CACHE_HOME": "relative/path", "HOME": str(blocked)})
    assert no_home == f"NoneType {reference}"


def test_a_damaged_cache_file_is_compiled_again(tmp_path):
    first = _render({"XDG_CACHE_HOME": str(tmp_path)})
    cached = sorted((tmp_path / "wanka").glob("templates-*/__jinja2_*.cache"))
    header = len(jinja2.bccache.bc_magic)
    for path in cached:  # Jinja2's header kept, the pickled checksum after it cut short
        path.write_bytes(path.read_bytes()[: header + 2])
    assert _render({"XDG_CACHE_HOME": str(tmp_path)}) == first
