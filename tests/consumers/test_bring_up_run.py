"""The day-0 runbook, run as written: every command of the ```sh blocks of docs/bring-up.md of a
pod-128 generated into tmp, in the runbook's order, against the test doubles of
tests/consumers/test_ansible.py (a CloudEngine SSH double per switch, fake host roots with tool
doubles), then the same sequence again, which must change nothing.

What the test rewrites in a command: the runbook's `inventories/pod-128` paths become the tmp
folder's (the folder and the overlay `wanka site init` wrote and the test filled with test values,
the secrets encrypted with ansible-vault); `-i <overrides>` (local connections, the doubles' ports
and tool paths) is added after the runbook's inventories; `--ask-vault-pass` reads the test's Vault
password from a file; every playbook gets `-e wanka_serial=100%` and `--limit` to the hosts
tests/support/fake_hosts.py's SITE covers (one of its three NPU servers, a storage node, the
controller, one switch of each layer of every plane) plus every console-built switch. What stands in
for a physical step: the console paste loads each rendered console file into its switch's double
(the control lines system-view/commit/quit/return are what the paste types, not configuration; the
keyless SNMPv3 lines set no key, the runbook's "let step 4 set the keys"); the controller's nmcli
line is typed at its console (the nmcli double has no `connection add`: the test runs the hosts on
local connections); power-on boots each ZTP switch's double from the startup file the ZTP server
staged for it (what the switch downloads)."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from tests.support.ansible_run import (
    RECAP,
    VAULT,
    ansible_env,
    doubles_path,
    recap,
    tool,
    write_overrides,
)
from tests.support.fake_hosts import (
    DISPLAY_VERSION,
    FAKES,
    NPU_SERVERS,
    SITE,
    fake_host_vars,
    seed_fleet,
)

pytestmark = [pytest.mark.slow, pytest.mark.minutes]  # ~20 real ansible runs: minutes of CPU

ROOT = Path(__file__).resolve().parents[2]
FENCE = re.compile(r"^```sh\n(.*?)^```", re.M | re.S)
CONTROL = {"system-view", "commit", "quit", "return"}  # typed by the paste, not stored
SECRETS = {**VAULT, "vault_border_admin_password": "double-border-admin-pw"}


def commands(runbook: str) -> list[str]:
    """Each command of the ```sh blocks, in order (continuation lines joined, comments dropped)."""
    out = []
    for block in FENCE.findall(runbook):
        for line in block.replace("\\\n", " ").splitlines():
            if line.strip() and not line.lstrip().startswith("#"):
                out.append(line.strip())
    return out


def console_built(pod: Path) -> list[str]:
    """The switches the runbook's step 1 renders console files for (its `ansible` host patterns)."""
    for cmd in commands((pod / "docs/bring-up.md").read_text()):
        if cmd.startswith("ansible ") and "files/switches/" in cmd:
            return shlex.split(cmd)[1].split(":")
    raise AssertionError("the runbook renders no switch console file")


def pasted(text: str) -> str:
    """What a console paste leaves configured: the file less the lines that only drive the CLI."""
    return "\n".join(line for line in text.splitlines() if line.strip() not in CONTROL) + "\n"


@pytest.fixture(scope="module")
def day0(tmp_path_factory):
    from tests.doubles.ce_switch import Fleet

    tmp = tmp_path_factory.mktemp("bring-up")
    pod = tmp / "inventories" / "pod-128"
    gen = subprocess.run(
        [sys.executable, "-m", "generator", "generate", "blueprints/pod-128.yaml", "-o", str(pod), "-q"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert gen.returncode == 0, gen.stderr
    init = subprocess.run(
        [sys.executable, "-m", "generator", "site", "init", str(pod)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert init.returncode == 0, init.stderr
    site = pod.with_name("pod-128.site")
    vault = site / "group_vars/all/vault.yml"
    assert set(yaml.safe_load(vault.read_text())) <= set(SECRETS)
    vault_names = set(yaml.safe_load(vault.read_text()))
    vault.write_text(yaml.safe_dump({k: SECRETS[k] for k in vault_names}))
    password = tmp / "vault-pass"
    password.write_text("test-vault-password\n")
    subprocess.run(
        [tool("ansible-vault"), "encrypt", str(vault), "--vault-password-file", str(password)],
        check=True, capture_output=True,
    )  # fmt: skip
    values = yaml.safe_load((site / "group_vars/all/site.yml").read_text())
    for i, name in enumerate(sorted(values["ztp_server_identities"])):  # the delivery list's
        values["ztp_server_identities"][name] = {"esn": f"2102311LDL{i:010d}"}
    for model, ports in values["wanka_site_interfaces"].items():  # NICs named as the plan does
        values["wanka_site_interfaces"][model] = {p: p for p in ports}
    (site / "group_vars/all/site.yml").write_text(yaml.safe_dump(values))

    roots = tmp / "roots"
    doubles = seed_fleet(roots, pod)
    fleet = Fleet(list(doubles.values()), SECRETS["vault_switch_admin_password"]).start()
    console = console_built(pod)
    # Every host kind and switch layer as tests/support/fake_hosts.py's SITE, plus every switch
    # built from the console: the others stay as seeded. One NPU server of SITE's three (they
    # differ by leaf, which tests/consumers/test_ansible.py covers; each adds ~5 s a pass)
    runbook_hosts = [h for h in SITE if h not in NPU_SERVERS[1:]]
    covered = ",".join(dict.fromkeys((*runbook_hosts, *console)))
    captures = site / "records/display-version"  # the runbook: saved before ops_checklist
    captures.mkdir(parents=True)
    for name in doubles:
        (captures / f"{name}.txt").write_text(DISPLAY_VERSION.format(release="V300R023C00SPC500"))
    # The fake hosts' /data is this machine's disk, not a DPC file system: its write rate is
    # not what the run tests (tests/consumers/test_acceptance_roles.py does the same)
    plan = yaml.safe_load((pod / "files/acceptance/plan.yml").read_text())
    plan["checklist"]["checkpoint_write_gbps"] = 0.001
    (tmp / "plan.yml").write_text(yaml.safe_dump(plan))
    fabric = tmp / "fabric.conf"
    fabric.write_text("")
    overrides = write_overrides(
        tmp,
        {
            "all": {
                "vars": {
                    **fake_host_vars(roots),
                    "ztp_server_manage_service": False,  # dnsmasq/sshd: the twin's ZTP drill
                    "node_labels_kubectl": str(FAKES / "kubectl"),
                    "npu_acceptance_hccl_test_dir": str(FAKES.parent / "hccl_test"),
                    "npu_acceptance_mpirun": str(FAKES / "mpirun"),
                    "npu_acceptance_workdir": str(tmp / "acceptance-work"),
                    "npu_acceptance_textfile_dir": str(tmp),
                    "ops_checklist_ethtool": str(FAKES / "ethtool"),
                    "ops_checklist_npu_smi": str(FAKES / "npu-smi"),
                    "ops_checklist_write_mb": 4,
                    "ops_checklist_plan": str(tmp / "plan.yml"),
                },
                "hosts": {
                    name: {"ansible_host": "127.0.0.1", "ansible_port": port}
                    for name, port in fleet.ports.items()
                },
            }
        },
    )
    env = ansible_env(
        tmp,
        PATH=doubles_path(),
        ANSIBLE_FORKS="8",
        KUBECTL_LOG=str(tmp / "kubectl.log"),
        WANKA_FAKE_FABRIC=str(fabric),
    )

    def run(cmd: str) -> subprocess.CompletedProcess:
        argv = shlex.split(cmd.replace("inventories/pod-128", str(pod)))
        if argv[0] not in ("ansible", "ansible-playbook"):  # grep, mkdir: as written
            return subprocess.run(cmd.replace("inventories/pod-128", str(pod)), shell=True,
                                  cwd=ROOT, env=env, capture_output=True, text=True)  # fmt: skip
        last = max(i for i, a in enumerate(argv) if a == "-i")
        argv[last + 2 : last + 2] = ["-i", str(overrides)]
        if "--ask-vault-pass" in argv:
            argv[argv.index("--ask-vault-pass")] = f"--vault-password-file={password}"
        if argv[0] == "ansible-playbook":
            argv += ["-e", "wanka_serial=100%", "--limit", covered + ",localhost"]
        return subprocess.run(
            [tool(argv[0]), *argv[1:]],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
        )  # fmt: skip

    def stand_in(cmd: str, first: bool) -> None:
        """The physical steps after a command: the console paste after the rendering, power-on
        after ztp.yml (first pass only: the second pass re-runs the commands)."""
        if not first:
            return
        if cmd.startswith("ansible ") and "files/switches/" in cmd:
            for name in console:
                rendered = site / "records/console" / f"{name}.cfg"
                assert rendered.stat().st_mode & 0o777 == 0o600, name
                text = rendered.read_text()
                assert "{{" not in text and SECRETS["vault_switch_admin_password"] in text
                doubles[name].load(pasted(text))
        if cmd.startswith("ansible ") and "files/border/" in cmd:
            for name in shlex.split(cmd)[1].split(":"):
                assert (site / "records/console" / f"{name}.cfg").stat().st_mode & 0o777 == 0o600
        if "playbooks/ztp.yml" in cmd:
            staged = roots / "controller-01/srv/ztp"
            ztp = yaml.safe_load((pod / "files/ztp/switches.yml").read_text())["switches"]
            for s in ztp:
                if s["name"] in doubles:
                    doubles[s["name"]].load((staged / f"{s['name']}.cfg").read_text())

    runbook = commands((pod / "docs/bring-up.md").read_text())
    passes = []
    for first in (True, False):
        results = []
        for cmd in runbook:
            if cmd.startswith("nmcli "):  # typed at the controller's console (step 2)
                continue
            start = time.monotonic()
            results.append((cmd, run(cmd)))
            log = tmp / "steps" / f"{len(passes)}-{len(results):02d}.log"
            log.parent.mkdir(exist_ok=True)
            log.write_text(f"{cmd}\n{results[-1][1].stdout}\n{results[-1][1].stderr}")
            print(f"{time.monotonic() - start:6.1f} s  {cmd[:100]}")
            stand_in(cmd, first)
        passes.append(results)
    ztp = {
        s["name"] for s in yaml.safe_load((pod / "files/ztp/switches.yml").read_text())["switches"]
    }
    yield {
        "passes": passes,
        "console": console,
        "vault": vault_names,
        "ztp": ztp,
        "doubles": doubles,
        "covered": covered.split(","),
    }
    fleet.stop()


def test_runbook_runs_in_order_and_every_step_exits_0(day0):
    ran = [cmd for cmd, _ in day0["passes"][0]]
    plays = [shlex.split(c)[5] for c in ran if c.startswith("ansible-playbook")]
    day0_order = ["ztp", "switches", "switch-changes", "hosts", "preflight", "acceptance"]
    order = [f"playbooks/{p}.yml" for p in (*day0_order, "ops_checklist")]
    assert [p for p in plays if p in order] == order  # every step, in the dependency order
    for cmd, res in day0["passes"][0]:
        fatal = [line for line in res.stdout.splitlines() if line.startswith(("fatal", "failed"))]
        assert res.returncode == 0, (
            cmd,
            "\n".join(fatal)[:4000],
            res.stdout[-3000:],
            res.stderr[-2000:],
        )
    # step 4 typed the SNMPv3 keys (no startup or console file holds one) on every switch covered
    deploy = next(r for c, r in day0["passes"][0] if "playbooks/switch-changes.yml" in c)
    switches = set(day0["covered"]) & set(day0["doubles"])
    assert {h for h, (_, c, _) in recap(deploy).items() if c} == switches
    assert all(day0["doubles"][h].keys for h in switches)
    # the secrets the runbook's grep lists before step 1 are the ones wanka site init asked for
    listed = set(day0["passes"][0][0][1].stdout.split())
    assert listed and listed <= day0["vault"], listed - day0["vault"]
    # the console paste and the ZTP boot together built every switch, each exactly once
    assert set(day0["console"]).isdisjoint(day0["ztp"])
    assert set(day0["console"]) | day0["ztp"] == set(day0["doubles"])


def test_second_run_changes_nothing(day0):
    for cmd, res in day0["passes"][1]:
        assert res.returncode == 0, (cmd, res.stdout[-3000:], res.stderr[-2000:])
        if cmd.startswith("ansible-playbook"):
            assert RECAP.search(res.stdout), cmd
            assert {h: c for h, (_, c, _) in recap(res).items() if c} == {}, cmd
        elif cmd.startswith("ansible "):
            assert " | CHANGED" not in res.stdout, (cmd, res.stdout[-2000:])
