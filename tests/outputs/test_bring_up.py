"""docs/bring-up.md, the day-0 runbook, checked against the folder it is generated into and the
repository whose playbooks it names: what a user following it would find missing or out of order.

The relay path is read from the rendered switch configurations (`dhcp relay server-ip`) and the
IP plan, not from the model, so a wrong list in the runbook cannot agree with itself."""

from __future__ import annotations

import csv
import io
import os
import re
import subprocess

import pytest
import yaml

from generator import output
from generator.analysis.command_table import walk
from tests.support.examples import ROOT, generated

EXAMPLES = ("pod-128.yaml", "supernode-768.yaml")


def _files(name: str) -> dict[str, bytes]:
    return {f.path: f.data for f in generated(name).files}


def _runbook(name: str) -> str:
    return _files(name)["docs/bring-up.md"].decode()


def _section(text: str, number: int) -> str:
    start = text.index(f"\n## {number}. ")
    end = text.find("\n## ", start + 1)
    return text[start : end if end > 0 else len(text)]


def _table(section: str) -> list[list[str]]:
    """The rows of the first Markdown table in `section` (header and rule left out)."""
    rows, seen = [], False
    for line in section.splitlines():
        if line.startswith("|"):
            seen = True
            rows.append([c.strip() for c in line.strip("|").split("|")])
        elif seen:
            break
    return rows[2:]


def _relays(files: dict[str, bytes]) -> set[str]:
    return {
        p.rsplit("/", 1)[1][:-4]
        for p, data in files.items()
        if p.startswith("files/switches/")
        and p.endswith(".cfg")
        and b"dhcp relay server-ip" in data
    }


@pytest.mark.parametrize("name", EXAMPLES)
def test_console_devices_exist_with_their_files_and_include_the_relay_path(name):
    files, text = _files(name), _runbook(name)
    rows = _table(_section(text, 1))
    assert rows
    devices = {r[0] for r in rows}
    for device, *_, path, _why in rows:
        assert path in files, (device, path)
        assert path.rsplit("/", 1)[1] == f"{device}.cfg"
        assert f"host_vars/{device}.yml" in files, device
    # every switch that relays ZTP DHCP is built from the console
    relays = _relays(files)
    assert relays and relays <= devices, relays - devices
    # so are the gateway of the ZTP servers' (controllers') in-band subnet and the border
    plan = list(csv.DictReader(io.StringIO(files["files/ip-plan.csv"].decode())))
    controllers = [r[0] for r in _table(_section(text, 2))]
    assert controllers
    for c in controllers:
        host_vars = files[f"host_vars/{c}.yml"].decode()  # YAML with !unsafe tags
        gateway = re.search(r'^inband_gateway: (?:!unsafe )?"([\d.]+)"', host_vars, re.M)[1]
        owners = {r["device"] for r in plan if r["address"] == gateway}
        assert owners and owners <= devices, (c, gateway, owners)
    border = {p.rsplit("/", 1)[1][:-4] for p in files if re.match(r"files/border/.*\.cfg$", p)}
    assert border and border <= devices


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_pasted_line_that_asks_a_question_is_listed_with_its_answer(name):
    """A console paste answers a question with its next line (the CE `ssh server-source` [Y/N]
    would eat the line after it): every line of a pasted file that the command table says asks
    something is in step 1's table of questions, with the table's answer."""
    files, text = _files(name), _runbook(name)
    devices = generated(name).cluster.device_by_name
    section = _section(text, 1)
    console = _table(section)
    rows = section[section.index("| platform | line |") :].split("\n\n")[0].splitlines()[2:]
    cells = [[c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", r)[1:-1]] for r in rows]
    listed = {(c[0], c[1]): c[3] for c in cells}
    seen = set()
    for device, *_, path, _why in console:
        cfg = files[path].decode()
        platform = devices[device].platform
        for line in walk(cfg, platform):
            if line.command and line.command.prompt:
                key = (platform, line.command.form)
                assert key in listed, (path, line.number, line.text)
                assert listed[key] == " / ".join(a for _, a in line.command.prompt)
                seen.add(key)
    assert ("huawei-ce", "ssh server-source -i <if>") in seen


@pytest.mark.parametrize("name", EXAMPLES)
def test_ztp_switches_are_those_files_ztp_stages_and_none_of_the_console_ones(name):
    files, text = _files(name), _runbook(name)
    staged = yaml.safe_load(files["files/ztp/switches.yml"])["switches"]
    console = {r[0] for r in _table(_section(text, 1))}
    step3 = _section(text, 3)
    listed = [
        n for row in _table(step3[step3.index("Then power on") :]) for n in row[3].split(", ")
    ]
    assert len(listed) == len(set(listed))
    # what roles/ztp_server stages, names in ztp.ini and asks an identity for is that list
    assert set(listed) == {s["name"] for s in staged} and not console & set(listed)
    # ZTP leases only to a switch with a gateway (roles/ztp_server dnsmasq.conf.j2 selectattr)
    assert all(s["gateway"] for s in staged)
    # and every switch configuration is built one way or the other
    configs = {p.rsplit("/", 1)[1][:-4] for p in files if re.match(r"files/switches/.*\.cfg$", p)}
    assert configs == set(listed) | (console & configs)
    count = re.search(r"power on the (\d+) switches", text)
    assert count and int(count[1]) == len(listed)
    # the relays named are the addresses of the controllers the runbook brings up in step 2
    controllers = {r[1].split("/")[0] for r in _table(_section(text, 2))}
    relayed = {
        m
        for p in _relays(files)
        for m in re.findall(rb"dhcp relay server-ip (\S+)", files[f"files/switches/{p}.cfg"])
    }
    assert {a.decode() for a in relayed} == controllers


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_playbook_role_and_file_named_exists(name):
    files, text = _files(name), _runbook(name)
    playbooks = set(re.findall(r"playbooks/[\w.-]+\.yml", text))
    assert {"playbooks/ztp.yml", "playbooks/switches.yml", "playbooks/hosts.yml"} <= playbooks
    for p in playbooks | {"site.yml"}:
        assert (ROOT / p).is_file(), p
    roles = set(re.findall(r"roles/(\w+)", text))
    assert {"ztp_server", "switch_config", "host_network", "npu_acceptance"} <= roles
    for r in roles:
        assert (ROOT / "roles" / r / "tasks" / "main.yml").is_file(), r
    # a path, or a folder when a placeholder (files/switches/<name>.cfg) or a slash ends it
    named = set(re.findall(r"(?<![\w/}])(files/[\w./-]*[\w/])(<?)", text))
    assert len(named) > 10
    for path, placeholder in named:
        if placeholder or path.endswith("/"):
            assert any(f.startswith(path) for f in files), path
        else:
            assert path in files, path
    # every command names this cluster's folder and overlay, in the README's order
    for line in text.splitlines():
        if line.startswith(("ansible-playbook", "ansible ")):
            assert f"-i inventories/{name[:-5]}/hosts.yml -i inventories/{name[:-5]}.site" in line


@pytest.mark.parametrize("name", EXAMPLES)
def test_steps_are_in_dependency_order_and_undated(name):
    text = _runbook(name)
    steps = [
        "ansible.builtin.copy",  # console files rendered
        "nmcli connection add",  # controllers
        "playbooks/ztp.yml --ask-vault-pass",
        "playbooks/switches.yml",  # LLDP
        "playbooks/hosts.yml --ask-vault-pass\n",
        "playbooks/preflight.yml --ask-vault-pass\n",
        "playbooks/acceptance.yml --ask-vault-pass\n",
        "playbooks/ops_checklist.yml --ask-vault-pass\n",
    ]
    at = [text.find(s) for s in steps]
    assert -1 not in at, [s for s, i in zip(steps, at, strict=True) if i < 0]
    assert at == sorted(at)
    headings = re.findall(r"^## (\d)\.", text, re.M)
    assert headings == ["1", "2", "3", "4", "5"]
    assert not re.search(r"\b20\d\d-\d\d-\d\d\b|\d\d:\d\d:\d\d", text)
    if name == "supernode-768.yaml":  # A3 rank table 1.2: facts before the hosts get it
        assert text.index("playbooks/npu_facts.yml") < text.index(
            "playbooks/hosts.yml --ask-vault-pass\n"
        )


@pytest.mark.slow  # ansible runs: ~7 s
def test_console_render_commands_paste_and_render_the_secrets(tmp_path):
    """The step-1 commands, pasted in a shell (without --ask-vault-pass: the test's Vault
    values are plain), write every console device's file with its secrets rendered."""
    files, text = _files("pod-128.yaml"), _runbook("pod-128.yaml")
    output.write(tmp_path / "inventories" / "pod-128", generated("pod-128.yaml").files)
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    names, mkdir = blocks[0], blocks[1]
    step1 = _section(text, 1)
    commands = re.search(r"```sh\n(ansible .*?)```", step1, re.S)[1]
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"))
    vault = subprocess.run(names, shell=True, cwd=tmp_path, capture_output=True, text=True)
    secrets = {v: f"Console-{i}-secret" for i, v in enumerate(vault.stdout.split())}
    assert {"vault_switch_admin_password", "vault_border_admin_password"} <= set(secrets)
    subprocess.run(mkdir, shell=True, cwd=tmp_path, check=True)
    site = tmp_path / "inventories" / "pod-128.site" / "group_vars" / "all"
    (site / "site.yml").write_text(yaml.safe_dump(secrets))
    res = subprocess.run(
        commands.replace(" --ask-vault-pass", ""),
        shell=True,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    records = tmp_path / "inventories" / "pod-128.site" / "records" / "console"
    for device, *_, path, _why in _table(step1):
        rendered = (records / f"{device}.cfg").read_text()
        assert "{{" not in rendered, device
        used = set(re.findall(r"vault_[a-z_]+", files[path].decode()))
        assert used and all(secrets[v] in rendered for v in used), device
        assert (records / f"{device}.cfg").stat().st_mode & 0o077 == 0


def test_console_render_commands_never_run_template_syntax_in_a_config(tmp_path):
    """Template syntax planted in a console-built device's config (a pull request could) is not
    run by the step-1 commands: the file is read as data, only `{{ vault_* }}` placeholders are
    filled, and the command fails naming the file and line (issue #40 item 3)."""
    text = _runbook("pod-128.yaml")
    folder = tmp_path / "inventories" / "pod-128"
    output.write(folder, generated("pod-128.yaml").files)
    blocks = re.findall(r"```sh\n(.*?)```", text, re.S)
    names, mkdir = blocks[0], blocks[1]
    step1 = _section(text, 1)
    commands = re.search(r"```sh\n(ansible .*?)```", step1, re.S)[1]
    device = _table(step1)[0][0]
    config = next(folder.glob(f"files/*/{device}.cfg"))
    marker = tmp_path / "ran"
    lines = config.read_text().splitlines()
    lines.insert(2, f"# {{{{ lookup('ansible.builtin.pipe', 'touch {marker}') }}}}")
    config.write_text("\n".join(lines) + "\n")
    vault = subprocess.run(names, shell=True, cwd=tmp_path, capture_output=True, text=True)
    secrets = {v: f"Console-{i}-secret" for i, v in enumerate(vault.stdout.split())}
    subprocess.run(mkdir, shell=True, cwd=tmp_path, check=True)
    site = tmp_path / "inventories" / "pod-128.site" / "group_vars" / "all"
    (site / "site.yml").write_text(yaml.safe_dump(secrets))
    env = dict(os.environ, ANSIBLE_CONFIG=str(ROOT / "ansible.cfg"))
    res = subprocess.run(
        "set -e\n" + commands.replace(" --ask-vault-pass", ""),
        shell=True,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert res.returncode != 0
    where = f"{config.relative_to(folder)}:3: template syntax"
    assert where in res.stdout + res.stderr, res.stdout[-2000:]
    assert not marker.exists(), "the planted template syntax ran"
    assert not (tmp_path / "inventories/pod-128.site/records/console" / f"{device}.cfg").exists()
