"""Nothing from a blueprint or catalog is evaluated by Ansible (issue #31): free-text values that
hold Jinja2 and shell payloads reach the inventory tagged `!unsafe`, and the real `ansible-inventory`
and `ansible -m debug` print them as the literal text without running them; the same files with
the tags removed do run them (so the check can fail). The ZTP role refuses a configuration with
template syntax other than its Vault placeholders, without running it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from generator import cli
from generator.verify import verify
from tests.support.ansible_run import ROOT, VAULT, Runner, plugin, tool

wanka_vault_fill = plugin("filter", "wanka_vault").wanka_vault_fill
wanka_vault_names = plugin("filter", "wanka_vault").wanka_vault_names

HOSTS = ("npu-001", "par-leaf-0001", "controller-01")  # a server, a switch, a management node


def _payloads(marker: Path) -> dict[str, str]:
    """Field -> hostile value; each runs `touch <marker>-<n>` if anything evaluates it."""
    return {
        "metadata.site": f"{{{{ lookup('pipe', 'touch {marker}-1') }}}}",
        "metadata.description": f"{{# c #}}{{% raw %}}$(touch {marker}-2){{% endraw %}}",
        "hccl.env.HCCL_WANKA_TEST": f"{{{{ lookup('pipe','touch {marker}-3') }}}} $(touch {marker}-4)",
        "storage_nic.model": f"CX {{{{ query('pipe', 'touch {marker}-5') }}}}",
        "storage_nic.driver": f"{{% if lookup('pipe','touch {marker}-6') %}}x{{% endif %}}",
        "storage_nic.source": f"{{# x #}} `touch {marker}-7`",
    }


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("inert")
    # a short folder for the markers: metadata.site holds at most 64 characters
    markers = Path(tempfile.mkdtemp(prefix="wk", dir="/tmp"))
    marker = markers / "PWNED"
    values = _payloads(marker)
    bp = yaml.safe_load((ROOT / "blueprints/pod-128.yaml").read_text())
    bp["metadata"]["site"] = values["metadata.site"]
    bp["metadata"]["description"] = values["metadata.description"]
    bp.setdefault("hccl", {}).setdefault("env", {})["HCCL_WANKA_TEST"] = values[
        "hccl.env.HCCL_WANKA_TEST"
    ]
    nic = {k.split(".")[1]: v for k, v in values.items() if k.startswith("storage_nic.")}
    bp["catalog"] = {"servers": {"atlas-800t-a2": {"storage_nic": nic}}}
    (tmp / "bp.yaml").write_text(yaml.safe_dump(bp, sort_keys=False))
    assert cli.main(["generate", str(tmp / "bp.yaml"), "-o", str(tmp / "out")]) == 0
    yield {"tmp": tmp, "out": tmp / "out", "markers": markers, "values": values}
    shutil.rmtree(markers)


def _ansible(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_HOME": str(cwd / "ansible-home")}
    env.pop("ANSIBLE_CONFIG", None)
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def _ran(hostile) -> list[str]:
    return sorted(p.name for p in hostile["markers"].glob("PWNED-*"))


def _debug_every_variable(folder: Path, cwd: Path) -> subprocess.CompletedProcess:
    """`ansible -m debug -a var=hostvars[inventory_hostname]`: every variable of each host,
    templated as any play reading it would template it."""
    return _ansible(
        tool("ansible"),
        "-i",
        str(folder / "hosts.yml"),
        ",".join(HOSTS),
        "-m",
        "ansible.builtin.debug",
        "-a",
        "var=hostvars[inventory_hostname]",
        cwd=cwd,
    )


def _variables(stdout: str) -> dict[str, dict]:
    """host -> its variables, from the ad-hoc debug output (`host | SUCCESS => {json}`)."""
    out = {}
    for block in stdout.split("\n" + "}")[:-1]:
        head, _, body = (block + "\n}").strip().partition(" => ")
        out[head.split(" | ")[0]] = json.loads(body)["hostvars[inventory_hostname]"]
    return out


def test_payloads_reach_the_inventory_each_tagged_unsafe(hostile):
    """The payloads that reach an Ansible variable file are there, and on a tagged line."""
    lines = [
        line
        for p in sorted(hostile["out"].glob("*_vars/*.yml"))
        for line in p.read_text().splitlines()
        if "PWNED" in line
    ]
    found = {k for k, v in hostile["values"].items() if any(json.dumps(v) in x for x in lines)}
    assert {"metadata.site", "storage_nic.driver"} <= found, found
    assert any("HCCL_WANKA_TEST" in line for line in lines)
    assert all("!unsafe " in line for line in lines), [x for x in lines if "!unsafe" not in x]


def test_ansible_inventory_lists_the_payloads_as_literal_text(hostile):
    res = _ansible(
        tool("ansible-inventory"), "-i", str(hostile["out"] / "hosts.yml"), "--list",
        cwd=hostile["tmp"],
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    hostvars = json.loads(res.stdout)["_meta"]["hostvars"]["npu-001"]
    values = hostile["values"]
    assert hostvars["wanka_site"] == {"__ansible_unsafe": values["metadata.site"]}
    assert hostvars["storage_nic_driver"] == {"__ansible_unsafe": values["storage_nic.driver"]}
    assert _ran(hostile) == []


def test_reading_every_variable_runs_nothing_and_prints_the_literal_text(hostile):
    res = _debug_every_variable(hostile["out"], hostile["tmp"])
    assert res.returncode == 0, res.stdout + res.stderr
    assert _ran(hostile) == []
    variables = _variables(res.stdout)
    assert set(variables) == set(HOSTS)
    values = hostile["values"]
    for host in HOSTS:
        v = variables[host]
        assert v["wanka_site"] == values["metadata.site"]
        assert v["hccl_env"]["HCCL_WANKA_TEST"] == values["hccl.env.HCCL_WANKA_TEST"]
        assert v["wanka_files"] == f"{hostile['out']}/files"  # the generator's own template runs
    assert variables["npu-001"]["storage_nic_driver"] == values["storage_nic.driver"]


def test_without_the_tags_the_same_files_run_the_payloads(hostile):
    """The check above can fail: the same output with `!unsafe` removed runs them."""
    plain = hostile["tmp"] / "plain"
    shutil.copytree(hostile["out"], plain)
    for path in plain.glob("*_vars/*.yml"):
        path.write_text(path.read_text().replace("!unsafe ", ""))
    _debug_every_variable(plain, hostile["tmp"])
    ran = _ran(hostile)
    for path in hostile["markers"].glob("PWNED-*"):
        path.unlink()
    assert {"PWNED-1", "PWNED-3", "PWNED-6"} <= set(ran), ran


def test_the_ztp_role_refuses_a_config_with_other_template_syntax_without_running_it(hostile):
    tmp = hostile["tmp"] / "ztp"
    folder = tmp / "out"
    shutil.copytree(hostile["out"], folder)
    config = sorted((folder / "files/ztp/configs").glob("*.cfg"))[0]
    marker = tmp / "ZTP-RAN"
    lines = config.read_text().splitlines()
    lines.insert(3, f" description {{{{ lookup('pipe', 'touch {marker}') }}}}")
    config.write_text("\n".join(lines) + "\n")
    switches = yaml.safe_load((folder / "files/ztp/switches.yml").read_text())["switches"]
    identities = {s["name"]: {"esn": f"2102311LDL{i:010d}"} for i, s in enumerate(switches)}
    all_vars = {
        **VAULT,
        "ansible_connection": "local",
        "ansible_python_interpreter": sys.executable,
        "wanka_root": str(tmp / "root"),
        "ztp_server_manage_service": False,
        "ztp_server_identities": identities,
    }
    runner = Runner(tmp, folder / "hosts.yml", {"all": {"vars": all_vars}})
    res = runner.play("playbooks/ztp.yml", "--tags", "ztp_ini")
    assert res.returncode != 0
    assert f"{config}:4: template syntax '{{{{'" in res.stdout, res.stdout[-3000:]
    assert not marker.exists()
    assert not list((tmp / "root").rglob("*.cfg"))  # nothing staged


CONFIG = "sysname leaf\n local-user admin password irreversible-cipher {{ vault_a }}\n#\nreturn\n"


def test_the_vault_filter_fills_exactly_the_placeholders():
    assert wanka_vault_names(CONFIG) == ["vault_a"]
    filled = wanka_vault_fill(CONFIG, {"vault_a": "s3cr{{t}}"})
    assert filled == CONFIG.replace("{{ vault_a }}", "s3cr{{t}}")  # a secret's text as it is


@pytest.mark.parametrize(
    ("line", "opener"),
    [
        ("{{ lookup('pipe', 'id') }}", "{{"),
        ("{% raw %}x{% endraw %}", "{%"),
        ("description {# note #}", "{#"),
        ("{{vault_a}}", "{{"),  # not the generator's form
        ("{{ vault_a | default('x') }}", "{{"),
    ],
)
def test_the_vault_filter_refuses_other_template_syntax_with_its_line(line, opener):
    text = CONFIG.replace("#\n", f"#\n{line}\n", 1)
    with pytest.raises(AnsibleFilterError, match=rf"^cfg:4: template syntax '{opener}'"):
        wanka_vault_names(text, "cfg")
    with pytest.raises(AnsibleFilterError, match=r"^cfg:4: "):
        wanka_vault_fill(text, {"vault_a": "x"}, "cfg")


def test_the_vault_filter_names_a_missing_secret():
    with pytest.raises(AnsibleFilterError, match="no value for vault_a"):
        wanka_vault_fill(CONFIG, {}, "cfg")


@pytest.mark.parametrize(
    ("path", "line"),
    [
        ("files/switches/par-leaf-0001.cfg", " description {{ lookup('pipe', 'id') }}"),
        ("files/ztp/configs/par-leaf-0001.cfg", "{% for x in range(9) %}{% endfor %}"),
        ("files/border/fw-01.cfg", "#{# hidden #}"),
        ("host_vars/npu-001.yml", "rack_note: \"{{ lookup('env', 'HOME') }}\""),
        ("group_vars/all.yml", 'extra: "{% raw %}{% endraw %}"'),
    ],
)
def test_verify_reports_template_syntax_ansible_would_run_with_its_line(hostile, path, line):
    """The hostile output verifies clean (its payloads are tagged); a stray expression in a
    device configuration or an untagged variable is a located problem."""
    folder = hostile["tmp"] / f"verify-{path.replace('/', '-')}"
    shutil.copytree(hostile["out"], folder)
    target = folder / path
    assert target.is_file(), f"pod-128 writes {path}"
    text = target.read_text()
    lines = text.splitlines()
    # where the device takes the line: an indented one in an interface view, a configuration's
    # other line before its closing `return`, a YAML one at the end
    if line.startswith(" "):
        at = 1 + next(n for n, x in enumerate(lines) if x.startswith("interface "))
    else:
        at = len(lines) - 1 if lines[-1] == "return" else len(lines)
    target.write_text("\n".join([*lines[:at], line, *lines[at:]]) + "\n")
    problems = [p.render() for p in verify(folder).problems]
    where = f"{path}:{at + 1}: template syntax Ansible would evaluate"
    assert [p for p in problems if "template syntax" in p] == [f"{where}: `{line.strip()}`"]
    target.write_text(text)
    assert not verify(folder).problems
