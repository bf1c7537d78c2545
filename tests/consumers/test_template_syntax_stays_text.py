"""No role evaluates a generated file (issue #40 item 3), shown with Ansible itself: template
syntax (`{{ ... }}`, `{% ... %}`, `{# ... #}`) placed in every kind of generated file a role
reads (grep roles/ for lookup('file'), lookup('template'), `copy: src=` of generated files;
roles read no file with `slurp`) runs nothing, and stays text:

- device configurations with `{{ vault_* }}` placeholders, read as data and filled by
  plugins/filter/wanka_vault.py: the border scripts files/border/*.cfg (border_deploy) and the
  switch startup configurations files/ztp/configs/*.cfg (switch_deploy, ztp_server) are refused
  with their file:line before anything is sent;
- the ZTP switch list files/ztp/switches.yml (ztp_server, `from_yaml`): a name with template
  syntax is printed as its text; a switch's plan files/switches/<name>.yml (switch_config's LLDP
  check, `from_yaml`, against a CE SSH double): a far port named with template syntax is
  named as its text;
- the host files: files/hccn/<host>.conf (npu_nic, lookup('file') into the module, which refuses
  the key by its literal name), files/hccl/env/<host>.sh (hccl_env, copied as it is) and
  files/hccl/rank_table.MISSING.md (hccl_env, lookup('file') into the failure message, printed
  as its text).

Each payload would run `touch <marker>-<kind>`; no marker may appear. The same border script
read with lookup('template') (what border_deploy did before) creates its marker, so the check
can fail. The variable files (host_vars/, group_vars/) are tests/faults/test_template_inert.py's."""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from tests.support.ansible_run import VAULT, Runner
from tests.support.examples import render_example

pytestmark = pytest.mark.slow  # three real ansible-playbook runs

PLAY = """\
# Each role as its playbook runs it, in a block whose rescue prints why it stopped, so that
# every play runs.
{plays}
"""
ROLE_PLAY = """\
- name: {role} on {host}
  hosts: {host}
  gather_facts: false
  tasks:
    - name: Run the role
      block:
        - name: The role
          ansible.builtin.include_role:
            name: {role}
      rescue:
        - name: Why it stopped
          ansible.builtin.debug:
            msg: "STOPPED {role}: {{{{ ansible_failed_result.msg }}}}"
"""


def _payloads(marker: Path) -> dict[str, str]:
    return {
        "border": f"{{{{ lookup('pipe', 'touch {marker}-border') }}}}",
        "switch": f"{{% if lookup('pipe', 'touch {marker}-switch') %}}x{{% endif %}}",
        "ztp-config": f"{{# {{{{ lookup('pipe', 'touch {marker}-ztpcfg') }}}} #}}",
        "ztp-list": f"{{{{ lookup('pipe', 'touch {marker}-ztplist') }}}}",
        "hccn": f"{{{{ lookup('pipe','touch {marker}-hccn') }}}}",
        "env": f"{{{{ lookup('pipe', 'touch {marker}-env') }}}}",
        "missing": f"{{% for x in [lookup('pipe', 'touch {marker}-missing')] %}}{{% endfor %}}",
        "lldp": f"{{{{ lookup('pipe', 'touch {marker}-lldp') }}}}",
        "control": f"{{{{ lookup('pipe', 'touch {marker}-control') }}}}",
    }


def _insert(path: Path, after: int, line: str) -> int:
    """`line` inserted after line `after` of `path`; its line number."""
    lines = path.read_text().splitlines()
    lines.insert(after, line)
    path.write_text("\n".join(lines) + "\n")
    return after + 1


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    folder = render_example(tmp_path_factory, "stays-text")
    tmp = folder.parent
    markers = Path(tempfile.mkdtemp(prefix="wk", dir="/tmp"))
    p = _payloads(markers / "RAN")
    files = folder / "files"
    where = {
        "border": (files / "border/fw-01.cfg", _insert(files / "border/fw-01.cfg", 19,
                   f" description {p['border']}")),
        "switch": (files / "ztp/configs/par-leaf-0001.cfg",
                   _insert(files / "ztp/configs/par-leaf-0001.cfg", 3, f" {p['switch']}")),
        "ztp-config": (files / "ztp/configs/par-leaf-0002.cfg",
                       _insert(files / "ztp/configs/par-leaf-0002.cfg", 3, p["ztp-config"])),
    }  # fmt: skip
    control = files / "border/control.cfg"
    control.write_text(f"sysname x\n description {p['control']}\n")
    # the ZTP list: the first switch renamed to a payload (its identity is given by that name)
    ztp = yaml.safe_load((files / "ztp/switches.yml").read_text())
    ztp["switches"][0]["name"] = p["ztp-list"]
    (files / "ztp/switches.yml").write_text(yaml.safe_dump(ztp))
    # a switch's plan (switch_config's LLDP check): the first cabled port's far port renamed
    plan_file = files / "switches/par-leaf-0001.yml"
    plan = yaml.safe_load(plan_file.read_text())
    cabled = [i for i in plan["interfaces"] if "peer" in i and i.get("mode") != "management"]
    cabled.sort(key=lambda i: "-spine-" not in i["peer"]["device"])  # a switch peer first
    lldp = [(i["name"], i["peer"]["device"], i["peer"]["port"]) for i in cabled]
    cabled[0]["peer"]["port"] = p["lldp"]
    plan_file.write_text(yaml.safe_dump(plan, sort_keys=False))
    # host files of npu-001
    hccn = files / "hccn/npu-001.conf"
    hccn.write_text(hccn.read_text() + f"{p['hccn']}=1\n")
    env = files / "hccl/env/npu-001.sh"
    env.write_text(env.read_text() + f"# {p['env']}\n")
    (files / "hccl/rank_table.json").unlink()
    (files / "hccl/rank_table.MISSING.md").write_text(f"No rank table yet. {p['missing']}\n")
    root = tmp / "root" / "npu-001"
    for d in ("etc/profile.d", "etc/sysctl.d"):
        (root / d).mkdir(parents=True)
    yield {"folder": folder, "tmp": tmp, "markers": markers, "p": p, "where": where,
           "ztp": ztp, "root": root, "control": control, "lldp": lldp}  # fmt: skip
    shutil.rmtree(markers)


def _ran(planted) -> list[str]:
    return sorted(m.name for m in planted["markers"].iterdir())


@pytest.fixture(scope="module")
def roles_run(planted):
    """border_deploy (fw-01), switch_deploy and switch_config (par-leaf-0001), npu_nic and
    hccl_env (npu-001) in one run: the border and switch configurations are refused before a
    device is reached; switch_config reads LLDP from a CE SSH double cabled as generated; the
    host runs locally."""
    from tests.doubles.ce_switch import Fleet, Switch  # asyncssh: only when this runs

    tmp = planted["tmp"]
    play = tmp / "stays-text.yml"
    plays = [
        ROLE_PLAY.format(role="border_deploy", host="fw-01"),
        ROLE_PLAY.format(role="switch_deploy", host="par-leaf-0001"),
        ROLE_PLAY.format(role="switch_config", host="par-leaf-0001"),
        ROLE_PLAY.format(role="npu_nic", host="npu-001"),
        ROLE_PLAY.format(role="hccl_env", host="npu-001"),
    ]
    play.write_text(PLAY.format(plays="\n".join(plays)))
    local = {
        "ansible_connection": "local",
        "ansible_python_interpreter": sys.executable,
        "wanka_root": str(planted["root"]),
        "npu_nic_hccn_tool": str(Path(__file__).parents[1] / "fakes/bin/hccn_tool"),
    }
    overrides = {
        "all": {
            "vars": {**VAULT, "vault_border_admin_password": "double-border-pw"},
            "hosts": {"npu-001": local, "fw-01": {"ansible_connection": "local"}},
        }
    }  # fmt: skip
    fleet = Fleet(
        [Switch("par-leaf-0001", lldp=planted["lldp"])], VAULT["vault_switch_admin_password"]
    )
    fleet.start()
    try:
        leaf = {"ansible_host": "127.0.0.1", "ansible_port": fleet.ports["par-leaf-0001"]}
        overrides["all"]["hosts"]["par-leaf-0001"] = leaf
        runner = Runner(tmp / "run", planted["folder"] / "hosts.yml", overrides)
        return runner.play(str(play))
    finally:
        fleet.stop()


def test_device_configurations_are_refused_at_their_line_and_never_run(planted, roles_run):
    out = roles_run.stdout
    for kind, role in (("border", "border_deploy"), ("switch", "switch_deploy")):
        path, line = planted["where"][kind]
        opener = planted["p"][kind][:2]
        stopped = [x for x in out.splitlines() if f'"msg": "STOPPED {role}: ' in x]
        assert len(stopped) == 1, out[-4000:]
        assert f"{path}:{line}: template syntax '{opener}' that is not a Vault" in stopped[0]
    assert not [m for m in _ran(planted) if m.endswith(("border", "switch"))]


def test_host_files_stay_text(planted, roles_run):
    out, p = roles_run.stdout, planted["p"]
    # npu_nic: the module got the line as it is and refuses the key by that literal name
    assert "STOPPED npu_nic:" in out and p["hccn"] in out, out[-4000:]
    # hccl_env: the profile copied as it is, then the MISSING note printed as its text
    profile = (planted["root"] / "etc/profile.d/hccl.sh").read_text()
    assert f"# {p['env']}\n" in profile
    assert f"STOPPED hccl_env: No rank table yet. {p['missing']}" in out
    assert not [m for m in _ran(planted) if m.endswith(("hccn", "env", "missing"))]


def test_a_switch_plan_stays_text(planted, roles_run):
    """switch_config compares LLDP with files/switches/<name>.yml (lookup('file') | from_yaml):
    the renamed far port is named as its text in the miscabling message."""
    port, device, _ = planted["lldp"][0]
    stopped = [x for x in roles_run.stdout.splitlines() if '"msg": "STOPPED switch_config: ' in x]
    assert len(stopped) == 1, roles_run.stdout[-4000:]
    assert f"{port}: LLDP neighbour" in stopped[0], stopped
    assert f"the cabling plan says {device} {planted['p']['lldp']}" in stopped[0], stopped
    assert not [m for m in _ran(planted) if m.endswith("lldp")]


def test_the_ztp_list_and_configs_stay_text(planted, roles_run):
    """ztp_server twice: with the planted switch name (printed as its text wherever the role
    stops), then with the list as generated (par-leaf-0002's configuration refused at its line)."""
    tmp, folder = planted["tmp"], planted["folder"]
    listing = folder / "files/ztp/switches.yml"
    planted_list = listing.read_text()
    outputs = []
    for run, switches in (("ztp-planted", planted["ztp"]), ("ztp-generated", None)):
        if switches is None:  # the list as generated: the first switch's own name back
            switches = yaml.safe_load(planted_list)
            switches["switches"][0]["name"] = "par-leaf-0001"
            listing.write_text(yaml.safe_dump(switches))
        names = [s["name"] for s in switches["switches"]]
        all_vars = {
            **VAULT,
            "ansible_connection": "local",
            "ansible_python_interpreter": sys.executable,
            "wanka_root": str(tmp / run / "root"),
            "ztp_server_manage_service": False,
            "ztp_server_identities": {
                n: {"esn": f"2102311LDL{i:010d}"} for i, n in enumerate(names)
            },
        }
        (tmp / run).mkdir()
        runner = Runner(tmp / run, folder / "hosts.yml", {"all": {"vars": all_vars}})
        res = runner.play("playbooks/ztp.yml", "--tags", "ztp_ini")
        assert res.returncode != 0  # refused, each time
        assert not list((tmp / run / "root").rglob("*.cfg"))  # nothing staged
        outputs.append(res.stdout)
    listing.write_text(planted_list)
    assert planted["p"]["ztp-list"] in outputs[0]  # the planted name, printed as its text
    path, line = planted["where"]["ztp-config"]
    assert f"{path}:{line}: template syntax '{{#'" in outputs[1], outputs[1][-4000:]
    assert _ran(planted) == []


def test_the_same_script_read_as_a_template_runs_its_payload(planted, roles_run):
    """The check can fail: lookup('template'), as border_deploy read its script before, runs it."""
    assert _ran(planted) == []
    tmp = planted["tmp"]
    play = tmp / "control.yml"
    play.write_text(
        "- name: Control\n  hosts: fw-01\n  gather_facts: false\n  tasks:\n"
        "    - name: Read the script as a template\n      ansible.builtin.debug:\n"
        f"        msg: \"{{{{ lookup('ansible.builtin.template', '{planted['control']}') }}}}\"\n"
    )
    overrides = {"all": {"hosts": {"fw-01": {"ansible_connection": "local"}}}}
    res = Runner(tmp / "control", planted["folder"] / "hosts.yml", overrides).play(str(play))
    assert res.returncode == 0, res.stdout[-3000:]
    ran = _ran(planted)
    for m in planted["markers"].iterdir():
        m.unlink()
    assert ran == ["RAN-control"]
