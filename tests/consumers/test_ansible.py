"""The roles, run for real: ansible-playbook site.yml against the generated pod-128 inventory,
limited to one or a few hosts of each kind (tests/support/fake_hosts.py SITE), with local
connections, every host confined to its own fake root, test doubles of npu-smi and hccn_tool on PATH
(tests/fakes, named as such), and every switch a CloudEngine SSH test double
(tests/doubles/ce_switch.py) that the real netmiko talks to."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.support.ansible_run import VAULT, ansible_env, doubles_path, write_overrides
from tests.support.fake_hosts import NPU_SERVERS, SITE, fake_host_vars, seed_fleet
from tests.support.output_readers import YAML, ansible_hosts, inventory_vars

pytestmark = [pytest.mark.slow, pytest.mark.minutes]  # real ansible-playbook runs: minutes of CPU

ROOT = Path(__file__).resolve().parents[2]
INVENTORY = ROOT / "inventories" / "pod-128"
FRESH_CHECK = "npu-001,stor-001,controller-01"
ALL_AT_ONCE = ("-e", "wanka_serial=100%")  # batches are tested once, below; the rest runs faster
RECAP = re.compile(
    r"^(\S+)\s+:\s+ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M
)


def _tool(name: str) -> str:
    path = shutil.which(name) or str(Path(sys.executable).parent / name)
    assert Path(path).exists(), f"{name} is a test dependency: pip install -e '.[test]'"
    return path


def _hosts() -> dict[str, dict]:
    """Every inventory host's variables (hosts.yml groups, host_vars/<host>.yml)."""
    return inventory_vars(INVENTORY)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("fleet")
    roots = tmp / "roots"
    from tests.doubles.ce_switch import Fleet

    switches = Fleet(
        list(seed_fleet(roots, INVENTORY).values()), VAULT["vault_switch_admin_password"]
    ).start()
    ztp = yaml.safe_load((INVENTORY / "files/ztp/switches.yml").read_text())["switches"]
    overrides = write_overrides(
        tmp,
        {
            "all": {
                "vars": {
                    **fake_host_vars(roots),
                    **VAULT,
                    "ztp_server_manage_service": False,
                    "ztp_server_identities": {  # stand-ins for the delivery list's ESNs
                        s["name"]: {"esn": f"2102311LDL{i:010d}"} for i, s in enumerate(ztp)
                    },
                },
                "hosts": {
                    name: {"ansible_host": "127.0.0.1", "ansible_port": port}
                    for name, port in switches.ports.items()
                },
            }
        },
    )
    env = ansible_env(tmp, PATH=doubles_path(), ANSIBLE_FORKS="8")

    def play(playbook: str, *args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                _tool("ansible-playbook"),
                "-i",
                str(INVENTORY / "hosts.yml"),
                "-i",
                str(overrides),
                playbook,
                *ALL_AT_ONCE,
                *args,
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
        )

    fresh = _tree(roots)
    # fresh hosts: --check of the play that changes them writes nothing (a few hosts suffice)
    check = play("playbooks/hosts.yml", "--check", "--diff", "--limit", FRESH_CHECK)
    fresh_check = (check, _tree(roots) == fresh)
    first = play("site.yml", "--limit", ",".join(SITE))  # the tests below start from here
    yield {
        "play": play,
        "roots": roots,
        "first": first,
        "switches": switches.switches,
        "overrides": overrides,
        "fresh_check": fresh_check,
    }
    switches.stop()


def _recap(res: subprocess.CompletedProcess) -> dict[str, tuple[int, int, int]]:
    return {
        h: (int(ok), int(changed), int(failed))
        for h, ok, changed, _, failed in RECAP.findall(res.stdout)
    }


def _tree(root: Path) -> dict[str, str]:
    """Every file of the fake hosts and its hash, but the doubles' call logs and the hccn_tool
    double's stand-in for the driver log (the real tool logs a failed read there too)."""
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name not in ("calls.log", "hccn_tool.log")
    }


def _calls(roots: Path, host: str) -> list[str]:
    """The commands a host's handlers and tasks ran (argv as the recording doubles saw it)."""
    path = roots / host / "var/log/wanka-fake/calls.log"
    return path.read_text().splitlines() if path.exists() else []


def _layers() -> dict[str, set[str]]:
    """The inventory's groups of host kinds: NPU servers, storage and management nodes, the
    controller, and each switch layer but the border (routers and firewalls have no role)."""
    groups = yaml.safe_load((INVENTORY / "hosts.yml").read_text())["all"]["children"]
    names = ["npu_servers", "storage_nodes", "management_nodes", "controller"]
    border = set(groups["border"]["children"])
    names += [g for g in groups["switches"]["children"] if g not in border]
    return {g: {h for key in groups[g]["hosts"] for h in ansible_hosts(key)} for g in names}


def test_site_configures_every_host_then_changes_nothing_and_check_mode_is_clean(fleet):
    hosts = _hosts()
    uncovered = [g for g, members in _layers().items() if not members & set(SITE)]
    assert not uncovered, f"the site tests configure no host of {uncovered}"
    check, unchanged = fleet["fresh_check"]
    assert check.returncode == 0, check.stdout[-3000:]
    assert unchanged  # --check on fresh hosts wrote nothing
    first = fleet["first"]
    fatal = [line for line in first.stdout.splitlines() if line.startswith("fatal")]
    assert first.returncode == 0, "\n".join(fatal)[:6000] + first.stderr[-2000:]
    calls = _calls(fleet["roots"], "npu-001")  # the handlers ran, at the real command names
    assert "nmcli -t -f RUNNING general" in calls and "nmcli connection reload" in calls
    assert {"nmcli connection up bond0", "nmcli connection up stor0"} <= set(calls)
    assert "nmcli connection up mgmt0" not in calls  # Ansible's own connection: never
    gateway = hosts["npu-001"]["business_bond"]["gateway"]
    assert f"ping -c 3 -W 2 -I bond0 {gateway}" in calls
    assert "sysctl -p /etc/sysctl.d/90-wanka-hccl.conf" in calls
    assert any(c.startswith("systemctl start") and "data.mount" in c for c in calls)
    assert any(c.startswith("systemctl start") and "wanka-thermal-guard.timer" in c for c in calls)
    recap = _recap(first)
    assert set(recap) == set(SITE)
    for name, (_, changed, failed) in recap.items():
        assert failed == 0
        if "npu_lldp" in hosts[name] or name.startswith("controller"):
            assert changed > 0, f"{name} was not configured"
    npu = fleet["roots"] / "npu-001"
    conf = (npu / "etc/hccn.conf").read_text()
    generated = (INVENTORY / "files/hccn/npu-001.conf").read_text()
    for line in generated.splitlines():
        if not line.startswith("send_arp"):
            assert line in conf.splitlines(), line
    assert (npu / "etc/profile.d/hccl.sh").read_bytes() == (
        INVENTORY / "files/hccl/env/npu-001.sh"
    ).read_bytes()
    assert (npu / "etc/systemd/system/data.mount").is_file()
    assert "bond0" in (npu / "etc/NetworkManager/system-connections/bond0.nmconnection").read_text()
    storage = yaml.load((INVENTORY / "group_vars/all.yml").read_text(), YAML)["storage_lossless"]
    for port in ("stor0", "stor1"):  # the storage plane's lossless class, as mlnx_qos keeps it
        qos = (npu / f"var/lib/wanka-fake/mlnx_qos.{port}").read_text().splitlines()
        assert "trust=dscp" in qos and f"pfc={storage['pfc_bitmap']}" in qos
        assert f"map.{storage['dscp']}={storage['priority']}" in qos
        rdma = f"mlx5_{('stor0', 'stor1').index(port)}/ports/1"  # as seed_storage_nic_sysfs
        tos = npu / f"sys/kernel/config/rdma_cm/{rdma}/default_roce_tos"
        assert tos.read_text() == f"{storage['tos']}\n"  # rdma_cm's default TOS: DSCP x 4
        for kind in ("np", "rp"):  # NIC ECN (DCQCN) on the lossless priority
            ecn = npu / f"sys/class/net/{port}/ecn/roce_{kind}/enable/{storage['priority']}"
            assert ecn.read_text() == "1\n"
    ztp = next(fleet["roots"].glob("controller-*/srv/ztp"))
    staged = (ztp / "par-leaf-0001.cfg").read_text()
    generated = (INVENTORY / "files/ztp/configs/par-leaf-0001.cfg").read_text()
    assert "{{" in generated and "{{" not in staged
    # every Vault placeholder filled, nothing else changed (no SNMPv3 key: switch_deploy types it)
    assert staged == re.sub(r"\{\{ (vault_\w+) \}\}", lambda m: VAULT[m[1]], generated)
    assert VAULT["vault_snmp_auth_key"] not in staged

    before = _tree(fleet["roots"])
    second = fleet["play"]("site.yml", "--limit", ",".join(SITE))
    assert second.returncode == 0, second.stdout[-3000:]
    assert set(_recap(second)) == set(SITE)
    assert {h: c for h, (_, c, _) in _recap(second).items() if c} == {}
    assert _tree(fleet["roots"]) == before

    check = fleet["play"]("site.yml", "--check", "--diff", "--limit", ",".join(SITE))
    assert check.returncode == 0, check.stdout[-3000:]
    assert set(_recap(check)) == set(SITE)
    assert {h: c for h, (_, c, _) in _recap(check).items() if c} == {}
    assert _tree(fleet["roots"]) == before


def _batches(stdout: str, play: str) -> list[list[str]]:
    """The hosts of each batch of a play, in the order ansible-playbook ran them."""
    out = []
    for part in stdout.split(f"PLAY [{play}]")[1:]:
        part = part.split("PLAY [")[0].split("PLAY RECAP")[0]
        out.append(list(dict.fromkeys(re.findall(r"^\w+: \[([^\]\s]+)", part, re.M))))
    return out


def test_rolling_batches_keep_leaf_groups_apart_and_a_failed_batch_stops_the_play(fleet):
    """serial 2 over the 8 servers behind two leaves (a slice, as hosts.yml allows): each batch
    holds one server per leaf. A host of batch 2 whose new bond cannot reach its gateway restores
    its keyfile and fails; batches 3 and 4 and the next play never run."""
    roots, hosts = fleet["roots"], _hosts()
    leaf = {h: v["npu_lldp"][0].split()[0] for h, v in hosts.items() if "npu_lldp" in v}
    inventory = yaml.safe_load((INVENTORY / "hosts.yml").read_text())["all"]["children"]
    groups = ("leaf_par_leaf_0001", "leaf_par_leaf_0002")
    behind = {h for g in groups for key in inventory[g]["hosts"] for h in ansible_hosts(key)}
    order = [h for h in inventory["npu_servers"]["hosts"] if h in behind]
    assert len(order) == 8
    broken = order[3]  # in the second batch, configured by the site run
    assert broken in SITE
    keyfile = roots / broken / "etc/NetworkManager/system-connections/bond0.nmconnection"
    edited = keyfile.read_text() + "# edited by hand\n"
    keyfile.write_text(edited)
    unreachable = roots / broken / "var/lib/wanka-fake/unreachable"
    unreachable.write_text(hosts[broken]["business_bond"]["gateway"] + "\n")
    before = _calls(roots, broken).count("nmcli connection up bond0")
    try:
        # stor-001 is in the slice: the storage and management play would run it
        res = fleet["play"](
            "playbooks/hosts.yml",
            "-e",
            "wanka_serial=2",
            "--limit",
            ":".join((*groups, "stor-001")),
        )
    finally:
        unreachable.unlink()
    name = "Configure NPU NICs, HCCL, networking, storage NIC QoS, storage mounts and the thermal guard on NPU servers"
    batches = _batches(res.stdout, name)
    assert res.returncode != 0
    assert [set(b) for b in batches] == [set(order[0:2]), set(order[2:4])], batches
    for batch in batches:
        assert len({leaf[h] for h in batch}) == len(batch), batch
    recap = _recap(res)
    assert set(recap) == set(order[:4])  # later batches and the storage/management play never ran
    assert recap[broken][2] == 1
    assert f"{broken}: the new network configuration did not work" in res.stdout
    assert keyfile.read_text() == edited  # the previous keyfile is back ...
    after = _calls(roots, broken).count("nmcli connection up bond0")
    assert after - before == 2  # ... and active again (the new one, then the restored one)
    assert not list(keyfile.parent.glob("*~"))  # no rollback copy left behind


def _break(roots: Path, host: str, line: str) -> None:
    """Make a host's hardware report something else: a later line wins in the double's state."""
    with open(roots / host / "var/lib/wanka-fake/npu.conf", "a") as fh:
        fh.write(line + "\n")


def test_preflight_names_each_unready_host_and_why(fleet):
    roots, hosts = fleet["roots"], _hosts()
    seeded = {h: (roots / h / "var/lib/wanka-fake/npu.conf").read_text() for h in NPU_SERVERS}
    _break(roots, "npu-001", "npu1.hbm_ecc=3")  # corrected single-bit errors: a warning only
    _break(roots, "npu-006", "npu3.tls=1")  # TLS on one rank only
    _break(roots, "npu-012", "npu0.firmware=7.5.0.1.100")
    _break(roots, "npu-012", "npu2.lldp_system=par-leaf-0004")
    _break(roots, "npu-012", "npu2.lldp_port=400GE1/0/9:1")
    _break(roots, "npu-012", "npu5.hbm_ecc_double=2")
    try:  # the servers the site run configured (the others' NPU NICs are not set up)
        res = fleet["play"]("playbooks/preflight.yml", "--limit", ",".join(NPU_SERVERS))
    finally:
        for host, conf in seeded.items():
            (roots / host / "var/lib/wanka-fake/npu.conf").write_text(conf)
    out = res.stdout
    assert res.returncode != 0
    unready = re.findall(r'"msg": "(\S+) is not ready: ([^"]*)"', out)  # one fatal result each
    assert [(host, problems.split("; ")) for host, problems in unready] == [
        (
            "npu-012",
            [
                "NPU 0 firmware 7.5.0.1.100, blueprint wants 7.5.0.2.220",
                "NPU 2 LLDP neighbour is par-leaf-0004 400GE1/0/9:1, the cabling plan says "
                + hosts["npu-012"]["npu_lldp"][2],
                "NPU 5 has 2 multi-bit HBM ECC errors and 0 isolated pages: replace the card"
                " before training",
            ],
        )
    ]
    assert hosts["npu-012"]["npu_lldp"][2].startswith("par-leaf-0003 ")
    assert "firmware versions found: 7.5.0.1.100, 7.5.0.2.220" in out and "MIXED" in out
    assert "npu-001: NPU 1 corrected 3 single-bit HBM ECC errors" in out
    assert "npu-006: hccn_tool -tls -g differs across the NPUs: 0, 1" in out
    recap = _recap(res)
    assert set(recap) == set(NPU_SERVERS)
    assert {h for h, (_, _, f) in recap.items() if f} == {"npu-006", "npu-012"}


def test_switch_cabled_differently_from_the_plan_fails_verification(fleet):
    switch = fleet["switches"]["par-spine-001"]
    rows = sorted(switch.lldp)
    port = rows[0][0]
    switch.lldp = [(port, "par-leaf-0009", "400GE1/0/31"), *rows[1:]]
    res = fleet["play"]("playbooks/switches.yml", "--limit", "par-spine-001")
    switch.lldp = rows
    assert res.returncode != 0
    assert (
        f"par-spine-001 is cabled differently from the plan: {port}: LLDP neighbour par-leaf-0009 400GE1/0/31"
        in res.stdout
    )
