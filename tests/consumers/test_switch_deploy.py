"""Day 2, run for real: playbooks/switch-changes.yml (role switch_deploy: netmiko huawei_vrpv8 +
hier_config) against CloudEngine SSH test doubles (tests/doubles/ce_switch.py), one per switch,
in the generated rolling order; and the LLDP cabling check (role switch_config) over SSH."""

from __future__ import annotations

import re

import jinja2
import pytest
import yaml

from tests.support.ansible_run import ROOT, VAULT, Runner, recap

pytestmark = pytest.mark.slow  # real ansible-playbook runs and SSH sessions: minutes of wall time

INVENTORY = ROOT / "inventories" / "cluster-1k"
SWITCHES = ("biz-leaf-0001", "biz-leaf-0002", "biz-leaf-0003", "par-spine-001")
# the secret-bearing arguments (password/key after password/authentication-mode/privacy-mode);
# `ssh server cipher aes128_ctr ...` is no secret and is printed as entered
SECRET = re.compile(
    r"(password (?:irreversible-cipher|cipher|simple)"
    r"|(?:authentication-mode|privacy-mode) \S+(?: \S+)? (?:cipher|password)) \S+"
)


def intended(name: str) -> str:
    """The generated startup configuration with the Vault stand-ins filled in."""
    text = (INVENTORY / "files/ztp/configs" / f"{name}.cfg").read_text()
    return jinja2.Template(text, keep_trailing_newline=True).render(**VAULT)


def keyed(text: str) -> str:
    """`text` on a switch whose SNMPv3 keys are set: each keyless mode line shown with its
    ciphertext (CE V300R023C00 configuration guide, SNMPv3 USM user example, Configuration
    Scripts: `... authentication-mode sha2-256 cipher %+%#...%+%#`)."""
    return re.sub(
        r"(?m)^(snmp-agent usm-user v3 \S+ (?:authentication|privacy)-mode \S+)$",
        r"\1 cipher %+%#DOUBLE-ENCRYPTED%+%#",
        text,
    )


def drifted(name: str) -> str:
    """A running configuration that has drifted from the plan: LLDP off, a description changed,
    an unplanned port configured, and the secrets printed encrypted as a switch does."""
    text = keyed(intended(name)).replace("\nlldp enable\n", "\n")
    text = re.sub(r"(\n description to )(\S+)", r"\1old-\2", text, count=1)
    text = text.replace("\nreturn\n", "\ninterface 10GE1/0/48\n description unplanned\n#\nreturn\n")
    return SECRET.sub(r"\1 %^%#DOUBLE-ENCRYPTED%^%#", text)


def normal(text: str) -> list:
    """Configuration without secrets, comments and order, for comparing."""
    return views(SECRET.sub(r"\1 *", text))


def views(text: str) -> list:
    """Each view with its lines, in any order (a switch prints them in its own fixed order)."""
    from tests.doubles.ce_switch import parse  # asyncssh: only when these tests run

    def walk(node) -> list:
        return sorted((c.text, walk(c)) for c in node.children)

    return walk(parse(text))


def shown(text: str, name: str) -> str:
    """What switch `name` displays after booting `text` (as the command table says: masks
    dotted, defaults hidden, the trap host named, its engine ID added)."""
    from tests.doubles.ce_switch import Switch  # asyncssh: only when these tests run

    sw = Switch(name)
    sw.load(text)
    return sw.config()


def lldp_rows(name: str) -> list[tuple[str, str, str]]:
    cfg = yaml.safe_load((INVENTORY / "files/switches" / f"{name}.yml").read_text())
    return [
        (i["name"], i["peer"]["device"], i["peer"]["port"])
        for i in cfg["interfaces"]
        if "peer" in i and i.get("mode") != "management"
    ]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    from tests.doubles.ce_switch import Fleet, Switch  # asyncssh: only when these tests run

    tmp = tmp_path_factory.mktemp("switches")
    doubles = []
    for name in SWITCHES:
        sw = Switch(name, lldp=lldp_rows(name))
        sw.load(drifted(name))
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
    runner = Runner(tmp, INVENTORY / "hosts.yml", overrides)
    rollout = ["-e", f"@{INVENTORY / 'files/switch-rollout.yml'}", "--limit", ",".join(SWITCHES)]
    yield {"fleet": fleet, "runner": runner, "rollout": rollout, "tmp": tmp}
    fleet.stop()


def test_check_mode_shows_the_remediation_and_changes_nothing(fleet):
    before = {n: s.config() for n, s in fleet["fleet"].switches.items()}
    res = fleet["runner"].play(
        "playbooks/switch-changes.yml", *fleet["rollout"], "--check", "--diff"
    )
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert {h for h, (_, c, _) in recap(res).items() if c} == set(SWITCHES)
    assert "lldp enable" in res.stdout and "interface 10GE1/0/48" in res.stdout
    assert "DOUBLE-ENCRYPTED" not in res.stdout
    assert [v for v in VAULT.values() if v in res.stdout] == []  # no secret in the --diff
    for name, sw in fleet["fleet"].switches.items():
        assert sw.config() == before[name]
        assert "commit" not in sw.log


def test_switches_converge_in_one_commit_each_in_batches_then_nothing_changes(fleet):
    switches = fleet["fleet"].switches
    before = {n: s.config() for n, s in switches.items()}
    res = fleet["runner"].play("playbooks/switch-changes.yml", *fleet["rollout"])
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert {h for h, (_, c, _) in recap(res).items() if c} == set(SWITCHES)
    for name, sw in switches.items():
        assert sw.log.count("commit") == 1, name
        want = shown(keyed(intended(name)) + "interface 10GE1/0/48\n", name)
        assert normal(sw.config()) == normal(want), name
        backup = fleet["tmp"] / "backups" / f"{name}.cfg"
        assert backup.read_text().replace("\r", "").strip() == before[name].strip()

    # the rolling order: batches as generated, M-LAG peers (biz-leaf-0001/0002) never together
    batches = [b.split(",") for b in re.findall(r'"msg": "batch: ([^"]+)"', res.stdout)]
    plan = yaml.safe_load((INVENTORY / "files/switch-rollout.yml").read_text())
    order = [n for n in plan["switch_rollout_order"] if n in SWITCHES]
    assert [n for b in batches for n in b] == order
    assert not any({"biz-leaf-0001", "biz-leaf-0002"} <= set(b) for b in batches)
    assert not any({"biz-leaf-0003", "biz-leaf-0004"} <= set(b) for b in batches)

    again = fleet["runner"].play("playbooks/switch-changes.yml", *fleet["rollout"])
    assert again.returncode == 0, again.stdout[-3000:]
    assert {h: c for h, (_, c, _) in recap(again).items() if c} == {}
    assert all(sw.log.count("commit") == 1 for sw in switches.values())


def test_a_rejected_line_is_discarded_and_leaves_the_switch_as_it_was(fleet):
    sw = fleet["fleet"].switches["par-spine-001"]
    sw.load(drifted("par-spine-001"))
    sw.reject.append(r"^lldp enable$")
    sw.log.clear()
    before = sw.config()
    res = fleet["runner"].play(
        "playbooks/switch-changes.yml", *fleet["rollout"], "--limit", "par-spine-001"
    )
    assert res.returncode != 0
    out = " ".join(res.stdout.split())
    sw.reject.clear()
    assert (
        "rejected a line; the uncommitted change was discarded (clear configuration candidate), "
        "nothing after it was sent, running configuration unchanged" in out
    )
    assert "'lldp enable': Error: Unrecognized command found at '^' position." in out
    assert sw.config() == before
    assert "clear configuration candidate" in sw.log and "commit" not in sw.log
    assert "abort" not in sw.log  # no V300R023C00 command; the double rejects it


def test_a_commit_that_does_not_converge_is_rolled_back(fleet):
    sw = fleet["fleet"].switches["par-spine-001"]
    sw.load(drifted("par-spine-001"))
    sw.ignore.append(r"^lldp enable$")  # accepted, committed, but the switch does not apply it
    sw.log.clear()
    before = sw.config()
    res = fleet["runner"].play(
        "playbooks/switch-changes.yml", *fleet["rollout"], "--limit", "par-spine-001"
    )
    sw.ignore.clear()
    assert res.returncode != 0
    out = " ".join(res.stdout.split())
    assert "rolled back to the configuration before the commit (restored): lldp enable" in out
    assert sw.log.count("commit") == 1
    asked = sw.log.index("rollback configuration last 1")
    assert sw.log[asked + 1] == "y"  # the answer to "Continue? [Y/N]:"
    assert sw.config() == before


def test_an_injected_difference_is_committed_once_and_then_matches(fleet):
    """A converged switch whose SSH key-exchange minimum and one link address were changed by
    hand: one commit puts both back (the address entered as a prefix length, shown with a dotted
    mask; the minimum undone to its default, 3072, which the switch does not display), and the
    next run finds nothing to do."""
    name = "par-spine-001"
    sw = fleet["fleet"].switches[name]
    sw.load(keyed(intended(name)) + "interface 10GE1/0/48\n")
    first = fleet["runner"].play("playbooks/switch-changes.yml", *fleet["rollout"], "--limit", name)
    assert first.returncode == 0, first.stdout[-3000:]
    assert {h for h, (_, c, _) in recap(first).items() if c} == set()
    want = sw.config()
    assert "ip address 10.64.128.1 255.255.255.254" in want
    assert "jumboframe enable" not in want  # 9216 is the default, not displayed

    hand = want.replace(" ip address 10.64.128.1 255.255.255.254", " ip address 10.64.128.3 31")
    assert "ssh server dh-exchange" not in want  # 3072 is the default, not displayed
    hand = hand.replace(
        "\nstelnet server enable\n",
        "\nstelnet server enable\nssh server dh-exchange min-len 2048\n",
    )
    sw.load(hand)
    sw.log.clear()
    res = fleet["runner"].play("playbooks/switch-changes.yml", *fleet["rollout"], "--limit", name)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]
    assert {h for h, (_, c, _) in recap(res).items() if c} == {name}
    assert sw.log.count("commit") == 1
    assert "undo ssh server dh-exchange min-len 2048" in sw.log
    assert views(sw.config()) == views(want)

    again = fleet["runner"].play("playbooks/switch-changes.yml", *fleet["rollout"], "--limit", name)
    assert again.returncode == 0 and not any(c for _, c, _ in recap(again).values())
    assert sw.log.count("commit") == 1


def test_lldp_check_passes_on_the_planned_cabling_and_names_a_miscabled_port(fleet):
    limit = ["--limit", ",".join(SWITCHES)]
    res = fleet["runner"].play("playbooks/switches.yml", *limit, "-e", "ztp_server_host=none")
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-2000:]

    sw = fleet["fleet"].switches["par-spine-001"]
    port, device, far = sw.lldp[0]
    sw.lldp[0] = (port, "par-leaf-0099", "400GE1/0/31")
    res = fleet["runner"].play("playbooks/switches.yml", *limit, "-e", "ztp_server_host=none")
    sw.lldp[0] = (port, device, far)
    assert res.returncode != 0
    assert (
        f"par-spine-001 is cabled differently from the plan: {port}: LLDP neighbour "
        f"par-leaf-0099 400GE1/0/31, the cabling plan says {device} {far}"
    ) in res.stdout
