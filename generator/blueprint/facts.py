"""Facts collected from the hardware (roles/npu_facts), read as an input beside the blueprint.

A3 rank tables need each die's SDID (`super_device_id`) and each node's Super Pod ID, which only
the hardware knows (`npu-smi info -t spod-info -i <npu> -c <chip>`, fields `SDID` and
`Super Pod ID`; HCCL rank_table_config_a3.md). The file is untrusted input, checked as hard as
a blueprint, every problem located in the facts file (line, column, YAML path, what to write):

    kind: NpuFacts
    hosts:
      npu-001:
        devices:
          - {device_id: 0, npu_id: 0, chip_id: 0, sdid: 16777216, super_pod_id: 0, server_index: 4}

Limits are sized for real clusters: a 100,000-card A3 cluster (12,500 nodes x 16 dies) writes
24 MB in the role's layout, read by `facts_layout` in about 3 s of CPU (PyYAML, libyaml
included, took 46 s on it on the shared 2-core build machine); the limit is
`MAX_BYTES` (2.7 times that), so a 200 MB file is refused from its size before a byte is read.
The same reader takes dies written one flow mapping a line (the example above; 100,000 cards:
20 MB, 1.6 s). A file outside these layouts (JSON, flow style throughout, other indents) is
read with the blueprint loader: its 4 MiB, no alias bombs, and `MAX_VALUES` values, what 4 MiB
holds at 6 bytes a value; the densest real writers, compact JSON and YAML flow style, take 7.0
bytes a value (13 values a die: six keys, six ids and the die), so 4 MiB of them, about 2,800
A3 nodes, load (the blueprint's own bound, 100,000 values, refused 528 nodes); 600,000 values
take the loader about 6 s of CPU. Beyond 4 MiB only the layouts above are read.

A file that does not say `kind: NpuFacts` is not what hccl.facts claims: its errors say what is
wrong and where, and quote none of it (the path may name a token or key file; see `_not_facts`).

Ids are whole numbers in 0..2**32-1: npu-smi reads them into `unsigned int` fields (DCMI
`struct dcmi_spod_info {unsigned int sdid; super_pod_size; super_pod_id; server_index; ...}`,
Ascend 910_93 DCMI API, e.g. dcmi_get_spod_node_status(..., unsigned int sdid, ...)).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from generator.blueprint import load
from generator.blueprint.facts_check import KEYS as DEVICE_KEYS
from generator.blueprint.facts_check import file_problems, server_problems
from generator.blueprint.facts_layout import Duplicate, OffLayout, read_layout
from generator.blueprint.readfile import ReadRefused, read_regular
from generator.blueprint.spec import Blueprint
from generator.errors import BlueprintError, Problem, YamlPath

MAX_BYTES = 64 * 1024 * 1024
MAX_VALUES = load.MAX_BYTES // 6  # 699,050: values of a facts file outside the role's layout
MAX_SHOWN = 20  # problems listed; a broken 24 MB file would otherwise print a million lines
_ROLE = "the layout roles/npu_facts writes (ansible-playbook npu_facts.yml)"


@dataclass(frozen=True, slots=True)
class DieFacts:
    device_id: int  # /dev/davinciN (Chip Phy-ID of `npu-smi info -m`)
    npu_id: int
    chip_id: int
    sdid: int  # SDID: the die's id in the SuperPoD (rank table super_device_id)
    super_pod_id: int  # Super Pod ID (rank table super_pod_id)
    server_index: int
    at: int = -1  # its index in the file's devices list (for locating a problem)


@dataclass(frozen=True, slots=True)
class NpuFacts:
    file: str
    hosts: Mapping[str, tuple[DieFacts, ...]]  # host -> its dies, by device_id
    # problems at YAML paths of this file -> the error naming its lines (see `refuse`)
    locate: Callable[[list[Problem]], BlueprintError] = field(
        default=lambda problems: BlueprintError(problems), compare=False, repr=False
    )

    def check(self, servers: Iterable[Any]) -> None:
        """The facts of the cluster's NPU servers (model.NpuServer) against their model: die
        count and device ids, NPU and chip ids of each die, and Super Pod IDs one per
        supernode and supernode. BlueprintError, located in this file, for any contradiction."""
        problems = server_problems(self.hosts, tuple(servers))
        if problems:
            raise self.locate(problems)


def load_npu_facts(path: str | os.PathLike[str]) -> NpuFacts:
    """Read and check a facts file; BlueprintError naming the file, line and YAML path."""
    file = str(path)
    try:
        raw = read_regular(file, MAX_BYTES)
    except ReadRefused as refused:
        hint = refused.hint
        if "too large" in refused.message:
            hint = (
                f"the facts of a 100,000-card A3 cluster are 24 MB in {_ROLE}; "
                "is this the right file?"
            )
        raise BlueprintError([Problem((), refused.message, hint)], file) from None
    data: Any = None
    try:
        data, plain, locate = _parse(file, raw)
        problems = file_problems(data, plain)
        if problems:
            raise locate(problems)
    except BlueprintError as err:
        if data is None and not _CLAIM.search(raw):
            raise _not_facts(err.problems, file) from None
        if data is not None and data.get("kind") != "NpuFacts":
            why = "its kind is not NpuFacts" if "kind" in data else "it has no `kind: NpuFacts`"
            located = locate([Problem(("kind",) if "kind" in data else (), why)]).problems
            raise _not_facts(located, file, why) from None
        raise
    hosts = {
        host: tuple(
            sorted(
                (DieFacts(**d, at=i) for i, d in enumerate(entry["devices"])),
                key=lambda d: d.device_id,
            )
        )
        for host, entry in data["hosts"].items()
    }
    return NpuFacts(file, hosts, locate)


# `kind: NpuFacts` as a block or flow mapping entry, or a JSON member: the file says it is facts
_CLAIM = re.compile(
    rb"""(?m)(?:^|[{,])[ \t]*(["']?)kind\1[ \t]*:[ \t]*(["']?)NpuFacts\2[ \t]*(?:$|[\r,}#])"""
)
_OUR_WORDS = frozenset(("kind", "hosts", "devices", *DEVICE_KEYS))
# what a problem of the loader or of file_problems says, in words that quote nothing
_NOT_FACTS = (
    ("must follow", f"it is larger than {load.MAX_BYTES // 2**20} MiB and not in {_ROLE}"),
    ("invalid YAML", "it does not read as YAML"),
    ("tab character", "it does not read as YAML"),
    ("UTF-8", "it is not UTF-8 text"),
    ("character", "it holds a character YAML does not allow"),
    ("empty", "it is empty"),
    ("top level", "its top level is not a mapping"),
    ("YAML document", "it holds more than one YAML document"),
    ("values", "it holds too many values"),
    ("alias", "it holds a recursive alias"),
    ("nests", "it nests too deep"),
    ("tag", "it holds a YAML tag"),
    ("duplicate", "a key is written twice"),
    ("key", "a key is not a string"),
)


def _not_facts(problems: list[Problem], file: str, why: str = "") -> BlueprintError:
    """The error for a file that does not say `kind: NpuFacts`: what is wrong and where, never
    a byte of it (hccl.facts pointed at a token or a key file must not print it into a CI log):
    no message of the loader (they quote values, keys, tags) and no YAML path through the
    file's own keys."""
    first = next((p for p in problems if p.line is not None), problems[0])
    why = why or next((w for word, w in _NOT_FACTS if word in first.message), "it is not YAML")
    path = first.path if all(isinstance(k, int) or k in _OUR_WORDS for k in first.path) else ()
    problem = Problem(
        path,
        f"this is not an NPU facts file: {why} (its content is not shown)",
        "hccl.facts or --facts names the NPU facts file roles/npu_facts writes "
        "(ansible-playbook npu_facts.yml); check the path",
        line=first.line,
        column=first.column,
    )
    return BlueprintError([problem], file)


def _parse(
    file: str, raw: bytes
) -> tuple[Any, Mapping[YamlPath, str], Callable[[list[Problem]], BlueprintError]]:
    """The file's data, the unquoted scalars as written (for hints), and a function that turns
    problems at YAML paths into the located error."""
    try:
        text = raw.decode("utf-8")
        data, _ = read_layout(text)
    except (UnicodeDecodeError, OffLayout) as off:
        if len(raw) <= load.MAX_BYTES:  # any YAML: the blueprint loader, its limits and checks
            loaded = _load_yaml(file)
            every = loaded.positions
            return loaded.data, loaded.plain_scalars, _locator(file, lambda _: every)
        raise _too_large_off_layout(file, raw, off) from None
    except Duplicate as twice:
        again = f", first at line {twice.first}" if twice.first else ""
        problem = Problem(
            twice.path,
            f"duplicate key '{twice.path[-1]}'{again}",
            "remove one of them; other YAML readers silently keep only the last",
            line=twice.line,
            column=twice.column,
        )
        raise BlueprintError([problem], file) from None

    return data, {}, _locator(file, lambda paths: read_layout(text, paths)[1])


def _load_yaml(file: str) -> load.LoadedBlueprint:
    try:
        return load.load_blueprint(file, max_values=MAX_VALUES)
    except BlueprintError as err:
        problems = [
            Problem(p.path, p.message, _hint(p), line=p.line, column=p.column) for p in err.problems
        ]
        raise BlueprintError(problems, file) from None


def _hint(p: Problem) -> str:
    """The blueprint loader's hints, for a facts file."""
    if "values" in p.message and "through aliases" not in p.message:
        return f"write the file in {_ROLE}: block style, one `key: id` per line, read up to 64 MiB"
    if p.hint == load._START_HINT:
        return "a facts file starts with `kind: NpuFacts` and `hosts:`"
    return p.hint


def _too_large_off_layout(file: str, raw: bytes, off: Exception) -> BlueprintError:
    line, column, path, shown = 1, 1, (), ""
    if isinstance(off, UnicodeDecodeError):
        line = raw.count(b"\n", 0, off.start) + 1
        column = off.start - raw.rfind(b"\n", 0, off.start)
        shown = f"byte 0x{raw[off.start]:02x} (not UTF-8)"
    elif isinstance(off, OffLayout):
        line, column, path, shown = off.line, off.column, off.path, off.text[:60]
    what = f"`{shown}` is" if shown else "the file is"
    hint = "write every id as a whole decimal number, as npu-smi prints it"
    if not path or path[-1] not in DEVICE_KEYS:
        hint = (
            f"write it in {_ROLE}: block style, 2-space indents, `- key: id` lines under "
            "`devices:`; or collect the facts again with the role"
        )
    problem = Problem(
        path,
        f"{what} outside {_ROLE}, which a facts file larger than "
        f"{load.MAX_BYTES // 2**20} MiB ({len(raw):,} bytes) must follow",
        hint,
        line=line,
        column=column,
    )
    return BlueprintError([problem], file)


Positions = Mapping[YamlPath, tuple[int, int]]


def _locator(
    file: str, positions: Callable[[frozenset[YamlPath]], Positions]
) -> Callable[[list[Problem]], BlueprintError]:
    """problems -> BlueprintError with each problem at its path's line, or at its nearest
    located ancestor's (at most MAX_SHOWN problems, then how many more). `positions` gives
    the (line, column) of at least the paths it is asked for that the file holds."""

    def locate(problems: list[Problem]) -> BlueprintError:
        shown = problems[:MAX_SHOWN]
        paths = frozenset(p.path[:n] for p in shown for n in range(len(p.path) + 1))
        found = positions(paths)
        out = []
        for p in shown:
            where = p.path
            while where and found.get(where) is None:
                where = where[:-1]
            line, column = found.get(where) or (None, None)
            out.append(Problem(p.path, p.message, p.hint, line=line, column=column))
        if len(problems) > MAX_SHOWN:
            more = len(problems) - MAX_SHOWN
            out.append(Problem((), f"and {more:,} more problems", "fix the ones above first"))
        return BlueprintError(out, file)

    return locate


def facts_path(bp: Blueprint, blueprint_file: str) -> str | None:
    """hccl.facts of the blueprint, relative to the blueprint's folder."""
    rel = bp.hccl.facts
    if not rel:
        return None
    return os.path.join(os.path.dirname(os.path.abspath(blueprint_file)), rel)
