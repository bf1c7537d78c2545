"""`wanka verify` routes only over cables: an interface that files/cabling.csv joins to no other
interface of its subnet neighbours nothing, so the out-of-band access switches cut off from the
out-of-band cores (an island: every cable between them deleted) fail, each uplink named at its
address line, and the management flows over them are lost."""

from __future__ import annotations

import csv
import ipaddress
import shutil
from pathlib import Path

import pytest

from generator import cli

ROOT = Path(__file__).resolve().parents[2]


def _verify(capsys, folder: Path) -> tuple[int, str]:
    code = cli.main(["verify", str(folder)])
    out = capsys.readouterr()
    return code, out.out + out.err


def _address_line(cfg: Path, interface: str) -> tuple[int, str]:
    """The line of `ip address` under `interface` in a switch config, and the address/prefix."""
    lines = cfg.read_text().splitlines()
    start = lines.index(f"interface {interface}")
    for n in range(start + 1, len(lines)):
        if lines[n].startswith(" ip address "):
            _, _, address, prefix = lines[n].split()
            return n + 1, f"{address}/{prefix}"
    raise AssertionError(f"{interface} has no address in {cfg}")


@pytest.fixture
def island(tmp_path) -> tuple[Path, list[dict[str, str]]]:
    folder = tmp_path / "pod-128"
    shutil.copytree(ROOT / "inventories" / "pod-128", folder)
    path = folder / "files" / "cabling.csv"
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        columns = reader.fieldnames
        rows = list(reader)

    def joins(r: dict[str, str]) -> bool:
        ends = {r["a_device"].split("-0")[0], r["b_device"].split("-0")[0]}
        return ends == {"oob-access", "oob-core"}

    removed = [r for r in rows if joins(r)]
    assert removed
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(r for r in rows if not joins(r))
    return folder, removed


def test_the_oob_access_island_fails_naming_each_uncabled_uplink(island, capsys):
    folder, removed = island
    code, text = _verify(capsys, folder)
    assert code == 1, text
    for row in removed:
        for end, far in (("a", "b"), ("b", "a")):
            device, port = row[f"{end}_device"], row[f"{end}_port"]
            cfg = folder / "files" / "switches" / f"{device}.cfg"
            line, cidr = _address_line(cfg, port)
            expected = (
                f"{cfg}:{line}: {device} {port} ({_network(cidr)}) is cabled to none of the "
                f"other interfaces of its subnet ({row[f'{far}_device']} {row[f'{far}_port']}): "
                "files/cabling.csv has no cable between them"
            )
            assert expected in text, text
    # what the island costs: the management zone no longer reaches the switches behind it
    assert "required flow ssh-switches (" in text
    assert "required flow ztp (" in text


def _network(cidr: str) -> str:
    return str(ipaddress.ip_interface(cidr).network)


@pytest.mark.parametrize("name", ["pod-128", "cluster-1k", "legacy-100card"])
def test_the_committed_examples_still_verify(name, capsys):
    code, text = _verify(capsys, ROOT / "inventories" / name)
    assert code == 0, text
    assert "required flows proven" in text
