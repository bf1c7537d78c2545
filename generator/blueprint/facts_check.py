"""Checks of an NPU facts file (roles/npu_facts): its shape and numbers, then its agreement with
the cluster model. Each problem names the YAML path of the value to change and what to write.

File: `kind: NpuFacts` and `hosts`, each host `devices:` a list of dies with exactly the six ids,
each a whole number 0..2**32-1 (npu-smi's `unsigned int`, see facts.py); per host every device
id and (NPU id, chip id) once, one Super Pod ID and one Server Index; per Super Pod every SDID
once (the SDID is the die's address in its SuperPoD, HCCL rank_table_config_a3.md).

Model (only for the hosts that are NPU servers of the blueprint): the die count and device ids
the model gives the server (one device per NPU port, model.NpuDevice); NPU id below the model's
NPUs and chip id below its dies per NPU; on multi-die NPUs dies 2k and 2k+1 on NPU k (the
catalog's die layout, servers.yaml: MindCluster dl_affinity_0040); Super Pod IDs one per
supernode of the blueprint and one supernode per Super Pod ID.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

from generator.errors import Problem, YamlPath
from generator.vocab import DomainKind

KEYS = ("device_id", "npu_id", "chip_id", "sdid", "super_pod_id", "server_index")
ID_MAX = 2**32 - 1
_KEYSET = frozenset(KEYS)
_RECOLLECT = "collect the facts again with roles/npu_facts on this host"
_WHAT = {
    "device_id": "the die's Chip Phy-ID in `npu-smi info -m`",
    "npu_id": "the NPU ID in `npu-smi info -m`",
    "chip_id": "the Chip ID in `npu-smi info -m`",
    "sdid": "the SDID `npu-smi info -t spod-info` prints",
    "super_pod_id": "the Super Pod ID `npu-smi info -t spod-info` prints",
    "server_index": "the Server Index `npu-smi info -t spod-info` prints",
}


def file_problems(data: Any, plain: Mapping[YamlPath, str]) -> list[Problem]:
    """Everything wrong with the file on its own; `plain` maps the paths of unquoted scalars to
    the text written (`1000.0`), for messages that quote what the user wrote."""
    problems = [
        Problem((key,), f"unknown key '{key}'", "a facts file has `kind: NpuFacts` and `hosts:`")
        for key in data
        if key not in ("kind", "hosts")
    ]
    if data.get("kind") != "NpuFacts":
        shown = f"'{data['kind']}'" if "kind" in data else "missing"
        problems.append(
            Problem(("kind",), f"kind is {shown}", "a facts file says `kind: NpuFacts`")
        )
    hosts = data.get("hosts")
    if not isinstance(hosts, dict):
        hint = "list the hosts under `hosts:`, each with `devices:`, as roles/npu_facts writes"
        return [*problems, Problem(("hosts",), "hosts must be a mapping of host names", hint)]
    for host, entry in hosts.items():
        problems += _host_problems(host, entry, plain)
    if not problems:
        problems += _pod_problems(hosts)
    return problems


def _host_problems(host: str, entry: Any, plain: Mapping[YamlPath, str]) -> list[Problem]:
    path: YamlPath = ("hosts", host)
    if not isinstance(entry, dict) or set(entry) != {"devices"}:
        hint = "each host has `devices:` and nothing else, as roles/npu_facts writes"
        return [Problem(path, f"{host} must hold `devices:` only", hint)]
    dies = entry["devices"]
    if not isinstance(dies, list) or not dies:
        hint = "list the host's dies, one `- device_id: ...` entry each; " + _RECOLLECT
        return [Problem((*path, "devices"), "devices must be a list of dies", hint)]
    problems = []
    for i, die in enumerate(dies):
        if _plain_die(die):
            continue
        where = (*path, "devices", i)
        if not isinstance(die, dict):
            hint = "each die is a mapping of " + ", ".join(KEYS)
            problems.append(Problem(where, "a die must be a mapping of its ids", hint))
            continue
        for key in die:
            if key not in KEYS:
                hint = "a die has " + ", ".join(KEYS) + "; remove the key"
                problems.append(Problem((*where, key), f"unknown key '{key}'", hint))
        for key in KEYS:
            if key not in die:
                problems.append(Problem(where, f"{key} is missing", f"add {_WHAT[key]}"))
            else:
                problems += _id_problem((*where, key), die[key], plain.get((*where, key)))
    if not problems:
        problems += _same_host_problems(host, dies)
    return problems


def _plain_die(die: Any) -> bool:
    """The common case, tested fast (200,000 dies at 100,000 A3 cards): the six keys, each a
    whole number 0..ID_MAX."""
    if type(die) is not dict or die.keys() != _KEYSET:
        return False
    values = die.values()
    return set(map(type, values)) == {int} and min(values) >= 0 and max(values) <= ID_MAX


def _id_problem(path: YamlPath, value: Any, written: str | None) -> list[Problem]:
    """An id is a whole number 0..2**32-1 written as one; what to write when it is not."""
    key = str(path[-1])
    shown = written if written is not None else repr(value)
    if type(value) is int and 0 <= value <= ID_MAX:
        return []
    if isinstance(value, bool):
        message, hint = f"{shown} is true/false, not an id", f"write {_WHAT[key]}"
    elif isinstance(value, float):
        whole = value.is_integer() and 0 <= value <= ID_MAX
        message = f"{shown} is a decimal fraction; {key} is a whole number"
        hint = f"write {int(value)}" if whole else f"write {_WHAT[key]}"
    elif isinstance(value, str):
        digits = value.isascii() and value.isdigit() and int(value) <= ID_MAX
        message = f"{value!r} is quoted text; {key} is a whole number"
        hint = f"write {int(value)} without quotes" if digits else f"write {_WHAT[key]}"
    elif type(value) is int:
        message = f"{value} is outside 0..{ID_MAX} (npu-smi's ids are unsigned 32-bit)"
        hint = f"write {_WHAT[key]}; " + _RECOLLECT
    else:
        kind = {dict: "a mapping", list: "a list", type(None): "empty (null)"}[type(value)]
        message, hint = f"{key} is {kind}", f"write {_WHAT[key]}"
    return [Problem(path, message, hint)]


def _same_host_problems(host: str, dies: Sequence[Mapping[str, int]]) -> list[Problem]:
    """Each device id and each (NPU id, chip id) once; one Super Pod ID and Server Index."""
    problems = []
    seen: dict[tuple[str, Any], int] = {}
    for i, die in enumerate(dies):
        for key, value, what in (
            ("device_id", die["device_id"], f"device_id {die['device_id']}"),
            (
                "npu_id",
                (die["npu_id"], die["chip_id"]),
                f"NPU {die['npu_id']} chip {die['chip_id']}",
            ),
        ):
            first = seen.setdefault((key, value), i)
            if first != i:
                message = f"{what} is listed twice on {host} (devices[{first}] and [{i}])"
                problems.append(Problem(("hosts", host, "devices", i, key), message, _RECOLLECT))
    for key in ("super_pod_id", "server_index"):
        values = Counter(d[key] for d in dies)
        if len(values) > 1:
            common = values.most_common(1)[0][0]
            i = next(i for i, d in enumerate(dies) if d[key] != common)
            message = f"{host}'s dies report {key} {sorted(values)}; one server has one"
            problems.append(Problem(("hosts", host, "devices", i, key), message, _RECOLLECT))
    return problems


def _pod_problems(hosts: Mapping[str, Mapping[str, Any]]) -> list[Problem]:
    """Each SDID once within its Super Pod (each host's dies share one Super Pod ID:
    `_same_host_problems`). Server Indexes are not compared between hosts: that no two servers
    of one SuperPoD report the same one is likely (the SDID encodes a server id, driver
    `struct sdid_parse_info`) but unconfirmed."""
    problems = []
    sdid_of: dict[tuple[int, int], str] = {}
    for host, entry in hosts.items():
        for i, die in enumerate(entry["devices"]):
            here = f"{host} devices[{i}]"
            other = sdid_of.setdefault((die["super_pod_id"], die["sdid"]), here)
            if other != here:
                problems.append(
                    Problem(
                        ("hosts", host, "devices", i, "sdid"),
                        f"SDID {die['sdid']} in Super Pod {die['super_pod_id']} is also {other}'s",
                        "each die has its own SDID in its SuperPoD; " + _RECOLLECT,
                    )
                )
    return problems


def server_problems(hosts: Mapping[str, Sequence[Any]], servers: Sequence[Any]) -> list[Problem]:
    """The facts (facts.DieFacts by host) of the blueprint's NPU servers (model.NpuServer)
    against the model; hosts the facts hold and the cluster has not are left alone."""
    problems = []
    pods: dict[str, dict[int, list[str]]] = {}  # supernode -> Super Pod ID -> its hosts
    for s in servers:
        dies = hosts.get(s.name)
        if dies is None:
            continue
        ids, want = [d.device_id for d in dies], [d.device_id for d in s.devices]
        if ids != want:
            problems.append(
                Problem(
                    ("hosts", s.name, "devices"),
                    f"{s.name} lists {len(ids)} dies, device ids {_span(ids)}; the blueprint's "
                    f"server model gives it {len(want)} ({_span(want)})",
                    f"{_RECOLLECT}; or check compute.server: its catalog npus, dies_per_npu and "
                    "ports.npu.count",
                )
            )
            continue
        problems += [p for d in dies for p in _die_problems(s, d)]
        supernode = s.domain(DomainKind.SUPERNODE)
        if supernode is not None:
            pod = dies[0].super_pod_id
            pods.setdefault(supernode.name, {}).setdefault(pod, []).append(s.name)
    problems += _supernode_problems(hosts, pods)
    return problems


def _die_problems(s: Any, d: Any) -> list[Problem]:
    where = ("hosts", s.name, "devices", d.at)
    fix = f"{_RECOLLECT}; or check the catalog model of compute.server"
    if d.npu_id >= s.npus:
        message = f"npu_id {d.npu_id}: the server model has {s.npus} NPUs (0..{s.npus - 1})"
        return [Problem((*where, "npu_id"), message, fix)]
    if d.chip_id >= s.dies_per_npu:
        last = s.dies_per_npu - 1
        message = (
            f"chip_id {d.chip_id}: the server model has {s.dies_per_npu} dies per NPU (0..{last})"
        )
        return [Problem((*where, "chip_id"), message, fix)]
    npu, chip = divmod(d.device_id, s.dies_per_npu)
    if s.dies_per_npu > 1 and (d.npu_id, d.chip_id) != (npu, chip):
        message = (
            f"device {d.device_id} is NPU {d.npu_id} chip {d.chip_id} here; the model puts it on "
            f"NPU {npu} chip {chip} (dies 2k and 2k+1 on NPU k, catalog servers.yaml)"
        )
        hint = (
            f"{_RECOLLECT}; if `npu-smi info -m` shows this layout, the catalog's die layout "
            "does not fit this hardware (the rank table and hccn addresses assume it)"
        )
        return [Problem((*where, "npu_id"), message, hint)]
    return []


def _supernode_problems(
    hosts: Mapping[str, Sequence[Any]], pods: Mapping[str, Mapping[int, list[str]]]
) -> list[Problem]:
    """One Super Pod ID per supernode (the hosts outside its most common one are named), and
    one supernode per Super Pod ID."""
    problems = []
    owner: dict[int, tuple[str, str]] = {}
    for supernode, found in pods.items():
        main = max(found, key=lambda p: (len(found[p]), -p))
        for pod, names in sorted(found.items()):
            for name in names if pod != main else ():
                problems.append(
                    Problem(
                        ("hosts", name, "devices", hosts[name][0].at, "super_pod_id"),
                        f"{name} reports Super Pod ID {pod}; the blueprint puts it in "
                        f"{supernode}, whose {_others(len(found[main]))} {main}",
                        "check the server's place in compute.supernode and its cabling, or "
                        + _RECOLLECT,
                    )
                )
        first = found[main][0]
        other = owner.setdefault(main, (supernode, first))
        if other[0] != supernode:
            problems.append(
                Problem(
                    ("hosts", first, "devices", hosts[first][0].at, "super_pod_id"),
                    f"Super Pod ID {main} is reported in {other[0]} ({other[1]}) and in "
                    f"{supernode} ({first}): two of the blueprint's supernodes cannot be one "
                    "SuperPoD",
                    "each supernode of compute.supernode is one SuperPoD with its own Super Pod "
                    "ID; check compute.supernode.servers against the hardware, or " + _RECOLLECT,
                )
            )
    return problems


def _span(ids: Sequence[int]) -> str:
    """`0..15` for a run of consecutive ids, else the list."""
    if ids and list(ids) == list(range(ids[0], ids[0] + len(ids))):
        return f"{ids[0]}..{ids[-1]}"
    return str(list(ids))


def _others(count: int) -> str:
    return "other server reports" if count == 1 else f"other {count} servers report"
