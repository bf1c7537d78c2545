"""Hostile values against `wanka site init`, the ZTP server role, host_network's keyfiles and the
acceptance module (issue #40 item 4).

A generated pod-128 folder, edited as an attacker would (a pull request, a hand edit) or given
hostile site values: each ends refused with a located message (exit 2 for `wanka site init`, a
failed assert naming the variable or file field for a role, a PlanError naming the plan entry for
the module) or harmless, and nothing is written outside the overlay or before the refusal. The
roles run in the real ansible-playbook (tests/support/ansible_run.py), with a fake root."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from generator.cli import main
from tests.support.ansible_run import VAULT, Runner, play_locally, plugin
from tests.support.examples import render_example

ROOT = Path(__file__).resolve().parents[2]
OUTSIDE = "# a file outside the overlay\n"


@pytest.fixture(scope="module")
def pod(tmp_path_factory) -> Path:
    return render_example(tmp_path_factory, "hostile-site")


@pytest.fixture
def folder(pod, tmp_path) -> Path:
    """A copy of the generated pod-128 this test may edit (its overlay goes beside it)."""
    out = tmp_path / "pod-128"
    shutil.copytree(pod, out, symlinks=True)
    return out


def _wanka(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out + err


def _files(path: Path) -> dict[str, bytes]:
    return {p.relative_to(path).as_posix(): p.read_bytes() for p in path.rglob("*") if p.is_file()}


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


# ---------------------------------------------------------------------------------------------
# `wanka site init`: an overlay that is not a real folder


def test_an_overlay_that_is_a_symlink_is_refused_and_its_target_untouched(folder, tmp_path, capsys):
    target = tmp_path / "elsewhere"
    (target / "group_vars/all").mkdir(parents=True)
    (target / "group_vars/all/site.yml").write_text(OUTSIDE)
    site = folder.with_name("pod-128.site")
    site.symlink_to(target)
    before = _files(target)
    for force in ((), ("--force",)):
        code, text = _wanka(capsys, "site", "init", str(folder), *force)
        assert code == 2, text
        assert text == (
            f"wanka: {site} is a symbolic link (to {target}); site init writes only into a real"
            " folder beside the generated one: remove the link\n"
        )
        assert _files(target) == before


def test_an_overlay_that_is_a_file_is_refused(folder, capsys):
    site = folder.with_name("pod-128.site")
    site.write_text(OUTSIDE)
    code, text = _wanka(capsys, "site", "init", str(folder))
    assert (code, text) == (2, f"wanka: {site} is a file, where site init writes a folder\n")
    assert site.read_text() == OUTSIDE


@pytest.mark.parametrize(
    "link",
    ["group_vars", "group_vars/all", "group_vars/all/vault.yml", "hosts.yml"],
)
def test_a_symlink_inside_the_overlay_is_refused_even_with_force(folder, tmp_path, capsys, link):
    """A folder or file of the overlay linked elsewhere (dangling for hosts.yml) would take the
    writes and --force's replacements wherever it points."""
    site = folder.with_name("pod-128.site")
    target = tmp_path / "elsewhere"
    target.mkdir()
    if link.endswith(".yml"):
        (site / link).parent.mkdir(parents=True, exist_ok=True)
        target = target / "secret.yml" if link != "hosts.yml" else tmp_path / "no-such-file"
        if link != "hosts.yml":
            target.write_text(OUTSIDE)
    else:
        (site / link).parent.mkdir(parents=True, exist_ok=True)
    (site / link).symlink_to(target)
    before = _files(tmp_path / "elsewhere")
    code, text = _wanka(capsys, "site", "init", str(folder), "--force")
    assert code == 2, text
    assert text.startswith(f"wanka: {site / link} is a symbolic link (to {target});"), text
    assert _files(tmp_path / "elsewhere") == before
    assert not (tmp_path / "no-such-file").exists()
    assert not [p for p in site.rglob("*") if p.is_file() and not p.is_symlink()]


# ---------------------------------------------------------------------------------------------
# `wanka site init`: values of the generated folder that would break out of their YAML line or
# comment (and go on into dnsmasq.conf, the ZTP intermediate file or a keyfile through the roles)

SITE_CASES = {
    # a rack that ends its comment and adds an identity whose ESN reaches dnsmasq.conf
    "rack line break": (
        "host_vars/par-leaf-0001.yml",
        'rack: !unsafe "T01-01"',
        'rack: !unsafe "T01-01\\nztp_server_interface: \\"x\\\\ndhcp-option=3,6.6.6.6\\""',
        "host_vars/par-leaf-0001.yml: rack 'T01-01\\x0aztp_server_interface: ",
    ),
    "rack U+2028": (
        "host_vars/par-leaf-0001.yml",
        'rack: !unsafe "T01-01"',
        'rack: !unsafe "T01-01\\u2028x: 1"',
        "host_vars/par-leaf-0001.yml: rack 'T01-01\\u2028x: 1' is not a rack name",
    ),
    "rack_u text": (
        "host_vars/par-leaf-0001.yml",
        "rack_u: 17",
        'rack_u: "17 # x"',
        "host_vars/par-leaf-0001.yml: rack_u '17 # x' is not a rack unit",
    ),
    "switch name line break": (
        "files/ztp/switches.yml",
        "{name: par-leaf-0001,",
        '{name: "par-leaf-0001\\ndhcp-option=3,6.6.6.6",',
        "files/ztp/switches.yml: switches[0]: name 'par-leaf-0001\\x0adhcp-option=3,6.6.6.6' is not"
        " a device name",
    ),
    "switch name comma": (
        "files/ztp/switches.yml",
        "{name: par-leaf-0001,",
        '{name: "par-leaf-0001,10.0.0.9",',
        "switches[0]: name 'par-leaf-0001,10.0.0.9' is not a device name",
    ),
    "switch model": (
        "files/ztp/switches.yml",
        "model: ce9860-4c-ei, config: configs/par-leaf-0001.cfg",
        'model: "ce9860\\n# x", config: configs/par-leaf-0001.cfg',
        "switches[0]: model 'ce9860\\x0a# x' is not a catalog model name",
    ),
    "port line break": (
        "files/cabling.csv",
        "INB-000001,inband,npu-001,mgmt0,",
        'INB-000001,inband,npu-001,"mgmt0\nmaster=evil",',
        "files/cabling.csv line 310: a_port 'mgmt0\\x0amaster=evil' is not an interface name",
    ),
    "port with a slash": (
        "files/cabling.csv",
        "INB-000001,inband,npu-001,mgmt0,",
        "INB-000001,inband,npu-001,../../etc,",
        "files/cabling.csv line 310: a_port '../../etc' is not an interface name",
    ),
    "port of 16 characters": (
        "files/cabling.csv",
        "INB-000001,inband,npu-001,mgmt0,",
        "INB-000001,inband,npu-001,mgmt0123456789ab,",
        "a_port 'mgmt0123456789ab' is not an interface name",
    ),
    "far end line break": (
        "files/cabling.csv",
        "inb-access-0001,10GE1/0/1,",
        'inb-access-0001,"10GE1/0/1\rx: 1",',
        "files/cabling.csv line 310: b_device/b_port 'inb-access-0001 10GE1/0/1\\x0dx: 1' holds a"
        " line break",
    ),
    "ntp line break": (
        "group_vars/all.yml",
        '- !unsafe "10.101.0.131"',
        '- !unsafe "10.101.0.131\\nztp_server_lease: x"',
        "group_vars/all.yml: ntp_servers[0] '10.101.0.131\\x0aztp_server_lease: x' is not an IP"
        " address",
    ),
    "switches.yml not a mapping": (
        "files/ztp/switches.yml",
        "switches:\n",
        "- switches:\n",
        "files/ztp/switches.yml: a YAML dict expected, not list",
    ),
}


@pytest.mark.parametrize("case", sorted(SITE_CASES))
def test_site_init_refuses_a_value_that_breaks_its_line(folder, capsys, case):
    rel, old, new, message = SITE_CASES[case]
    _edit(folder / rel, old, new)
    code, text = _wanka(capsys, "site", "init", str(folder))
    assert code == 2, text
    assert text.startswith(f"wanka: {folder}/") and message in text, text
    assert text.count("\n") == 1 and "Traceback" not in text
    assert not folder.with_name("pod-128.site").exists()  # nothing half-written


def test_a_folder_name_with_a_line_break_is_refused(pod, tmp_path, capsys):
    folder = tmp_path / "pod\nhosts: x"
    shutil.copytree(pod, folder)
    code, text = _wanka(capsys, "site", "init", str(folder))
    assert code == 2 and "pod\\x0ahosts: x: a folder name with a control character" in text, text
    assert list(tmp_path.iterdir()) == [folder]


def test_a_control_character_in_a_configuration_line_stays_inside_its_comment(folder, capsys):
    """vault.yml quotes, as a comment, the first configuration line that uses each secret: a
    terminal escape and U+2028 (a YAML line break) in that line are written escaped, the file
    still reads as YAML with the same keys."""
    assert _wanka(capsys, "site", "init", str(folder))[0] == 0
    vault = folder.with_name("pod-128.site") / "group_vars/all/vault.yml"
    example = re.search(
        r"^# e\.g\. (\S+): (.*vault_switch_admin_password.*)$", vault.read_text(), re.M
    )
    _edit(folder / example.group(1), example.group(2), example.group(2) + "\x1b[2J\u2028vault_x: 1")
    assert _wanka(capsys, "site", "init", str(folder), "--force")[0] == 0
    text = vault.read_text()
    # the line ends at U+2028 (str.splitlines, as YAML), the escape is written as text
    assert "\\x1b[2J" in text and "\x1b" not in text and "\u2028" not in text
    data = yaml.safe_load(text)
    assert "vault_x" not in data and data["vault_switch_admin_password"] == ""


# ---------------------------------------------------------------------------------------------
# roles/ztp_server (real ansible-playbook, fake root): what reaches dnsmasq.conf, ztp_script.ini
# and the sshd drop-in


def _identities(folder: Path) -> dict:
    names = yaml.safe_load((folder / "files/ztp/switches.yml").read_text())["switches"]
    return {s["name"]: {"esn": f"2102311LDL{i:010d}"} for i, s in enumerate(names)}


def _ztp(folder: Path, tmp: Path, *args: str, **values):
    """playbooks/ztp.yml on `folder` with the test Vault, identities for every switch and
    `values` over them; returns the run, the failure messages and the fake root."""
    root = tmp / "root"
    overrides = {
        **VAULT,
        "ansible_connection": "local",
        "ansible_python_interpreter": sys.executable,
        "wanka_root": str(root),
        "ztp_server_manage_service": False,
        "ztp_server_identities": _identities(folder),
    }
    overrides.update(values)
    (tmp / "ansible").mkdir(exist_ok=True)
    runner = Runner(tmp / "ansible", folder / "hosts.yml", {"all": {"vars": overrides}})
    res = runner.play("playbooks/ztp.yml", *args)
    return res, _messages(res.stdout), root


FAILED = re.compile(
    r"^(?:failed: \[[^]]+\] \(item=.*?\)|fatal: \[[^]]+\]: FAILED!) => (\{.*\})$", re.M
)


def _messages(stdout: str) -> list[str]:
    """The msg of every failed task result (the JSON Ansible prints)."""
    return [json.loads(m)["msg"] for m in FAILED.findall(stdout)]


def _nothing_served(root: Path) -> None:
    assert not (root / "etc/dnsmasq.d/wanka-ztp.conf").exists()
    assert not (root / "srv/ztp").exists() or not any((root / "srv/ztp").iterdir())


@pytest.fixture
def ztp_tmp(tmp_path) -> Path:
    return tmp_path


@pytest.mark.slow
def test_ztp_server_refuses_identities_that_break_dnsmasq_or_the_intermediate_file(pod, ztp_tmp):
    ids = _identities(pod)
    ids["par-leaf-0001"] = {"esn": "2102\ndhcp-option=3,6.6.6.6"}
    ids["par-leaf-0002"] = {"mac": "00e0-fc00-0001,10.0.0.9"}
    ids["par-leaf-0003"] = {"esn": 'X",port=53'}
    ids["par-leaf-0004"] = {"esn": "A" * 33}
    ids["par-spine-001"] = {"esn": "2102311LDL0000000001\n"}  # `$` would take it
    res, msgs, root = _ztp(pod, ztp_tmp, ztp_server_identities=ids)
    assert res.returncode != 0
    text = "\n".join(msgs)
    for want in (
        'ztp_server_identities.par-leaf-0001.esn "2102\\ndhcp-option=3,6.6.6.6" is not an ESN',
        'ztp_server_identities.par-leaf-0002.mac "00e0-fc00-0001,10.0.0.9" is not a MAC address',
        'ztp_server_identities.par-leaf-0003.esn "X\\",port=53" is not an ESN',
        f'ztp_server_identities.par-leaf-0004.esn "{"A" * 33}" is not an ESN (1 to 32',
        'ztp_server_identities.par-spine-001.esn "2102311LDL0000000001\\n" is not an ESN',
    ):
        assert want in text, text[-3000:]
    assert len(msgs) == 5  # the other switches pass
    _nothing_served(root)


@pytest.mark.slow
def test_ztp_server_refuses_role_options_that_break_their_file(pod, ztp_tmp):
    # the generated group_vars/all.yml outranks an inventory's group vars: wanka_cluster by -e
    cluster = json.dumps({"wanka_cluster": "pod\nport=53"})
    res, msgs, root = _ztp(
        pod,
        ztp_tmp,
        "-e",
        cluster,
        ztp_server_lease="1h\nport=53",
        ztp_server_interface="mgmt0\ndhcp-range=0.0.0.0,static",
        ztp_server_address="10.0.0.1@evil",
        ztp_server_sftp_user="wanka\nMatch all",
    )
    assert res.returncode != 0 and len(msgs) == 1, res.stdout[-3000:]
    for want in (
        'ztp_server_lease "1h\\nport=53" is not a dnsmasq lease time',
        'ztp_server_interface "mgmt0\\ndhcp-range=0.0.0.0,static" is not an interface name',
        'ztp_server_address "10.0.0.1@evil" is not an IPv4 address or DNS name',
        'ztp_server_sftp_user "wanka\\nMatch all" is not a user name',
        'wanka_cluster "pod\\nport=53" is not a cluster name',
    ):
        assert want in msgs[0], msgs[0]
    _nothing_served(root)


@pytest.mark.slow
def test_ztp_server_refuses_a_password_that_breaks_the_url_without_showing_it(pod, ztp_tmp):
    # a final newline: `^...$` (re.match) took it, and it ended option 66's line in dnsmasq.conf
    secret = "pw-6.6.6.6\n"
    res, _, root = _ztp(pod, ztp_tmp, "-vvv", vault_ztp_sftp_password=secret)
    assert res.returncode != 0
    # -vvv prints the result indented: the message is looked for in the whole output
    assert (
        "ztp_server_sftp_password (vault_ztp_sftp_password) goes into DHCP option 66" in res.stdout
    )
    assert "6.6.6.6" not in res.stdout + res.stderr
    _nothing_served(root)


@pytest.mark.slow
def test_ztp_server_refuses_an_intermediate_file_name_with_a_line_break(pod, ztp_tmp):
    res, msgs, root = _ztp(pod, ztp_tmp, ztp_server_ini_name="ztp_script.ini\n")
    assert res.returncode != 0
    assert any("ztp_server_ini_name ztp_script.ini\n: " in m for m in msgs), msgs
    _nothing_served(root)


@pytest.mark.slow
def test_ztp_server_refuses_switch_entries_that_break_dnsmasq(folder, ztp_tmp):
    """files/ztp/switches.yml edited: a name, address, gateway and configuration path that would
    add dnsmasq lines, fields or read a file outside the folder."""
    path = folder / "files/ztp/switches.yml"
    data = yaml.safe_load(path.read_text())
    s = data["switches"]
    s[0]["name"] = "par-leaf-0001\ndhcp-option=3,6.6.6.6"
    s[1]["address"] = "10.102.0.11,evil"
    s[2]["gateway"] = "10.102.0.1#x"
    s[3]["config"] = "configs/../../../../../../etc/passwd.cfg"
    path.write_text(yaml.safe_dump(data))
    ids = _identities(folder)
    ids["par-leaf-0001\ndhcp-option=3,6.6.6.6"] = {"esn": "2102311LDL0000000099"}
    res, msgs, root = _ztp(folder, ztp_tmp, ztp_server_identities=ids)
    assert res.returncode != 0 and len(msgs) == 4, res.stdout[-3000:]
    text = "\n".join(msgs)
    for want in (
        'switch "par-leaf-0001\\ndhcp-option=3,6.6.6.6": name "par-leaf-0001\\ndhcp-option',
        'switch "par-leaf-0002": address "10.102.0.11,evil" is not an IPv4 address',
        'switch "par-leaf-0003": gateway "10.102.0.1#x" is not an IPv4 address',
        'switch "par-leaf-0004": config "configs/../../../../../../etc/passwd.cfg" is not',
    ):
        assert want in text, text
    _nothing_served(root)


def _link_config(folder: Path, tmp: Path) -> str:
    secret = tmp / "outside.cfg"
    secret.write_text("OUTSIDE-SECRET\n")
    config = folder / "files/ztp/configs/par-leaf-0001.cfg"
    config.unlink()
    config.symlink_to(secret)
    return f"{folder}/files/ztp/configs/par-leaf-0001.cfg is a symbolic link"


def _link_list(folder: Path, tmp: Path) -> str:
    listed = folder / "files/ztp/switches.yml"
    copy = tmp / "switches.yml"
    shutil.copy(listed, copy)
    listed.unlink()
    listed.symlink_to(copy)
    return f"{folder}/files/ztp/switches.yml is a symbolic link"


def _link_folder(folder: Path, tmp: Path) -> str:
    configs = folder / "files/ztp/configs"
    moved = tmp / "configs"
    shutil.move(configs, moved)
    configs.symlink_to(moved)
    return "/files/ztp/configs/par-leaf-0001.cfg goes through a symbolic link"


def _fifo(folder: Path, tmp: Path) -> str:
    config = folder / "files/ztp/configs/par-leaf-0001.cfg"
    config.unlink()
    os.mkfifo(config)  # a read would block for ever
    return f"{folder}/files/ztp/configs/par-leaf-0001.cfg is not a regular file"


@pytest.mark.slow
@pytest.mark.parametrize("make", [_link_config, _link_list, _link_folder, _fifo])
def test_ztp_server_serves_only_regular_files_of_the_folder(folder, ztp_tmp, make):
    want = make(folder, ztp_tmp)
    res, msgs, root = _ztp(folder, ztp_tmp)
    assert res.returncode != 0 and any(want in m for m in msgs), res.stdout[-3000:]
    _nothing_served(root)
    assert "OUTSIDE-SECRET" not in res.stdout


@pytest.mark.slow
def test_no_secret_in_the_output_at_any_verbosity(pod, ztp_tmp):
    """The full role at -vvv, with --diff: every task that handles a secret is no_log, so no Vault
    value appears; the files it serves hold them."""
    res, msgs, root = _ztp(pod, ztp_tmp, "-vvv", "--diff")
    assert res.returncode == 0 and not msgs, res.stdout[-3000:]
    assert len(res.stdout) > 50_000  # verbose indeed (99 KB: one filter, no stat per switch)
    for value in VAULT.values():
        assert value not in res.stdout + res.stderr, value
    served = (root / "srv/ztp/ztp_script.ini").read_text()
    assert VAULT["vault_ztp_sftp_password"] in served
    dhcp = root / "etc/dnsmasq.d/wanka-ztp.conf"
    check = shutil.which("dnsmasq")
    if check:  # the drop-in is what dnsmasq reads (dnsmasq --test: "syntax check OK")
        out = subprocess.run([check, "--test", "-C", str(dhcp)], capture_output=True, text=True)
        assert out.returncode == 0 and "syntax check OK" in out.stderr, out.stderr


# ---------------------------------------------------------------------------------------------
# roles/host_network: the interface names the site gives (wanka_site_interfaces) reach the
# keyfiles' interface-name= lines

KEYFILES = """
- name: Write the keyfiles as host_network does
  hosts: npu-001
  gather_facts: false
  tasks:
    - name: The keyfile tasks
      ansible.builtin.include_role:
        name: host_network
        tasks_from: keyfiles
"""


@pytest.mark.slow
def test_host_network_refuses_an_interface_name_that_breaks_its_keyfile(pod, tmp_path):
    root = tmp_path / "root"
    connections = root / "etc/NetworkManager/system-connections"
    connections.mkdir(parents=True)
    (tmp_path / "play.yml").write_text(KEYFILES)
    env = {"ANSIBLE_ROLES_PATH": str(ROOT / "roles")}

    def run(interfaces: dict) -> tuple:
        extra = {"wanka_root": str(root), "host_network_interfaces": interfaces}
        res = play_locally(pod, tmp_path / "play.yml", tmp_path, extra, env)
        return res, _messages(res.stdout)

    res, msgs = run({"mgmt0": "eno1\n[connection]\nid=evil", "stor0": "../x", "bond0": "b" * 16})
    assert res.returncode != 0 and len(msgs) == 1, res.stdout[-3000:]
    for want in (
        'host_network_interfaces.mgmt0 "eno1\\n[connection]\\nid=evil" is not an interface name',
        'host_network_interfaces.stor0 "../x" is not an interface name',
        f'host_network_interfaces.bond0 "{"b" * 16}" is not an interface name',
    ):
        assert want in msgs[0], msgs[0]
    assert not list(connections.iterdir())
    res, msgs = run({"mgmt0": "eno1"})  # a real name passes
    assert res.returncode == 0, res.stdout[-3000:]
    assert "interface-name=eno1\n" in (connections / "mgmt0.nmconnection").read_text()


# ---------------------------------------------------------------------------------------------
# plugins/modules/wanka_hccl_acceptance.py: the plan's command as an argument list

acceptance = plugin("modules", "wanka_hccl_acceptance")


def _plan(pod: Path) -> dict:
    return yaml.safe_load((pod / "files/acceptance/plan.yml").read_text())


def test_each_filled_value_stays_one_argument(pod):
    scope = _plan(pod)["scopes"][0]
    words = acceptance.argv(scope, "scopes[0]")
    hostile = "/opt/h;touch x;$(id)\n`id` 'q'"
    argv = acceptance.fill(words, {"hostfile": "/w/h f", "ranks": "8", "hccl_test_dir": hostile})
    assert argv[:5] == ["mpirun", "-f", "/w/h f", "-n", "8"]
    assert argv[5] == hostile + "/bin/all_reduce_test"
    assert len(argv) == len(words)


PLAN_CASES = {
    "a server name with a line break": (
        lambda p: p["leaves"]["par-leaf-0001"].__setitem__(0, "npu-001\nevil:64"),
        "plan: leaves: 'npu-001\\nevil:64' is not a device name",
    ),
    "a command that is not mpirun": (
        lambda p: p["scopes"][0].__setitem__("command", "sh -c 'id'"),
        "plan: scopes[0]: command: 'mpirun ... {hccl_test_dir}/bin/all_reduce_test ...' expected",
    ),
    "an unbalanced quote": (
        lambda p: p["scopes"][0].__setitem__("command", p["scopes"][0]["command"] + " '"),
        "plan: scopes[0]: command: No closing quotation",
    ),
    "a unit name with a quote": (
        lambda p: p["scopes"][1]["units"][0].__setitem__("name", 'x"} 1\nwanka_acceptance_passed{'),
        "plan: scopes[1]: units: 'x\"} 1\\nwanka_acceptance_passed{' is not a unit name",
    ),
    "a unit of an unknown leaf": (
        lambda p: p["scopes"][1]["units"][0].__setitem__("leaves", ["par-leaf-9999"]),
        "plan: scopes[1]: units: par-leaf-0001: leaves must be leaves of the plan",
    ),
}


@pytest.mark.parametrize("case", sorted(PLAN_CASES))
def test_the_module_refuses_a_plan_value_it_cannot_use(pod, case):
    edit, message = PLAN_CASES[case]
    plan = _plan(pod)
    acceptance.check_plan(plan)  # the generated plan passes
    edit(plan)
    with pytest.raises(acceptance.PlanError) as err:
        acceptance.check_plan(plan)
    assert str(err.value) == message
