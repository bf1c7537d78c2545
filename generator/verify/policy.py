"""Firewall security-policy and nat-policy rules as verify reads them from a rendered USG
configuration (`security-policy` / `nat-policy` / `rule name` blocks: zones, address ranges,
services, action)."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass


def _prefix(text: str) -> int:
    return ipaddress.ip_network(f"0.0.0.0/{text}").prefixlen if "." in text else int(text)


@dataclass(frozen=True, slots=True)
class Rule:
    """One firewall security-policy rule."""

    name: str
    source_zone: str
    destination_zone: str
    sources: tuple[tuple[int, int], ...]  # (low, high) address ranges; empty = any
    destinations: tuple[tuple[int, int], ...]
    services: tuple[tuple[str, int], ...]  # (protocol, port); empty = any
    permit: bool
    where: tuple[str, int]
    action: str = ""  # as written: permit, deny, source-nat (nat-policy rules)


def _range(address: str, prefix: str) -> tuple[int, int]:
    net = ipaddress.ip_network(f"{address}/{_prefix(prefix)}", strict=False)
    return int(net.network_address), int(net.broadcast_address)


def policy_line(rule: dict, s: str) -> None:
    words = s.split()
    if words[0] in ("source-zone", "destination-zone") and len(words) > 1:
        rule[words[0]] = words[1]
    elif words[0] in ("source-address", "destination-address") and len(words) > 2:
        try:
            rng = _range(words[1], words[2])
        except ValueError:
            return
        rule["src" if words[0] == "source-address" else "dst"].append(rng)
    elif words[:2] == ["service", "protocol"] and len(words) > 2:
        port = int(words[4]) if len(words) > 4 and words[4].isdigit() else 0
        rule["svc"].append((words[2], port))
    elif words[0] == "action" and len(words) > 1:
        rule["action"] = words[1]


def rule_of(r: dict) -> Rule:
    return Rule(
        name=r["name"],
        source_zone=r.get("source-zone", ""),
        destination_zone=r.get("destination-zone", ""),
        sources=tuple(r["src"]),
        destinations=tuple(r["dst"]),
        services=tuple(r["svc"]),
        permit=r.get("action") == "permit",
        where=r["where"],
        action=r.get("action", ""),
    )
