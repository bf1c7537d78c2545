"""Host paths the roles mount over or delete under (issue #31 item 3): the blueprint's compile-cache
paths (a daily root `find PATH -xdev ... -delete` on every NPU server, roles/ops_checklist) and
its DPC mount points (roles/dpc_client) are refused when they are not normalised, a system
folder, inside a system tree, or (caches) a DPC mount or its parent: a located exit-2 refusal of
`wanka generate` with nothing written. The roles refuse the same paths, and the mount units are
named as `systemd-escape --path` names them."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from generator import cli
from generator.blueprint import refusals
from tests.support.ansible_run import plugin
from tests.support.examples import TINY

ROOT = Path(__file__).resolve().parents[2]


mount_unit = plugin("filter", "wanka_mount_unit")
checklist = plugin("modules", "wanka_ops_checklist")

MOUNTS = "[{name: train, mountpoint: /data/train}, {name: ckpt, mountpoint: /ckpt}]"


def _blueprint(tmp_path: Path, caches: str | None = None, mounts: str = MOUNTS) -> Path:
    text = TINY.replace(
        "  storage: {nodes: {count: 1}}\n",
        f"  storage: {{nodes: {{count: 1}}, filesystems: {mounts}}}\n",
    )
    if caches is not None:
        text += f"acceptance:\n  compile_cache: {{paths: {caches}}}\n"
    path = tmp_path / "bp.yaml"
    path.write_text(text)
    return path


def _refused(tmp_path: Path, capsys, blueprint: Path) -> str:
    """`wanka generate`: exit 2, every error line located in the blueprint, nothing written."""
    out = tmp_path / "out"
    code = cli.main(["generate", str(blueprint), "-o", str(out), "-q"])
    err = capsys.readouterr().err
    assert code == 2, err
    errors = [line for line in err.splitlines() if not line.startswith(("warning:", "info:"))]
    assert errors and all(line.startswith(f"{blueprint}:") for line in errors), err
    assert "Traceback" not in err
    assert not out.exists()
    return err


@pytest.mark.parametrize(
    "cache, words",
    [
        ("/usr/", "not a normalised absolute path (it means '/usr')"),
        ("/var/lib/../", "not a normalised absolute path (it means '/var')"),
        ("/root/atc/../..", "not a normalised absolute path (it means '/')"),
        ("/", "is the root file system"),
        ("/home", "is a system folder"),
        ("/var/log", "is a system folder"),
        ("/etc/ascend", "is inside the system tree /etc"),
        ("/usr/local/Ascend/cache", "is inside the system tree /usr"),
        ("/lib64", "is inside the system tree /lib64"),
        ("/data", "holds the DPC mount /data/train (zones.storage.filesystems[0].mountpoint)"),
        ("/ckpt", "is the DPC mount /ckpt (zones.storage.filesystems[1].mountpoint)"),
    ],
)
def test_compile_cache_paths_that_would_delete_the_system_or_data_are_refused(
    tmp_path, capsys, cache, words
):
    err = _refused(tmp_path, capsys, _blueprint(tmp_path, f"[/root/atc_data, '{cache}']"))
    line = next(x for x in err.splitlines() if "acceptance.compile_cache.paths[1]:" in x)
    assert words in line and line.endswith(")"), line  # with its hint


@pytest.mark.parametrize(
    "mount, words",
    [
        ("/etc", "is inside the system tree /etc"),
        ("/usr/share/data", "is inside the system tree /usr"),
        ("/root", "is a system folder"),
        ("/tmp", "is a system folder"),
        ("/proc/x", "is inside the system tree /proc"),
    ],
)
def test_mount_points_over_system_folders_are_refused(tmp_path, capsys, mount, words):
    blueprint = _blueprint(tmp_path, mounts=f"[{{name: a, mountpoint: '{mount}'}}]")
    err = _refused(tmp_path, capsys, blueprint)
    assert "zones.storage.filesystems[0].mountpoint:" in err and words in err


@pytest.mark.parametrize(
    "caches", ["[/root/atc_data, /var/cache/ascend]", "[/home/ai/.cache/kernel_meta]", "[/ckpt2]"]
)
def test_cache_paths_beside_or_under_folders_of_their_own_are_accepted(tmp_path, capsys, caches):
    code = cli.main(["validate", str(_blueprint(tmp_path, caches))])
    assert code == 0, capsys.readouterr().err


def test_the_roles_refuse_the_paths_the_blueprint_refuses():
    for lists in (mount_unit, checklist):
        assert lists.SYSTEM_TREES == refusals.SYSTEM_TREES
        assert lists.SYSTEM_FOLDERS == refusals.SYSTEM_FOLDERS
    mounts = ["/data/train", "/ckpt"]
    for path in ("/", "/var/lib/../", "/usr", "/etc/x", "/data", "/ckpt", "/root"):
        assert checklist.unsafe_cache_paths([path], mounts), path
    assert checklist.unsafe_cache_paths(["/root/atc_data", "/ckpt2"], mounts) == []
    for path in ("/", "/etc", "/var", "/usr/x", "/data/../etc"):
        assert mount_unit.wanka_system_path(path), path
    assert mount_unit.wanka_system_path("/data/train") == ""


MOUNT_POINTS = ["/data", "/data/train-set", "/.ckpt", "/mnt/x_y.z/a-b", "/srv/ckpt:v2", "/"]


@pytest.mark.parametrize("path", MOUNT_POINTS)
def test_mount_unit_names_are_systemd_escape_path(path):
    """Against the real systemd-escape when this machine has it, else the algorithm of
    systemd.unit(5) "String Escaping for Inclusion in Unit Names" spelled out per case."""
    documented = {  # "/" -> "-", "-" and a leading "." -> \\x2d / \\x2e, the root is "-"
        "/data": "data",
        "/data/train-set": "data-train\\x2dset",
        "/.ckpt": "\\x2eckpt",
        "/mnt/x_y.z/a-b": "mnt-x_y.z-a\\x2db",
        "/srv/ckpt:v2": "srv-ckpt:v2",
        "/": "-",
    }
    tool = shutil.which("systemd-escape")
    want = (
        subprocess.run([tool, "--path", path], capture_output=True, text=True, check=True).stdout
        if tool
        else documented[path] + "\n"
    )
    assert mount_unit.systemd_escape_path(path) + "\n" == want
    assert want == documented[path] + "\n"
