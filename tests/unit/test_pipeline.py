"""The pipeline reads as its stage list, the emit stage's parallel machinery stays in
generator/parallel.py, and `run` takes a blueprint already loaded and an output sink
(issue #33 item 3)."""

from __future__ import annotations

import ast
import os
from pathlib import Path

from generator import output, parallel, pipeline
from generator.artifacts import switches
from generator.blueprint.load import load_text
from tests.support.examples import ROOT, generated

GENERATOR = ROOT / "generator"
STAGES = ("load", "validate", "facts", "expand", "analyse", "emit")


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def test_the_pipeline_is_a_short_list_of_timed_stages_in_order():
    lines = (GENERATOR / "pipeline.py").read_text(encoding="utf-8").splitlines()
    assert len(lines) < 120, len(lines)
    timed = [
        node.args[1].value
        for node in ast.walk(_tree(GENERATOR / "pipeline.py"))
        if isinstance(node, ast.Call)
        and getattr(node.func, "id", "") == "_timed"
        and isinstance(node.args[1], ast.Constant)
    ]
    assert tuple(timed) == STAGES
    text = "\n".join(lines)
    for machinery in ("imap_unordered", "pickle", "LATE", "PARTS", "forking.pool"):
        assert machinery not in text, machinery


def test_no_emitter_takes_parts():
    """Every emitter's public signature is `emit(cluster, analysis)`: splitting one across the
    workers is its declaration's and generator/parallel.py's business, never a parameter."""
    found = []
    for path in sorted((GENERATOR / "artifacts").rglob("*.py")):
        if path.name == "__init__.py":  # the `emitter` declaration, where `parts` is declared
            continue
        for node in ast.walk(_tree(path)):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            names = [
                a.arg for a in (*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs)
            ]
            if {"part", "parts"} & set(names):
                found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}{names}")
            if node.name == "emit":
                assert names == ["cluster", "analysis"], (path.name, names)
    assert found == []


def test_every_emitter_registers_itself_and_parallel_names_none():
    """Adding an output touches one file (#44 item 3): every artifacts module with an `emit`
    declares it with `@emitter(...)` and is scheduled from that declaration; parallel.py names
    no emitter module and no scheduling list by hand."""
    with_emit = {
        p.stem
        for p in (GENERATOR / "artifacts").glob("*.py")
        if "\ndef emit(" in p.read_text(encoding="utf-8")
    }
    assert {e.name for e in parallel.EMITTERS.values()} == with_emit
    assert len(with_emit) >= 15
    assert {e.name for e in parallel.ANALYSIS_EMITTERS} >= {"docs", "bom", "inventory"}
    assert "switches" in {e.name for e in parallel.MODEL_EMITTERS}
    imported = {
        a.name
        for node in ast.walk(_tree(GENERATOR / "parallel.py"))
        if isinstance(node, ast.ImportFrom) and node.module == "generator.artifacts"
        for a in node.names
    }
    assert not imported & with_emit, imported & with_emit


def test_switch_configs_split_into_parts_are_the_whole():
    """The parts parallel.py hands to its workers make exactly the files `emit` makes."""
    cluster = generated("pod-128.yaml").cluster
    whole = [(f.path, f.data) for f in switches.emit(cluster)]
    declared = parallel.EMITTERS["switches"]
    assert declared is switches.emit and declared.parts > 1
    split = [
        (f.path, f.data)
        for part in range(declared.parts)
        for f in parallel.split(declared, cluster, part)
    ]
    assert whole and sorted(split) == sorted(whole)


def test_a_blueprint_given_as_text_is_written_into_the_sink(tmp_path, monkeypatch):
    """`run(load_text(...), sink=...)`: the files go into the output sink as they are made, by
    forked workers too, and committing it leaves exactly the files an in-memory run makes;
    without a commit nothing is in place."""
    serial = generated("pod-128.yaml")
    text = (ROOT / "blueprints" / "pod-128.yaml").read_text(encoding="utf-8")
    monkeypatch.setattr(parallel, "PARALLEL_FROM_LINKS", 0)  # the forked workers write
    out = tmp_path / "out"
    with output.Staging(out) as sink:
        result = pipeline.run(load_text(text, "pod-128.yaml"), sink=sink)
        assert result.files == [] and not out.exists()
        sink.commit(result.written)
    assert result.loaded.file == "pod-128.yaml"
    assert sorted(result.written) == [f.path for f in serial.files]
    for f in serial.files:
        assert (out / f.path).read_bytes() == f.data, f.path
    on_disk = {
        os.path.relpath(os.path.join(top, n), out) for top, _, ns in os.walk(out) for n in ns
    }
    assert on_disk == {f.path for f in serial.files} | {output.MARKER}


def test_a_sink_without_a_folder_writes_inventories_of_the_cluster_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    text = (ROOT / "blueprints" / "pod-128.yaml").read_text(encoding="utf-8")
    loaded = load_text(text, str(ROOT / "blueprints" / "pod-128.yaml"))
    with output.Staging() as sink:
        result = pipeline.run(loaded, sink=sink)
        sink.commit(result.written)
    assert (tmp_path / "inventories" / result.cluster.name / output.MARKER).is_file()
