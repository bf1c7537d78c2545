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


def _rewrite(path: Path, edit) -> list[dict[str, str]]:
    with path.open(newline="") as fh:
        reader = csv.DictReader(fh)
        columns = reader.fieldnames
        rows = list(reader)
    edit(rows)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return rows


def test_a_split_port_on_two_cables_is_refused_naming_its_rows(tmp_path, capsys):
    """A 400GE port split 2 x 200GE is one cage: its second lane given a cable of its own (as
    wanka-10k's firewall hand-offs were, issue 41) cannot be plugged in."""
    folder = tmp_path / "pod-128"
    shutil.copytree(ROOT / "inventories" / "pod-128", folder)
    lines = {}

    def split_second_lane(rows: list[dict[str, str]]) -> None:
        for n, r in enumerate(rows, 2):
            if r["b_device"] == "par-leaf-0001" and r["b_port"].startswith("400GE1/1/1:"):
                lines[r["b_port"]] = n
                if r["b_port"].endswith(":2"):
                    r["cable_id"] = "PAR-999999"

    _rewrite(folder / "files" / "cabling.csv", split_second_lane)
    assert set(lines) == {"400GE1/1/1:1", "400GE1/1/1:2"}
    code, text = _verify(capsys, folder)
    assert code == 1, text
    expected = (
        f"{folder}/files/cabling.csv:{lines['400GE1/1/1:2']}: par-leaf-0001 400GE1/1/1 is one cage "
        f"for one module, but its lanes are on 2 cables: :1 on PAR-000001 (line "
        f"{lines['400GE1/1/1:1']}); :2 on PAR-999999 (line {lines['400GE1/1/1:2']})"
    )
    assert expected in text, text
    assert text.count("is one cage") == 1, text


def test_a_port_cabled_whole_and_by_a_lane_is_refused(tmp_path, capsys):
    folder = tmp_path / "pod-128"
    shutil.copytree(ROOT / "inventories" / "pod-128", folder)
    where = {}

    def lane_on_a_whole_port(rows: list[dict[str, str]]) -> None:
        for n, r in enumerate(rows, 2):
            if (
                r["plane"] == "border"
                and ":" not in r["b_port"]
                and r["b_device"].startswith("biz")
            ):
                where["whole"] = (n, r["b_device"], r["b_port"])
                extra = dict(
                    r, cable_id="BRD-999999", a_port="100GE1/0/9", b_port=r["b_port"] + ":2"
                )
                rows.append(extra)
                where["lane"] = len(rows) + 1
                return

    _rewrite(folder / "files" / "cabling.csv", lane_on_a_whole_port)
    n, device, port = where["whole"]
    code, text = _verify(capsys, folder)
    assert code == 1, text
    assert (
        f"cabling.csv:{n}: {device} {port} is one cage for one module, but its lanes are on 2 "
        f"cables: :2 on BRD-999999 (line {where['lane']}); the whole port on line {n}"
    ) in text, text


def test_one_breakout_cable_in_two_split_ports_is_refused(tmp_path, capsys):
    """A breakout cable has one module end: the legs of par-leaf-0001 400GE1/1/2 given the cable
    id of 400GE1/1/1's breakout make one cable in two cages."""
    folder = tmp_path / "pod-128"
    shutil.copytree(ROOT / "inventories" / "pod-128", folder)
    lines: dict[str, list[int]] = {}

    def one_cable_for_two_ports(rows: list[dict[str, str]]) -> None:
        first = next(r["cable_id"] for r in rows if r["b_port"] == "400GE1/1/1:1")
        for n, r in enumerate(rows, 2):
            parent = r["b_port"].partition(":")[0]
            if r["b_device"] == "par-leaf-0001" and parent in ("400GE1/1/1", "400GE1/1/2"):
                lines.setdefault(parent, []).append(n)
                r["cable_id"] = first

    _rewrite(folder / "files" / "cabling.csv", one_cable_for_two_ports)
    code, text = _verify(capsys, folder)
    assert code == 1, text
    one, two = lines["400GE1/1/1"], lines["400GE1/1/2"]
    assert (
        f"cabling.csv:{min(two)}: PAR-000001 is one breakout cable or trunk, but its lanes end in "
        f"2 split ports: par-leaf-0001 400GE1/1/1 (lines {one[0]}, {one[1]}); par-leaf-0001 "
        f"400GE1/1/2 (lines {two[0]}, {two[1]})"
    ) in text, text
    assert "is one cage" not in text, text
