"""The storage-plane NIC of each host model in use, from the catalog (`storage_nic`)."""

from __future__ import annotations

from collections.abc import Iterable

from generator.catalog import HostModel
from generator.model import StorageNic


def storage_nics(models: Iterable[HostModel]) -> tuple[StorageNic, ...]:
    """One record per host model in use whose catalog entry names its storage NIC, by model."""
    named = {m.name: m.storage_nic for m in models if m.storage_nic}
    return tuple(
        StorageNic(
            model=model,
            nic=str(nic["model"]),
            driver=str(nic["driver"]),
            confirmed=bool(nic.get("confirmed", False)),
            source=str(nic.get("source", "")),
        )
        for model, nic in sorted(named.items())
    )
