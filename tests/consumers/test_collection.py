"""The roles as the wanka.cluster collection (issue #33 item 8): modules and filters at collection
level and called by their FQCN, the shared SSH session and npu-smi reading in module_utils, every
role with meta/ and a README whose generated part matches its argument specs, and every role of a
playbook tagged with its name."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from generator.collection import MARK, readme
from tests.support.ansible_run import ROOT, plugin

ROLES = sorted(p for p in (ROOT / "roles").iterdir() if p.is_dir())
PLAYBOOKS = [ROOT / "site.yml", *sorted((ROOT / "playbooks").glob("*.yml"))]
PLUGINS = sorted((ROOT / "plugins").glob("*/*.py"))


@pytest.mark.parametrize("role", ROLES, ids=lambda p: p.name)
def test_every_role_has_meta_and_a_fresh_readme(role):
    assert (role / "meta" / "main.yml").is_file() and (
        role / "meta" / "argument_specs.yml"
    ).is_file()
    assert not any((role / d).exists() for d in ("library", "filter_plugins", "module_utils"))
    text = (role / "README.md").read_text()
    assert text == readme(role), (
        f"{role.name}/README.md is stale: python -m generator.collection readme"
    )
    generated = text.partition(MARK)[0]
    for name in yaml.safe_load((role / "meta/argument_specs.yml").read_text())["argument_specs"][
        "main"
    ]["options"]:
        assert f"| `{name}` |" in generated


def test_a_changed_argument_spec_makes_the_readme_stale(tmp_path):
    role = tmp_path / "roles" / "npu_nic"
    (tmp_path / "playbooks").mkdir()
    (tmp_path / "site.yml").write_text("---\n")
    shutil.copytree(ROOT / "roles/npu_nic", role)
    before = readme(role)
    specs = role / "meta" / "argument_specs.yml"
    specs.write_text(specs.read_text().replace("Path of hccn_tool on the host.", "Where it is."))
    after = readme(role)
    assert "Where it is." in after and after != before
    assert after.endswith((ROOT / "roles/npu_nic/README.md").read_text().partition(MARK)[2])


def test_every_module_and_filter_is_called_by_its_fqcn_and_exists():
    called = set()
    for f in (ROOT / "roles").rglob("*"):
        if f.suffix in (".yml", ".j2"):
            called |= set(re.findall(r"\bwanka\.cluster\.(\w+)", f.read_text()))
    modules = {p.stem for p in (ROOT / "plugins/modules").glob("*.py")}
    filters = set()
    for p in (ROOT / "plugins/filter").glob("*.py"):
        filters |= set(plugin("filter", p.stem).FilterModule().filters())
    assert called == modules | filters  # nothing called that does not exist, nothing unused


def test_the_ssh_session_and_the_npu_smi_table_are_read_in_one_place():
    for p in PLUGINS:
        text = p.read_text()
        if p.name != "ce_session.py":
            assert "ConnectHandler(" not in text and '"clear configuration candidate"' not in text
        if p.name != "npu_smi.py":
            assert '"Phy-ID" in' not in text, p


def test_npu_smi_info_m_is_read_as_the_a2_and_a3_layouts_print_it():
    chips = plugin("module_utils", "npu_smi").chips
    a2 = "NPU ID  Chip ID  Chip Logic ID  Chip Name\n1  0  0  Ascend 910B\n1  1  -  Mcu\n"
    a3 = (
        "\tNPU ID  Chip ID  Chip Logic ID  Chip Phy-ID  Chip Name\n"
        "\t0  0  0  0  Ascend 910\n\t0  1  1  1  Ascend 910\n\t0  2  -  -  Mcu\n"
        "\t1  0  2  3  Ascend 910\n"
    )
    assert chips(a2) == [(1, 0, 0)]
    assert chips(a3) == [(0, 0, 0), (0, 1, 1), (1, 0, 3)]  # the device id is the Phy-ID


def test_a_rejected_line_is_named_with_its_secret_masked():
    rejected = plugin("module_utils", "ce_session").rejected
    output = (
        "[~HUAWEI] local-user admin password irreversible-cipher Secret123\n"
        "                                       ^\n"
        "Error: Wrong parameter found at '^' position.\n"
        "[~HUAWEI] sysname x\n"
    )
    assert rejected(output, lambda line: line.replace("Secret123", "******")) == [
        "'local-user admin password irreversible-cipher ******': Error: Wrong parameter found "
        "at '^' position."
    ]


def test_every_role_a_playbook_runs_is_tagged_with_its_name():
    for book in PLAYBOOKS:
        for play in yaml.safe_load(book.read_text()):
            for entry in play.get("roles", []):
                assert entry["role"] in entry.get("tags", []), (book.name, entry)


def test_the_collection_is_found_from_the_checkout(tmp_path):
    """ansible.cfg's collections_path: ansible-doc finds a module and its module_utils import."""
    res = subprocess.run(
        [str(Path(sys.executable).parent / "ansible-doc"), "wanka.cluster.wanka_ce_config"],
        cwd="/",
        env={
            "ANSIBLE_CONFIG": str(ROOT / "ansible.cfg"),
            "ANSIBLE_HOME": str(tmp_path),
            "PATH": "/usr/bin:/bin",
        },
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0 and "hier_config" in res.stdout, res.stderr
