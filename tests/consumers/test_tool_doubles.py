"""The hccn_tool and npu-smi test doubles against what the real tools accept, print and return.

hccn_tool: hicann/driver src/custom/network/hccn/ascend910B (snapshot ef377e95); below "ht/" is
its hccn_tool/ directory and "ext/" its hccn_product_ext/ directory, cited as file:function. The
real tool's exit status is the low byte of the UDA_* code main() returns (ht/main.c:main,
ht/ossl_user_linux.h). npu-smi: Huawei's npu-smi reference (hiascend.com npusmi pages).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

FAKES = Path(__file__).resolve().parents[1] / "fakes" / "bin"
HCCN_TOOL = FAKES / "hccn_tool"
NPU_SMI = FAKES / "npu-smi"
COUNT = "The total count of input parameters is wrong!"
NO_CONF = (
    "The hccn.conf can't access, cmd execute failed! pls check the conf file or cmd run permission."
)
CONFLICT = "The ip address configured is conflicted!"


def host(root: Path, *lines: str, npus: int = 8, dies: int = 1, conf: bool = True) -> Path:
    """A host root: npu.conf with `npus` healthy NPUs of `dies` dies, and an empty hccn.conf."""
    state = root / "var/lib/wanka-fake"
    state.mkdir(parents=True, exist_ok=True)
    npu = [f"npu{n}.{k}" for n in range(npus) for k in ("health=OK", f"dies={dies}", "link=UP")]
    (state / "npu.conf").write_text("\n".join([*npu, *lines]) + "\n")
    if conf:
        (root / "etc").mkdir(exist_ok=True)
        (root / "etc/hccn.conf").touch()
    return root


def run(root: Path, *args: str, tool: Path = HCCN_TOOL, stdin: str | None = None):
    return subprocess.run(
        [str(tool), *args],
        env={"WANKA_ROOT": str(root), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        input=stdin,
    )


def ok(root: Path, *args: str) -> str:
    res = run(root, *args)
    assert res.returncode == 0, (args, res.stdout, res.stderr)
    return res.stdout


def conf(root: Path) -> list[str]:
    return (root / "etc/hccn.conf").read_text().splitlines()


def configured(root: Path, dev: int = 0, ip: str = "10.20.0.2") -> Path:
    ok(root, "-i", str(dev), "-ip", "-s", "address", ip, "netmask", "255.255.255.0")
    return root


# --- rule 1: DCQCN -------------------------------------------------------------------------------


def test_dcqcn_enable_takes_exactly_enable_and_alg_mode(tmp_path):
    """ht/tool_dcqcn.c:tool_set_dcqcn_enable: argc (after -s) must be 4, `enable <0|1> alg_mode
    <0|1>`; tool_write_enable_pare_conf writes dcqcn_en_enable_<id> and dcqcn_en_alg_mode_<id>.
    alg_mode 0 is DCQCN, 1 is reserved (Huawei HDK A3 HCCN hccntool_113, default 0)."""
    root = host(tmp_path)
    out = ok(root, "-i", "3", "-dcqcn", "-s", "enable", "1", "alg_mode", "0")
    assert out == "Cmd executed successfully!\n"  # ht/cmd.c:record_result_success_to_log
    assert conf(root) == ["dcqcn_en_enable_3=1", "dcqcn_en_alg_mode_3=0"]
    assert ok(root, "-i", "3", "-dcqcn", "-g", "status") == (
        "dcqcn enable status:   enable\ndcqcn enable alg_mode: 0\n"
    )  # tool_get_dcqcn_enable_info
    for bad, status in (("2", 1), ("x", 1)):  # dcqcn_param_alg_mode1: 0 or 1, else INVALID 0x2001
        res = run(root, "-i", "3", "-dcqcn", "-s", "enable", "1", "alg_mode", bad)
        assert res.returncode == status and res.stderr == "Get invalid parameters!\n"
    res = run(root, "-i", "3", "-dcqcn", "-s", "enable", "1", "mode", "0")  # OP_NOT_SUPPORT 0x2003
    assert res.returncode == 3 and res.stderr == "Get unknown option!\n"


def test_the_old_two_word_dcqcn_enable_is_rejected_with_the_real_text(tmp_path):
    """ht/tool_dcqcn.c:tool_set_dcqcn_enable: `-s enable 1` is argc 2 -> roce_err "Err argc.
    (argc=2)" (the driver log) and UDA_PARAM_CMD_COUNT_ERR 0x2004: exit 4; ht/cmd.c:
    uda_param_cmd_count_err_print prints the count error and the command's parameter list."""
    root = host(tmp_path)
    res = run(root, "-i", "0", "-dcqcn", "-s", "enable", "1")
    assert res.returncode == 4
    assert res.stderr == COUNT + "\n"
    assert res.stdout.startswith("[ hccn_tool -i devid -dcqcn ] needs the following parameters:\n")
    assert "       alg_mode %d      : set the value of alg_mode(0 or 1)\n" in res.stdout
    log = (root / "var/lib/wanka-fake/hccn_tool.log").read_text()
    assert "tool_set_dcqcn_enable: Err argc. (argc=2)" in log
    assert conf(root) == []


def test_dcqcn_cnp_dscp_range_and_get_texts(tmp_path):
    """ht/tool_dcqcn.c:tool_set_dcqcn_cnp_dscp: exactly `cnp_dscp <n>`, n <= 63 else INVALID
    (exit 1, not the DSCP range error); tool_write_cnp_dscp_pare_conf writes dcqcn_cnp_dscp_<id>;
    tool_get_dcqcn_cnp_dscp prints `cnp_dscp     : <n>`."""
    root = host(tmp_path)
    assert ok(root, "-i", "1", "-dcqcn", "-s", "cnp_dscp", "63")
    assert ok(root, "-i", "1", "-dcqcn", "-g", "cnp_dscp") == "cnp_dscp     : 63\n"
    assert conf(root) == ["dcqcn_cnp_dscp_1=63"]
    res = run(root, "-i", "1", "-dcqcn", "-s", "cnp_dscp", "64")
    assert res.returncode == 1 and res.stderr == "Get invalid parameters!\n"
    res = run(root, "-i", "1", "-dcqcn", "-s", "cnp_dscp", "48", "x")
    assert res.returncode == 4 and res.stderr == COUNT + "\n"
    res = run(root, "-i", "1", "-dcqcn", "-g", "status", "x")  # tool_get_dcqcn_info
    assert res.returncode == 4
    res = run(root, "-i", "1", "-dcqcn")  # tool_dcqcn_cmd_execute: UDA_HALF_CMD_ERR (17)
    assert res.returncode == 17 and res.stderr == "Cmd execute failed!\n"


# --- rule 2: what each -s writes to hccn.conf -------------------------------------------------------


def test_each_set_writes_its_hccn_conf_key(tmp_path):
    """ht/cfg.c:cfg_write_conf writes `<name>_<phy id>=<value>`, the old line removed and the new
    one appended (cfg_inner_write_conf_byfd). Names: ht/tool_ops.c:tool_write_ip_conf (address,
    netmask), tool_inner_gateway_set_execute (gateway), tool_set_netdetect (netdetect),
    tool_mtu_cmd_execute (mtu, the argument as typed), tool_dscp_write_conf (dscp_tc, `d:t,` list
    merged in place), ext/tool_cmd.c:tool_pfc_cmd_execute (bitmap), ext/tool_prio_tc.c (prio_tc),
    ext/tool_send_arp.c:tool_set_gratuitous_arp_info (send_arp_status, send_arp_period)."""
    root = host(tmp_path)
    for args in (
        ("-ip", "-s", "address", "10.20.0.2", "netmask", "255.255.255.0"),
        ("-gateway", "-s", "gateway", "10.20.0.1"),
        ("-netdetect", "-s", "address", "10.20.0.1"),
        ("-mtu", "-s", "size", "4200"),
        ("-pfc", "-s", "bitmap", "0,0,0,0,1,0,0,0"),
        ("-prio_tc", "-s", "map", "0,0,0,0,3,0,0,0"),
        ("-dscp_to_tc", "-s", "dscp", "33", "tc", "3"),
        ("-dscp_to_tc", "-s", "dscp", "10", "tc", "1"),
        ("-dscp_to_tc", "-s", "dscp", "33", "tc", "2"),
        ("-send_arp", "-s", "enable", "1"),
        ("-send_arp", "-s", "period", "30"),
        ("-mtu", "-s", "size", "4200"),
    ):
        ok(root, "-i", "5", *args)
    assert conf(root) == [
        "address_5=10.20.0.2",
        "netmask_5=255.255.255.0",
        "gateway_5=10.20.0.1",
        "netdetect_5=10.20.0.1",
        "bitmap_5=0,0,0,0,1,0,0,0",
        "prio_tc_5=0,0,0,0,3,0,0,0",
        "dscp_tc_5=33:2,10:1,",
        "send_arp_status_5=1",
        "send_arp_period_5=30",
        "mtu_5=4200",
    ]
    # -g reads the NIC, in the source's printf formats
    assert ok(root, "-i", "5", "-ip", "-g") == "ipaddr:10.20.0.2\nnetmask:255.255.255.0\n"
    assert ok(root, "-i", "5", "-gateway", "-g") == "default gateway:10.20.0.1, Iface:eth5\n"
    assert ok(root, "-i", "5", "-netdetect", "-g") == "netdetect addr: 10.20.0.1\n"
    assert ok(root, "-i", "5", "-mtu", "-g") == "mtu:4200\n"
    assert ok(root, "-i", "5", "-dscp_to_tc", "-g", "dscp", "33") == "dscp      tc\n  33       2\n"
    assert ok(root, "-i", "5", "-pfc", "-g").endswith("enabled    0 0 0 0 1 0 0 0\n")
    assert ok(root, "-i", "5", "-prio_tc", "-g").endswith("TC         0 0 0 0 3 0 0 0\n")
    assert ok(root, "-i", "5", "-send_arp", "-g") == (
        "The setting of the gratuitous arp:\ncurrent enable status: enable\n"
        "gratuitous arp period: 30\n"
    )


def test_a_last_line_without_newline_runs_into_the_next_key_as_in_the_real_file(tmp_path):
    """ht/cfg.c:cfg_inner_write_conf_byfd concatenates the kept lines as fgets read them and then
    appends `<name>_<id>=<value>\\n`: a file whose last line lacks \\n gets the new key on it."""
    root = host(tmp_path)
    (root / "etc/hccn.conf").write_text("# made by hand\naddress_9=10.0.0.9")
    ok(root, "-i", "0", "-mtu", "-s", "size", "1500")
    assert conf(root) == ["# made by hand", "address_9=10.0.0.9mtu_0=1500"]


# --- rule 3: /etc/hccn.conf must exist --------------------------------------------------------------


def test_ip_set_without_hccn_conf_fails_and_nothing_is_created(tmp_path):
    """ht/tool_ops.c:tool_ip_set_address -> tool_check_net_segment_config -> ht/tool.c:
    tool_read_hccn_conf_handle_action: realpath(/etc/hccn.conf) fails -> UDA_TOOL_ACCESS_CONF_FILE_ERR
    0x301d (exit 29), before the NIC is touched; -ip -g then still has no address."""
    root = host(tmp_path, conf=False)
    res = run(root, "-i", "0", "-ip", "-s", "address", "10.20.0.2", "netmask", "255.255.255.0")
    assert (res.returncode, res.stderr, res.stdout) == (29, NO_CONF + "\n", "")
    assert not (root / "etc/hccn.conf").exists()
    assert run(root, "-i", "0", "-ip", "-g").returncode == 13


def test_every_set_needs_hccn_conf(tmp_path):
    """Every -s ends in ht/cfg.c:cfg_write_conf (or reads hccn.conf first: -gateway through
    ht/tool_ops.c:tool_ip_sync_hw_gateway_to_conf, -dscp_to_tc through tool_dscp_write_conf), so
    each fails with exit 29 without the file; -mtu (tool_mtu_cmd_execute) has set the NIC by then."""
    root = configured(host(tmp_path))
    (root / "etc/hccn.conf").unlink()
    for args in (
        ("-gateway", "-s", "gateway", "10.20.0.1"),
        ("-netdetect", "-s", "address", "10.20.0.1"),
        ("-mtu", "-s", "size", "4200"),
        ("-pfc", "-s", "bitmap", "0,0,0,0,1,0,0,0"),
        ("-prio_tc", "-s", "map", "0,0,0,0,3,0,0,0"),
        ("-dscp_to_tc", "-s", "dscp", "33", "tc", "3"),
        ("-send_arp", "-s", "enable", "1"),
        ("-dcqcn", "-s", "enable", "1", "alg_mode", "0"),
        ("-dcqcn", "-s", "cnp_dscp", "48"),
    ):
        res = run(root, "-i", "0", *args)
        assert (res.returncode, res.stderr) == (29, NO_CONF + "\n"), args
    assert not (root / "etc/hccn.conf").exists()
    assert ok(root, "-i", "0", "-mtu", "-g") == "mtu:4200\n"
    res = run(root, "-i", "0", "-cfg", "recovery")  # ht/tool_ops.c:resolve_abnormal_param
    assert (res.returncode, res.stderr) == (29, NO_CONF + "\n")
    # ht/cmd.c:record_result_fail_to_log: the hint after a failed -cfg recovery
    assert (
        res.stdout == "Recovery failed. Check '/var/log/hccn_tool/hccn_config.log' for details.\n"
    )


# --- rule 4: reads on a fresh NPU, and the -g formats ------------------------------------------------


def test_a_fresh_npus_ip_get_exits_13_and_gateway_get_exits_2(tmp_path):
    """ht/tool_ops_ext.c:tool_get_device_ipaddr: no address (DRV_ERROR_NO_DEVICE) ->
    UDA_DSMI_IPCONF_NOT_PRESET_ERR 0x400d, exit 13; tool_gateway_is_get_cmd_execute: -ENOENT ->
    UDA_DSMI_GATEWAY_NOT_PRESET_ERR 0x4002, exit 2; texts from ht/cmd.c:g_uda_dsmi_err_list."""
    root = host(tmp_path)
    res = run(root, "-i", "0", "-ip", "-g")
    assert (res.returncode, res.stdout) == (13, "")
    assert res.stderr == "Get ipconf failed, because no ip was preset there!\n"
    res = run(root, "-i", "0", "-gateway", "-g")
    assert (res.returncode, res.stdout) == (2, "")
    assert res.stderr == "Get gateway failed, because no gateway was preset there!\n"
    res = run(
        root, "-i", "0", "-gateway", "-s", "gateway", "10.20.0.1"
    )  # tool_get_ipaddr_from_device
    assert res.returncode == 26
    assert res.stderr == "Unable to configure gateway, because ip is not configured!\n"
    res = run(root, "-i", "0", "-send_arp", "-s", "enable", "1")  # tool_get_ip_mac_info_for_arp
    assert res.returncode == 13


def test_fresh_npu_get_formats(tmp_path):
    """Formats from the source: ht/tool_ops.c:tool_get_netdetect (`netdetect addr: %s`),
    tool_get_mtu (`mtu:%u`), tool_link_get_linkstatus (`link status: UP|DOWN`), tool_dscp_get_map
    ("%4s%8s" / "%4d%8u"), ext/tool_cmd.c:tool_get_pfc, ext/tool_prio_tc.c:tool_get_prio_tc_info,
    ext/tool_send_arp.c:tool_get_gratuitous_arp_info, ht/tool_tls.c:tool_show_tls_cert_info,
    ht/tool.c:tool_cfg_status_get. The values of a fresh NIC are the device's (assumptions)."""
    root = host(tmp_path, "npu1.link=DOWN", "npu1.lldp_system=leaf-1", "npu1.lldp_port=400GE1/0/2")
    assert ok(root, "-i", "1", "-netdetect", "-g") == "netdetect addr: 0.0.0.0\n"
    assert ok(root, "-i", "1", "-mtu", "-g") == "mtu:1500\n"
    assert ok(root, "-i", "0", "-link", "-g") == "link status: UP\n"
    assert ok(root, "-i", "1", "-link", "-g") == "link status: DOWN\n"
    assert ok(root, "-i", "1", "-pfc", "-g") == (
        "PFC configuration:\npriority   0 1 2 3 4 5 6 7\nenabled    0 0 0 0 0 0 0 0\n"
    )
    assert ok(root, "-i", "1", "-prio_tc", "-g") == (
        "Priority mapping:\npriority   0 1 2 3 4 5 6 7\nTC         0 0 0 0 0 0 0 0\n"
    )
    table = ok(root, "-i", "1", "-dscp_to_tc", "-g").splitlines()
    assert table[0] == "dscp      tc" and table[1] == "   0       0" and len(table) == 65
    assert (
        ok(root, "-i", "1", "-send_arp", "-g").splitlines()[1] == "current enable status: disable"
    )
    assert ok(root, "-i", "1", "-dcqcn", "-g", "status") == (
        "dcqcn enable status:   disable\ndcqcn enable alg_mode: 0\n"
    )
    assert ok(root, "-i", "1", "-tls", "-g") == (
        "dev_id:1, tls switch[0](0:disable, 1:enable), tls preconfigured[0](0:non-preset, "
        "1:preset), tls alarm time threshold[60]days\n"
    )
    assert conf(root) == ["tls_enable_1=0"]  # tool_save_tls_enable_cfg: the first -g saves it
    assert ok(root, "-i", "1", "-cfg", "status") == "config status:NONE\n"
    lldp = ok(root, "-i", "1", "-lldp", "-g")
    assert "Port ID TLV\n\tIfname: 400GE1/0/2\n" in lldp and "System Name TLV\n\tleaf-1\n" in lldp
    res = run(root, "-i", "1", "-mtu", "-g", "x")  # tool_get_mtu: argc != 0
    assert res.returncode == 4
    res = run(root, "-i", "1", "-ip", "-x")  # tool_ip_cmd_execute: Invalid option
    assert res.returncode == 3 and res.stderr == "Get unknown option!\n"
    assert res.stdout.startswith("[ hccn_tool -i devid -ip ] needs the following parameters:\n")


# --- rule 5: address checks ----------------------------------------------------------------------


# ht/tool_ops.c:is_ipaddr_conflict refuses the VNIC host subnet 192.168.1.0/24 on every product;
# ext/tool_ops_ext.c:tool_a1_a2_ipaddr_conflict_extend 192.168.2.0/24 on A1/A2 (192.168.3-5 only in
# HCCN_TOOL_SHOW_LIST builds, not this one); tool_a3_ipaddr_conflict_extend 192.0.0.0/8 on an A3
# SuperPoD server, 192.168.0.0/21 on an A3 server outside one (server_id >= 48).
@pytest.mark.parametrize(
    ("product", "address", "refused"),
    [
        ("a2", "192.168.1.10", True),
        ("a3-superpod", "192.168.1.10", True),
        ("a2", "192.168.2.10", True),
        ("a2", "192.168.3.10", False),
        ("a2", "192.10.0.2", False),
        ("a3-superpod", "192.10.0.2", True),
        ("a3-superpod", "172.16.2.10", False),
        ("a3-superpod-out", "192.10.0.2", False),
        ("a3-superpod-out", "192.168.7.2", True),
        ("a3-superpod-out", "192.168.8.10", False),
        ("a2", "10.20.0.2", False),
    ],
)
def test_refused_address_pools(tmp_path, product, address, refused):
    """UDA_PARAM_CONFLICT_IP_ADDR_ERR 0x2007 (exit 7) for the pools the source refuses; an A3
    SuperPoD server is one whose spod server_id (npu-smi Server Index) is below 48."""
    lines = [f"product={product.removesuffix('-out')}"]
    if product.endswith("-out"):
        lines.append("server_index=60")
    root = host(tmp_path, *lines, dies=2 if product.startswith("a3") else 1)
    res = run(root, "-i", "2", "-ip", "-s", "address", address, "netmask", "255.255.255.0")
    if refused:
        assert (res.returncode, res.stderr) == (7, CONFLICT + "\n")
        assert conf(root) == []
    else:
        assert res.returncode == 0, res.stderr
        assert conf(root) == [f"address_2={address}", "netmask_2=255.255.255.0"]


def test_address_validity_conflicts_and_gateway_segment(tmp_path):
    """ext/tool_ops_ip.c:tool_transfer_check_ipaddr / tool_transfer_check_netmask (inet_pton,
    not 0.0.0.0 or 255.255.255.255, contiguous mask) -> UDA_PARAM_IP_INVALID_ERR 0x2006;
    ht/tool_ops.c:is_total_dev_ipaddr_conflict (another NPU of phy 0-3, or of 4-15, holds it) ->
    0x2007; tool_check_ip_net_segment -> UDA_PARAM_DIFF_SEGMT_GTWY_ERR 0x2008;
    tool_netdetect_set_address: 255.255.255.255 -> UDA_TOOL_COFNIG_BROAD_ADDRESS_ERR 0x3025."""
    root = configured(host(tmp_path), dev=0)
    for address, mask in (
        ("10.20.0.300", "255.255.255.0"),
        ("10.20.0.03", "255.255.255.0"),
        ("0.0.0.0", "255.255.255.0"),
        ("10.20.0.3", "255.0.255.0"),
    ):
        res = run(root, "-i", "1", "-ip", "-s", "address", address, "netmask", mask)
        assert res.returncode == 6 and res.stderr == "The ip address you configured is invalid!\n"
    res = run(root, "-i", "1", "-ip", "-s", "address", "10.20.0.2", "netmask", "255.255.255.0")
    assert (res.returncode, res.stderr) == (7, CONFLICT + "\n")
    ok(root, "-i", "4", "-ip", "-s", "netmask", "255.255.255.0", "address", "10.20.0.2")
    res = run(root, "-i", "0", "-gateway", "-s", "gateway", "10.20.1.1")
    assert res.returncode == 8
    assert res.stderr == (
        "The segment of configured gateway doesn't match that of the configured ip adress!\n"
    )
    res = run(root, "-i", "0", "-netdetect", "-s", "address", "255.255.255.255")
    assert (res.returncode, res.stderr) == (37, "Can not config broadcast address!\n")
    res = run(root, "-i", "0", "-ip", "-s", "address", "10.20.0.5")  # argc != 5
    assert res.returncode == 4 and res.stderr == COUNT + "\n"


def test_a3_dies_of_one_npu_may_not_share_an_address(tmp_path):
    """ext/tool_ops_ip.c:is_910_a3_ip_conflict: on an A3 SuperPoD only the other die of the same
    NPU (phy id ^ 1) is compared; other NPUs are not (is_ipaddr_conflict skips that check)."""
    root = configured(host(tmp_path, "product=a3-superpod", dies=2), dev=4, ip="10.30.0.2")
    res = run(root, "-i", "5", "-ip", "-s", "address", "10.30.0.2", "netmask", "255.255.255.0")
    assert (res.returncode, res.stderr) == (7, CONFLICT + "\n")
    ok(root, "-i", "6", "-ip", "-s", "address", "10.30.0.2", "netmask", "255.255.255.0")


def test_a_new_address_drops_a_gateway_of_another_subnet_from_hccn_conf(tmp_path):
    """ht/tool_ops.c:tool_set_ipaddr_recovery: after the address is set, a gateway_<id> outside the
    new subnet is deleted from hccn.conf (one inside is applied again)."""
    root = configured(host(tmp_path))
    ok(root, "-i", "0", "-gateway", "-s", "gateway", "10.20.0.1")
    ok(root, "-i", "0", "-ip", "-s", "address", "10.20.0.9", "netmask", "255.255.255.0")
    assert ok(root, "-i", "0", "-gateway", "-g") == "default gateway:10.20.0.1, Iface:eth0\n"
    ok(root, "-i", "0", "-ip", "-s", "address", "10.40.0.2", "netmask", "255.255.255.0")
    assert conf(root) == ["address_0=10.40.0.2", "netmask_0=255.255.255.0"]
    assert run(root, "-i", "0", "-gateway", "-g").returncode == 2


# --- rule 6: MTU ---------------------------------------------------------------------------------


def test_mtu_range_roh_limit_and_the_ipv6_prompt(tmp_path):
    """ht/tool_ops_ext.c:tool_check_mtu: ETH 68..9702, RoH 68..4192 (ht/tool.h TOOL_*_MTU_SIZE;
    help text "RoH from 68 to 4192" in the A3 build) -> UDA_PARAM_MTU_OUT_OF_RANGE_ERR 0x200d
    (exit 13); a tail after the digits is UDA_PARAM_INVALID_ERR; below 1280 on ETH
    ht/tool.c:tool_double_check asks (y/n) and anything but `y` is UDA_TOOL_USER_ABORT_CMD_ERR
    0x3016 (exit 22, "User aborts command." on stdout)."""
    root = host(tmp_path, "npu1.mac_type=roh")
    for size in ("67", "9703", "", "-1500"):
        res = run(root, "-i", "0", "-mtu", "-s", "size", size)
        assert res.returncode == 13, size
        assert res.stderr == "The value of mtu you input is out of the valid range!\n"
    assert ok(root, "-i", "0", "-mtu", "-s", "size", "9702")
    assert run(root, "-i", "0", "-mtu", "-s", "size", "15x").returncode == 1
    assert run(root, "-i", "1", "-mtu", "-s", "size", "4193").returncode == 13
    assert ok(root, "-i", "1", "-mtu", "-s", "size", "4192")
    res = run(root, "-i", "0", "-mtu", "-s", "size", "1000", stdin="n\n")
    assert res.returncode == 22 and res.stdout.endswith("(y/n)\nUser aborts command.\n")
    res = run(root, "-i", "0", "-mtu", "-s", "size", "1000", stdin="y\n")
    assert res.returncode == 0 and ok(root, "-i", "0", "-mtu", "-g") == "mtu:1000\n"


def test_pfc_prio_tc_and_dscp_values(tmp_path):
    """ext/tool_cmd.c:tool_pfc_str2char (15 characters, 0/1 and commas, at most 4 priorities:
    UDA_TOOL_OP_PFC_NUMS_OUT_OF_VALUE 0x3019 on stdout), ext/tool_prio_tc.c:tool_prio_tc_str2char
    (TC 0..3), ht/tool_ops.c:tool_dscp_check_argv (dscp 0..63 -> 0x2009, tc 0..3 -> 0x200a)."""
    root = host(tmp_path)
    res = run(root, "-i", "0", "-pfc", "-s", "bitmap", "1,1,1,1,1,0,0,0")
    assert res.returncode == 25
    assert res.stdout == "The number of pfc priority queues exceeds the maximum value(4).\n"
    assert run(root, "-i", "0", "-pfc", "-s", "bitmap", "0,0,0,0,2,0,0,0").returncode == 1
    assert run(root, "-i", "0", "-pfc", "-s", "bitmap", "0,0,0,0,1,0,0").returncode == 1
    assert run(root, "-i", "0", "-prio_tc", "-s", "map", "0,0,0,0,4,0,0,0").returncode == 1
    res = run(root, "-i", "0", "-dscp_to_tc", "-s", "dscp", "64", "tc", "3")
    assert res.returncode == 9
    assert res.stderr == "The value of dscp you input is out of the valid range!\n"
    res = run(root, "-i", "0", "-dscp_to_tc", "-s", "dscp", "33", "tc", "4")
    assert res.returncode == 10
    assert run(root, "-i", "0", "-dscp_to_tc", "-s", "dscp", "033", "tc", "3").returncode == 1
    assert conf(root) == []


# --- rule 7: ids, commands, -cfg recovery --------------------------------------------------------


def test_device_ids_and_command_names(tmp_path):
    """ht/cmd.c:cmd_check_phy_id (one or two digits) and tool_parse_dev (the chip must exist) ->
    UDA_MAJOR_CMD_DEV_ID_ERR 0x1004 (exit 4); get_cmd_type (-i or -a) -> 0x1001;
    major_cmd_parse (a known command at argv[3]) -> 0x1003; len_valid -> 0x1002. On an A3 host
    -i is the die's physical id: 0..15 for 8 NPUs of 2 dies (HDK A3 HCCN: 0~15)."""
    root = host(tmp_path)
    for dev in ("8", "100", "x", "-1"):
        res = run(root, "-i", dev, "-link", "-g")
        assert (res.returncode, res.stderr) == (4, "Get invalid device id.\n"), dev
    assert ok(root, "-i", "07", "-link", "-g") == "link status: UP\n"
    a3 = host(tmp_path / "a3", "product=a3-superpod", dies=2)
    assert ok(a3, "-i", "15", "-link", "-g") == "link status: UP\n"
    assert run(a3, "-i", "16", "-link", "-g").returncode == 4
    res = run(root, "-i", "0", "-send_arp_status", "-s", "1")
    assert res.returncode == 3
    assert res.stderr == "Get invalid major cmd.\nEnter [ hccn_tool -h ] for more details.\n"
    res = run(root, "-x", "0", "-mtu", "-g")
    assert res.returncode == 1 and res.stderr.startswith("Get invalid major cmd type.")
    assert run(root).returncode == 2
    res = run(root, "-i", "0", "-vnic", "-g")  # a real command the double does not implement
    assert res.returncode == 2 and "not implemented by the double" in res.stderr
    res = subprocess.run([str(HCCN_TOOL), "-i", "0", "-mtu", "-g"], capture_output=True, text=True)
    assert (res.returncode, res.stderr) == (2, "test double: WANKA_ROOT is not set\n")


def test_cfg_recovery_applies_hccn_conf_to_the_nic(tmp_path):
    """ht/tool_ops_ext.c:tool_cfg_cmd_recovery / recovery_process_cfg_cmd: each key of the lists in
    ht/tool_ops.c:1646-1700 found in hccn.conf is set again, DCQCN only from dcqcn_en_enable_<id>
    plus dcqcn_en_alg_mode_<id> (tool_cfg_dcqcn_enable_recovery) and dcqcn_cnp_dscp_<id>;
    `-a -cfg recovery` prints `dev:<id> recovery success` per chip (tool_cfg_cmd_recovery_all)."""
    root = host(tmp_path, npus=2)
    (root / "etc/hccn.conf").write_text(
        "address_1=10.20.0.3\nnetmask_1=255.255.255.0\ngateway_1=10.20.0.1\nmtu_1=4200\n"
        "dcqcn_en_enable_1=1\ndcqcn_en_alg_mode_1=0\ndcqcn_cnp_dscp_1=48\n"
    )
    assert ok(root, "-i", "1", "-cfg", "recovery") == "Cmd executed successfully!\n"
    assert ok(root, "-i", "1", "-ip", "-g") == "ipaddr:10.20.0.3\nnetmask:255.255.255.0\n"
    assert ok(root, "-i", "1", "-mtu", "-g") == "mtu:4200\n"
    assert ok(root, "-i", "1", "-dcqcn", "-g", "cnp_dscp") == "cnp_dscp     : 48\n"
    assert ok(root, "-i", "1", "-cfg", "status") == "config status:SUCCESS\n"
    assert ok(root, "-a", "-cfg", "recovery") == (
        "dev:0 recovery success\ndev:1 recovery success\nCmd executed successfully!\n"
    )
    assert run(root, "-i", "1", "-cfg", "recovery", "x").returncode == 4


# --- npu-smi -------------------------------------------------------------------------------------


def test_npu_smi_rejects_npu_id_8_on_an_a3_node(tmp_path):
    """npu-smi info -t board -i id -c chip_id: id is the NPU ID of `npu-smi info -l` (8 NPUs on an
    A3 server, 0..7), chip_id the Chip ID of `npu-smi info -m` (the two dies 0/1, then the MCU,
    which only -t board takes). The refusal's text and status are not public (assumption)."""
    root = host(tmp_path, "product=a3-superpod", dies=2)
    for args in (("-t", "board", "-i", "8"), ("-t", "health", "-i", "15", "-c", "0")):
        res = run(root, "info", *args, tool=NPU_SMI)
        assert res.returncode == 1 and "NPU ID" in res.stderr and "invalid" in res.stderr, args
    res = run(root, "info", "-t", "common", "-i", "7", "-c", "2", tool=NPU_SMI)
    assert res.returncode == 1 and "chip ID 2" in res.stderr
    assert (
        "Chip ID                        : 1"
        in run(root, "info", "-t", "common", "-i", "7", "-c", "1", tool=NPU_SMI).stdout
    )
    mcu = run(root, "info", "-t", "board", "-i", "7", "-c", "2", tool=NPU_SMI)
    assert mcu.returncode == 0 and "Chip Type                      : mcu" in mcu.stdout
    table = run(root, "info", "-m", tool=NPU_SMI).stdout.splitlines()
    assert len(table) == 1 + 8 * 3 and table[-1].split() == ["7", "2", "-", "-", "Mcu"]
    assert table[-2].split() == ["7", "1", "15", "15", "Ascend910"]
    res = run(root, "set", "-t", "power-limit", "-i", "3", "-c", "0", "-d", "200", tool=NPU_SMI)
    assert res.returncode == 0 and res.stdout == "Status : OK\n"
    assert (
        run(root, "set", "-t", "power-limit", "-i", "9", "-d", "200", tool=NPU_SMI).returncode == 1
    )


def test_npu_smi_board_with_a_chip_id_is_the_chips_entry(tmp_path):
    """npusmi_008 `npu-smi info -t board -i id`: the NPU (Software Version = driver, Firmware
    Version); npusmi_009 `npu-smi info -t board -i id -c chip_id`: that chip (Chip Type, Chip Name,
    ..., no Software Version; the MCU's entry has the MCU's Firmware Version)."""
    root = host(tmp_path, "driver=25.5.0", "firmware=7.7.0.1.231", npus=1)
    npu = run(root, "info", "-t", "board", "-i", "0", tool=NPU_SMI).stdout
    assert "Software Version               : 25.5.0" in npu
    chip = run(root, "info", "-t", "board", "-i", "0", "-c", "0", tool=NPU_SMI).stdout
    assert "Chip Type                      : Ascend" in chip and "Software Version" not in chip


# --- The CloudEngine SSH double (tests/doubles/ce_switch.py) and wanka_ce_config against it ----
# (issue #39 item 5, #40 item 4). The double takes what it accepts, displays and asks from the
# command table (generator/catalog/commands.yaml); the module restates the display facts it
# needs (it runs under Ansible and cannot import the generator): both must agree.

CE_VAULT = {
    "vault_switch_admin_password": "double-admin-pw",
    "vault_snmp_auth_key": "double-snmp-auth-key",
    "vault_snmp_priv_key": "double-snmp-priv-key",
    "vault_ztp_sftp_password": "double-ztp-sftp-pw",
    "vault_dfs_password": "double-dfs-pw",
}
ROOT = Path(__file__).resolve().parents[2]


def _startup(example: str, name: str) -> str:
    import re

    text = (ROOT / "inventories" / example / "files/ztp/configs" / f"{name}.cfg").read_text()
    return re.sub(r"\{\{ (vault_\w+) \}\}", lambda m: CE_VAULT[m[1]], text)


def _ce_module():
    from tests.support.ansible_run import plugin

    return plugin("modules", "wanka_ce_config")


def test_the_modules_display_facts_are_the_tables():
    from generator.analysis.command_table import load_table

    ce = load_table().commands["huawei-ce"]
    module = _ce_module()
    assert {c.form: c.display for c in ce if c.display} == module.DISPLAY
    assert {c.form: c.adds for c in ce if c.adds} == module.ADDS
    yn = {c.form: c.prompt[0] for c in ce if c.prompt and c.prompt[0][1] != "<key>"}
    assert yn == module.ASKS
    keyed = {c.form.split()[4] for c in ce if c.prompt and c.prompt[0][1] == "<key>"}
    assert keyed == {"authentication-mode", "privacy-mode"}  # the two key prompts set_keys answers


def test_the_border_modules_defaults_and_questions_are_the_tables():
    """wanka_border_config restates (it runs under Ansible) what the table says the NE8000 and
    the USG hide and ask; the border double reads the table: the three agree."""
    from generator.analysis.command_table import load_table
    from tests.doubles import border_device
    from tests.support.ansible_run import plugin

    table = load_table()
    border = [c for p in ("huawei-ne", "huawei-usg") for c in table.commands[p]]
    module = plugin("modules", "wanka_border_config")
    assert module.DEFAULTS == border_device.DEFAULTS
    assert set(module.DEFAULTS) == {c.form for c in border if c.display == "hidden"}
    asks = {c.form for c in border if c.prompt and c.prompt[0][1] == "y"}
    assert asks == set(border_device.ASKS)
    assert {c.form for c in border if any(q.match(c.form) for q in module.QUESTIONS)} == asks


@pytest.mark.parametrize("example", ["pod-128", "cluster-1k"])
def test_a_switch_booted_from_its_plan_shows_no_difference_to_the_module(example):
    """Every switch of the example, booted in the double from its startup file, displays its
    configuration as the table says (defaults hidden, masks dotted, the trap host named, an
    engine ID added); the module's remediation of that display against the plan is empty."""
    from tests.doubles.ce_switch import Switch

    module = _ce_module()
    configs = sorted((ROOT / "inventories" / example / "files/ztp/configs").glob("*.cfg"))
    assert configs
    seen = set()
    for path in configs:
        sw = Switch(path.stem)
        intended = _startup(example, path.stem)
        sw.load(intended)
        shown = sw.config()
        seen |= {w for w in ("local-engineid", "__targetHost_1_", "255.255.") if w in shown}
        assert "undo shutdown" not in shown and "jumboframe enable 9216" not in shown
        assert module.remediation(shown, intended, False) == [], path.name
    assert seen == {"local-engineid", "__targetHost_1_", "255.255."}


def test_the_module_undoes_an_unplanned_trap_host_by_its_name_and_keeps_the_engine_id():
    from tests.doubles.ce_switch import Switch

    module = _ce_module()
    intended = _startup("pod-128", "par-leaf-0001")
    sw = Switch("par-leaf-0001")
    sw.load(intended)
    plan = intended.replace("udp-domain 10.101.0.132", "udp-domain 10.101.0.133")
    lines = module.remediation(sw.config(), plan, False)
    (old,) = [ln for ln in sw.config().splitlines() if "target-host" in ln]
    name = old.split()[3]
    assert name.startswith("__targetHost_1_")
    assert f"undo snmp-agent target-host host-name {name}" in lines
    assert not [ln for ln in lines if "local-engineid" in ln]


def test_the_double_refuses_a_line_outside_the_table_with_the_device_error():
    from tests.doubles.ce_switch import ERROR, Switch

    with pytest.raises(ValueError, match=r"line 2: 'lldp enabel'"):
        Switch("x").load("sysname x\nlldp enabel\n")
    assert ERROR == "Error: Unrecognized command found at '^' position."
    assert (ROOT / "tests/data/captures/ce-unrecognized-command.txt").read_text().count(ERROR)


@pytest.fixture
def ce_fleet():
    from tests.doubles.ce_switch import Fleet, Switch

    sw = Switch("par-leaf-0001")
    sw.load(_startup("pod-128", "par-leaf-0001"))
    fleet = Fleet([sw]).start()
    yield sw, fleet
    fleet.stop()


def _run_module(fleet, tmp_path, intended: str, **extra):
    """wanka_ce_config run as Ansible runs a module (its arguments in a JSON file)."""
    import json
    import os
    import sys

    (name,) = fleet.switches
    args = {
        "host": "127.0.0.1",
        "port": fleet.ports[name],
        "username": "admin",
        "password": "double-admin-pw",
        "intended": intended,
        "backup": str(tmp_path / "backup.cfg"),
        "snmp_auth_key": CE_VAULT["vault_snmp_auth_key"],
        "snmp_priv_key": CE_VAULT["vault_snmp_priv_key"],
        "timeout": 20,
        **extra,
    }
    path = tmp_path / "args.json"
    path.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
    module = ROOT / "plugins/modules/wanka_ce_config.py"
    env = {**os.environ, "PYTHONPATH": str(ROOT / ".collections")}
    res = subprocess.run(
        [sys.executable, str(module), str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    return res, json.loads(res.stdout) if res.stdout.strip().startswith("{") else {}


def test_keys_in_their_own_commit_survive_a_later_change_that_is_rolled_back(ce_fleet, tmp_path):
    sw, fleet = ce_fleet
    intended = _startup("pod-128", "par-leaf-0001")
    res, out = _run_module(fleet, tmp_path, intended)
    assert res.returncode == 0 and out["changed"], res.stdout[-2000:]
    assert sw.keys == {
        "authentication": CE_VAULT["vault_snmp_auth_key"],
        "privacy": CE_VAULT["vault_snmp_priv_key"],
    }
    assert sw.log.count("commit") == 1
    res, out = _run_module(fleet, tmp_path, intended)
    assert res.returncode == 0 and not out["changed"] and sw.log.count("commit") == 1

    # a later change the switch accepts but does not apply: committed, still differs, rolled back
    sw.ignore.append(r"^stp bpdu-protection$")
    sw.load(sw.config().replace("\nstp bpdu-protection\n", "\n"))
    res, out = _run_module(fleet, tmp_path, intended)
    assert res.returncode == 1 and "rolled back" in out["msg"], res.stdout[-2000:]
    assert "rollback configuration last 1" in sw.log
    assert "authentication-mode sha2-256 cipher" in sw.config()


def test_a_rejected_line_midway_stops_the_typing_and_discards_the_change(ce_fleet, tmp_path):
    """Two lines to add; the switch refuses the first: the second is never sent, the candidate
    is cleared, nothing is committed."""
    sw, fleet = ce_fleet
    intended = _startup("pod-128", "par-leaf-0001")
    sw.load(intended.replace("\nstp bpdu-protection\n", "\n").replace("\nlldp enable\n", "\n"))
    sw.reject.append(r"^stp bpdu-protection$")
    res, out = _run_module(fleet, tmp_path, intended)  # the keys' own commit, then the refusal
    assert res.returncode == 1 and sw.log.count("commit") == 1, res.stdout[-2000:]
    assert "authentication-mode sha2-256 cipher" in sw.config()  # kept
    before = sw.config()
    sw.log.clear()
    res, out = _run_module(fleet, tmp_path, intended)
    assert res.returncode == 1, res.stdout[-2000:]
    assert "'stp bpdu-protection': Error: Unrecognized command found at '^' position." in out["msg"]
    assert "nothing after it was sent" in out["msg"] and "unchanged" in out["msg"]
    typed = sw.log.index("stp bpdu-protection")
    assert sw.log[typed + 1] == "clear configuration candidate"
    assert "lldp enable" not in sw.log and "commit" not in sw.log
    assert sw.config() == before


def test_a_huge_reply_is_not_read_past_the_bound(ce_fleet, tmp_path):
    import time

    sw, fleet = ce_fleet
    sw.replies["display current-configuration"] = "#\n" * (50 * 1024 * 1024)  # 100 MB
    start = time.monotonic()
    res, out = _run_module(fleet, tmp_path, _startup("pod-128", "par-leaf-0001"))
    assert res.returncode == 1 and "Traceback" not in res.stdout + res.stderr
    assert "longer than 16777216 bytes" in out["msg"]
    assert time.monotonic() - start < 60


def test_a_prompt_inside_a_reply_is_no_prompt_and_raises_no_traceback(ce_fleet, tmp_path):
    """A description holding `[Y/N]`, `Enter Password:` and a fake `<name>` prompt mid-line
    is text: the module reads the whole display and converges (only the keys to set)."""
    sw, fleet = ce_fleet
    intended = _startup("pod-128", "par-leaf-0001")
    odd = " description Continue? [Y/N]: Enter Password: <par-leaf-0001> [~par-leaf-0001]"
    plan = intended.replace(" description gateway 10.64.0.0/26", odd, 1)
    assert plan != intended
    sw.load(plan)
    res, out = _run_module(fleet, tmp_path, plan)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert out["commands"] == [
        "snmp-agent usm-user v3 wanka-nms authentication-mode sha2-256  (key typed at the prompt)",
        "snmp-agent usm-user v3 wanka-nms privacy-mode aes256  (key typed at the prompt)",
    ]


def test_a_spoofed_password_prompt_gets_no_key_and_a_refused_key_is_not_echoed(ce_fleet, tmp_path):
    sw, fleet = ce_fleet
    intended = _startup("pod-128", "par-leaf-0001")
    line = "snmp-agent usm-user v3 wanka-nms authentication-mode sha2-256"
    # the switch answers the key line with text that holds the question inside a line
    sw.reject.append("^" + line + "$")
    sw.replies[line] = "Info: type it at Enter Password: later\n"
    res, out = _run_module(fleet, tmp_path, intended)
    assert res.returncode == 1 and "no password prompt" in out["msg"]
    assert "******" not in sw.log  # no key was sent
    sw.reject.clear()
    sw.replies.clear()

    sw.echo_keys = True  # the refusal quotes the key
    res, out = _run_module(fleet, tmp_path, intended, snmp_priv_key="short")
    assert res.returncode == 1 and "privacy-mode aes256" in out["msg"]
    assert "short" not in res.stdout and CE_VAULT["vault_snmp_auth_key"] not in res.stdout
    assert "(******)" in out["msg"]


@pytest.mark.parametrize(
    ("fact", "why"),
    [
        ({"display": "hidden"}, "without its page"),
        ({"display": "ip address <ip>", "display_source": "[unconfirmed] x"}, "the form has"),
        ({"display": "hidden on port", "display_source": "[unconfirmed] x"}, "unknown interface"),
        (
            {"display": "hidden when ip address x", "display_source": "[unconfirmed] x"},
            "not a line",
        ),
    ],
)
def test_the_table_refuses_a_display_fact_it_cannot_use(fact, why):
    from generator.analysis.command_table import parse_table

    entry = {"form": "ip address <ip> <mask>", "view": "system", "source": "[unconfirmed] a page"}
    data = {"views": {"system": "System view"}, "platforms": {"huawei-ce": [{**entry, **fact}]}}
    with pytest.raises(ValueError, match=why):
        parse_table(data)


def test_a_line_that_asks_y_n_is_answered_and_converges(ce_fleet, tmp_path):
    """`ssh server-source -i` asks "... Continue? [Y/N]:" (ssh_server-source.json example): the
    module answers y, the line is committed, the next run changes nothing."""
    sw, fleet = ce_fleet
    intended = _startup("pod-128", "par-leaf-0001")
    (line,) = [ln for ln in intended.splitlines() if ln.startswith("ssh server-source -i ")]
    sw.load(intended.replace(line + "\n", ""))
    res, out = _run_module(fleet, tmp_path, intended)
    assert res.returncode == 0, res.stdout[-2000:]
    asked = sw.log.index(line)
    assert sw.log[asked + 1] == "y" and line in sw.config()
    res, out = _run_module(fleet, tmp_path, intended)
    assert res.returncode == 0 and not out["changed"]


def test_a_display_cut_short_by_a_prompt_like_line_is_not_compared(ce_fleet, tmp_path):
    """A reply that holds the switch's own prompt on a line of its own, then pauses: the module
    stops there (a prompt as the last line received), sees no `return` and changes nothing."""
    from tests.doubles.ce_switch import PAUSE

    sw, fleet = ce_fleet
    shown = sw.config()
    head, tail = shown.split("\nsnmp-agent\n", 1)
    sw.replies["display current-configuration"] = f"{head}\n<par-leaf-0001>{PAUSE}\n{tail}"
    res, out = _run_module(fleet, tmp_path, _startup("pod-128", "par-leaf-0001"))
    assert res.returncode == 1 and "Traceback" not in res.stdout + res.stderr
    assert "display current-configuration ended before its `return` line" in out["msg"]
    assert "system-view" not in sw.log and "commit" not in sw.log


def test_no_secret_of_the_intended_configuration_comes_back_from_the_module(tmp_path):
    """The intended text holds the Vault values (DFS password, local user): what the module
    returns to Ansible (its invocation, shown at -v and on failure, included) holds none."""
    from tests.doubles.ce_switch import Fleet, Switch

    sw = Switch("biz-leaf-0001")
    intended = _startup("pod-128", "biz-leaf-0001")
    assert CE_VAULT["vault_dfs_password"] in intended
    sw.load(intended.replace("\nlldp enable\n", "\n"))
    sw.reject.append(r"^lldp enable$")
    fleet = Fleet([sw]).start()
    try:
        res, out = _run_module(fleet, tmp_path, intended)
    finally:
        fleet.stop()
    assert res.returncode == 1 and "rejected" in out["msg"]
    assert [k for k, v in CE_VAULT.items() if v in res.stdout + res.stderr] == []


def test_a_port_shut_by_hand_is_started_again_and_then_nothing_changes(ce_fleet, tmp_path):
    """`undo shutdown` is the default and not displayed; a port someone shut shows `shutdown`,
    which the module undoes (one commit); the switch then displays neither and the next run
    changes nothing."""
    sw, fleet = ce_fleet
    intended = _startup("pod-128", "par-leaf-0001")
    res, _ = _run_module(fleet, tmp_path, intended)  # the keys
    assert res.returncode == 0
    port = "interface 400GE1/1/1:1\n"
    assert port in sw.config()
    sw.load(sw.config().replace(port, port + " shutdown\n", 1))
    sw.log.clear()
    res, out = _run_module(fleet, tmp_path, intended)
    assert res.returncode == 0 and out["commands"] == [port.strip(), "  undo shutdown", "  quit"]
    assert sw.log.count("commit") == 1 and " shutdown\n" not in sw.config()
    res, out = _run_module(fleet, tmp_path, intended)
    assert res.returncode == 0 and not out["changed"]


def test_a_line_outside_the_table_is_refused_by_the_double_as_by_the_device(ce_fleet, tmp_path):
    sw, fleet = ce_fleet
    intended = _startup("pod-128", "par-leaf-0001")
    res, out = _run_module(fleet, tmp_path, intended + "lldp enabel\n")
    assert res.returncode == 1
    assert "'lldp enabel': Error: Unrecognized command found at '^' position." in out["msg"]
    assert "lldp enabel" not in sw.config()


def test_wanka_ce_display_bounds_what_it_reads(ce_fleet, tmp_path):
    """roles/switch_config's display module: a 100 MB answer ends the task with a message at
    max_reply, no traceback; a normal answer is returned without its echo and prompt."""
    import json
    import os
    import sys

    sw, fleet = ce_fleet
    module = ROOT / "plugins/modules/wanka_ce_display.py"
    env = {**os.environ, "PYTHONPATH": str(ROOT / ".collections")}

    def display(command: str) -> tuple[subprocess.CompletedProcess, dict]:
        args = {"host": "127.0.0.1", "port": fleet.ports[sw.name], "username": "admin"}
        args |= {"password": "double-admin-pw", "command": command, "timeout": 20}
        path = tmp_path / "args.json"
        path.write_text(json.dumps({"ANSIBLE_MODULE_ARGS": args}))
        res = subprocess.run(
            [sys.executable, str(module), str(path)], capture_output=True, text=True, env=env
        )
        return res, json.loads(res.stdout)

    res, out = display("display current-configuration")
    assert res.returncode == 0  # the login password, if displayed, masked
    assert out["stdout"] == sw.config().replace("double-admin-pw", "******")
    sw.replies["display lldp neighbor brief"] = "x" * (100 * 1024 * 1024)
    res, out = display("display lldp neighbor brief")
    assert res.returncode == 1 and "Traceback" not in res.stdout + res.stderr
    assert "longer than 16777216 bytes" in out["msg"]


def test_a_login_that_never_shows_a_prompt_fails_with_a_message(ce_fleet, tmp_path):
    sw, fleet = ce_fleet
    sw.greeting = "Welcome (no prompt follows)\n"
    res, out = _run_module(fleet, tmp_path, _startup("pod-128", "par-leaf-0001"), timeout=5)
    assert res.returncode == 1 and "Traceback" not in res.stdout + res.stderr
    assert f"127.0.0.1:{fleet.ports[sw.name]}: login failed: " in out["msg"]
