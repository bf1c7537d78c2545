"""`wanka twin` runs as root on a folder that may arrive in a pull request (issue #40 items 1-2):
each folder here is a generated pod-128 edited as an attacker would, and each must end refused
with a located message, exit 2 and no traceback, leaving nothing behind: no namespace, no
process, no change to the host's nftables ruleset, no state folder or lock.

Every case is read at the plan stage in this process (no root needed: the checked inventory copy
Ansible would be given, then the plan); where this machine can run the twin (root, frr, nftables,
dnsmasq), the same folder is also handed to `wanka twin up` as a user would."""

from __future__ import annotations

import configparser
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from generator.twin import hosts, instance, plan, plan_hosts, routing, run, ztp
from generator.verify.report import NotAnOutput

ROOT = Path(__file__).resolve().parents[2]
POD = ROOT / "inventories" / "pod-128"
WANKA = [sys.executable, "-m", "generator"]
INSTANCE = f"h{os.getpid() % 10**8}"  # this test process's own twin instance
ENV = {**os.environ, "WANKA_TWIN_INSTANCE": INSTANCE, "WANKA_TWIN_STATE": str(instance.BASE)}
needs = run.missing()
real = pytest.mark.skipif(bool(needs), reason="the twin needs " + ", ".join(needs))


@pytest.fixture
def pod(tmp_path) -> Path:
    folder = tmp_path / "pod-128"
    shutil.copytree(POD, folder, ignore=shutil.ignore_patterns("docs"))
    return folder


def _edit(path: Path, old: str, new: str) -> int:
    """Replace the first `old` in a file; the line it was on."""
    text = path.read_text()
    at = text.index(old)
    path.write_text(text[:at] + new + text[at + len(old) :])
    return text.count("\n", 0, at) + 1


def _stage(folder: Path, tmp: Path) -> None:
    """What the twin reads before it makes anything: the inventory copy for Ansible, the plan."""
    hosts.inventory(folder, tmp / "copy")
    p = plan.plan(folder, {})
    routing.apply(p)
    run.bound(p)


def _machine() -> tuple[set[str], str, set[int]]:
    """This instance's namespaces, the host's nftables ruleset, this instance's marked
    processes (another instance may be up meanwhile: it is not ours to judge)."""
    ns = {n for n in instance.all_namespaces() if n.startswith(f"wt-{INSTANCE}-")}
    nft = subprocess.run(["nft", "list", "ruleset"], capture_output=True, text=True).stdout
    mark = f"{run.JOB_MARK}={INSTANCE}".encode() + b"\0"
    return ns, nft, run._marked(mark)


def refused(folder: Path, tmp: Path, expect: str) -> None:
    """Refused at the plan stage with `expect` in the message; and, where the twin can run,
    `wanka twin up` exits 2 saying it, with no traceback and nothing left behind."""
    with pytest.raises(NotAnOutput) as caught:
        _stage(folder, tmp)
    assert expect in str(caught.value), str(caught.value)
    if needs:
        return
    before = _machine()
    done = subprocess.run([*WANKA, "twin", "up", str(folder)], cwd=ROOT, env=ENV,
                          capture_output=True, text=True, timeout=300)  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert expect in done.stderr and "Traceback" not in done.stderr, done.stderr
    after = _machine()
    assert after[0] == before[0], ("namespaces", after[0] ^ before[0])
    assert after[1:] == before[1:], ("nft ruleset, marked processes", after[1:], before[1:])
    assert (
        not (instance.BASE / INSTANCE).exists()
        and not (instance.BASE / f"{INSTANCE}.lock").exists()
    )


# --- injection through what the plan reads -----------------------------------------------


def test_a_newline_in_an_ip_plan_gateway(pod, tmp_path):
    line = _edit(pod / "files/ip-plan.csv", ",10.102.0.1,npu-001,bmc",
                 ',"10.102.0.1\nnetns add wt-pwned",npu-001,bmc')  # fmt: skip
    refused(pod, tmp_path, f"files/ip-plan.csv:{line}: '10.102.0.1\\x0anetns add wt-pwned'")


def test_a_newline_in_a_cabling_device_name(pod, tmp_path):
    line = _edit(pod / "files/cabling.csv", ",npu-001,npu0,", ',"npu-001\nnetns add x",npu0,')
    refused(pod, tmp_path, f"files/cabling.csv:{line}: 'npu-001\\x0anetns add x' is not a device")


def test_a_space_in_a_cabling_port_name(pod, tmp_path):
    line = _edit(pod / "files/cabling.csv", ",npu0,", ",npu0 netns wt-x,")
    refused(pod, tmp_path, f"files/cabling.csv:{line}: 'npu0 netns wt-x' is not a port name")


def test_a_newline_in_a_cable_id(pod, tmp_path):
    line = _edit(pod / "files/cabling.csv", "PAR-000001,", '"PAR-000001\n| forged | ok |",')
    refused(pod, tmp_path, f"files/cabling.csv:{line}: 'PAR-000001\\x0a| forged | ok |'")


def test_a_plane_wanka_does_not_write(pod, tmp_path):
    line = _edit(pod / "files/cabling.csv", "PAR-000001,parameter,", "PAR-000001,evil,")
    refused(pod, tmp_path, f"files/cabling.csv:{line}: 'evil' is not a plane")


def test_a_config_file_name_with_a_newline(pod, tmp_path):
    src = pod / "files/switches/par-leaf-0001.cfg"
    shutil.copy(src, src.with_name("x\nnetns add wt-pwned.cfg"))
    refused(
        pod, tmp_path, "files/switches/x\\x0anetns add wt-pwned.cfg: 'x\\x0anetns add wt-pwned'"
    )


def test_a_config_file_name_with_a_dot_dot(pod, tmp_path):
    src = pod / "files/switches/par-leaf-0001.cfg"
    shutil.copy(src, src.with_name("..evil.cfg"))
    refused(pod, tmp_path, "files/switches/..evil.cfg: '..evil' is not a device name")


def test_an_nft_quote_in_a_policy_rule_name(pod, tmp_path):
    line = _edit(pod / "files/border/fw-01.cfg", " rule name ssh-switches-local",
                 ' rule name ssh"-include-"/etc/shadow')  # fmt: skip
    refused(pod, tmp_path, f"files/border/fw-01.cfg:{line}")


def test_a_vpn_instance_that_walks_out_of_the_namespace_name(pod, tmp_path):
    cfg = pod / "files/switches/par-leaf-0001.cfg"
    text = cfg.read_text().replace("_management_vpn_", "../../x")
    cfg.write_text(text)
    refused(pod, tmp_path, "files/switches/par-leaf-0001.cfg:")


def test_a_router_id_that_is_not_an_address(pod, tmp_path):
    line = _edit(pod / "files/switches/oob-core-001.cfg", "ospf 1 router-id 10.102.12.3",
                 "ospf 1 router-id 10.102.12.3;evil")  # fmt: skip
    refused(pod, tmp_path, f"files/switches/oob-core-001.cfg:{line}")


def test_a_nat_pool_of_every_address(pod, tmp_path):
    cfg = pod / "files/border/fw-01.cfg"
    cfg.write_text(cfg.read_text() + "nat address-group big\n section 0 0.0.0.0 255.255.255.255\n")
    line = cfg.read_text().count("\n")
    refused(pod, tmp_path, f"files/border/fw-01.cfg:{line}: an address pool over 65536")


def test_a_newline_in_an_hccn_address(pod, tmp_path):
    line = _edit(pod / "files/hccn/npu-001.conf", "address_0=10.64.0.2",
                 "address_0=10.64.0.2 dev lo")  # fmt: skip
    refused(pod, tmp_path, f"files/hccn/npu-001.conf:{line}: address_0: '10.64.0.2 dev lo'")


def test_an_hccn_file_of_a_hundred_nics(pod, tmp_path):
    hccn = pod / "files/hccn/npu-001.conf"
    hccn.write_text("".join(f"address_{i}=10.64.9.{i}\nnetmask_{i}=255.255.255.0\n"
                            for i in range(100)))  # fmt: skip
    refused(pod, tmp_path, "files/hccn/npu-001.conf:129: NIC 64: more than 64 NICs")


def test_a_missing_hccn_file(pod, tmp_path):
    (pod / "files/hccn/npu-001.conf").unlink()
    refused(pod, tmp_path, "files/hccn/npu-001.conf: cannot read the file: No such file")


def test_a_renamed_cabling_column(pod, tmp_path):
    _edit(pod / "files/cabling.csv", "a_device", "a_dev")
    refused(pod, tmp_path, "files/cabling.csv:1: no column a_device")


def test_a_cabling_row_short_of_fields(pod, tmp_path):
    lines = (pod / "files/cabling.csv").read_text().splitlines()
    lines[5] = "PAR-X,parameter,npu-001"
    (pod / "files/cabling.csv").write_text("\n".join(lines) + "\n")
    refused(pod, tmp_path, "files/cabling.csv:6: 3 fields, the header has 18")


def test_a_cabling_plan_naming_ten_thousand_devices(pod, tmp_path):
    cabling = pod / "files/cabling.csv"
    head = cabling.read_text()
    rows = "".join(f"X-{i},parameter,dev-{i:05d},npu0,,,par-leaf-0001,x{i},,,,,,,,,,\n"
                   for i in range(10_000))  # fmt: skip
    cabling.write_text(head + rows)
    # verify's bound: 8 KB of cabling per configured device and host (56 here)
    refused(pod, tmp_path, "files/cabling.csv: the file is too large: 679,089 bytes, the limit")


def test_a_cabling_device_that_is_neither_configured_nor_a_host(pod, tmp_path):
    cabling = pod / "files/cabling.csv"
    head = cabling.read_text()
    cabling.write_text(head + "X-1,parameter,dev-00001,npu0,,,par-leaf-0001,x1,,,,,,,,,,\n")
    line = head.count("\n") + 1
    refused(pod, tmp_path, f"files/cabling.csv:{line}: dev-00001 is neither a configured device")


def test_more_namespaces_than_one_run_makes(pod, tmp_path, monkeypatch):
    monkeypatch.setattr(plan, "MAX_NAMESPACES", 100)  # pod-128 makes 124
    with pytest.raises(
        plan.Refused,
        match=r"409 cables and 101\+ namespaces: one twin makes at most 100 namespaces",
    ):
        _stage(pod, tmp_path)


def test_more_daemons_than_the_machine_has_memory_for(monkeypatch):
    p = plan.plan(POD, {})
    routing.apply(p)
    monkeypatch.setattr(run, "MIB_PER_PROCESS", 1 << 30)
    with pytest.raises(plan.Refused, match=r"124 namespaces and 102 FRR daemons .* available"):
        run.bound(p)


# --- files that are not files -------------------------------------------------------------


def test_an_hccn_file_linked_to_a_root_only_file(pod, tmp_path):
    hccn = pod / "files/hccn/npu-001.conf"
    hccn.unlink()
    hccn.symlink_to("/etc/shadow")
    refused(pod, tmp_path, "files/hccn/npu-001.conf: it is a symbolic link")


def test_an_hccn_file_linked_to_dev_zero(pod, tmp_path):
    hccn = pod / "files/hccn/npu-001.conf"
    hccn.unlink()
    hccn.symlink_to("/dev/zero")
    refused(pod, tmp_path, "files/hccn/npu-001.conf: it is a symbolic link")


def test_a_fifo_as_a_config(pod, tmp_path):
    cfg = pod / "files/switches/par-leaf-0001.cfg"
    cfg.unlink()
    os.mkfifo(cfg)
    refused(pod, tmp_path, "files/switches/par-leaf-0001.cfg: cannot read the file: it is a named")


def test_a_config_linked_to_a_root_only_file(pod, tmp_path):
    cfg = pod / "files/border/fw-01.cfg"
    cfg.unlink()
    cfg.symlink_to("/etc/shadow")
    refused(pod, tmp_path, "files/border/fw-01.cfg: it is a symbolic link")


def test_the_switches_folder_linked_elsewhere(pod, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    shutil.move(pod / "files/switches", tmp_path / "elsewhere/switches")
    (pod / "files/switches").symlink_to(tmp_path / "elsewhere/switches")
    refused(pod, tmp_path, "files/switches: it is a symbolic link")


def test_a_one_gigabyte_config(pod, tmp_path):
    cfg = pod / "files/switches/par-leaf-0001.cfg"
    with open(cfg, "r+b") as fh:
        fh.truncate(1 << 30)  # sparse: no disk used
    refused(pod, tmp_path, "files/switches/par-leaf-0001.cfg: ")
    with pytest.raises(NotAnOutput, match=r"larger than|too large|MB|bytes"):
        _stage(pod, tmp_path)


def test_a_cabling_csv_over_its_size_limit(pod, tmp_path):
    with open(pod / "files/cabling.csv", "r+b") as fh:
        fh.truncate(100 << 20)
    refused(pod, tmp_path, "files/cabling.csv: ")


# --- a folder wanka did not write -----------------------------------------------------------


def test_a_folder_without_wankas_marker(pod, tmp_path):
    (pod / ".wanka-output").unlink()
    refused(pod, tmp_path, "is not a wanka output folder (needs .wanka-output")


def test_a_folder_whose_marker_is_not_wankas(pod, tmp_path):
    (pod / ".wanka-output").write_text("hello\n")
    refused(pod, tmp_path, "is not a wanka output folder")


def test_a_folder_name_with_a_newline_that_would_forge_a_report_row(tmp_path):
    folder = tmp_path / "x\n| forged check | 1 | 1 | 0.0 | ok |"
    shutil.copytree(POD, folder, ignore=shutil.ignore_patterns("docs"))
    refused(folder, tmp_path, "a folder name with a control character")


# --- what Ansible would be given (the host_network and ztp_server roles run as root) --------


def test_a_host_named_with_dot_dot(pod, tmp_path):
    line = _edit(pod / "hosts.yml", "        npu-001:\n", "        ../../../etc/cron.d/x:\n")
    refused(pod, tmp_path, f"hosts.yml:{line}: '../../../etc/cron.d/x' is not a device name")


def test_a_bond_named_with_dot_dot(pod, tmp_path):
    _edit(pod / "host_vars/npu-001.yml", '"name":"bond0"', '"name":"../../../../etc/cron.d/x"')
    refused(pod, tmp_path, "host_vars/npu-001.yml: business_bond name: '../../../../etc/cron.d/x'")


def test_a_newline_in_a_bond_address_that_would_continue_a_keyfile(pod, tmp_path):
    line = _edit(pod / "host_vars/npu-001.yml", '"address":"10.100.0.2/26"',
                 '"address":"10.100.0.2/26\\n routing-rule9=from all table 1"')  # fmt: skip
    refused(pod, tmp_path, f"host_vars/npu-001.yml:{line}: '10.100.0.2/26\\x0a routing-rule9")


def test_template_syntax_in_a_host_variable_not_marked_unsafe(pod, tmp_path):
    line = _edit(pod / "host_vars/npu-001.yml", 'rack: !unsafe "T01-01"',
                 "rack: \"{{ lookup('pipe', 'touch /tmp/pwned') }}\"")  # fmt: skip
    refused(pod, tmp_path, f"host_vars/npu-001.yml:{line}: ")
    assert not Path("/tmp/pwned").exists()


def test_an_ansible_variable_wanka_does_not_write(pod, tmp_path):
    path = pod / "host_vars/npu-001.yml"
    path.write_text(path.read_text() + 'ansible_shell_executable: !unsafe "/tmp/evil"\n')
    line = path.read_text().count("\n")
    refused(pod, tmp_path, f"host_vars/npu-001.yml:{line}: ansible_shell_executable")


def test_an_interface_mapping_with_a_newline(pod, tmp_path):
    path = pod / "host_vars/npu-001.yml"
    path.write_text(path.read_text() + 'host_network_interfaces: {"biz0": "eth0\\nx"}\n')
    refused(pod, tmp_path, "host_vars/npu-001.yml")


def test_a_ztp_config_path_out_of_the_folder(pod, tmp_path):
    _edit(pod / "files/ztp/switches.yml", "config: configs/par-leaf-0001.cfg",
          "config: configs/../../../../etc/shadow")  # fmt: skip
    refused(pod, tmp_path, "files/ztp/switches.yml: switch 1: config 'configs/../../../../etc")


def test_a_ztp_switch_name_with_a_dnsmasq_option(pod, tmp_path):
    _edit(pod / "files/ztp/switches.yml", "name: par-leaf-0001,", 'name: "x\\ndhcp-script=/tmp/e",')
    refused(pod, tmp_path, "files/ztp/switches.yml")


def test_a_ztp_switch_without_a_gateway_is_left_to_the_role(pod):
    # an output from before the day-0 fixes (a5a7f7e) lists console-built switches so; the
    # ztp_server role refuses it by name, and the twin reports that (test_twin's pre-fix test)
    _edit(pod / "files/ztp/switches.yml", 'gateway: "10.102.0.1"', 'gateway: ""')
    assert hosts.ztp_switches(pod)[0] == "par-leaf-0001"


def test_the_real_pod_128_passes_every_check(tmp_path):
    copy = hosts.inventory(POD, tmp_path)
    assert (copy / "hosts.yml").read_bytes() == (POD / "hosts.yml").read_bytes()
    assert len(hosts.ztp_switches(POD)) == len(list((copy / "files/ztp/configs").iterdir()))
    p = plan.plan(POD, {})
    assert len(p.namespaces) == 124 and all(n.startswith(instance.PREFIX) for n in p.namespaces)


# --- what the twin writes and hands over -----------------------------------------------------


def test_a_keyfile_continuation_line_never_reaches_ip():
    p = plan.Plan(POD)
    ns = p.ns(plan.ns_name("npu-001"), "npu-001", "host")
    kf = configparser.ConfigParser(interpolation=None)
    kf.read_string("[connection]\ninterface-name=stor0\n[ipv4]\nmethod=manual\n"
                   "address1=10.96.0.2/26\nrouting-rule1=priority 101 from 10.96.0.2 table 101\n"
                   " netns add wt-pwned\n")  # fmt: skip
    with pytest.raises(
        plan.Refused,
        match=r"routing-rule1: 'priority 101 .* 101\\x0anetns add wt-pwned' is not a routing",
    ):
        plan_hosts.apply_keyfiles(p, ns, {"stor0": kf})
    assert not any("pwned" in c for c in ns.commands)


def test_a_keyfile_rule_of_other_words_is_refused():
    with pytest.raises(plan.Refused, match="'iptables' is not a routing-rule word"):
        plan_hosts.rule("priority 5 iptables x", "keyfile")
    assert plan_hosts.rule("priority 101 from 10.96.0.2 table 101", "k") == (
        "priority 101 from 10.96.0.2 table 101"
    )


def test_the_last_guard_before_ip_nft_and_frr():
    with pytest.raises(plan.Refused, match="refusing to hand ip the line"):
        run._safe(["link set x up\nnetns del wt-other"], run.SAFE_BATCH, "ip", "ns")
    with pytest.raises(plan.Refused, match="refusing to hand nft"):
        run.guard('table inet t {\ninclude "/etc/shadow"\n}', "nft", "ns")
    with pytest.raises(plan.Refused, match="refusing to hand FRR"):
        run.guard('hostname x\n password "y"', "FRR", "ns")


def test_a_dnsmasq_or_sshd_line_the_role_does_not_write_is_refused(tmp_path):
    conf = tmp_path / "wanka-ztp.conf"
    conf.write_text("port=0\ndhcp-range=set:ztp1,10.0.0.0,static,255.255.255.0,1h\n"
                    "dhcp-script=/tmp/evil\n")  # fmt: skip
    with pytest.raises(plan.Refused, match=r"wanka-ztp.conf:3 .*'dhcp-script=/tmp/evil'"):
        ztp.served(conf, ztp.DNSMASQ)
    conf.write_text("Match User u\n    ForceCommand internal-sftp -R\n"
                    "    AuthorizedKeysCommand /tmp/evil\n")  # fmt: skip
    with pytest.raises(plan.Refused, match="AuthorizedKeysCommand"):
        ztp.served(conf, ztp.SSHD)


# --- hostile command lines and runs ---------------------------------------------------------


@real
@pytest.mark.parametrize("device", ["../../x", "a b", "x\nnetns del y", "x;id"])
def test_twin_exec_refuses_a_device_that_is_not_a_name(device):
    done = subprocess.run([*WANKA, "twin", "exec", device, "id"], cwd=ROOT, env=ENV,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2 and "is not a device name" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


@real
@pytest.mark.parametrize("part", ["../x", "npu\nnetns del y", "a b"])
def test_twin_exec_refuses_a_part_that_is_not_a_name(part):
    done = subprocess.run([*WANKA, "twin", "exec", "--part", part, "par-leaf-0001", "id"],
                          cwd=ROOT, env=ENV, capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2 and "is not a VPN instance name" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


@real
def test_growing_into_a_hostile_folder_with_no_twin_up_is_refused(pod):
    _edit(pod / "files/ip-plan.csv", ",10.102.0.1,npu-001,bmc", ',"10.102.0.1\nx",npu-001,bmc')
    done = subprocess.run([*WANKA, "twin", "grow", str(pod)], cwd=ROOT, env=ENV,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2 and "no whole twin is up" in done.stderr, done.stderr
    assert (
        not (instance.BASE / INSTANCE).exists()
        and not (instance.BASE / f"{INSTANCE}.lock").exists()
    )


@real
@pytest.mark.parametrize("given", ["../x", "a-b", "A", "x" * 13])
def test_an_instance_id_that_is_not_one_is_refused(given):
    done = subprocess.run([*WANKA, "twin", "down"], cwd=ROOT, capture_output=True, text=True,
                          env={**ENV, "WANKA_TWIN_INSTANCE": given})  # fmt: skip
    assert done.returncode == 2 and "1 to 12 lower-case letters" in done.stderr, done.stderr
    assert not (instance.BASE / given).exists()


@real
def test_a_second_run_of_an_instance_is_refused_naming_the_first(pod):
    holder = subprocess.Popen(
        [sys.executable, "-c", "from generator.twin import run; run.claim(); "
         "print('held', flush=True); import time; time.sleep(60)"],
        cwd=ROOT, env=ENV, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert holder.stdout.readline() == "held\n"
        for args in (["up", str(pod)], ["down"]):
            done = subprocess.run([*WANKA, "twin", *args], cwd=ROOT, env=ENV,
                                  capture_output=True, text=True)  # fmt: skip
            assert done.returncode == 2, done.stderr
            assert f"twin instance {INSTANCE} is in use by process {holder.pid}" in done.stderr
    finally:
        holder.kill()
        holder.wait()
    done = subprocess.run([*WANKA, "twin", "down"], cwd=ROOT, env=ENV, capture_output=True)
    assert done.returncode == 0
    assert (
        not (instance.BASE / INSTANCE).exists()
        and not (instance.BASE / f"{INSTANCE}.lock").exists()
    )


@real
def test_down_touches_only_its_own_instance():
    other = [f"wt-zz{INSTANCE[1:]}-par-leaf-0001", f"wt-zz{INSTANCE[1:]}-npu-001.npu"]
    mine = f"wt-{INSTANCE}-par-leaf-0001"
    for name in [*other, mine]:
        subprocess.run(["ip", "netns", "add", name], check=True)
    sleeper = subprocess.Popen(["ip", "netns", "exec", other[0], "sleep", "60"])
    try:
        time.sleep(0.5)
        done = subprocess.run([*WANKA, "twin", "down"], cwd=ROOT, env=ENV,
                              capture_output=True, text=True)  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert "removed 1 namespaces" in done.stdout
        left = set(instance.all_namespaces())
        assert mine not in left and set(other) <= left
        assert sleeper.poll() is None, "down killed a process of another instance"
    finally:
        sleeper.send_signal(signal.SIGKILL)
        sleeper.wait()
        for name in other:
            subprocess.run(["ip", "netns", "del", name], check=False)


def test_the_default_instance_differs_between_ci_jobs_and_checkouts(monkeypatch, tmp_path):
    a = instance.instance_id({"CI_JOB_ID": "1"})
    assert a != instance.instance_id({"CI_JOB_ID": "2"})
    assert re.fullmatch(r"[0-9a-f]{8}", a)
    monkeypatch.chdir(tmp_path)
    assert instance.instance_id({"CI_JOB_ID": "1"}) != a
    assert instance.instance_id({"WANKA_TWIN_INSTANCE": "ci7"}) == "ci7"


@real
@pytest.mark.slow
def test_ctrl_c_while_the_twin_comes_up_leaves_nothing():
    gc = Path("/proc/sys/net/ipv4/neigh/default/gc_thresh3")
    before, thresh = _machine(), gc.read_text()
    up = subprocess.Popen([*WANKA, "twin", "up", str(POD)], cwd=ROOT, env=ENV,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)  # fmt: skip
    state = instance.BASE / INSTANCE
    end = time.monotonic() + 240
    while time.monotonic() < end and not any(state.glob("frr/*/zebra.pid")):
        time.sleep(0.2)
    assert any(state.glob("frr/*/zebra.pid")), "up made no FRR before the deadline"
    up.send_signal(signal.SIGINT)
    _, err = up.communicate(timeout=180)
    assert up.returncode == 130 and "interrupted; the twin was taken down" in err, err
    assert "Traceback" not in err
    assert _machine() == before
    if not any(n.startswith("wt-") for n in instance.all_namespaces()):  # no other instance is up
        assert gc.read_text() == thresh
    assert not state.exists() and not (instance.BASE / f"{INSTANCE}.lock").exists()
    frr = subprocess.run(["pgrep", "-f", str(state)], capture_output=True, text=True)
    assert frr.stdout == "", "a process of the twin is still running"
