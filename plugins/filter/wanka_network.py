"""Filter for the host_network role: a host's NetworkManager connections, from its generated
variables, in the order they are activated."""

from __future__ import annotations

from typing import Any

INBAND_ID = "mgmt0"


def wanka_nm_connections(
    bond: dict[str, Any] | None,
    storage_nics: list[dict[str, Any]],
    inband: bool,
    interfaces: dict[str, str],
    table_base: int,
) -> list[dict[str, Any]]:
    """One entry per keyfile: id (also the file name) and template; the connections that are
    activated also carry the interface and the gateway that proves the activation worked. The
    in-band connection is marked `inband`: it carries Ansible's own session and is never
    activated from here."""
    out: list[dict[str, Any]] = []
    if bond:
        out.append(
            {
                "id": bond["name"],
                "template": "bond.nmconnection.j2",
                "device": bond["name"],
                "gateway": bond["gateway"],
            }
        )
        out += [
            {"id": f"{bond['name']}-{m}", "template": "bond-port.nmconnection.j2", "member": m}
            for m in bond["members"]
        ]
    for i, nic in enumerate(storage_nics or []):
        out.append(
            {
                "id": nic["port"],
                "template": "storage.nmconnection.j2",
                "nic": nic,
                "table": table_base + i,
                "device": interfaces.get(nic["port"], nic["port"]),
                "gateway": nic["gateway"],
            }
        )
    if inband:
        out.append({"id": INBAND_ID, "template": "inband.nmconnection.j2", "inband": True})
    return out


class FilterModule:
    def filters(self) -> dict:
        return {"wanka_nm_connections": wanka_nm_connections}
