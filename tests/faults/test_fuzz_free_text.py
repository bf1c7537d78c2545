"""Every free-text field of the blueprint, fuzzed with template and shell payloads, stays text
(issue #31 Done-when: "a property test that fuzzes free-text fields with template and shell
payloads through every emitter and every role's variable use").

The fields are read from the schema (every string that is not an enum), so a new one is fuzzed
without touching this file. Each payload variant is written into every field at once (one batch
per variant): a field the blueprint refuses is dropped from the batch with the located error
that names it (or a mapping holding it), the rest go through the whole `wanka generate` into a
temporary folder. Then Ansible itself reads the output: `ansible-inventory --list` and `ansible
-m debug` of every variable of a server, a switch, a storage and a management node template each
value as any role's use would. Nothing runs (no marker file appears), each payload that reached a
variable file comes back verbatim, verify finds no template syntax Ansible would evaluate, and the
ops_checklist role reads a plan whose checklist holds the payloads without running them.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import yaml

from generator.cli import main
from generator.verify import verify
from tests.support.ansible_run import ansible_env, tool
from tests.support.examples import ROOT, TINY
from tests.support.output_readers import YAML

pytestmark = pytest.mark.slow  # several generates and Ansible runs
SCHEMA = json.loads((ROOT / "generator/blueprint/wanka-v1.schema.json").read_text())
MAP_KEYS = {  # a concrete key for a `*` of these mappings (a model the tiny cluster uses)
    ("catalog", "switches"): "ce9860-4c-ei",
    ("catalog", "servers"): "atlas-800t-a2",
    ("hccl", "env"): "HCCL_WANKA_FUZZ",
}
HOSTS = ("npu-0001", "par-leaf-0001", "stor-001", "controller-01", "fw-01")  # one of each kind


def base() -> dict:
    """The tiny cluster with its two fuzzed catalog models copied in whole from the built-in
    catalog, so a fact's `source` or a port's name is written beside the values it needs."""
    bp = yaml.safe_load(TINY)
    bp["catalog"] = {}
    for (_, kind), model in ((k, v) for k, v in MAP_KEYS.items() if k[0] == "catalog"):
        builtin = yaml.safe_load((ROOT / f"generator/catalog/{kind}.yaml").read_text())
        bp["catalog"][kind] = {model: builtin[model]}
    return bp


def _resolve(node: dict) -> dict:
    ref = node.get("$ref")
    return SCHEMA["$defs"][ref.rsplit("/", 1)[-1]] if ref else node


def free_text_fields(node: dict = SCHEMA, path: tuple = ()) -> list[tuple]:
    """Schema paths of every string that is not an enum (`*`: any key, 0: a list's first item)."""
    node = _resolve(node)
    out: list[tuple] = []
    for sub in (*node.get("oneOf", ()), *node.get("anyOf", ()), *node.get("allOf", ())):
        out += [p for p in free_text_fields(sub, path) if p not in out]
    kinds = node.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    if "string" in kinds and "enum" not in node and "const" not in node and path not in out:
        out.append(path)
    for key, sub in node.get("properties", {}).items():
        out += free_text_fields(sub, (*path, key))
    if isinstance(node.get("additionalProperties"), dict):
        out += free_text_fields(node["additionalProperties"], (*path, "*"))
    if isinstance(node.get("items"), dict):
        out += free_text_fields(node["items"], (*path, 0))
    return list(dict.fromkeys(out))


FIELDS = free_text_fields()


def _set(bp: dict, path: tuple, value: str) -> tuple:
    """Write `value` at `path` (creating what is missing); the concrete path written."""
    node, concrete = bp, []
    for i, part in enumerate(path):
        last = i == len(path) - 1
        if part == "*":
            part = MAP_KEYS.get(tuple(concrete), next(iter(node), "wanka-fuzz"))
        if isinstance(part, int):
            if not isinstance(node, list) or not node:
                node = _replace(bp, concrete, [{}] if not last else [value])
            if last:
                node[0] = value
            concrete.append(0)
            node = node[0]
            continue
        concrete.append(part)
        if last:
            node[part] = value
        else:
            if not isinstance(node.get(part), (dict, list)):
                node[part] = [] if isinstance(path[i + 1], int) else {}
            node = node[part]
    return tuple(concrete)


def _replace(bp: dict, path: list, value):
    parent = bp
    for part in path[:-1]:
        parent = parent[part]
    parent[path[-1]] = value
    return value


def _variants(markers: Path) -> list[str]:
    """Payload variants, each to be written into every field at once; `@` becomes the field's
    index (its marker file name)."""
    m = markers
    return [
        f"{{{{ lookup('pipe','touch {m}/@a') }}}}",
        f"{{% if lookup('pipe','touch {m}/@b') %}}{{% endif %}}{{# c #}}",
        f"$(touch {m}/@c)`touch {m}/@d`; touch {m}/@e",
        f"x'\"; y {{{{ query('pipe','touch {m}/@f') }}}}",
        f"x\ny {{{{ lookup('pipe','touch {m}/@g') }}}}",  # a line break: most fields refuse it
    ]


def _cli(*argv: str) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        code = main(list(argv))
    return code, err.getvalue()


def _refused(err: str, concrete: tuple, value: str) -> bool:
    """Whether an exit-2 message names this field or a mapping holding it, located, or names
    the value itself (a path field: the file it names cannot be read)."""
    from generator.errors import format_path

    for line in err.splitlines():
        if value.splitlines()[0] in line:
            return True
        parts = line.split(": ", 2)
        if len(parts) < 3 or not parts[0].count(":") >= 2:
            continue  # FILE:LINE:COL: yaml.path: message
        named = parts[1]
        for n in range(1, len(concrete) + 1):
            if named == format_path(concrete[:n]):
                return True
        if named.startswith(format_path(concrete) + "."):
            return True
    return False


def _strings(value) -> list[str]:
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (k, *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [value] if isinstance(value, str) else []


def _ansible(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "ANSIBLE_NOCOLOR": "1", "ANSIBLE_HOME": str(cwd / "ansible-home")}
    env.pop("ANSIBLE_CONFIG", None)
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def markers():
    folder = Path(tempfile.mkdtemp(prefix="wk", dir="/tmp"))  # short: some fields are short
    yield folder
    shutil.rmtree(folder)


def test_the_schema_has_the_free_text_fields_the_issue_counts():
    """The walk finds the blueprint's strings (issue #31 counted 24 free-text fields; the walk
    also finds the pattern-restricted ones, which must refuse the payloads, located)."""
    dotted = {".".join(map(str, p)) for p in FIELDS}
    assert {"metadata.site", "metadata.description", "hccl.env.*", "hccl.facts"} <= dotted
    assert "catalog.servers.*.storage_nic.driver" in dotted
    assert "networks.parameter.rail" not in dotted  # an enum
    assert len(FIELDS) >= 24, dotted


def test_the_base_blueprint_validates(tmp_path):
    (tmp_path / "bp.yaml").write_text(yaml.safe_dump(base(), sort_keys=False))
    code, err = _cli("validate", str(tmp_path / "bp.yaml"))
    assert code == 0, err


@pytest.mark.parametrize("variant", range(5))
def test_every_free_text_field_stays_text_through_generate_and_ansible(tmp_path, markers, variant):
    payload = _variants(markers)[variant]
    fields = dict(enumerate(FIELDS))
    refused: dict[tuple, str] = {}
    bp_path = tmp_path / "bp.yaml"
    for _ in range(len(fields) + 1):  # drop the refused fields until the rest validate
        bp = base()
        written = {i: _set(bp, f, payload.replace("@", str(i))) for i, f in fields.items()}
        bp_path.write_text(yaml.safe_dump(bp, sort_keys=False, allow_unicode=True))
        code, err = _cli("validate", str(bp_path))
        assert "Traceback" not in err and code in (0, 2), err
        if code == 0:
            break
        gone = {i for i, c in written.items() if _refused(err, c, payload.replace("@", str(i)))}
        assert gone, f"exit 2 names none of the fuzzed fields:\n{err}"
        refused |= {written[i]: err for i in gone}
        fields = {i: f for i, f in fields.items() if i not in gone}
    if "\n" in payload and not fields:
        return  # every field refused the line break, each with a located error (above)
    assert fields, "every field refused the payload: nothing went through the emitters"
    out = tmp_path / "out"
    code, err = _cli("generate", str(bp_path), "-o", str(out), "-q")
    assert code == 0, err
    assert not list(markers.iterdir())

    res = _ansible(tool("ansible-inventory"), "-i", str(out / "hosts.yml"), "--list", cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    res = _ansible(
        tool("ansible"), "-i", str(out / "hosts.yml"), ",".join(HOSTS),
        "-m", "ansible.builtin.debug", "-a", "var=hostvars[inventory_hostname]", cwd=tmp_path,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr
    assert not list(markers.iterdir()), sorted(p.name for p in markers.iterdir())
    blocks = [(b + "\n}").strip().partition(" => ") for b in res.stdout.split("\n}")[:-1]]
    assert sorted(head.split(" | ")[0] for head, _, _ in blocks) == sorted(HOSTS), res.stdout[:2000]
    printed = "\n".join(s for _, _, body in blocks for s in _strings(json.loads(body)))
    checked = set()
    for path in sorted((out / "host_vars").glob("*.yml")) + sorted(out.glob("group_vars/*.yml")):
        if path.stem not in (*HOSTS, "all"):
            continue
        loaded = _strings(yaml.load(path.read_text(), Loader=YAML))
        for i in fields:
            value = payload.replace("@", str(i))
            if any(value in s for s in loaded):
                assert value in printed, f"{path.name}: {value!r} not printed verbatim"
                checked.add(FIELDS[i])
    if "\n" not in payload:  # the line-break variant may only be refused, located
        assert checked, "no payload reached a variable file of the hosts read"
    problems = [p.render() for p in verify(out).problems if "template syntax" in p.render()]
    assert not problems, problems


def test_the_ops_checklist_reads_a_hostile_plan_without_running_it(tmp_path, markers):
    """The plan is read by the role's module (a registered result), not include_vars: its
    strings reach the cleanup unit as text. The same plan read by include_vars runs them."""
    out = tmp_path / "out"
    (tmp_path / "bp.yaml").write_text(TINY)
    assert _cli("generate", str(tmp_path / "bp.yaml"), "-o", str(out), "-q")[0] == 0
    plan = yaml.safe_load((out / "files/acceptance/plan.yml").read_text())
    cache = f"/data/{{{{ lookup('pipe','touch {markers}/plan') }}}}$(touch {markers}/sh)"
    plan["checklist"]["compile_cache"]["paths"] = [cache]
    hostile = tmp_path / "plan.yml"
    hostile.write_text(yaml.safe_dump(plan))
    root = tmp_path / "root"
    (root / "etc/systemd/system").mkdir(parents=True)
    extra = {
        "ops_checklist_plan": str(hostile),
        "ops_checklist_root": str(root),
        "ops_checklist_ethtool": str(ROOT / "tests/fakes/bin/ethtool"),
        "ops_checklist_npu_smi": str(ROOT / "tests/fakes/bin/npu-smi"),
        "ops_checklist_write_mb": 1,
        "dpc_filesystems": [],
    }
    res = _play(out, tmp_path, extra, "playbooks/ops_checklist.yml", "--limit", "npu-0001")
    unit = root / "etc/systemd/system/wanka-cache-cleanup.service"
    assert unit.is_file(), res.stdout[-3000:] + res.stderr
    assert f"ExecStart=/usr/bin/find -P {cache} -xdev" in unit.read_text()
    assert not list(markers.iterdir()), sorted(p.name for p in markers.iterdir())
    # the check can fail: include_vars of the same plan runs the payload when it is read
    play = tmp_path / "include.yml"
    play.write_text(
        "- hosts: npu-0001\n  gather_facts: false\n  tasks:\n"
        f"    - ansible.builtin.include_vars: {{file: '{hostile}', name: p}}\n"
        "    - ansible.builtin.debug: {var: p.checklist.compile_cache.paths}\n"
    )
    _play(out, tmp_path, {}, str(play))
    ran = sorted(p.name for p in markers.iterdir())
    for p in markers.iterdir():
        p.unlink()
    assert "plan" in ran, ran


def _play(out: Path, tmp: Path, extra: dict, play: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            tool("ansible-playbook"),
            *("-i", str(out / "hosts.yml"), "-c", "local"),
            *("-e", f"ansible_python_interpreter={sys.executable}"),
            *("-e", json.dumps(extra)),
            play,
            *args,
        ],
        cwd=ROOT,
        env=ansible_env(tmp),
        capture_output=True,
        text=True,
        timeout=600,
    )
