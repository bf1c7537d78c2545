"""Filters for the switch_config role: parse CloudEngine `display lldp neighbor brief` output and
compare it with the neighbours the cabling plan expects on a switch.

The command prints one header line naming four columns, a dashed rule, then one row per
neighbour. VRP V300 names them `Local Interface  Exptime(s)  Neighbor Interface  Neighbor Device`;
older releases `Local Intf  Neighbor Dev  Neighbor Intf  Exptime(s)` (the command reference's
output table lists both spellings). Source: CloudEngine 6800/8800 V300R023C00 command reference,
"display lldp neighbor brief" (tests/data/captures/ holds its example verbatim). The vendor's own
example is not aligned under its headers, so a row is split at white space and its fields are
assigned in the header's column order; only the neighbour's system name may contain blanks.
"""

from __future__ import annotations

COLUMNS = {  # header spelling -> field
    "Local Interface": "local",
    "Local Intf": "local",
    "Exptime(s)": "exptime",
    "Exptime (sec)": "exptime",
    "Neighbor Interface": "port",
    "Neighbor Intf": "port",
    "Neighbor Device": "device",
    "Neighbor Dev": "device",
}


def _header(line: str) -> list[str] | None:
    """The fields in the order the header line names them, or None for any other line."""
    found = []
    for name, field in COLUMNS.items():
        at = line.find(name)
        if at >= 0 and field not in {f for _, f in found}:
            found.append((at, field))
    if len(found) != 4:
        return None
    return [field for _, field in sorted(found)]


def ce_lldp_brief(text: str) -> dict[str, list[dict[str, str]]]:
    """Rows of `display lldp neighbor brief` -> {local port: [{device, port}, ...]}."""
    out: dict[str, list[dict[str, str]]] = {}
    order = None
    for line in text.splitlines():
        if order is None:
            order = _header(line)
            continue
        cols = line.split()
        stripped = line.strip()
        if len(cols) < 4 or set(stripped) <= {"-"} or stripped.startswith(("<", "[")):
            continue
        width = {f: 1 for f in order}
        width["device"] = len(cols) - 3
        row, at = {}, 0
        for field in order:
            row[field] = " ".join(cols[at : at + width[field]])
            at += width[field]
        out.setdefault(row["local"], []).append({"device": row["device"], "port": row["port"]})
    return out


def wanka_lldp_expected(config: dict, switches: list[str]) -> dict[str, dict[str, str]]:
    """Switch-to-switch neighbours from a generated structured config (hosts are checked from the
    hosts themselves by npu_preflight)."""
    names = set(switches)
    out: dict[str, dict[str, str]] = {}
    for iface in config.get("interfaces", []):
        peer = iface.get("peer")
        if peer is None or iface.get("mode") == "management":
            continue
        if peer["device"] in names:
            out[iface["name"]] = {"device": peer["device"], "port": peer["port"]}
    return out


def wanka_lldp_problems(seen: dict, expected: dict) -> list[str]:
    """One sentence per planned port whose neighbour is missing or another than planned."""
    problems = []
    for port, want in sorted(expected.items()):
        got = seen.get(port) or []
        plan = f"the cabling plan says {want['device']} {want['port']}"
        if not got:
            problems.append(f"{port}: no LLDP neighbour, {plan}")
        elif want not in got:
            found = ", ".join(f"{g['device']} {g['port']}" for g in got)
            problems.append(f"{port}: LLDP neighbour {found}, {plan}")
    return problems


class FilterModule:
    def filters(self) -> dict:
        return {
            "ce_lldp_brief": ce_lldp_brief,
            "wanka_lldp_expected": wanka_lldp_expected,
            "wanka_lldp_problems": wanka_lldp_problems,
        }
