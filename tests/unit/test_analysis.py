"""The analysis stage and the settings it reads: computed once, handed to the emitters, no
module-level state, no emitter importing another, no blueprint read after expand."""

from __future__ import annotations

import ast
import dataclasses
import json
import subprocess
import sys
import warnings
from pathlib import Path

from generator.analysis import INFO, Finding, analyse
from tests.support.examples import ROOT, generated

GENERATOR = ROOT / "generator"


def _schema_default(*path: str):
    node = json.loads((GENERATOR / "blueprint" / "wanka-v1.schema.json").read_text())
    for key in path:
        node = node["properties"][key]
    return node["default"]


def test_settings_defaults_are_the_schemas(tmp_path):
    from generator import pipeline

    text = (ROOT / "blueprints" / "legacy-100card.yaml").read_text()
    bare = tmp_path / "no-design.yaml"  # the example without its design block
    bare.write_text(text.partition("\ndesign:\n")[0] + "\n")
    s = pipeline.run(bare, emit=False).cluster.settings
    assert s.design.max_failure_share == _schema_default("design", "max_failure_share")
    assert s.accepted == {} and _schema_default("design", "accept") == []
    for unit in ("rack", "cdu", "cable"):
        expected = _schema_default("design", "failure_rates", unit)
        assert getattr(s.design.failure_rates, unit) == expected
    assert s.model_failure_rates["atlas-800-9000"] > 0  # the catalog's rate


def test_settings_follow_the_blueprint(tmp_path):
    from generator import pipeline

    text = (ROOT / "blueprints" / "pod-128.yaml").read_text().split("\n# One pod")[0]
    bp = tmp_path / "settings.yaml"
    bp.write_text(
        text
        + "\ndesign:\n  max_failure_share: 0.5\n  failure_rates: {rack: 0.2, cdu: 0.3, cable: 0}\n"
        + "catalog:\n  servers:\n    atlas-800t-a2: {failure_rate_per_year: 0.5}\n"
    )
    result = pipeline.run(bp, emit=False)
    s = result.cluster.settings
    rates = s.design.failure_rates
    assert (s.design.max_failure_share, rates.rack, rates.cdu) == (0.5, 0.2, 0.3)
    assert rates.cable == 0 and s.model_failure_rates["atlas-800t-a2"] == 0.5
    # a view over the blueprint's records, not a copy of them (#44 item 2)
    assert s.design is result.spec.design and s.networks is result.spec.networks
    # a check reads a catalog fact from the model's catalog record, the override merged (#44)
    cluster = result.cluster
    assert {h.model for h in cluster.hardware} == {d.model for d in cluster.devices}
    assert cluster.hardware_of("atlas-800t-a2").catalog.failure_rate_per_year == 0.5
    rows = {r.kind: r for r in result.analysis.failures.rows}
    assert rows["CDU"].rate == 0.3 and rows["NPU server"].rate == 0.5


def test_emitters_show_the_analysis_they_are_given():
    """docs and the failure report format the Analysis passed in: no cache, no second run."""
    from generator.artifacts import docs, failure_report

    result = generated("pod-128.yaml")
    analysis = analyse(result.cluster, result.spec)
    assert analysis == result.analysis  # pure: the same cluster gives an equal analysis
    sentinel = Finding(INFO, "sentinel", "a finding only this analysis has")
    swapped = dataclasses.replace(analysis, findings=(sentinel,))
    readme = next(f.data for f in docs.emit(result.cluster, swapped) if f.path.endswith(".md"))
    assert b"a finding only this analysis has" in readme
    assert b"sentinel" not in next(f.data for f in result.files if f.path == "docs/README.md")
    rows = (analysis.failures.rows[0],)
    fewer = dataclasses.replace(
        analysis, failures=dataclasses.replace(analysis.failures, rows=rows)
    )
    csv_text = next(f.data for f in failure_report.emit(result.cluster, fewer) if ".csv" in f.path)
    assert csv_text.count(b"\n") == 2  # header and the one row given


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_no_emitter_imports_another():
    folder = GENERATOR / "artifacts"
    emitters = {
        p.stem for p in folder.glob("*.py") if "\ndef emit(" in p.read_text(encoding="utf-8")
    }
    assert {"docs", "bom", "failure_report", "switches"} <= emitters
    for path in folder.glob("*.py"):
        imported = {m.rsplit(".", 1)[-1] for m in _imports(path) if "generator.artifacts" in m}
        wrong = {(path.stem, m) for m in imported & (emitters - {path.stem})}
        assert not wrong, wrong


def test_analysis_and_emitters_read_settings_not_the_blueprint():
    r"""#12: `grep -rn "cluster.blueprint\|build_catalog" generator/artifacts` finds nothing."""
    files = [*(GENERATOR / "analysis").glob("*.py"), *(GENERATOR / "artifacts").glob("*.py")]
    assert len(files) > 20
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert "cluster.blueprint" not in text and "build_catalog" not in text, path.name


def test_the_import_contracts_hold():
    """The stages import only the layers below them (catalog < blueprint < model < expand <
    analysis < artifacts < pipeline < cli), and verify and the twin import neither the model,
    expand, the emitters, the pipeline nor the CLI: .importlinter, checked by import-linter. A
    layer, not a module's size, decides where code lives (issue #44 item 4); sizes are reported
    (test_module_sizes_are_reported)."""
    code = (
        "import sys; from importlinter.cli import lint_imports; "
        "sys.exit(lint_imports(config_filename='.importlinter', no_cache=True, no_logo=True))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=GENERATOR.parent, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "3 kept, 0 broken" in done.stdout


LONG = 450  # lines: above it a module is reported, to be split by what it does when it pays


def test_module_sizes_are_reported():
    """The modules over LONG lines, as a warning in the test summary (not a gate)."""
    long = {
        str(p.relative_to(GENERATOR)): n
        for p in GENERATOR.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > LONG
    }
    if long:
        warnings.warn(f"modules over {LONG} lines: {long}", stacklevel=1)


def test_no_module_level_state_in_the_analysis():
    """No module-level list, dict or set is assigned to (by subscript or mutating call) inside a
    function of the analysis or the review emitters: results are never kept between calls."""
    files = [*(GENERATOR / "analysis").glob("*.py"), GENERATOR / "artifacts" / "docs.py"]
    for path in files:
        tree = ast.parse(path.read_text())
        top = {
            t.id
            for node in tree.body
            if isinstance(node, ast.Assign | ast.AnnAssign)
            for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
            if isinstance(t, ast.Name)
        }
        for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, ast.Global):
                    raise AssertionError(f"{path.name}: global {node.names}")
                if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Store):
                    assert not (isinstance(node.value, ast.Name) and node.value.id in top)


def test_forked_emitters_write_the_same_bytes_and_leave_no_state(monkeypatch, tmp_path):
    """The model emitters in forked workers beside the analysis (forced on the small example)
    give the serial bytes; the workers get the cluster from the pool's initializer, the parent
    keeps nothing, and the garbage collector is running again afterwards."""
    import gc
    import multiprocessing as mp
    import os

    import pytest

    from generator import forking, parallel, pipeline

    if "fork" not in mp.get_all_start_methods() or (os.cpu_count() or 1) < 2:
        pytest.skip("no fork start method or a single CPU")
    serial = generated("pod-128.yaml")  # below PARALLEL_FROM_LINKS: emitted in this process
    assert len(serial.cluster.links) < parallel.PARALLEL_FROM_LINKS
    monkeypatch.setattr(parallel, "PARALLEL_FROM_LINKS", 0)
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))  # where the workers spool their files
    forked = pipeline.run(ROOT / "blueprints" / "pod-128.yaml")
    assert [(f.path, f.data) for f in forked.files] == [(f.path, f.data) for f in serial.files]
    assert forking._SHARED == []  # set in the workers only
    assert gc.isenabled()
    assert list(tmp_path.iterdir()) == []  # the spool folder is gone
