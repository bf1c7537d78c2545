"""The AI ECN check of role switch_config (review 2 finding 20, issue #29): on a switch whose
configuration enables AI ECN, `display ai-ecn calculated state` must list the lossless queue, and
when it does not the check fails naming the licence the switch's `licences` host variable holds
(CE-LIC-AFRD, "Configuration Precautions for AI ECN"). The parser reads Huawei's example output
(tests/data/captures); the playbook runs for real against the CloudEngine SSH double."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.support.ansible_run import ROOT, VAULT, Runner, plugin
from tests.support.examples import render_example
from tests.support.output_readers import inventory_vars

CAPTURE = ROOT / "tests/data/captures/ce-v300-display-ai-ecn-calculated-state.txt"
ai_ecn = plugin("filter", "wanka_ai_ecn")


def test_vendor_example_parses_to_its_two_interfaces_on_queue_4():
    rows = ai_ecn.ce_ai_ecn_state(CAPTURE.read_text())
    assert [(r["interface"], r["queue"], r["mode"]) for r in rows] == [
        ("100GE1/0/1", 4, "NN"),
        ("100GE1/0/2", 4, "NN"),
    ]
    assert ai_ecn.wanka_ai_ecn_problems(rows, 4, ["CE-LIC-AFRD"]) == []
    (problem,) = ai_ecn.wanka_ai_ecn_problems(rows, 3, ["CE-LIC-AFRD"])
    assert "not running on lossless queue 3" in problem and "CE-LIC-AFRD" in problem


def test_the_double_prints_the_vendor_example():
    from tests.doubles.ce_switch import Session, Switch  # asyncssh: only when these tests run

    session = Session.__new__(Session)
    session.sw = Switch("DeviceA", ai_ecn=[("100GE1/0/1", 4), ("100GE1/0/2", 4)])
    assert session.display("display ai-ecn calculated state") == CAPTURE.read_text()


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> Path:
    return render_example(tmp_path_factory, "ai-ecn")


def test_the_role_reads_a_switchs_licences_from_its_host_variables(rendered):
    """The licence the check names is the switch's `licences` host variable (issue #32: no
    longer parsed out of files/bom.csv); the role's default reads it."""
    hosts = inventory_vars(rendered)
    assert hosts["sto-leaf-0001"]["licences"] == ["CE-LIC-AFRD"]
    assert "licences" not in hosts["par-leaf-0001"]  # CE9860: static ECN, no licence
    defaults = yaml.safe_load((ROOT / "roles/switch_config/defaults/main.yml").read_text())
    assert defaults["switch_config_licences"] == "{{ licences | default([]) }}"


@pytest.mark.slow  # real ansible-playbook runs and SSH sessions
def test_switch_without_ai_ecn_running_fails_naming_the_licence(rendered, tmp_path):
    from tests.doubles.ce_switch import Fleet, Switch  # asyncssh: only when these tests run

    names = ("sto-leaf-0001", "par-leaf-0001", "biz-leaf-0001")  # AI ECN, static ECN, lossy
    plans = {n: yaml.safe_load((rendered / f"files/switches/{n}.yml").read_text()) for n in names}
    doubles = []
    for name, plan in plans.items():
        peers = [i for i in plan["interfaces"] if "peer" in i and i.get("mode") != "management"]
        sw = Switch(name, lldp=[(i["name"], i["peer"]["device"], i["peer"]["port"]) for i in peers])
        if (plan["lossless"] or {}).get("ecn") == "ai-ecn":
            sw.ai_ecn = [(i["name"], plan["lossless"]["queue"]) for i in peers]
        doubles.append(sw)
    fleet = Fleet(doubles, password=VAULT["vault_switch_admin_password"]).start()
    try:
        hosts = {n: {"ansible_host": "127.0.0.1", "ansible_port": fleet.ports[n]} for n in names}
        runner = Runner(tmp_path, rendered / "hosts.yml", {"all": {"vars": VAULT, "hosts": hosts}})
        args = ("--limit", ",".join(names), "-e", "ztp_server_host=none")
        res = runner.play("playbooks/switches.yml", *args)
        assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
        leaf = fleet.switches["sto-leaf-0001"]
        assert "display ai-ecn calculated state" in leaf.log
        for other in names[1:]:
            assert "display ai-ecn calculated state" not in fleet.switches[other].log

        leaf.ai_ecn = []  # no licence: the queue is not listed [unconfirmed form, see the double]
        res = runner.play("playbooks/switches.yml", *args)
    finally:
        fleet.stop()
    assert res.returncode != 0
    assert "sto-leaf-0001: AI ECN is not running on lossless queue 4" in res.stdout
    assert "check that CE-LIC-AFRD is active" in res.stdout
    assert "par-leaf-0001: AI ECN" not in res.stdout
