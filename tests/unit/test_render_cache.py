"""Compiled templates live in memory only (generator.render): nothing a run finds in the user's
cache folder is loaded, so a pickle planted where the on-disk cache used to be runs no code."""

from __future__ import annotations

import hashlib
import os
import pickle
import subprocess
import sys
from pathlib import Path

import jinja2
import jinja2.bccache

ROOT = Path(__file__).resolve().parents[2]
# renders an autoescaped page template with markup in its data, and a switch config template
# twice; prints whether the second is the compiled object of the first, and the page
RENDER = """
from generator import render
row = dict(y1=1, y2=2, text="<row & 1>", where="y 0")
rack = dict(x=0, y=0, w=1, h=1, fill="#fff", tx=0, ty=0, text="T01-01", title="T01-01")
page = render.render("docs/floor.svg.j2", racks=[rack], rows=[row], cdus=[], width=9, height=9)
same = render.template("switches/huawei-ce/switch.cfg.j2") is render.template("switches/huawei-ce/switch.cfg.j2")
print(render.environment().bytecode_cache, same, repr(page))
"""


class _Planted:
    """What a planted cache file unpickles to: a call that creates `marker`."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.makedirs, (str(self.marker),))


def _render(cache_home: Path) -> str:
    run = subprocess.run(
        [sys.executable, "-c", RENDER],
        cwd=ROOT,
        env={**os.environ, "XDG_CACHE_HOME": str(cache_home), "HOME": str(cache_home)},
        capture_output=True,
        text=True,
        check=True,
    )
    return run.stdout.strip()


def _plant(cache_home: Path, marker: Path) -> list[Path]:
    """A Jinja2 bytecode cache file (its header, then a pickle that runs code) for each template
    rendered, named as jinja2.FileSystemBytecodeCache names it (sha1 of the template name), in
    the folder the on-disk cache used ($XDG_CACHE_HOME/wanka/templates-jinja<version>-<python>-
    <sha256 of the environment's settings>, as generator/render.py had it until this test)."""
    settings = (True, True, True, ("html.j2", "svg.j2", "html", "svg"))
    key = hashlib.sha256(repr(settings).encode()).hexdigest()[:12]
    name = f"templates-jinja{jinja2.__version__}-{sys.implementation.cache_tag}-{key}"
    folder = cache_home / "wanka" / name
    folder.mkdir(parents=True)
    payload = jinja2.bccache.bc_magic + pickle.dumps(_Planted(marker))
    planted = []
    for template in ("docs/floor.svg.j2", "switches/huawei-ce/switch.cfg.j2"):
        path = folder / f"__jinja2_{jinja2.bccache.BytecodeCache().get_cache_key(template)}.cache"
        path.write_bytes(payload)
        planted.append(path)
    return planted


def test_templates_compile_once_per_process_and_nothing_is_written_to_disk(tmp_path):
    out = _render(tmp_path)
    cache, same, page = out.split(" ", 2)
    assert cache == "None" and same == "True"
    assert "&lt;row &amp; 1&gt;" in page  # autoescaped as before
    assert list(tmp_path.rglob("*")) == []  # no cache folder, no file


def test_a_planted_cache_pickle_is_never_loaded(tmp_path):
    reference = _render(tmp_path / "clean")
    marker = tmp_path / "PWNED"
    planted = _plant(tmp_path, marker)
    # the payload does run when unpickled: the test would see it if generate loaded the file
    assert pickle.loads(planted[0].read_bytes()[len(jinja2.bccache.bc_magic) :]) is None
    assert marker.is_dir()
    marker.rmdir()
    assert _render(tmp_path) == reference
    assert not marker.exists()
