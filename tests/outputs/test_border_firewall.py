"""The firewalls and border routers as rendered in every committed example: what the USG and the
NE8000 would refuse or silently ignore (hardware review 2, findings 2, 4 and 10). Read with the
twin's reader of the rendered configs (generator/twin/vrp.py), not with the emitter's data."""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.twin import vrp
from generator.verify import vrp as reader

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (ROOT / "inventories").iterdir() if (p / "files" / "border").is_dir())
# The USG's built-in zones and their fixed priorities (Huawei forum corpus-3126: "each security
# zone has a globally unique security priority ... The DMZ ... namely, 50").
BUILT_IN = {"untrust": 5, "dmz": 50, "trust": 85, "local": 100}


def _configs(kind: str):
    for folder in EXAMPLES:
        for path in sorted((folder / "files" / "border").glob(f"{kind}-*.cfg")):
            text = path.read_text(encoding="utf-8")
            yield path, reader.tree(text, reader.platform(folder, path), path.name)


FIREWALLS = list(_configs("fw"))
ROUTERS = list(_configs("rtr"))
IDS = [f"{p.parents[2].name}/{p.name}" for p, _ in FIREWALLS]


@pytest.mark.parametrize(("path", "lines"), FIREWALLS, ids=IDS)
def test_zone_priorities_are_unique_and_none_is_a_built_in_zones(path, lines):
    taken = dict(BUILT_IN)
    for line in lines:
        w = line.words()
        if w[:3] != ["firewall", "zone", "name"]:
            continue
        for child in line.children:
            c = child.words()
            if c[:2] == ["set", "priority"]:
                owner = next((z for z, p in taken.items() if p == int(c[2])), None)
                assert owner is None, (
                    f"{path}:{child.number}: zone {w[3]} priority {c[2]} is {owner}'s"
                )
                taken[w[3]] = int(c[2])


@pytest.mark.parametrize(("path", "lines"), FIREWALLS, ids=IDS)
def test_the_management_port_is_in_a_zone_permits_ssh_and_snmp_and_has_local_rules(path, lines):
    dev = vrp.device(path.parents[2], path)
    mgmt = next(i for i in dev.interfaces.values() if i.vpn != vrp.PUBLIC)
    zone = next((z for z, ifs in dev.zones.items() if mgmt.name in ifs), None)
    assert zone, (
        f"{path}: {mgmt.name} is in no zone: an interface outside every zone passes nothing"
    )
    assert {"ssh", "snmp"} <= set(mgmt.service_manage), f"{path}: {mgmt.name} service-manage"
    local = {
        (protocol, port, "in" if "local" in r.destination_zones else "out")
        for r in dev.policies
        if r.action == "permit"
        and {zone, "local"} == set(r.source_zones) | set(r.destination_zones)
        for protocol, port in r.services
    }
    # its own SSH and SNMP in; NTP, syslog and traps out (the flows of files/flows.csv)
    want = {("tcp", 22, "in"), ("udp", 161, "in"), ("udp", 123, "out"), ("udp", 514, "out")}
    assert want | {("udp", 162, "out")} <= local, f"{path}: local-zone rules {sorted(local)}"


@pytest.mark.parametrize(("path", "lines"), FIREWALLS + ROUTERS, ids=IDS + [
    f"{p.parents[2].name}/{p.name}" for p, _ in ROUTERS
])  # fmt: skip
def test_the_management_acl_matches_the_vpn_instance_of_the_management_port(path, lines):
    dev = vrp.device(path.parents[2], path)
    vpn = next(i.vpn for i in dev.interfaces.values() if i.vpn != vrp.PUBLIC)
    acl, _ = dev.service_acls["vty"]
    permits = [r for r in dev.acls[acl] if r.action == "permit"]
    assert permits and all(r.vpn == vpn for r in permits), f"{path}: ACL {acl} rules {permits}"


@pytest.mark.parametrize(
    ("path", "lines"), ROUTERS, ids=[f"{p.parents[2].name}/{p.name}" for p, _ in ROUTERS]
)
def test_the_router_turns_telnet_off_in_the_vrp8_form(path, lines):
    texts = [line.text for line in lines]
    assert "telnet server disable" not in texts  # the CE V300 form; VRP8 rejects it
    assert "undo telnet server enable" in texts  # NE40E V800R012C10 telnet_server_enable page


@pytest.mark.parametrize(
    ("path", "lines"), ROUTERS, ids=[f"{p.parents[2].name}/{p.name}" for p, _ in ROUTERS]
)
def test_the_default_toward_the_provider_follows_an_nqa_test_of_its_gateway(path, lines):
    """Review finding 12: a provider that stops answering behind a link that stays up kept
    attracting outbound flows; the default is tracked by an ICMP NQA test of that gateway."""
    tests = {}
    for line in lines:
        w = line.words()
        if w[:2] == ["nqa", "test-instance"]:
            c = {x.words()[0]: x.words()[1:] for x in line.children}
            assert c["test-type"] == ["icmp"] and "start" in c, f"{path}:{line.number}"
            tests[" ".join(w[2:4])] = c["destination-address"][1]
    defaults = [
        line.words() for line in lines if line.text.startswith("ip route-static 0.0.0.0 0 ")
    ]
    assert defaults, f"{path}: no default route"
    for w in defaults:
        assert w[5:7] == ["track", "nqa"], f"{path}: {' '.join(w)} is not tracked"
        assert tests[" ".join(w[7:9])] == w[4], f"{path}: its NQA test pings another address"
