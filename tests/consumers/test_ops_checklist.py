"""The ops_checklist role's checks on the real tools' output formats: one passing and one failing
case per checklist item (the Ansible wiring is linted with the other roles)."""

from __future__ import annotations

from pathlib import Path

from tests.support.ansible_run import plugin

ROOT = Path(__file__).resolve().parents[2]
checklist = plugin("modules", "wanka_ops_checklist")
npu_smi = plugin("module_utils", "npu_smi")

# ethtool(8) `ethtool -l` layout
ETHTOOL = """Channel parameters for {nic}:
Pre-set maximums:
RX:		0
TX:		0
Other:		1
Combined:	{max}
Current hardware settings:
RX:		0
TX:		0
Other:		1
Combined:	{cur}
"""
# VRP `display version` layout as in ntc-templates' huawei_vrp captures
# (tests/huawei_vrp/display_version/*.raw); product strings are CE V300 release names [S].
VERSION = """Huawei Versatile Routing Platform Software
VRP (R) software, Version 8.230 (CE9860 {release})
Copyright (C) 2012-2023 Huawei Technologies Co., Ltd.
HUAWEI CE9860-4C-EI uptime is 12 days, 3 hours, 4 minutes

"""
# npu-smi info -t common layout (the repository's npu-smi double, MindCluster field names)
COMMON = """        NPU ID                         : 0
        Aicore Usage Rate(%)           : {usage}
        Temperature(C)                 : 45
        NPU Real-time Power(W)         : {power}
"""


def test_rss_uses_every_combined_queue_or_fails_naming_the_nic():
    assert checklist.rss_problem("stor0", ETHTOOL.format(nic="stor0", max=63, cur=63)) == ""
    bad = checklist.rss_problem("stor0", ETHTOOL.format(nic="stor0", max=63, cur=8))
    assert bad == "stor0: RSS uses 8 of 63 combined queues (ethtool -L stor0 combined 63)"


def test_switch_versions_are_uniform_or_the_odd_switch_is_named(tmp_path):
    for i in range(3):
        (tmp_path / f"par-leaf-000{i + 1}.txt").write_text(
            VERSION.format(release="V300R023C00SPC500")
        )
    _, problems = checklist.switch_versions(str(tmp_path))
    assert problems == []
    (tmp_path / "par-leaf-0002.txt").write_text(VERSION.format(release="V300R022C10SPC100"))
    _, problems = checklist.switch_versions(str(tmp_path))
    assert len(problems) == 1
    assert "par-leaf-0002 run 8.230 (CE9860 V300R022C10SPC100)" in problems[0]
    assert "the other 2 run 8.230 (CE9860 V300R023C00SPC500)" in problems[0]


def test_idle_npu_power_within_the_limit_or_named():
    chip = "NPU 0 chip 0"
    assert checklist.idle_power_problem(chip, COMMON.format(usage=0, power=92.4), 120) == ""
    assert checklist.idle_power_problem(chip, COMMON.format(usage=80, power=310), 120) == ""
    bad = checklist.idle_power_problem(chip, COMMON.format(usage=0, power=180.5), 120)
    assert bad == "NPU 0 chip 0: idle (AI Core 0%) but draws 180.5 W > 120 W"


# `npu-smi info -m` as Huawei's ait benchmark README prints it (an Atlas 300I Pro: NPU ID 4, chip 0
# and its Mcu; the chip name has a space)
MAPPING = """NPU ID                         Chip ID                        Chip Logic ID                  Chip Name
4                              0                              0                              Ascend 310P3
4                              1                              -                              Mcu
"""


def test_chips_are_the_ascend_rows_of_npu_smi_info_m():
    assert npu_smi.chips(MAPPING) == [(4, 0, 0)]


def _fake_npus(root: Path, *lines: str) -> None:
    state = root / "var/lib/wanka-fake"
    state.mkdir(parents=True)
    health = [f"npu{i}.health=OK" for i in range(8)]
    (state / "npu.conf").write_text("\n".join((*health, *lines)) + "\n")


def test_idle_power_of_both_dies_of_an_a3_npu_is_checked(tmp_path):
    """Atlas 900 A3 SuperPoD node: 8 NPUs of 2 dies; NPU 3's second die idles at 180.5 W."""
    _fake_npus(tmp_path, *(f"npu{i}.dies=2" for i in range(8)), "npu3.chip1.power=180.5")
    npu_smi = str(ROOT / "tests/fakes/bin/npu-smi")
    _, problems = _host(tmp_path, npu_smi=npu_smi, npu_power=True, idle_power_max_w=120)
    assert problems == ["NPU 3 chip 1: idle (AI Core 0%) but draws 180.5 W > 120 W"]
    a2 = tmp_path / "a2"
    _fake_npus(a2, "npu5.power=180.5")  # A2: one chip per NPU, chip 0
    _, problems = _host(a2, npu_smi=npu_smi, npu_power=True, idle_power_max_w=120)
    assert problems == ["NPU 5 chip 0: idle (AI Core 0%) but draws 180.5 W > 120 W"]
    empty = tmp_path / "none"
    (empty / "var/lib/wanka-fake").mkdir(parents=True)
    (empty / "var/lib/wanka-fake/npu.conf").write_text("driver=x\n")  # no NPU at all
    _, problems = _host(empty, npu_smi=npu_smi, npu_power=True, idle_power_max_w=120)
    assert len(problems) == 1 and problems[0].startswith("npu-smi info -m lists no NPU chip")


def _host(tmp_path, **kw):
    p = {"nics": [], "ethtool": "ethtool", "npu_smi": "npu-smi", "npu_power": False,
         "idle_power_max_w": 0, "cache_paths": [], "cache_max_gb": 0, "mounts": [],
         "checkpoint_write_gbps": 0, "write_mb": 4, "root": str(tmp_path)}  # fmt: skip
    return checklist.host_checks({**p, **kw})


def test_compile_cache_under_or_over_its_size_limit(tmp_path):
    cache = tmp_path / "root/atc_data"
    cache.mkdir(parents=True)
    (cache / "kernel.o").write_bytes(b"x" * 2_000_000)
    facts, problems = _host(tmp_path, cache_paths=["/root/atc_data"], cache_max_gb=0.01)
    assert problems == [] and facts["cache_gb"] == 0.002
    _, problems = _host(tmp_path, cache_paths=["/root/atc_data"], cache_max_gb=0.001)
    assert problems == ["compile caches hold 0.0 GB > 0.001 GB"]


def test_checkpoint_write_throughput_with_real_dd(tmp_path):
    (tmp_path / "data").mkdir()
    facts, problems = _host(tmp_path, mounts=["/data"], checkpoint_write_gbps=0.0001)
    assert problems == [] and facts["write_gbps"]["/data"] > 0.0001
    assert not (tmp_path / "data/.wanka-checkpoint-test").exists()
    _, problems = _host(tmp_path, mounts=["/data"], checkpoint_write_gbps=1e6)
    assert problems and problems[0].startswith("checkpoint path /data: writes ")
    assert problems[0].endswith("GB/s < 1e+06 GB/s")


def test_dd_summary_line_is_read_as_decimal_gigabytes():
    line = "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 0.5 s, 2.1 GB/s\n"
    assert checklist.write_gbps(line) == 1073741824 / 0.5 / 1e9
