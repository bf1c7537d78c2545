"""`wanka site init` on a generated pod-128: the overlay it writes, and site.yml's first play
(roles/site_check) naming exactly the site variables still empty, then passing --check once they
are filled (Vault encrypted, a ZTP server, an NPU... host and a switch on the test doubles)."""

from __future__ import annotations

import csv
import hashlib
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from generator.cli import main
from generator.site import needs, read_yaml
from tests.support.ansible_run import ansible_env, doubles_path, tool, write_overrides
from tests.support.examples import render_example

ROOT = Path(__file__).resolve().parents[2]
FAKES = ROOT / "tests" / "fakes" / "bin"
SECRETS = {  # pod-128 references these (configs of switches and border devices, role defaults)
    "vault_border_admin_password",
    "vault_dfs_password",
    "vault_snmp_auth_key",
    "vault_snmp_priv_key",
    "vault_switch_admin_password",
    "vault_ztp_sftp_password",
}
INTERFACES = {  # cabled business, in-band and storage ports per host model of pod-128
    "atlas-800t-a2": {"biz0", "biz1", "mgmt0", "stor0", "stor1"},
    "oceanstor-pacific-9550": {"mgmt0", "stor0", "stor1"},
    "taishan-200-2280": {"mgmt0"},
}
SWITCHES = {  # pod-128's CloudEngine switches that ZTP builds, each needing an ESN or MAC
    *(f"{p}-leaf-000{i}" for p in ("par", "sto") for i in range(1, 5)),
    *(f"{p}-spine-00{i}" for p in ("par", "sto") for i in range(1, 5)),
    *(f"biz-{kind}{i}" for kind in ("leaf-000", "spine-00") for i in (1, 2)),
    *(f"inb-access-000{i}" for i in (1, 2)),
}
# ...and not those built from the console (docs/bring-up.md step 1): the out-of-band relays and
# cores, the controllers' in-band gateway inb-access-0003 and the in-band cores above it
CONSOLE = {
    *(f"oob-access-000{i}" for i in (1, 2, 3)),
    "inb-access-0003",
    *(f"{p}-core-00{i}" for p in ("inb", "oob") for i in (1, 2)),
}
EXPECTED = (
    SECRETS
    | {f"wanka_site_interfaces.{m}.{p}" for m, ports in INTERFACES.items() for p in ports}
    | {f"ztp_server_identities.{s}" for s in SWITCHES}
)
MISSING = re.compile(r'"msg": "\d+ site variables are still empty \(fill them in [^)]*\): ([^"]+)"')
CHECKED = ("localhost", "controller-01", "par-leaf-0001")  # site check, ZTP + hosts, switches


def _wanka(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out + err


def _tree(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(scope="module")
def pod(tmp_path_factory):
    return render_example(tmp_path_factory, "site")


def _playbook(pod: Path, *args: str, sources: tuple[Path, ...] = ()) -> subprocess.CompletedProcess:
    site = pod.with_name("pod-128.site")
    inventories = [a for p in (pod / "hosts.yml", site, *sources) for a in ("-i", str(p))]
    env = ansible_env(pod.parent, PATH=doubles_path())
    return subprocess.run(
        [tool("ansible-playbook"), *inventories, "site.yml", "--check", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def _missing(res: subprocess.CompletedProcess) -> set[str]:
    found = MISSING.search(res.stdout + res.stderr)
    assert res.returncode != 0 and found, res.stdout[-3000:] + res.stderr[-3000:]
    assert "PLAY [Import" not in res.stdout and "Verify cabling" not in res.stdout  # stopped early
    return set(found.group(1).split(", "))


def test_init_writes_the_overlay_and_never_the_folder(pod, capsys):
    before = _tree(pod)
    code, text = _wanka(capsys, "site", "init", str(pod))
    site = pod.with_name("pod-128.site")
    assert code == 0, text
    assert _tree(pod) == before
    assert sorted(_tree(site)) == [
        "group_vars/all/site.yml",
        "group_vars/all/vault.yml",
        "hosts.yml",
    ]
    values = yaml.safe_load((site / "group_vars/all/site.yml").read_text())
    vault = yaml.safe_load((site / "group_vars/all/vault.yml").read_text())
    assert vault == dict.fromkeys(SECRETS, "")
    assert (site / "group_vars/all/vault.yml").stat().st_mode & 0o077 == 0
    assert values["ztp_server_identities"] == {s: {"esn": ""} for s in SWITCHES}
    # the switches the runbook builds from the console have no identity to fill
    runbook = (pod / "docs/bring-up.md").read_text()
    assert set(re.findall(r"^\| (\S+) \|.*\| files/switches/\1\.cfg \|", runbook, re.M)) == CONSOLE
    assert {m: set(p) for m, p in values["wanka_site_interfaces"].items()} == INTERFACES
    assert set(values["wanka_site_required"]) == EXPECTED
    # each identity line states the rack and U the generated folder puts the switch in
    text = (site / "group_vars/all/site.yml").read_text()
    leaf = read_yaml(pod / "host_vars/par-leaf-0001.yml")
    assert (
        f'par-leaf-0001: {{esn: ""}}    # rack {leaf["rack"]} U{leaf["rack_u"]}, ce9860-4c-ei'
        in text
    )
    # a second run refuses, --force replaces
    mine = (site / "group_vars/all/site.yml").read_text() + "# filled\n"
    (site / "group_vars/all/site.yml").write_text(mine)
    code, text = _wanka(capsys, "site", "init", str(pod))
    assert code == 2 and text.startswith("wanka: ") and "--force" in text and text.count("\n") == 1
    assert (site / "group_vars/all/site.yml").read_text() == mine
    assert _wanka(capsys, "site", "init", str(pod), "--force")[0] == 0
    assert (site / "group_vars/all/site.yml").read_text() != mine


def test_init_refuses_a_folder_wanka_did_not_write(tmp_path, capsys):
    (tmp_path / "hosts.yml").write_text("all: {}\n")
    code, text = _wanka(capsys, "site", "init", str(tmp_path))
    assert code == 2 and text == f"wanka: {tmp_path} is not a wanka output folder " + (
        "(needs .wanka-output, hosts.yml, group_vars/all.yml, files/cabling.csv)\n"
    )
    assert not tmp_path.with_name(tmp_path.name + ".site").exists()


def test_names_yaml_would_read_as_other_types_stay_strings(pod, tmp_path, capsys):
    """A switch or port named `null`, `on` or `no` (valid device and interface names) is a null
    or a boolean to YAML 1.1 as a plain key: the overlay quotes it, so the identity and the
    interface still belong to that name (ztp_server_identities["null"]), the others stay plain."""
    import shutil

    folder = tmp_path / "pod-128"
    shutil.copytree(pod, folder)
    listed = folder / "files/ztp/switches.yml"
    listed.write_text(
        listed.read_text().replace("{name: par-leaf-0001,", "{name: \"null\",", 1)
        .replace("{name: par-leaf-0002,", "{name: \"on\",", 1)
    )  # fmt: skip
    cabling = folder / "files/cabling.csv"
    cabling.write_text(cabling.read_text().replace(",npu-001,mgmt0,", ",npu-001,no,", 1))
    code, text = _wanka(capsys, "site", "init", str(folder))
    assert code == 0, text
    site = folder.with_name("pod-128.site") / "group_vars/all/site.yml"
    values = yaml.safe_load(site.read_text())
    assert {"null", "on", "par-leaf-0003"} <= set(values["ztp_server_identities"])
    assert (
        None not in values["ztp_server_identities"] and True not in values["ztp_server_identities"]
    )
    assert "no" in values["wanka_site_interfaces"]["atlas-800t-a2"]
    assert {"ztp_server_identities.null", "ztp_server_identities.on"} <= set(
        values["wanka_site_required"]
    )
    assert '\n  par-leaf-0003: {esn: ""}' in site.read_text()  # plain where plain reads back


@pytest.mark.slow  # four real ansible-playbook runs: seconds of CPU
def test_check_names_exactly_what_is_left_then_passes_filled(pod, capsys, tmp_path):
    assert _wanka(capsys, "site", "init", str(pod), "--force")[0] == 0
    site = pod.with_name("pod-128.site")
    assert _missing(_playbook(pod)) == EXPECTED == set(needs(pod, ROOT).required())
    # secrets filled: exactly the identities and interface names remain
    vault = site / "group_vars/all/vault.yml"
    vault.write_text(
        yaml.safe_dump({name: f"test-{name[6:].replace('_', '-')}" for name in SECRETS})
    )
    assert _missing(_playbook(pod)) == EXPECTED - SECRETS
    # everything filled with test values, the secrets encrypted with ansible-vault
    path = site / "group_vars/all/site.yml"
    values = yaml.safe_load(path.read_text())
    for i, name in enumerate(sorted(values["ztp_server_identities"])):
        values["ztp_server_identities"][name] = {"esn": f"2102311LDL{i:010d}"}
    for model, ports in values["wanka_site_interfaces"].items():
        values["wanka_site_interfaces"][model] = {p: f"test-{p}" for p in ports}
    path.write_text(yaml.safe_dump(values))
    password = tmp_path / "vault-pass"
    password.write_text("test-vault-password\n")
    args = ("--vault-password-file", str(password))
    subprocess.run(
        [tool("ansible-vault"), "encrypt", str(vault), *args], check=True, capture_output=True
    )
    assert vault.read_text().startswith("$ANSIBLE_VAULT;")
    res = _filled_run(pod, tmp_path, args)
    assert res.returncode == 0, res.stdout[-4000:] + res.stderr[-3000:]
    recap = dict(
        re.findall(
            r"^(\S+)\s+:\s+ok=\d+\s+changed=\d+\s+unreachable=0\s+failed=(\d+)", res.stdout, re.M
        )
    )
    assert recap.keys() == set(CHECKED) and set(recap.values()) == {"0"}, res.stdout[-3000:]
    # the filled interface name is the one the in-band keyfile would get (--diff)
    assert "+interface-name=test-mgmt0" in res.stdout, res.stdout[-3000:]


def _filled_run(pod: Path, tmp: Path, args: tuple[str, ...]) -> subprocess.CompletedProcess:
    """site.yml --check limited to the site check, the ZTP server controller-01 (its host
    play too) and par-leaf-0001 as a CloudEngine SSH double that only the filled Vault
    password opens; local connections confined to fake roots as tests/consumers/test_ansible.py
    does."""
    from tests.doubles.ce_switch import Fleet, Switch

    roots = tmp / "roots"
    for host in CHECKED[1:]:
        for skeleton in ("etc/NetworkManager/system-connections", "etc/systemd/system"):
            (roots / host / skeleton).mkdir(parents=True, exist_ok=True)
        python = roots / host / "python"
        python.write_text(f'#!/bin/sh\nWANKA_FAKE_ROOT={roots / host} exec {sys.executable} "$@"\n')
        python.chmod(0o755)
        (roots / host / "var/lib/wanka-fake").mkdir(parents=True, exist_ok=True)
    with open(pod / "files/cabling.csv", newline="") as fh:
        lldp = [
            (r[f"{a}_port"], r[f"{b}_device"], r[f"{b}_port"])
            for r in csv.DictReader(fh)
            for a, b in (("a", "b"), ("b", "a"))
            if r[f"{a}_device"] == "par-leaf-0001"
        ]
    password = "test-switch-admin-password"  # what the test filled in for the Vault
    (tmp / "doubles").mkdir()
    fleet = Fleet([Switch("par-leaf-0001", lldp=lldp)], password).start()
    try:
        doubles = write_overrides(
            tmp / "doubles",
            {
                "all": {
                    "vars": {
                        "ansible_connection": "local",
                        "ansible_python_interpreter": f"{roots}/{{{{ inventory_hostname }}}}/python",
                        "ansible_become": False,
                        "wanka_root": str(roots) + "/{{ inventory_hostname }}",
                        "ztp_server_manage_service": False,
                    },
                    "hosts": {
                        "par-leaf-0001": {
                            "ansible_host": "127.0.0.1",
                            "ansible_port": fleet.ports["par-leaf-0001"],
                        }
                    },
                }
            },
        )
        return _playbook(pod, "--diff", "--limit", ",".join(CHECKED), *args, sources=(doubles,))
    finally:
        fleet.stop()
