"""Filters for the switch_config role: parse CloudEngine `display lldp neighbor brief` output and
compare it with the neighbours the cabling plan expects on a switch."""

from __future__ import annotations

import re

HEADER = re.compile(r"^\s*Local\s+Intf", re.IGNORECASE)


def ce_lldp_brief(text: str) -> dict[str, dict[str, str]]:
    """`Local Intf  Neighbor Dev  Neighbor Intf  Exptime(s)` rows -> {local: {device, port}}."""
    out: dict[str, dict[str, str]] = {}
    started = False
    for line in text.splitlines():
        if HEADER.match(line):
            started = True
            continue
        cols = line.split()
        if not started or len(cols) < 3 or set(line.strip()) <= {"-"}:
            continue
        out[cols[0]] = {"device": cols[1], "port": cols[2]}
    return out


def wanka_lldp_expected(config: dict, switches: list[str]) -> dict[str, dict[str, str]]:
    """Switch-to-switch neighbours from a generated structured config (hosts are checked from the
    hosts themselves by npu_preflight)."""
    names = set(switches)
    out: dict[str, dict[str, str]] = {}
    for iface in config.get("interfaces", []):
        peer = iface.get("peer")
        if peer is None:
            parts = str(iface.get("description", "")).split()
            if len(parts) != 3 or parts[0] != "to":
                continue
            peer = {"device": parts[1], "port": parts[2]}
        if peer["device"] in names and iface.get("mode") != "management":
            out[iface["name"]] = {"device": peer["device"], "port": peer["port"]}
    return out


def wanka_lldp_problems(seen: dict, expected: dict) -> list[str]:
    problems = []
    for port, want in sorted(expected.items()):
        got = seen.get(port)
        if got is None:
            problems.append(
                f"{port}: no LLDP neighbour, the cabling plan says {want['device']} {want['port']}"
            )
        elif got != want:
            problems.append(
                f"{port}: LLDP neighbour {got['device']} {got['port']}, the cabling plan says {want['device']} {want['port']}"
            )
    return problems


class FilterModule:
    def filters(self) -> dict:
        return {
            "ce_lldp_brief": ce_lldp_brief,
            "wanka_lldp_expected": wanka_lldp_expected,
            "wanka_lldp_problems": wanka_lldp_problems,
        }
