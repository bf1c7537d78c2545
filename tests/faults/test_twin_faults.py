"""A corpus of realistic configuration faults, each applied to a generated pod-128 (issue #39
item 6): the twin refuses the folder at the changed file:line where a real device would refuse
the line (a typo, a line in the wrong view, a value out of range, a command of the other
Layer-2/Layer-3 mode, a sub-port of a port not split, a VPN not created), and otherwise what it
builds changes on the changed device (its FRR, nftables, addresses, bridges, port states or DHCP
relays), so that its sessions, flows and drills judge the fault with real packets. No root needed: these build the twin's plan; the real twin runs in
tests/consumers/test_twin.py.

Faults the twin reads but does not emulate (Telnet and SNMPv1/v2c turned on: the command table's
`twin:` item `clear-text`, counted in twin-report.md) are judged by `wanka verify`, which must name
the changed line."""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path

import pytest

from generator import cli
from generator.twin import checks, hosts, plan, routing, ztp
from generator.verify.report import NotAnOutput
from tests.support.examples import ROOT

POD = ROOT / "inventories" / "pod-128"
LEAF, OOB, CORE, FW = (
    "files/switches/par-leaf-0001.cfg",
    "files/switches/oob-access-0001.cfg",
    "files/switches/inb-core-001.cfg",
    "files/border/fw-01.cfg",
)


@dataclass(frozen=True)
class Fault:
    """In `file`, the first line equal to `old` after the first line starting with `after`
    becomes `new` (None: deleted; `old` None: `new` inserted after that line). `refused`: the
    text of the line the twin names (the changed line, or the first line it makes unreadable).
    `verify`: what `wanka verify` says at the changed line, for a fault the twin reads but does
    not emulate (the table's `twin:` item `clear-text`): verify fails it, the twin's plan is
    unchanged."""

    name: str
    file: str
    after: str
    old: str | None
    new: str | None
    refused: str | None = None
    verify: str | None = None


FAULTS = [
    # refused, as the device refuses the line
    Fault(
        "typo undo portswich",
        LEAF,
        "interface 400GE1/3/1",
        " undo portswitch",
        " undo portswich",
        " undo portswich",
    ),
    Fault(
        "typo maximum load-balance",
        LEAF,
        "bgp ",
        "  maximum load-balancing 16",
        "  maximum load-balance 16",
        "  maximum load-balance 16",
    ),
    Fault(
        "port split lost",
        LEAF,
        "",
        "port split dimension interface 400GE1/1/1 split-type 2*200GE",
        None,
        "interface 400GE1/1/1:1",
    ),
    Fault(
        "undo portswitch lost on an uplink",
        LEAF,
        "interface 400GE1/3/1",
        " undo portswitch",
        None,
        " ip address 10.64.32.0 31",
    ),
    Fault(
        "management VPN not created",
        LEAF,
        "",
        "ip vpn-instance _management_vpn_",
        None,
        " ipv4-family",
    ),
    Fault(
        "Eth-Trunk left in Layer 3",
        "files/switches/biz-leaf-0001.cfg",
        "interface Eth-Trunk10",
        " portswitch",
        None,
        " port default vlan 100",
    ),
    Fault(
        "typo in a predefined service",
        FW,
        " rule name ospf-local-out",
        "  service ospf",
        "  service osfp",
        "  service osfp",
    ),
    Fault(
        "SNMP v2c enabled",
        LEAF,
        "",
        "snmp-agent sys-info version v3",
        "snmp-agent sys-info version v2c v3",
        verify="SNMP v1/v2c",
    ),
    Fault(
        "telnet turned on",
        LEAF,
        "",
        "telnet server disable",
        "undo telnet server disable",
        verify="telnet server enabled",
    ),
    Fault(
        "telnet in the router's form on a switch",
        LEAF,
        "",
        "telnet server disable",
        "telnet server enable",
        "telnet server enable",
    ),
    Fault("MTU out of range", LEAF, "interface 400GE1/3/1", " mtu 9000", " mtu 9700", " mtu 9700"),
    Fault(
        "relay in the wrong view",
        OOB,
        "",
        " dhcp select relay",
        "dhcp select relay",
        "dhcp select relay",
    ),
    Fault(
        "route preference out of range",
        LEAF,
        "",
        "ip route-static vpn-instance _management_vpn_ 10.101.0.0 20 10.102.0.1",
        "ip route-static vpn-instance _management_vpn_ 10.101.0.0 20 10.102.0.1 preference 300",
        "ip route-static vpn-instance _management_vpn_ 10.101.0.0 20 10.102.0.1 preference 300",
    ),
    # acted on: what the twin builds for the device changes
    Fault(
        "ACL deny renumbered above its permits",
        OOB,
        "acl number 2000",
        " rule 100 deny",
        " rule 1 deny",
    ),
    Fault(
        "ACL permit widened",
        OOB,
        "acl number 2000",
        " rule 5 permit source 10.101.0.0 0.0.15.255",
        " rule 5 permit source 10.101.0.0 0.0.255.255",
    ),
    Fault(
        "SSH bound to an ACL that does not exist",
        LEAF,
        "",
        "ssh server acl 2000",
        "ssh server acl 2999",
    ),
    Fault(
        "security rule denied", FW, " rule name ssh-switches", "  action permit", "  action deny"
    ),
    Fault("firewall default permit", FW, "security-policy", None, " default action permit"),
    Fault("uplink shutdown", LEAF, "interface 400GE1/3/1", " undo shutdown", " shutdown"),
    Fault("DHCP off on a relay", OOB, "", "dhcp enable", None),
    Fault("relay not selected", OOB, "", " dhcp select relay", None),
    Fault(
        "ECMP width lost", LEAF, "bgp ", "  maximum load-balancing 16", "  maximum load-balancing 1"
    ),
    Fault("OSPF network type lost", OOB, "", " ospf network-type p2p", None),
    Fault("port isolation lost", OOB, "", " port-isolate enable group 1", None),
    Fault("leaf stops announcing its subnet", LEAF, "bgp ", "  network 10.64.0.0 26", None),
    Fault(
        "NAT for another zone",
        FW,
        " rule name business-untrust",
        "  source-zone business",
        "  source-zone management",
    ),
]


def _apply(folder: Path, fault: Fault) -> tuple[int, str]:
    """The fault applied to the copy; the 1-based number of the changed line and its text."""
    path = folder / fault.file
    lines = path.read_text().splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith(fault.after))
    if fault.old is None:
        at = start + 1
        lines.insert(at, fault.new or "")
        changed = fault.new or ""
    else:
        at = next(i for i in range(start, len(lines)) if lines[i] == fault.old)
        changed = lines[at]
        if fault.new is None:
            del lines[at]
        else:
            lines[at] = changed = fault.new
    path.write_text("\n".join(lines) + "\n")
    return at + 1, changed


def _device_digest(p: plan.Plan, device: str) -> str:
    h = hashlib.sha256()
    for name, ns in sorted(p.namespaces.items()):
        if ns.device == device:
            h.update(repr((name, ns.commands, ns.frr, ns.nft, sorted(ns.sysctls.items()))).encode())
    h.update(repr([(i.name, a, s) for d, i, a, s in checks.relays(p) if d.name == device]).encode())
    return h.hexdigest()


def _plan(folder: Path) -> plan.Plan:
    p = plan.plan(folder, {})
    routing.apply(p)
    return p


@pytest.fixture(scope="module")
def base() -> plan.Plan:
    return _plan(POD)


@pytest.mark.parametrize("fault", FAULTS, ids=lambda f: f.name)
def test_the_twin_refuses_or_acts_on_each_fault(
    fault: Fault, base: plan.Plan, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "pod-128"
    shutil.copytree(POD, folder)
    at, changed = _apply(folder, fault)
    device = Path(fault.file).stem
    if fault.verify is not None:
        assert _device_digest(_plan(folder), device) == _device_digest(base, device)
        code = cli.main(["verify", str(folder)])
        out = capsys.readouterr().out
        assert code == 1 and f"{fault.file}:{at}: {fault.verify}" in out, out
    elif fault.refused is not None:
        lines = (folder / fault.file).read_text().splitlines()
        named = lines.index(fault.refused) + 1
        with pytest.raises(NotAnOutput) as caught:
            _plan(folder)
        assert str(caught.value).startswith(f"{fault.file}:{named}: "), str(caught.value)
    else:
        assert _device_digest(_plan(folder), device) != _device_digest(base, device), changed


def test_the_corpus_is_realistic_in_number() -> None:
    """At least 25 faults, each kind of outcome well represented."""
    assert len(FAULTS) >= 25
    assert sum(f.refused is not None for f in FAULTS) >= 10
    assert sum(f.refused is None for f in FAULTS) >= 10


@pytest.mark.parametrize(
    ("old", "new", "says"),
    [
        (" undo portswitch", " portswitch", "' portswitch' where"),  # the line, not its indent
        (" mtu 9000", None, "'ip address"),  # a line lost: the next one differs
    ],
)
def test_a_staged_config_that_diverges_from_the_script_is_named(
    old: str, new: str | None, says: str, tmp_path: Path
) -> None:
    """What ZTP boots a switch with (files/ztp/configs) must read as its CLI script does: the
    ZTP drill fails at the first staged line that differs, naming both files and lines."""
    folder = tmp_path / "pod-128"
    shutil.copytree(POD, folder)
    name = hosts.ztp_switches(folder)[0]
    assert ztp.staged_differences(folder, [name]) == []
    staged = folder / "files" / "ztp" / "configs" / f"{name}.cfg"
    lines = staged.read_text().splitlines()
    at = lines.index(old)
    lines[at : at + 1] = [] if new is None else [new]
    staged.write_text("\n".join(lines) + "\n")
    (found,) = ztp.staged_differences(folder, [name])
    assert (found.file, found.line) == (f"files/ztp/configs/{name}.cfg", at + 1), found
    assert f"files/switches/{name}.cfg:" in found.subject and "ZTP would boot" in found.message
    assert found.text().startswith(f"files/ztp/configs/{name}.cfg:{at + 1}: ")
