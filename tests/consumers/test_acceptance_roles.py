"""The npu_acceptance and ops_checklist roles, run for real: ansible-playbook against pod-128
generated into a temporary folder, with a local connection and the test doubles of mpirun, HCCL
Test, ethtool and npu-smi (tests/fakes, named as such; the HCCL Test double prints the documented
table layout). Report and captures stay at their defaults, in the site overlay <folder>.site/
beside the generated folder, so generating again afterwards still succeeds."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.ansible_run import ansible_env
from tests.support.fake_hosts import DISPLAY_VERSION

pytestmark = pytest.mark.slow  # real ansible-playbook runs

ROOT = Path(__file__).resolve().parents[2]
FAKES = ROOT / "tests" / "fakes"


def _tool(name: str) -> str:
    return shutil.which(name) or str(Path(sys.executable).parent / name)


def _generate(out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "generator", "generate", "blueprints/pod-128.yaml", "-o", str(out), "-q"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


def _records(inventory: Path) -> Path:
    """Where the roles keep what they write and read at run time by default (group_vars
    wanka_site_dir = the generated folder's path + .site, then records/)."""
    return inventory.with_name(inventory.name + ".site") / "records"


@pytest.fixture(scope="module")
def pod(tmp_path_factory) -> Path:
    """pod-128 generated as a user does; the roles run against this folder's hosts.yml."""
    out = tmp_path_factory.mktemp("pod") / "pod-128"
    res = _generate(out)
    assert res.returncode == 0, res.stderr
    return out


@pytest.fixture(scope="module")
def acceptance(tmp_path_factory, pod):
    tmp = tmp_path_factory.mktemp("acceptance")
    overrides = tmp / "test-doubles.yml"
    overrides.write_text(
        yaml.safe_dump(
            {
                "all": {
                    "vars": {
                        "ansible_connection": "local",
                        "ansible_python_interpreter": sys.executable,
                        "npu_acceptance_hccl_test_dir": str(FAKES / "hccl_test"),
                        "npu_acceptance_mpirun": str(FAKES / "bin" / "mpirun"),
                        "npu_acceptance_workdir": str(tmp / "work"),
                        "npu_acceptance_textfile_dir": str(tmp),
                    }
                }
            }
        )
    )

    def play(degraded: str = "") -> tuple[subprocess.CompletedProcess, str, str]:
        fabric = tmp / "fabric.conf"
        fabric.write_text(degraded)
        env = ansible_env(
            tmp,
            PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}",
            WANKA_FAKE_FABRIC=str(fabric),
        )
        res = subprocess.run(
            [_tool("ansible-playbook"), "-i", str(pod / "hosts.yml"), "-i", str(overrides),
             "playbooks/acceptance.yml"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        md = _records(pod) / "acceptance.md"  # the role's default
        report = md.read_text() if md.exists() else ""
        prom = (tmp / "wanka_acceptance.prom").read_text()
        return res, report, prom

    healthy = play()
    # npu-006 sits on par-leaf-0002 (4 servers a leaf); its NPU links run at half speed
    degraded = play("npu-006 0.5\n")
    return {"healthy": healthy, "degraded": degraded, "tmp": tmp}


def test_healthy_fake_cluster_passes_every_scope(acceptance):
    res, report, prom = acceptance["healthy"]
    assert res.returncode == 0, res.stdout[-3000:]
    assert "30 runs, 0 below expectation" in report
    assert "- none" in report
    assert 'wanka_acceptance_passed{scope="cluster",op="all_reduce",unit="cluster"} 1' in prom
    promtool = shutil.which("promtool")
    if promtool:
        (acceptance["tmp"] / "check.prom").write_text(prom)
        check = subprocess.run(
            [promtool, "check", "metrics"], input=prom, capture_output=True, text=True
        )
        assert check.returncode == 0, check.stdout + check.stderr


def test_degraded_link_fails_naming_its_leaf_and_the_shortfall(acceptance):
    res, report, prom = acceptance["degraded"]
    assert res.returncode != 0
    # 23 GB/s busbw x 0.5 = 11.5 GB/s against 0.8 x 25 = 20 GB/s: 42.5% short
    want = "leaf par-leaf-0002: all_reduce busbw 11.5 GB/s, expected 20 GB/s (42.5% short)"
    assert want in res.stdout
    assert want in report
    named = [line for line in report.splitlines() if line.startswith("- ")]
    assert all("par-leaf-0002" in line for line in named), named  # no other leaf or server blamed
    assert 'wanka_acceptance_passed{scope="leaf",op="all_reduce",unit="par-leaf-0001"} 1' in prom
    assert 'wanka_acceptance_passed{scope="leaf",op="all_reduce",unit="par-leaf-0002"} 0' in prom
    assert 'wanka_acceptance_passed{scope="server",op="all_reduce",unit="npu-006"} 1' in prom


@pytest.fixture(scope="module")
def predicted(tmp_path_factory, pod):
    """The role judging by `wanka predict --write`'s thresholds (leaf and leaf-pair scopes, with
    the single failures), against the HCCL Test double in its two-level (HCCL mesh + NIC) mode:
    healthy, npu-006's links at half speed, and healthy judged under a spine failure's row."""
    tmp = tmp_path_factory.mktemp("predicted")
    res = subprocess.run(
        [sys.executable, "-m", "generator", "predict", str(pod), "--write", "--seeds", "8",
         "--scope", "leaf", "--scope", "leaf-pair"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    written = pod.with_name(pod.name + ".site") / "acceptance"
    expected = tmp / "expected.yml"  # out of the overlay: the plan-judged tests above keep theirs
    shutil.move(written / "expected.yml", expected)
    table = (written / "expected.md").read_text()
    runs = {}
    for tag, degraded, condition in (
        ("healthy", "", "as built"),
        ("degraded", "npu-006 0.5\n", "as built"),
        ("spine down", "", "spine par-spine-001 down"),
    ):
        overrides = tmp / f"vars-{tag}.yml"
        overrides.write_text(yaml.safe_dump({"all": {"vars": {
            "ansible_connection": "local",
            "ansible_python_interpreter": sys.executable,
            "npu_acceptance_hccl_test_dir": str(FAKES / "hccl_test"),
            "npu_acceptance_mpirun": str(FAKES / "bin" / "mpirun"),
            "npu_acceptance_workdir": str(tmp / "work"),
            "npu_acceptance_textfile_dir": str(tmp),
            "npu_acceptance_kinds": ["leaf", "leaf-pair"],
            "npu_acceptance_expected": str(expected),
            "npu_acceptance_condition": condition,
            "npu_acceptance_report": str(tmp / f"{tag}.md"),
        }}}))  # fmt: skip
        fabric = tmp / "fabric.conf"
        fabric.write_text(degraded)
        env = ansible_env(
            tmp,
            PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}",
            WANKA_FAKE_FABRIC=str(fabric),
            WANKA_FAKE_HIERARCHICAL="1",
        )
        play = subprocess.run(
            [_tool("ansible-playbook"), "-i", str(pod / "hosts.yml"), "-i", str(overrides),
             "playbooks/acceptance.yml"],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        report = tmp / f"{tag}.md"
        runs[tag] = (play, report.read_text() if report.exists() else "")
    return {"runs": runs, "expected": yaml.safe_load(expected.read_text()), "table": table}


def _rows(report: str) -> dict[tuple[str, str], list[str]]:
    """(scope kind, unit) -> the cells of the report's Runs table."""
    out = {}
    for line in report.splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 11 and cells[0] in ("leaf", "leaf-pair"):
            out[(cells[0], cells[2])] = cells
    return out


def test_the_role_judges_by_the_prediction_and_reports_measured_over_predicted(predicted):
    exp = predicted["expected"]
    row = exp["scopes"]["leaf/all_reduce"]["as built"]
    assert exp["margin"] == 0.1 and row["threshold"] == round(row["busbw"][0] * 0.9, 2)
    assert "| leaf-pair/all_reduce | spine par-spine-001 down |" in predicted["table"]
    play, report = predicted["runs"]["healthy"]
    assert play.returncode == 0, play.stdout[-3000:]
    assert "12 runs, 0 below expectation" in report
    rows = _rows(report)
    leaf = rows[("leaf", "par-leaf-0001")]
    assert leaf[5] == f"{row['threshold']:g}" and leaf[6] == "prediction"
    assert leaf[7] == f"{row['busbw'][1]:g}"
    assert float(leaf[8]) == pytest.approx(float(leaf[4]) / row["busbw"][1], abs=1e-3)
    # the double has no ECMP collisions: a leaf pair measures above its collision-aware p50
    pair = rows[("leaf-pair", "par-leaf-0001+par-leaf-0002")]
    assert float(pair[8]) > 1.0


def test_a_slow_leaf_fails_against_its_predicted_threshold(predicted):
    play, report = predicted["runs"]["degraded"]
    assert play.returncode != 0
    outliers = [line for line in report.splitlines() if line.startswith("- ")]
    ops = [o.split(":")[1].split()[0] for o in outliers]
    assert ops == ["all_reduce", "all_gather"], outliers
    assert all(o.startswith("- leaf par-leaf-0002: ") for o in outliers), outliers
    assert all("measured/predicted 0.61" in o for o in outliers), outliers  # half-speed NICs
    assert _rows(report)[("leaf", "par-leaf-0001")][-1] == "pass"


def test_under_a_spine_failure_the_role_takes_that_row_of_the_prediction(predicted):
    play, report = predicted["runs"]["spine down"]
    assert play.returncode == 0, play.stdout[-3000:]
    want = predicted["expected"]["scopes"]["leaf-pair/all_reduce"]["spine par-spine-001 down"]
    pair = _rows(report)[("leaf-pair", "par-leaf-0001+par-leaf-0002")]
    assert pair[5] == f"{want['threshold']:g}" and pair[6] == "prediction"
    # one leaf has no spine between its servers: the prediction has no such row, the plan judges
    assert _rows(report)[("leaf", "par-leaf-0001")][6] == "plan"


def test_hostile_folder_values_stay_one_argument_of_mpirun(tmp_path, pod):
    """npu_acceptance_workdir (where the hostfiles go) and npu_acceptance_hccl_test_dir hold ";",
    "$(...)", backquotes and a newline: the module runs each command as an argument list (no
    shell), so every filled-in path is one argument, the runs pass and nothing they spell runs."""

    def hostile(tag: str) -> str:  # folder names: "/" splits them into nested folders
        return f"x;touch {tmp_path}/{tag}1;$(touch {tmp_path}/{tag}2)`touch {tmp_path}/{tag}3`\ny"

    hccl = tmp_path / hostile("H")
    hccl.mkdir(parents=True)
    (hccl / "bin").symlink_to(FAKES / "hccl_test" / "bin")
    overrides = tmp_path / "test-doubles.yml"
    overrides.write_text(yaml.safe_dump({"all": {"vars": {
        "ansible_connection": "local",
        "ansible_python_interpreter": sys.executable,
        "npu_acceptance_kinds": ["server"],
        "npu_acceptance_hccl_test_dir": str(hccl),
        "npu_acceptance_mpirun": str(FAKES / "bin" / "mpirun"),
        "npu_acceptance_workdir": str(tmp_path / hostile("W")),
        "npu_acceptance_textfile_dir": str(tmp_path),
        "npu_acceptance_report": str(tmp_path / "acceptance.md"),
    }}}))  # fmt: skip
    env = ansible_env(tmp_path, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
    res = subprocess.run(
        [_tool("ansible-playbook"), "-i", str(pod / "hosts.yml"), "-i", str(overrides),
         "playbooks/acceptance.yml"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert "16 runs, 0 below expectation" in (tmp_path / "acceptance.md").read_text()
    assert sorted(p.name for p in (tmp_path / hostile("W")).glob("*.out"))[0] == (
        "server_all_reduce-npu-001.out"
    )
    ran = [tmp_path / f"{tag}{i}" for tag in "HW" for i in (1, 2, 3)]
    assert not [p for p in ran if p.exists()]
    assert not list(ROOT.glob("*touch*"))


# --- ops_checklist: one passing and one failing host per checklist item, two playbook runs ---

CHECKED = ("npu-001", "npu-002", "npu-003", "npu-004", "npu-005", "npu-006")
A3 = ("npu-001", "npu-003")  # Atlas 900 A3 SuperPoD nodes: 8 NPUs of 2 dies (npu-smi -c 0 and 1)


def _checklist_fleet(tmp: Path, captures: Path, broken: bool) -> Path:
    """Fake roots for CHECKED (A3 nodes in A3, the others A2) and the switches' `display version`
    in `captures`; when `broken`, each of npu-002..006 misses one checklist item and one leaf runs
    other software."""
    roots = tmp / ("broken" if broken else "healthy")
    for name in CHECKED:
        root = roots / name
        (root / "etc/systemd/system").mkdir(parents=True)
        (root / "data").mkdir()
        state = root / "var/lib/wanka-fake"
        state.mkdir(parents=True)
        lines = [f"npu{i}.{k}" for i in range(8) for k in ("health=OK", "temp=45")]
        lines += [f"npu{i}.dies=2" for i in range(8) if name in A3]
        (state / "npu.conf").write_text("\n".join(lines) + "\n")
    shutil.rmtree(captures, ignore_errors=True)
    captures.mkdir(parents=True)
    for leaf in ("par-leaf-0001", "par-leaf-0002", "par-leaf-0003"):
        release = "V300R022C10SPC100" if broken and leaf == "par-leaf-0003" else "V300R023C00SPC500"
        (captures / f"{leaf}.txt").write_text(DISPLAY_VERSION.format(release=release))
    if broken:
        (roots / "npu-002/var/lib/wanka-fake/nic.conf").write_text("stor1 63 8\n")
        with open(roots / "npu-003/var/lib/wanka-fake/npu.conf", "a") as fh:
            fh.write("npu3.chip1.power=180.5\n")  # A3: NPU 3's second die idles at 180.5 W
        with open(roots / "npu-006/var/lib/wanka-fake/npu.conf", "a") as fh:
            fh.write("npu5.power=180.5\n")  # A2: NPU 5 (chip 0) idles (AI Core 0%) at 180.5 W
        cache = roots / "npu-004/root/atc_data"
        cache.mkdir(parents=True)
        (cache / "kernel.o").write_bytes(b"x" * 3_000_000)
        (roots / "npu-005/data").rmdir()  # the DPC mount is not there: nothing can be written
    return roots


@pytest.fixture(scope="module")
def checklist(tmp_path_factory, pod):
    tmp = tmp_path_factory.mktemp("checklist")
    plan = yaml.safe_load((pod / "files/acceptance/plan.yml").read_text())
    plan["checklist"]["compile_cache"]["max_gb"] = 0.002  # 2 MB
    plan["checklist"]["checkpoint_write_gbps"] = 0.001  # any disk: the failing host has no mount
    (tmp / "plan.yml").write_text(yaml.safe_dump(plan))
    runs = {}

    def play(overrides: Path, *args: str) -> subprocess.CompletedProcess:
        env = ansible_env(tmp, PATH=f"{Path(sys.executable).parent}:{os.environ['PATH']}")
        return subprocess.run(
            [_tool("ansible-playbook"), "-i", str(pod / "hosts.yml"), "-i", str(overrides),
             "--limit", ",".join((*CHECKED, "localhost")), "playbooks/ops_checklist.yml", *args],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=600,
        )  # fmt: skip

    for broken in (False, True):
        # the captures the site collects, where the role reads them by default
        roots = _checklist_fleet(tmp, _records(pod) / "display-version", broken)
        overrides = tmp / f"vars-{broken}.yml"
        overrides.write_text(yaml.safe_dump({"all": {"vars": {
            "ansible_connection": "local",
            "ansible_python_interpreter": sys.executable,
            "wanka_root": str(roots) + "/{{ inventory_hostname }}",
            "ops_checklist_plan": str(tmp / "plan.yml"),
            "ops_checklist_ethtool": str(FAKES / "bin/ethtool"),
            "ops_checklist_npu_smi": str(FAKES / "bin/npu-smi"),
            "ops_checklist_write_mb": 4,
        }}}))  # fmt: skip
        runs[broken] = play(overrides)
        runs[broken, "roots"] = roots
        if not broken:  # the same healthy fleet again, in check mode: nothing left to change
            runs["again"] = play(overrides, "--check", "--diff")
    return runs


def test_checklist_passes_a_healthy_fleet_and_installs_the_cache_cleanup_timer(checklist):
    res = checklist[False]
    assert res.returncode == 0, res.stdout[-3000:]
    unit = checklist[False, "roots"] / "npu-001/etc/systemd/system/wanka-cache-cleanup.service"
    assert (
        "ExecStart=/usr/bin/find -P /root/atc_data -xdev -mindepth 1 -type f -mtime +7 -delete"
        in (unit.read_text())
    )
    again = checklist["again"]
    assert again.returncode == 0, again.stdout[-3000:]
    assert re.findall(r"changed=(\d+)", again.stdout) == ["0"] * (len(CHECKED) + 1)


def test_checklist_fails_each_item_naming_the_host_and_why(checklist):
    out = checklist[True].stdout
    assert checklist[True].returncode != 0
    assert "par-leaf-0003 run 8.230 (CE9860 V300R022C10SPC100)" in out
    assert "npu-002 checklist: stor1: RSS uses 8 of 63 combined queues" in out
    assert "npu-003 checklist: NPU 3 chip 1: idle (AI Core 0%) but draws 180.5 W > 120 W" in out
    assert "npu-006 checklist: NPU 5 chip 0: idle (AI Core 0%) but draws 180.5 W > 120 W" in out
    assert "npu-004 checklist: compile caches hold 0.0 GB > 0.002 GB" in out
    assert "npu-005 checklist: checkpoint path /data: writes 0 GB/s < 0.001 GB/s" in out
    assert "npu-001 checklist" not in out


def test_generate_again_after_the_roles_ran_with_their_defaults(pod, acceptance, checklist):
    """The roles wrote and read their files in the site overlay, not in the generated folder: the
    next generate replaces the folder (exit 0) and leaves those files alone."""
    records = _records(pod)
    reports = sorted(p.relative_to(records).as_posix() for p in records.rglob("*") if p.is_file())
    leaves = [f"display-version/par-leaf-000{i}.txt" for i in (1, 2, 3)]
    assert reports == ["acceptance.md", *leaves], reports
    report = (records / "acceptance.md").read_text()
    assert "par-leaf-0002: all_reduce busbw 11.5 GB/s" in report  # the last (degraded) run's
    res = _generate(pod)
    assert res.returncode == 0, res.stderr
    assert (records / "acceptance.md").read_text() == report
    assert not list(pod.rglob("acceptance.md")) and not list(pod.rglob("display-version"))
