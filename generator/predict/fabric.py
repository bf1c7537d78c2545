"""The parameter fabric as a rendered folder states it: cables, port speeds, ECMP widths, ranks.

Read only from the folder (as verify does, through verify/safe.py's guarded reads and
verify/read.py's cabling reader), never from the blueprint or the model:

- files/cabling.csv: every cable and its speed. The parameter fabric is what the NPU ports
  (`npuN` of a host that has files/hccn/<host>.conf) reach through switches; a host is an end,
  never a transit.
- files/switches/<switch>.cfg: `maximum load-balancing N`, the ECMP paths a switch installs
  (CE6800/8800 V300R023C00 command reference, WheaterW/INTA-project
  nassim-main/corpus/hw/hw_CE6800_V300R023C00; which N of more equal next hops a CE keeps is
  not public: the first N in cabling order here [unconfirmed]).
- files/hccn/<host>.conf: address_i -> the host's port npu{i}; mtu_i.
- files/hccl/rank_table.json or a job's rank table: rank -> device_ip.
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from generator.verify import read, safe

_SPEED = re.compile(r"(\d+)GE")
_ECMP = re.compile(r"^\s*maximum load-balancing (\d+)\s*$", re.M)
_HCCN = re.compile(r"(address|mtu)_(\d+)=(\S+)")


class _Ends(list):
    """A graph for read.cabling that keeps each cable's two ends in file order."""

    def edge(self, a: tuple, b: tuple, where: tuple[str, int]) -> None:
        self.append((a[1], a[2], b[1], b[2], where[1]))


@dataclass(slots=True)
class Fabric:
    """Directed links 2i (a->b) and 2i+1 (b->a) of cable i; capacity in 10^9 bytes/s."""

    switches: list[str]
    cap: np.ndarray  # per directed link
    ends: list[tuple[str, str, str, str]]  # cable i: a device, a port, b device, b port
    up: dict[str, list[tuple[int, int]]]  # switch -> [(neighbour switch index, directed link)]
    ecmp: dict[str, int]  # switch -> maximum load-balancing
    nic: dict[str, tuple[int, int, int]]  # device_ip -> (switch index, link out, link in)
    host_of: dict[str, tuple[str, int]]  # device_ip -> (host, npu index)
    mtu: int = 4200
    index: dict[str, int] = field(default_factory=dict)

    def adjacency(self, down: frozenset[int] = frozenset()) -> list[list[tuple[int, int]]]:
        """Per switch index: (neighbour, directed link) over the cables not in `down`."""
        out: list[list[tuple[int, int]]] = [[] for _ in self.switches]
        for i, name in enumerate(self.switches):
            for nb, link in self.up.get(name, ()):
                if link // 2 not in down:
                    out[i].append((nb, link))
        return out


def gbytes(speed: str) -> float:
    """'200GE' -> 25.0 (10^9 bytes/s of line rate)."""
    m = _SPEED.fullmatch(speed.strip())
    if not m:
        raise ValueError(f"not a port speed: {speed!r}")
    return int(m.group(1)) / 8


@safe.located()
def _hccn(folder: Path, path: Path) -> tuple[dict[int, str], dict[int, int]]:
    where = safe.rel(folder, path)  # noqa: F841  (named for located's message)
    addresses: dict[int, str] = {}
    mtus: dict[int, int] = {}
    for n, line in enumerate(safe.file_text(folder, path).splitlines(), 1):  # noqa: B007
        m = _HCCN.fullmatch(line.strip())
        if m and m.group(1) == "address":
            read.ip_int(m.group(3))
            addresses[int(m.group(2))] = m.group(3)
        elif m:
            mtus[int(m.group(2))] = int(m.group(3))
    return addresses, mtus


def load(folder: Path) -> Fabric:
    """The parameter fabric of a rendered folder; Damaged/NotAnOutput when it is not one."""
    folder = Path(folder)
    if not safe.is_file(folder, "files/cabling.csv"):
        raise safe.NotAnOutput(f"{folder} is not a wanka output folder (needs files/cabling.csv)")
    host_of: dict[str, tuple[str, int]] = {}
    ports: dict[tuple[str, str], str] = {}
    mtu = 0
    for path in safe.listing(folder, "files/hccn", ".conf"):
        addresses, mtus = _hccn(folder, path)
        for i, ip in addresses.items():
            host_of[ip] = (path.stem, i)
            ports[(path.stem, f"npu{i}")] = ip
        mtu = max([mtu, *mtus.values()])
    ends = _Ends()
    speeds = read.cabling(ends, folder, {}, keep=("plane", "speed")).kept
    hosts = {h for h, _ in host_of.values()}
    planes = {speeds[i][0] for i, (a, pa, b, pb, _) in enumerate(ends) if (a, pa) in ports}
    planes |= {speeds[i][0] for i, (a, pa, b, pb, _) in enumerate(ends) if (b, pb) in ports}
    ends = _Ends(
        e if speeds[i][0] in planes else ("", "", "", "", e[4]) for i, e in enumerate(ends)
    )
    # the switches the NPU ports reach, walking switch to switch (hosts are ends)
    by_device: dict[str, list[int]] = {}
    for i, (a, _, b, _, _) in enumerate(ends):
        if not a:
            continue
        by_device.setdefault(a, []).append(i)
        by_device.setdefault(b, []).append(i)
    first = sorted(
        {b if a in hosts else a for a, pa, b, pb, _ in ends if (a, pa) in ports or (b, pb) in ports}
    )
    seen = set(first)
    queue = deque(first)
    while queue:
        dev = queue.popleft()
        for i in by_device.get(dev, ()):
            a, _, b, _, _ = ends[i]
            other = b if a == dev else a
            if other not in seen and other not in hosts and other in by_device:
                seen.add(other)
                queue.append(other)
    switches = sorted(seen)
    index = {name: i for i, name in enumerate(switches)}
    keep = [i for i, (a, _, b, _, _) in enumerate(ends) if a in index or b in index]
    if not keep:
        raise safe.NotAnOutput(f"{folder}: no NPU port (files/hccn) is cabled to a switch")
    cap = np.zeros(2 * len(keep))
    kept_ends: list[tuple[str, str, str, str]] = []
    up: dict[str, list[tuple[int, int]]] = {}
    nic: dict[str, tuple[int, int, int]] = {}
    for j, i in enumerate(keep):
        a, pa, b, pb, n = ends[i]
        cap[2 * j] = cap[2 * j + 1] = _rate(speeds[i][1], n)
        kept_ends.append((a, pa, b, pb))
        if a in index and b in index:
            up.setdefault(a, []).append((index[b], 2 * j))
            up.setdefault(b, []).append((index[a], 2 * j + 1))
        elif (a, pa) in ports and b in index:
            nic[ports[(a, pa)]] = (index[b], 2 * j, 2 * j + 1)
        elif (b, pb) in ports and a in index:
            nic[ports[(b, pb)]] = (index[a], 2 * j + 1, 2 * j)
    ecmp = {name: _ecmp(folder, name) for name in switches}
    return Fabric(
        switches=switches,
        cap=cap,
        ends=kept_ends,
        up=up,
        ecmp=ecmp,
        nic=nic,
        host_of=host_of,
        mtu=mtu or 4200,
        index=index,
    )


def _rate(speed: str, n: int) -> float:
    try:
        return gbytes(speed)
    except ValueError as error:
        raise safe.Damaged(f"files/cabling.csv:{n}: {error}") from None


def _ecmp(folder: Path, switch: str) -> int:
    """`maximum load-balancing` of a switch's rendered config; 1 when it names none (a CE
    installs one path of several equal ones unless told more [unconfirmed])."""
    where = f"files/switches/{switch}.cfg"
    if not safe.is_file(folder, where):
        return 1
    found = _ECMP.findall(safe.file_text(folder, folder / where))
    return max((int(v) for v in found), default=1)


class RankTableError(safe.Damaged):
    """A job rank table that does not fit the folder: located, with a hint."""


def ranks(folder: Path, path: Path) -> list[tuple[str, str]]:
    """(device_ip, where) of each rank in rank_id order, from a rank table (1.0 or 1.2: both
    list server_list[].device[] with device_ip and rank_id; domain.md §2), `where` its
    FILE:LINE: JSON path for messages. RankTableError when it cannot be read as one."""
    inside = path.is_relative_to(folder)
    name = safe.rel(folder, path) if inside else str(path)
    try:
        text = safe.file_text(folder, path) if inside else path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise RankTableError(f"{name}: cannot read the rank table: {error}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise RankTableError(f"{name}:{error.lineno}: invalid JSON: {error.msg}") from None
    out: dict[int, tuple[str, str]] = {}
    servers = data.get("server_list") if isinstance(data, dict) else None
    if not isinstance(servers, list):
        raise RankTableError(f"{name}:1: server_list: missing (hint: `wanka ranktable` writes one)")
    for i, server in enumerate(servers):
        for j, device in enumerate(server.get("device", []) if isinstance(server, dict) else []):
            at = f"server_list[{i}].device[{j}]"
            ip, rank = device.get("device_ip"), device.get("rank_id")
            line = text.count("\n", 0, max(0, text.find(f'"{ip}"'))) + 1
            where = f"{name}:{line}: {at}"
            if not isinstance(ip, str) or not str(rank).isdigit():
                raise RankTableError(f"{where}: needs device_ip and a decimal rank_id string")
            if int(rank) in out:
                raise RankTableError(f"{where}.rank_id: rank {rank} twice (ranks are 0..N-1)")
            out[int(rank)] = (ip, f"{where}.device_ip")
    if sorted(out) != list(range(len(out))) or not out:
        raise RankTableError(f"{name}: rank_id values are not 0..{len(out) - 1}")
    return [out[r] for r in range(len(out))]
