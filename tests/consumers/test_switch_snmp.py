"""SNMPv3 on the CloudEngine switches as a real box takes it (issue #30 item 6, review 2 findings
13 and 14): no configuration carries an SNMP key (`cipher` takes device-encrypted text, never a
Vault plaintext), every switch answers SNMP on the interface that holds the address snmp_exporter
polls (`snmp-agent protocol source-interface`), and roles/switch_deploy types the keys at the
switch's password prompts: against the CE SSH double (tests/doubles/ce_switch.py) a switch booted
from its ZTP startup file gets both keys in one commit, a second run changes nothing, and a
rotation types the new keys."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.support.ansible_run import ROOT, VAULT, Runner, recap
from tests.support.examples import EXAMPLES, LARGE_EXAMPLES, generated, render_example

USM = re.compile(r"^snmp-agent usm-user v3 .*$", re.M)
# one out-of-band switch (managed on LoopBack0) and three on MEth0/0/0, an M-LAG pair among them
SWITCHES = ("oob-core-001", "biz-leaf-0001", "biz-leaf-0002", "par-spine-001")


@pytest.fixture(scope="module")
def pod(tmp_path_factory):
    return render_example(tmp_path_factory, "snmp")


def _ce_configs(files: dict[str, str]) -> dict[str, str]:
    return {
        path: text
        for path, text in files.items()
        if re.fullmatch(r"files/(switches|ztp/configs)/[^/]+\.cfg", path)
    }


@pytest.mark.parametrize("name", [n for n in EXAMPLES if n not in LARGE_EXAMPLES])
def test_no_switch_configuration_carries_an_snmp_key(name):
    configs = _ce_configs({f.path: f.data.decode() for f in generated(name).files})
    assert configs
    for path, text in configs.items():
        lines = USM.findall(text)
        assert lines, path
        assert not [ln for ln in lines if " cipher" in ln or "{{" in ln], path
        user = {ln.split()[3] for ln in lines}
        assert len(user) == 1, path
        # the user, its group, and both modes in the form that asks for the key
        assert {re.sub(r"^snmp-agent usm-user v3 \S+ ?", "", ln).split(" ")[0] for ln in lines} == {
            "",
            "group",
            "authentication-mode",
            "privacy-mode",
        }, path


def _address_of(text: str, interface: str) -> str | None:
    section = re.search(rf"^interface {re.escape(interface)}\n((?: .*\n)*)", text, re.M)
    m = section and re.search(r"^ ip address (\S+) ", section[1], re.M)
    return m[1] if m else None


def test_every_switch_answers_snmp_on_the_interface_of_its_polled_address(pod):
    targets = json.loads((pod / "files/monitoring/targets/snmp.json").read_text())
    polled = {t["labels"]["switch"]: t["targets"][0] for t in targets}
    configs = sorted((pod / "files/switches").glob("*.cfg"))
    assert configs
    for kind in ("switches", "ztp/configs"):
        for path in sorted((pod / "files" / kind).glob("*.cfg")):
            text = path.read_text()
            (source,) = re.findall(r"^snmp-agent protocol source-interface (\S+)$", text, re.M)
            assert _address_of(text, source) == polled[path.stem], (path, source)
            assert re.search(rf"^snmp-agent trap source {re.escape(source)}$", text, re.M), path
    assert {p.stem for p in configs} <= set(polled)


def test_verify_passes_on_the_generated_pod(pod):
    res = subprocess.run(
        [sys.executable, "-m", "generator", "verify", str(pod)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr


def _booted(pod, name: str) -> str:
    """The startup file as the ZTP server stages it: its Vault placeholders filled."""
    text = (pod / "files/ztp/configs" / f"{name}.cfg").read_text()
    return re.sub(r"\{\{ (vault_\w+) \}\}", lambda m: VAULT[m[1]], text)


@pytest.fixture(scope="module")
def fleet(pod, tmp_path_factory):
    from tests.doubles.ce_switch import Fleet, Switch  # asyncssh: only when these tests run

    tmp = tmp_path_factory.mktemp("snmp-deploy")
    doubles = []
    for name in SWITCHES:
        sw = Switch(name)
        sw.load(_booted(pod, name))  # fresh from ZTP: the startup file sets no key
        doubles.append(sw)
    fleet = Fleet(doubles, password=VAULT["vault_switch_admin_password"]).start()
    overrides = {
        "all": {
            "vars": {**VAULT, "switch_deploy_backup_dir": str(tmp / "backups")},
            "hosts": {
                n: {"ansible_host": "127.0.0.1", "ansible_port": fleet.ports[n]} for n in SWITCHES
            },
        }
    }
    runner = Runner(tmp, pod / "hosts.yml", overrides)
    rollout = ["-e", f"@{pod / 'files/switch-rollout.yml'}", "--limit", ",".join(SWITCHES)]
    yield {"fleet": fleet, "runner": runner, "rollout": rollout}
    fleet.stop()


def _keyed(config: str) -> dict[str, str]:
    """kind -> mode of each SNMPv3 key line the switch displays with its ciphertext."""
    return dict(
        re.findall(
            r"^snmp-agent usm-user v3 \S+ (\w+)-mode (\S+) cipher %\+%#\S+%\+%#$", config, re.M
        )
    )


@pytest.mark.slow
def test_deploy_sets_the_keys_at_the_prompts_then_changes_nothing(fleet, pod):
    switches = fleet["fleet"].switches
    for sw in switches.values():
        assert _keyed(sw.config()) == {}  # no key after ZTP: the switch answers no SNMPv3 yet
    first = fleet["runner"].play("playbooks/switch-changes.yml", *fleet["rollout"])
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-2000:]
    assert {h for h, (_, c, _) in recap(first).items() if c} == set(SWITCHES)
    assert VAULT["vault_snmp_auth_key"] not in first.stdout
    assert VAULT["vault_snmp_priv_key"] not in first.stdout
    for name, sw in switches.items():
        assert sw.keys == {
            "authentication": VAULT["vault_snmp_auth_key"],
            "privacy": VAULT["vault_snmp_priv_key"],
        }, name
        assert _keyed(sw.config()) == {"authentication": "sha2-256", "privacy": "aes256"}, name
        assert sw.log.count("commit") == 1, name
        typed = sw.log.index("snmp-agent usm-user v3 wanka-nms authentication-mode sha2-256")
        assert sw.log[typed + 1 : typed + 3] == ["******", "******"], name  # Enter / Confirm
        assert VAULT["vault_snmp_auth_key"] not in sw.log

    again = fleet["runner"].play("playbooks/switch-changes.yml", *fleet["rollout"])
    assert again.returncode == 0, again.stdout[-3000:]
    assert {h: c for h, (_, c, _) in recap(again).items() if c} == {}
    assert all(sw.log.count("commit") == 1 for sw in switches.values())


@pytest.mark.slow
def test_the_keys_survive_a_later_change_that_is_rolled_back(fleet):
    """The keys are committed on their own: a later run whose change the switch accepts but
    does not apply is rolled back (rollback configuration last 1) and the keys stay."""
    name = "biz-leaf-0002"
    sw = fleet["fleet"].switches[name]
    if not sw.keys:  # run alone: set the first keys
        fleet["runner"].play("playbooks/switch-changes.yml", *fleet["rollout"], "--limit", name)
    keyed = _keyed(sw.config())
    assert keyed == {"authentication": "sha2-256", "privacy": "aes256"}
    sw.load(sw.config().replace("\nlldp enable\n", "\n"))
    sw.ignore.append(r"^lldp enable$")
    sw.log.clear()
    res = fleet["runner"].play("playbooks/switch-changes.yml", *fleet["rollout"], "--limit", name)
    sw.ignore.clear()
    assert res.returncode != 0
    assert "rolled back to the configuration before the commit (restored)" in " ".join(
        res.stdout.split()
    )
    assert "rollback configuration last 1" in sw.log
    assert _keyed(sw.config()) == keyed
    fleet["runner"].play("playbooks/switch-changes.yml", *fleet["rollout"], "--limit", name)


@pytest.mark.slow
def test_rotation_types_the_new_keys(fleet):
    name = "par-spine-001"
    sw = fleet["fleet"].switches[name]
    if not sw.keys:  # run alone: set the first keys
        fleet["runner"].play("playbooks/switch-changes.yml", *fleet["rollout"], "--limit", name)
    before = sw.config()
    sw.log.clear()
    new = {"vault_snmp_auth_key": "rotated-auth-key-2", "vault_snmp_priv_key": "rotated-priv-2"}
    res = fleet["runner"].play(
        "playbooks/switch-changes.yml",
        *fleet["rollout"],
        "--limit",
        name,
        "-e",
        "switch_deploy_snmp_rotate=true",
        *[a for k, v in new.items() for a in ("-e", f"{k}={v}")],
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert {h for h, (_, c, _) in recap(res).items() if c} == {name}
    assert sw.keys == {
        "authentication": new["vault_snmp_auth_key"],
        "privacy": new["vault_snmp_priv_key"],
    }
    assert sw.log.count("commit") == 1
    assert sw.config() != before and _keyed(sw.config()) == _keyed(before)


@pytest.mark.slow
def test_a_key_the_switch_refuses_fails_the_run_and_discards_the_change(fleet):
    """A Vault key shorter than the 8 characters the page allows: the switch answers with an
    error after "Confirm Password:", the role discards the uncommitted change and fails."""
    name = "oob-core-001"
    sw = fleet["fleet"].switches[name]
    before = sw.config()
    sw.log.clear()
    res = fleet["runner"].play(
        "playbooks/switch-changes.yml",
        *fleet["rollout"],
        "--limit",
        name,
        "-e",
        "switch_deploy_snmp_rotate=true",
        "-e",
        "vault_snmp_priv_key=short",
    )
    assert res.returncode != 0
    out = " ".join(res.stdout.split())
    assert "rejected an SNMPv3 key line; that uncommitted change was discarded" in out
    assert "privacy-mode aes256" in out and "short" not in out
    assert "commit" not in sw.log and "clear configuration candidate" in sw.log
    assert sw.config() == before
