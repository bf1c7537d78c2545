"""Issue #29's findings (shared/reviews/hardware-review-2.md), each as the property a reviewer
checks in a rendered folder: it holds for today's committed pod-128 and fails for a5a7f7e's, the
output the review read. The fix's own tests (the hccn_tool double, the command table, the twin)
prove more of each; this file proves that the old output really had the fault and the new one
has not, read from the files a device would receive."""

from __future__ import annotations

import csv
import ipaddress
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.output_readers import inventory_vars

ROOT = Path(__file__).resolve().parents[2]
PRE_FIX = "a5a7f7e"  # main as the second hardware review read it
HCCN_TOOL = ROOT / "tests" / "fakes" / "bin" / "hccn_tool"
BUILT_IN_ZONES = {"untrust": 5, "dmz": 50, "trust": 85, "local": 100}  # USG: forum corpus-3126


def _blocks(text: str, head: str) -> list[list[str]]:
    """The view blocks of a config whose first line starts with `head`, each with its lines."""
    out: list[list[str]] = []
    block: list[str] | None = None
    for line in text.splitlines():
        if line.startswith(" ") and block is not None:
            block.append(line)
        elif line.startswith(head):
            block = [line]
            out.append(block)
        elif not line.startswith(" "):
            block = None
    return out


def _cfgs(folder: Path, pattern: str) -> list[tuple[Path, str]]:
    return [(p, p.read_text()) for p in sorted((folder / "files").glob(pattern))]


def scripts_run_to_the_end(folder: Path, tmp: Path) -> list[str]:
    """Finding 1 (and /etc/hccn.conf before -ip -s): a host's hccn script, run under set -eu
    against the hccn_tool double on a host with nothing set, ends with rc 0."""
    script = sorted((folder / "files" / "hccn").glob("*.sh"))[0]
    (tmp / "etc").mkdir(parents=True)
    env = {"WANKA_ROOT": str(tmp), "PATH": "/usr/bin:/bin", "HCCN_TOOL": str(HCCN_TOOL),
           "HCCN_CONF": str(tmp / "etc" / "hccn.conf")}  # fmt: skip
    done = subprocess.run(["sh", str(script)], env=env, capture_output=True, text=True)
    return [] if done.returncode == 0 else [f"{script.name}: rc {done.returncode}"]


def dcqcn_survives_a_reboot(folder: Path, tmp: Path) -> list[str]:
    """Finding 1: hccn.conf carries the keys -cfg recovery restores DCQCN from."""
    conf = sorted((folder / "files" / "hccn").glob("*.conf"))[0].read_text()
    npus = sorted({m for m in re.findall(r"^address_(\d+)=", conf, re.M)})
    return [
        f"{key}_{n}"
        for n in npus
        for key in ("dcqcn_en_enable", "dcqcn_en_alg_mode", "dcqcn_cnp_dscp")
        if f"\n{key}_{n}=" not in "\n" + conf
    ]


def zone_priorities_unique(folder: Path, tmp: Path) -> list[str]:
    """Finding 2: a zone priority is unique, the built-in zones' included."""
    bad = []
    for path, text in _cfgs(folder, "border/fw-*.cfg"):
        seen = dict((p, z) for z, p in BUILT_IN_ZONES.items())
        for block in _blocks(text, "firewall zone name "):
            zone = block[0].split()[-1]
            for line in block:
                if m := re.match(r" set priority (\d+)$", line):
                    if int(m[1]) in seen:
                        bad.append(f"{path.name}: {zone} priority {m[1]} is {seen[int(m[1])]}'s")
                    seen[int(m[1])] = zone
    return bad


def firewall_manageable(folder: Path, tmp: Path) -> list[str]:
    """Finding 10: the management port is in a zone and admits SSH; the VTY ACL names the VPN
    instance the port is bound to; the firewall's own NTP leaves through a local-zone rule."""
    bad = []
    for path, text in _cfgs(folder, "border/fw-*.cfg"):
        mgmt = next(b for b in _blocks(text, "interface ") if " description management" in b)
        port = mgmt[0].split()[1]
        if " service-manage ssh permit" not in mgmt:
            bad.append(f"{path.name}: {port} without service-manage ssh permit")
        if not any(f" add interface {port}" in b for b in _blocks(text, "firewall zone")):
            bad.append(f"{path.name}: {port} in no zone")
        rules = [x for b in _blocks(text, "acl number 2000") for x in b if " permit " in x]
        if not rules or any("vpn-instance" not in r for r in rules):
            bad.append(f"{path.name}: ACL 2000 permit rules without vpn-instance")
        policy = text.split("\nsecurity-policy", 1)[-1]
        if not re.search(
            r"source-zone local\n(?:  .*\n)*?  service protocol udp destination-port 123", policy
        ):
            bad.append(f"{path.name}: no local-zone rule for its own NTP")
    return bad


def vrp8_telnet_form(folder: Path, tmp: Path) -> list[str]:
    """Finding 4: routers and firewalls turn Telnet off with the VRP8 form."""
    return [
        f"{path.name}: {'telnet server disable' if 'telnet server disable' in text else 'no undo'}"
        for path, text in _cfgs(folder, "border/*.cfg")
        if "\ntelnet server disable\n" in text or "\nundo telnet server enable\n" not in text
    ]


def provider_route_tracked(folder: Path, tmp: Path) -> list[str]:
    """Finding 12: a router's default toward the provider follows an NQA test of the provider."""
    return [
        f"{path.name}: {line}"
        for path, text in _cfgs(folder, "border/rtr-*.cfg")
        for line in text.splitlines()
        if line.startswith("ip route-static 0.0.0.0 0 ") and " track nqa " not in line
    ]


def oob_ports_isolated(folder: Path, tmp: Path) -> list[str]:
    """First review 16: every BMC access port of an out-of-band switch is isolated (third review
    2: a switch's MEth port is not, its M-LAG dual-active detection crosses it)."""
    return [
        f"{path.name}: {b[0]}"
        for path, text in _cfgs(folder, "switches/oob-access-*.cfg")
        for b in _blocks(text, "interface ")
        if " port link-type access" in b
        and any(x.endswith(" bmc") for x in b) != any("port-isolate enable" in x for x in b)
    ]


def dfs_authenticated(folder: Path, tmp: Path) -> list[str]:
    """First review 16: every DFS group authenticates its peer (hmac-sha256)."""
    return [
        f"{path.name}: {b[0]}"
        for path, text in _cfgs(folder, "switches/*.cfg")
        for b in _blocks(text, "dfs-group ")
        if not any(x.startswith(" authentication-mode hmac-sha256 ") for x in b)
    ]


def ai_ecn_licensed(folder: Path, tmp: Path) -> list[str]:
    """Finding 20: every switch whose config runs AI ECN names CE-LIC-AFRD in its host variables,
    and the BOM orders it for its model (CE V300R023C00 Configuration Precautions for AI ECN: "AI
    ECN is under license control (CE-LIC-AFRD)")."""
    hosts = inventory_vars(folder)
    with (folder / "files" / "bom.csv").open(newline="") as fh:
        models = {
            r["detail"].split(":")[0]
            for r in csv.DictReader(fh)
            if r["category"] == "licence" and r["item"] == "CE-LIC-AFRD"
        }
    ordered = {
        h
        for h, v in hosts.items()
        if "CE-LIC-AFRD" in v.get("licences", []) and v["model"] in models
    }
    return [
        path.stem
        for path, text in _cfgs(folder, "switches/*.cfg")
        if re.search(r"^\s+ai-ecn enable$", text, re.M) and path.stem not in ordered
    ]


def storage_roce_in_its_class(folder: Path, tmp: Path) -> list[str]:
    """Finding 18: the storage NICs are told the TOS their RoCE traffic leaves with (rdma_cm's
    default TOS 0 lands in priority 0, lossy): 4 x the lossless DSCP, and the NIC model's driver."""
    import yaml

    from generator.structured_yaml import FastVariablesLoader

    shared = yaml.load((folder / "group_vars" / "all.yml").read_text(), FastVariablesLoader)
    cls = shared.get("storage_lossless") or {}
    host = yaml.load(
        next((folder / "host_vars").glob("npu-*.yml")).read_text(), FastVariablesLoader
    )
    bad = [] if cls.get("tos") == 4 * cls.get("dscp", -1) else [f"storage_lossless {cls}"]
    return bad + ([] if host.get("storage_nic_driver") else ["no storage_nic_driver"])


def four_subnets_on_the_910(folder: Path, tmp: Path) -> list[str]:
    """First review 19: an Atlas 800 (9000) puts its 8 NPU ports in 4 subnets, NPU i and i+4
    together (MindCluster deployer_0025)."""
    bad = []
    for conf in sorted((folder / "files" / "hccn").glob("*.conf")):
        keys = dict(x.split("=", 1) for x in conf.read_text().splitlines() if "=" in x)
        nets = {
            n: ipaddress.IPv4Interface(f"{keys[f'address_{n}']}/{keys[f'netmask_{n}']}").network
            for n in range(8)
        }
        if len(set(nets.values())) != 4 or any(nets[i] != nets[i + 4] for i in range(4)):
            bad.append(f"{conf.name}: {sorted(map(str, set(nets.values())))}")
    return bad


def ports_numbered_as_the_box(folder: Path, tmp: Path) -> list[str]:
    """First review 7, review 2 #21: the CE9860's 400GE ports sit on subcards (slot/card/port,
    never /0/ as on a fixed box); the NE8000's number from 0 as the NE40E reference's examples
    (port_split 100GE 1/0/0). Both [unconfirmed] on a box, the catalog says which display would
    settle it."""
    bad = [
        f"{path.name}: {line}"
        for path, text in _cfgs(folder, "switches/par-leaf-*.cfg")
        for line in text.splitlines()
        if line.startswith("interface 400GE1/0/")
    ]
    return bad + [
        f"{path.name}: no 100GE1/0/0"
        for path, text in _cfgs(folder, "border/rtr-*.cfg")
        if "\ninterface 100GE1/0/0\n" not in text
    ]


POD, LEGACY = "pod-128", "legacy-100card"
PROPERTIES: dict[str, tuple[str, Callable[[Path, Path], list[str]]]] = {
    f.__name__: (example, f)
    for example, f in (
        (POD, scripts_run_to_the_end),
        (POD, dcqcn_survives_a_reboot),
        (POD, zone_priorities_unique),
        (POD, firewall_manageable),
        (POD, vrp8_telnet_form),
        (POD, provider_route_tracked),
        (POD, oob_ports_isolated),
        (POD, dfs_authenticated),
        (POD, ai_ecn_licensed),
        (POD, storage_roce_in_its_class),
        (LEGACY, four_subnets_on_the_910),
        (POD, ports_numbered_as_the_box),
    )
}


@pytest.fixture(scope="module")
def pre_fix(tmp_path_factory) -> Path:
    """The committed examples as a5a7f7e had them."""
    archive = subprocess.run(
        ["git", "archive", PRE_FIX, f"inventories/{POD}", f"inventories/{LEGACY}"],
        cwd=ROOT,
        capture_output=True,
    )
    if archive.returncode != 0:
        pytest.skip(f"commit {PRE_FIX} is not in this clone")
    into = tmp_path_factory.mktemp("pre-fix")
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into / "inventories"


@pytest.mark.parametrize("name", sorted(PROPERTIES))
def test_the_finding_holds_on_main_and_failed_on_the_reviewed_output(name, pre_fix, tmp_path):
    example, check = PROPERTIES[name]
    assert check(ROOT / "inventories" / example, tmp_path / "now") == []
    assert check(pre_fix / example, tmp_path / "then") != [], f"{name} already held on {PRE_FIX}"
