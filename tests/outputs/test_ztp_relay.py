"""Day-0 ZTP across the firewall: every out-of-band access switch's gateway relays DHCP to the
ZTP servers (the controllers), from its own Vlanif address, which is what the firewall rule `ztp`
permits toward the controllers; `wanka verify` proves the relayed flow and fails without it."""

from __future__ import annotations

import csv
import re
import shutil
from pathlib import Path

import pytest
import yaml

from generator import cli
from generator.structured_yaml import FastVariablesLoader
from tests.support.output_readers import ansible_hosts

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ("pod-128", "cluster-1k", "legacy-100card")


def _controllers(folder: Path) -> list[str]:
    groups = yaml.load((folder / "hosts.yml").read_text(), FastVariablesLoader)["all"]["children"]
    names = sorted(h for key in groups["controller"]["hosts"] for h in ansible_hosts(key))
    return [
        yaml.load((folder / "host_vars" / f"{h}.yml").read_text(), FastVariablesLoader)[
            "ansible_host"
        ]
        for h in names
    ]


def _blocks(text: str) -> dict[str, list[str]]:
    """Top-level line -> the indented lines under it (the last block of a repeated header)."""
    out: dict[str, list[str]] = {}
    head = ""
    for line in text.splitlines():
        if line.startswith(" "):
            out.setdefault(head, []).append(line.strip())
        elif line and line != "#":
            head = line
            out[head] = []
    return out


def _relays(folder: Path) -> dict[str, str]:
    """oob access switch -> the address of its gateway Vlanif (the relay's source)."""
    out = {}
    for cfg in sorted((folder / "files" / "switches").glob("oob-access-*.cfg")):
        text = cfg.read_text()
        vlanif = [(h, b) for h, b in _blocks(text).items() if h.startswith("interface Vlanif")]
        assert len(vlanif) == 1, cfg.name
        address = next(s.split()[2] for s in vlanif[0][1] if s.startswith("ip address "))
        out[cfg.stem] = address
    return out


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_oob_access_gateway_relays_dhcp_to_every_controller(name):
    folder = ROOT / "inventories" / name
    controllers = _controllers(folder)
    assert controllers
    configs = sorted((folder / "files" / "switches").glob("oob-access-*.cfg"))
    assert configs
    for cfg in configs:
        for text in (cfg.read_text(), (folder / "files/ztp/configs" / cfg.name).read_text()):
            lines = text.splitlines()
            assert "dhcp enable" in lines, cfg.name  # system view, before the relay
            blocks = _blocks(text)
            (vlanif,) = [b for h, b in blocks.items() if h.startswith("interface Vlanif")]
            assert lines.index("dhcp enable") < lines.index(
                next(h for h in blocks if h.startswith("interface Vlanif"))
            )
            assert "dhcp select relay" in vlanif
            servers = [s.split()[-1] for s in vlanif if s.startswith("dhcp relay server-ip ")]
            assert servers == controllers, cfg.name
    # no other switch relays DHCP
    others = [
        p.name
        for p in (folder / "files" / "switches").glob("*.cfg")
        if not p.name.startswith("oob-access-") and "dhcp select relay" in p.read_text()
    ]
    assert others == []


@pytest.mark.parametrize("name", EXAMPLES)
def test_the_firewall_permits_what_the_relays_send(name):
    """udp 67 from each relay's Vlanif address (oob zone) to the controllers (inband zone)."""
    folder = ROOT / "inventories" / name
    relays = sorted(_relays(folder).values(), key=lambda a: tuple(map(int, a.split("."))))
    controllers = set(_controllers(folder))
    flows = {r["flow"]: r for r in csv.DictReader((folder / "files/flows.csv").open())}
    assert flows["ztp"]["source"] == "dhcp-relays" and flows["ztp"]["zones"] == "oob-inband"
    for fw in sorted((folder / "files" / "border").glob("fw-*.cfg")):
        text = fw.read_text()
        rule = re.search(r"^ rule name ztp\n((?:  .*\n)+)", text, re.M)
        assert rule, fw.name
        body = [s.strip() for s in rule.group(1).splitlines()]
        assert "source-zone oob" in body and "destination-zone inband" in body
        assert [s.split()[1] for s in body if s.startswith("source-address ")] == relays
        assert all(f"source-address {a} 32" in body for a in relays)
        dests = {s.split()[1] for s in body if s.startswith("destination-address ")}
        assert controllers <= dests
        assert "service protocol udp destination-port 67" in body
        assert "action permit" in body


def test_verify_proves_the_relayed_flow_and_fails_without_relays(tmp_path, capsys):
    folder = tmp_path / "pod-128"
    shutil.copytree(ROOT / "inventories" / "pod-128", folder)
    assert cli.main(["verify", str(folder)]) == 0
    assert "13 required flows proven" in capsys.readouterr().out
    for cfg in (folder / "files" / "switches").glob("oob-access-*.cfg"):
        kept = [s for s in cfg.read_text().splitlines() if not s.startswith(" dhcp ")]
        cfg.write_text("\n".join(kept) + "\n")
    code = cli.main(["verify", str(folder)])
    out = capsys.readouterr()
    text = out.out + out.err
    assert code == 1, text
    line = next(
        n for n, s in enumerate((folder / "files/flows.csv").open(), 1) if s.startswith("ztp,")
    )
    assert (
        f"{folder}/files/flows.csv:{line}: required flow ztp: no out-of-band gateway relays DHCP"
        in text
    )
