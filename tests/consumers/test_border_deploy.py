"""Border delivery (issue #30 item 4, review 2 finding 15): pod-128 generated into a temporary
folder; its border configurations carry SNMPv3 (no v1/v2c), hardened SSH and a trap to the
monitoring node, every snmp.json target of the border has its v3 user, every line is a form of
the command table and `wanka verify` passes; playbooks/border.yml (role border_deploy) runs for
real against SSH doubles of the NE8000 and USG6000E (tests/doubles/border_device.py): the first
run applies the scripts and types the SNMPv3 keys at the prompts, the second changes nothing."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from generator.analysis.command_table import check, load_table
from tests.support.ansible_run import ROOT, VAULT, Runner, recap
from tests.support.examples import render_example

BORDER = {
    "rtr-01": "huawei-ne",
    "rtr-02": "huawei-ne",
    "fw-01": "huawei-usg",
    "fw-02": "huawei-usg",
}
PASSWORD = "double-border-pw"


@pytest.fixture(scope="module")
def pod(tmp_path_factory):
    return render_example(tmp_path_factory, "border")


def _cfg(pod, name: str) -> str:
    return (pod / "files/border" / f"{name}.cfg").read_text()


def test_border_configs_are_table_forms_and_verify(pod):
    table = load_table()
    for name, platform in BORDER.items():
        bad = check(_cfg(pod, name), platform, table)
        assert not bad, [(b.number, b.view, b.text, b.problem) for b in bad]
    res = subprocess.run(
        [sys.executable, "-m", "generator", "verify", str(pod)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stdout + res.stderr


def test_every_border_snmp_target_has_a_v3_user_and_traps_to_the_monitoring_node(pod):
    import yaml

    targets = json.loads((pod / "files/monitoring/targets/snmp.json").read_text())
    border = {
        t["labels"]["switch"]: t["targets"] for t in targets if t["labels"]["plane"] == "border"
    }
    assert set(border) == set(BORDER)
    inventory = yaml.safe_load((pod / "hosts.yml").read_text())
    monitoring = {
        re.search(
            r'^ansible_host: !unsafe "(.+)"$', (pod / "host_vars" / f"{h}.yml").read_text(), re.M
        )[1]
        for h in inventory["all"]["children"]["monitoring"]["hosts"]
    }
    assert monitoring
    for name, addresses in border.items():
        lines = _cfg(pod, name).splitlines()
        users = {ln.split()[3] for ln in lines if ln.startswith("snmp-agent usm-user v3 ")}
        assert len(users) == 1, (name, users)
        user = users.pop()
        for mode in ("authentication-mode sha2-256", "privacy-mode aes256"):
            assert f"snmp-agent usm-user v3 {user} {mode}" in lines, name  # the key at its prompt
        assert not any(" cipher " in ln for ln in lines if ln.startswith("snmp-agent")), name
        assert "snmp-agent sys-info version v3" in lines
        assert not any("community" in ln or "v2c" in ln or "v1" in ln.split() for ln in lines)
        # polled on the management address SNMP answers on
        assert f" ip address {addresses[0]} 26" in lines, (name, addresses)
        mgmt = next(ln.split()[-1] for ln in lines if ln.startswith("snmp-agent protocol source-"))
        assert (
            mgmt
            == yaml.safe_load((pod / f"files/border/{name}.yml").read_text())["management"][
                "interface"
            ]
        )
        traps = [ln for ln in lines if ln.startswith("snmp-agent target-host trap ")]
        assert {ln.split()[5] for ln in traps} == monitoring, name
        assert all(ln.endswith(f"params securityname {user} v3 privacy") for ln in traps)
        assert "ssh server cipher aes128_ctr aes256_ctr aes192_ctr aes128_gcm aes256_gcm" in lines


@pytest.mark.slow
def test_border_deploy_applies_then_changes_nothing(pod, tmp_path):
    from tests.doubles.border_device import Device, Fleet  # asyncssh: only when this test runs

    devices = [Device(n, p, running={f"sysname {n}": {}}) for n, p in BORDER.items()]
    fleet = Fleet(devices, PASSWORD).start()
    try:
        overrides = {
            "all": {
                "vars": {
                    **VAULT,
                    "vault_border_admin_password": PASSWORD,
                },
                "hosts": {
                    n: {"ansible_host": "127.0.0.1", "ansible_port": fleet.ports[n]} for n in BORDER
                },
            }
        }
        runner = Runner(tmp_path, pod / "hosts.yml", overrides)
        first = runner.play("playbooks/border.yml")
        assert first.returncode == 0, first.stdout[-4000:] + first.stderr[-2000:]
        assert {h for h, (_, c, _) in recap(first).items() if c} == set(BORDER)
        assert VAULT["vault_snmp_auth_key"] not in first.stdout
        for dev in fleet.devices.values():
            shown = dev.config()
            assert dev.keys == {
                "authentication": VAULT["vault_snmp_auth_key"],
                "privacy": VAULT["vault_snmp_priv_key"],
            }
            assert (
                "snmp-agent usm-user v3 wanka-nms authentication-mode sha2-256 cipher %#%#" in shown
            )
            assert "snmp-agent target-host trap address udp-domain" in shown
            assert dev.saved == 1 and dev.commits == (1 if dev.platform == "huawei-ne" else 0)
            assert (pod.parent / "pod-128.site/records/border-backups" / f"{dev.name}.cfg").exists()
            assert not any("Error" in line for line in dev.log)
        second = runner.play("playbooks/border.yml")
        assert second.returncode == 0, second.stdout[-4000:]
        assert {h: c for h, (_, c, _) in recap(second).items() if c} == {}
        assert all(d.saved == 1 and d.commits <= 1 for d in fleet.devices.values())
    finally:
        fleet.stop()
