"""What the hardware reports, for the roles run for real on fake roots (tests/consumers/): one
fake root per host with what every real host's file system already has, the NPU and NIC state the
doubles of npu-smi, hccn_tool and mlnx_qos read (tests/fakes/bin), and every switch a CloudEngine
SSH double (tests/doubles/ce_switch.py) cabled as the plan says."""

from __future__ import annotations

import csv
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from tests.support.output_readers import YAML, inventory_vars

if TYPE_CHECKING:  # the SSH doubles import asyncssh: only the tests that start them
    from tests.doubles.ce_switch import Switch

ROOT = Path(__file__).resolve().parents[2]
FAKES = ROOT / "tests" / "fakes" / "bin"
OS_SKELETON = (
    "etc/profile.d",
    "etc/sysctl.d",
    "etc/systemd/system",
    "etc/NetworkManager/system-connections",
    "usr/local/sbin",
)
# The hosts the site tests (tests/consumers/test_ansible.py) configure: every host kind of pod-128
# and so every role, but not every host (an NPU server costs ~45 task runs a site.yml, each ~0.3 s
# of CPU). Three of the sixteen NPU servers, on three leaves: npu-001, whose files the site test
# reads, npu-006, which the rolling test breaks in its second batch, and npu-012; the pre-flight
# test breaks all three. Storage and management nodes run one role with other values: one of each
# (controller-01 is also the ZTP server). One switch per switch layer of every plane (border
# devices have no role). The others stay as seeded; tests/consumers/test_ansible_checks.py runs
# ansible-inventory over all of pod-128.
NPU_SERVERS = ("npu-001", "npu-006", "npu-012")
SITE = (
    *NPU_SERVERS,
    "stor-001",
    "controller-01",
    *(f"{p}-leaf-0001" for p in ("par", "sto", "biz")),
    *(f"{p}-spine-001" for p in ("par", "sto", "biz")),
    *(f"{p}-access-0001" for p in ("inb", "oob")),
    *(f"{p}-core-001" for p in ("inb", "oob")),
)


DISPLAY_VERSION = """Huawei Versatile Routing Platform Software
VRP (R) software, Version 8.230 (CE9860 {release})
Copyright (C) 2012-2023 Huawei Technologies Co., Ltd.
HUAWEI CE9860-4C-EI uptime is 12 days, 3 hours, 4 minutes

"""  # VRP layout of ntc-templates' huawei_vrp display version captures; CE release names [S]


def fake_host_vars(roots: Path) -> dict[str, object]:
    """Ansible variables that run every host on this machine: a local connection, the host's
    python wrapper and fake root under `roots` (seed_fleet), and the NPU/NIC tool doubles."""
    return {
        "ansible_connection": "local",
        "ansible_python_interpreter": f"{roots}/{{{{ inventory_hostname }}}}/python",
        "ansible_become": False,  # root already; no sudo on the test machine
        "wanka_root": str(roots) + "/{{ inventory_hostname }}",
        "npu_nic_hccn_tool": str(FAKES / "hccn_tool"),
        "npu_preflight_hccn_tool": str(FAKES / "hccn_tool"),
        "npu_preflight_npu_smi": str(FAKES / "npu-smi"),
        "thermal_guard_npu_smi": str(FAKES / "npu-smi"),
        "storage_nic_qos_tool": str(FAKES / "mlnx_qos"),
    }


def seed_fleet(roots: Path, inventory: Path) -> dict[str, Switch]:
    """What the hardware reports when everything is as planned; the switches as SSH doubles
    (tests/consumers/test_ansible.py seeds the committed pod-128, test_bring_up_run.py a freshly
    generated one)."""
    from tests.doubles.ce_switch import Switch

    versions = yaml.load((inventory / "group_vars" / "all.yml").read_text(), YAML)[
        "software_versions"
    ]
    switch_lldp: dict[str, dict[str, list[str]]] = {}
    with open(inventory / "files" / "cabling.csv") as fh:
        hosts = inventory_vars(inventory)
        for row in csv.DictReader(fh):
            a, b = row["a_device"], row["b_device"]
            switch_lldp.setdefault(a, {})[row["a_port"]] = [b, row["b_port"]]
            switch_lldp.setdefault(b, {})[row["b_port"]] = [a, row["a_port"]]
    for name, v in hosts.items():
        for skeleton in OS_SKELETON:  # what every real host's file system already has
            (roots / name / skeleton).mkdir(parents=True, exist_ok=True)
        python = roots / name / "python"  # the host's modules (and the doubles they run) know it
        python.write_text(f'#!/bin/sh\nWANKA_FAKE_ROOT={roots / name} exec {sys.executable} "$@"\n')
        python.chmod(0o755)
        state = roots / name / "var/lib/wanka-fake"
        state.mkdir(parents=True, exist_ok=True)
        if "storage_nic_driver" in v:  # the storage NICs' sysfs and rdma_cm configfs
            ports = [nic["port"] for nic in v["storage_nics"]]
            seed_storage_nic_sysfs(roots / name, ports, v["storage_nic_driver"])
        if "npu_lldp" in v:
            lines = [f"driver={versions['driver']}", f"firmware={versions['firmware']}"]
            for i, expected in enumerate(v["npu_lldp"]):
                system, port = expected.split(" ", 1)
                lines += [
                    f"npu{i}.health=OK",
                    f"npu{i}.hbm_ecc=0",
                    f"npu{i}.temp=45",
                    f"npu{i}.link=UP",
                    f"npu{i}.lldp_system={system}",
                    f"npu{i}.lldp_port={port}",
                ]
            (state / "npu.conf").write_text("\n".join(lines) + "\n")
    switches = {}
    for name, rows in switch_lldp.items():
        plan_file = inventory / "files" / "switches" / f"{name}.yml"
        if not plan_file.exists():  # a host or a border device (no role, no double)
            continue
        sw = Switch(name, lldp=[(local, dev, port) for local, (dev, port) in rows.items()])
        plan = yaml.load(plan_file.read_text(), YAML)
        if (plan.get("lossless") or {}).get("ecn") == "ai-ecn":  # licensed: AI ECN runs
            sw.ai_ecn = [(port, plan["lossless"]["queue"]) for port in rows]
        switches[name] = sw
    return switches


def seed_storage_nic_sysfs(root: Path, ports: list[str], driver: str = "mlx5_core") -> None:
    """An untouched host: trust pcp, no PFC (the double's defaults), ECN off on every priority,
    rdma_cm's default TOS 0; storage port i is RDMA device mlx5_<i> port 1."""
    (root / "sys/bus/pci/drivers" / driver).mkdir(parents=True)
    for i, port in enumerate(ports):
        net = root / "sys/class/net" / port
        (net / "device").mkdir(parents=True)
        (net / "device/driver").symlink_to(f"../../../../bus/pci/drivers/{driver}")
        for kind in ("np", "rp"):
            enable = net / f"ecn/roce_{kind}/enable"
            enable.mkdir(parents=True)
            for prio in range(8):
                (enable / str(prio)).write_text("0\n")
        gid = root / f"sys/class/infiniband/mlx5_{i}/ports/1/gid_attrs/ndevs"
        gid.mkdir(parents=True)
        (gid / "0").write_text(f"{port}\n")
        group = root / f"sys/kernel/config/rdma_cm/mlx5_{i}/ports/1"
        group.mkdir(parents=True)
        (group / "default_roce_tos").write_text("0\n")
