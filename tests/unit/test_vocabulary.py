"""One spelling of each plane, role, link kind, floor zone, rack kind, domain kind, tier, host
port role, acceptance scope, twin namespace kind and finding severity in generator/ (issue #33
item 2, issue #41 item 5, issue #44 item 5).

generator/vocab.py defines `Plane`, `Role`, `LinkKind`, `Zone`, `RackKind`, `DomainKind`, `Tier`,
`HostPort`, `ScopeKind` and `NsKind`, generator/analysis/finding.py `Severity`; everywhere else a
group of those names
(a tuple, list, set or dict keyed by them), a comparison with one, a value given one (an
assignment, a return, either branch of a conditional, a `plane=`/`role=`/`kind=`/`zone=` argument),
a subscript by one (`planes["oob"]`) and a call argument (`cluster.fabric("parameter")`,
`s.domain("leaf")`) is written with the members.
A string literal equal to one of the names is allowed where it is text, not a name: docstrings,
messages and f-strings, YAML paths of the blueprint (a tuple that also holds other strings),
templates and the JSON schema (not Python); and on a line that says which other vocabulary the
word belongs to (`# vocabulary: <which>`, e.g. a scheduler domain kind that is also spelled
"leaf").
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import yaml

from generator.analysis.finding import Severity
from generator.vocab import (
    DomainKind,
    HostPort,
    LinkKind,
    NsKind,
    Plane,
    RackKind,
    Role,
    ScopeKind,
    Tier,
    Zone,
)

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "generator"
VOCABULARIES = (
    Plane,
    Role,
    LinkKind,
    Zone,
    RackKind,
    DomainKind,
    Tier,
    HostPort,
    ScopeKind,
    NsKind,
    Severity,
)
NAMES = {m.value for cls in VOCABULARIES for m in cls}


# keyword arguments that name a plane, role, link kind, zone or rack kind (Device(role=...),
# Wire(kind=...), Rack(zone=..., kind=...))
_FIELDS = {"plane", "role", "kind", "leaf_role", "upper_role", "zone", "upper_zone"}


def _is_name(n: ast.AST) -> bool:
    return isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value in NAMES


def _only_names(nodes) -> bool:
    """Every string literal among `nodes` is a vocabulary name (and there is one): a group of
    names, not a YAML path such as ("networks", "parameter", "pool")."""
    strings = [n for n in nodes if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return bool(strings) and all(_is_name(n) for n in strings)


def _gives_name(n: ast.AST) -> bool:
    """An assignment, a return or a plane=/role=/kind= argument whose value is a name."""
    if isinstance(n, ast.keyword):
        return n.arg in _FIELDS and _is_name(n.value)
    return isinstance(n, ast.Assign | ast.AnnAssign | ast.Return) and _is_name(n.value)


def spellings(source: str, keys: bool = True) -> list[tuple[int, str]]:
    """(line, name) of every vocabulary name spelled as a string literal in a group, a
    comparison, a value given, a subscript or a call argument (`keys`: False for a module whose
    subscripts and call arguments are document keys), except on lines marked
    `# vocabulary: <which>`."""
    lines = source.splitlines()
    found = []
    for n in ast.walk(ast.parse(source)):
        if isinstance(n, ast.Tuple | ast.List | ast.Set) and _only_names(n.elts):
            found += [e for e in n.elts if _is_name(e)]
        elif isinstance(n, ast.Dict) and _only_names([k for k in n.keys if k is not None]):
            found += [k for k in n.keys if k is not None and _is_name(k)]
        elif isinstance(n, ast.Compare):
            found += [e for e in (n.left, *n.comparators) if _is_name(e)]
        elif isinstance(n, ast.IfExp):
            found += [e for e in (n.body, n.orelse) if _is_name(e)]
        elif _gives_name(n):
            found.append(n.value)
        elif keys and isinstance(n, ast.Subscript) and _is_name(n.slice):
            found.append(n.slice)
        elif keys and isinstance(n, ast.Call):
            found += [a for a in n.args if _is_name(a)]
    return sorted(
        (e.lineno, e.value)
        for e in found
        if "# vocabulary:" not in lines[e.lineno - 1] and "; vocabulary:" not in lines[e.lineno - 1]
    )


# Words of another vocabulary in files not yet marked line by line: the twin reads "network" as
# the VRP `network` command (OSPF) and as an ip-rule argument type (twin/plan_hosts.py
# _RULE_WORDS),
# never a rack kind. A mark (`# vocabulary: VRP keyword`) on those lines would replace this.
OTHER_WORDS = {("generator/twin/vrp.py", "network"), ("generator/twin/plan_hosts.py", "network")}
# Where the vocabularies are defined (vocab.py's Check holds `provider` as a check's name).
DEFINITIONS = {"generator/vocab.py", "generator/analysis/finding.py"}
# Modules that read or write YAML/JSON documents by their keys (the blueprint before it is typed,
# the catalog overrides, `wanka size`'s starting blueprint, the diff's records, the site overlay):
# a subscript or call argument there is a document key, e.g. data["compute"]["server"].
DOCUMENT_KEYS = {
    "generator/blueprint/semantic.py",
    "generator/blueprint/refusals.py",
    "generator/catalog/overrides.py",
    "generator/sizing.py",
    "generator/diff.py",
    "generator/analysis/changes.py",  # the diff's records, built for wanka diff and the growth cost
    "generator/site.py",
    "generator/site_text.py",
}


def test_generator_spells_each_name_once():
    spelled = [
        f"{path.relative_to(ROOT)}:{line}: {name!r}"
        for path in sorted(GENERATOR.rglob("*.py"))
        if path.relative_to(ROOT).as_posix() not in DEFINITIONS
        for line, name in spellings(
            path.read_text(encoding="utf-8"),
            keys=path.relative_to(ROOT).as_posix() not in DOCUMENT_KEYS,
        )
        if (path.relative_to(ROOT).as_posix(), name) not in OTHER_WORDS
    ]
    assert not spelled, (
        "use the members of generator.vocab (and analysis.finding.Severity):\n" + "\n".join(spelled)
    )


def test_the_check_finds_each_form():
    sample = '''
"""The parameter plane's leaf switches."""
PLANES = ("parameter", "storage")
SWITCHES = {"leaf", "spine"}
VLAN = {"oob": 50}
def f(d, link):
    if d.role == "leaf" or link.kind in ["peer-link"]:
        raise ValueError(f"{d.name}: not a leaf of the parameter plane")
    where = ("networks", "parameter", "pool")
    return "core" != d.role
'''
    assert spellings(sample) == [
        (3, "parameter"),
        (3, "storage"),
        (4, "leaf"),
        (4, "spine"),
        (5, "oob"),
        (7, "leaf"),
        (7, "peer-link"),
        (10, "core"),
    ]
    marked = 'kind = "leaf" if x else "pod"  # vocabulary: domain kind\nok = kind == "leaf"  # vocabulary: domain kind\n'
    assert spellings(marked) == []
    values = 'role = "leaf"\nw = Wire(kind="uplink", speed=400)\nx = "oob" if y else "job"\ndef f():\n    return "firewall"\n'
    assert spellings(values) == [(1, "leaf"), (2, "uplink"), (3, "oob"), (5, "firewall")]
    racks = (
        'r = Rack(zone="training", kind="network")\nx = [r for r in rs if r.kind == "compute"]\n'
    )
    assert spellings(racks) == [(1, "network"), (1, "training"), (2, "compute")]
    looked_up = 'f = cluster.fabric("parameter")\nd = s.domain("pod") or planes["oob"]\n'
    looked_up += (
        'y = data["zones"]["storage"]  # vocabulary: blueprint key\nz = g("job", key="leaf")\n'
    )
    assert spellings(looked_up) == [(1, "parameter"), (2, "oob"), (2, "pod")]


def test_members_are_their_strings():
    """Outputs and blueprint keys stay spelled as before: a member is equal to its string, hashes
    as it and formats as it."""
    assert (
        Role.NPU_SERVER == "npu-server" and f"{Plane.OOB}" == "oob" and str(LinkKind.MGMT) == "mgmt"
    )
    assert {"peer-link": 1}[LinkKind.PEER_LINK] == 1
    assert json.dumps([Plane.PARAMETER]) == '["parameter"]'


def test_planes_are_the_blueprint_planes():
    """Every plane the blueprint schema lets a user configure is a Plane and back: networks.*
    (inband and oob under networks.management), zones.border and its provider hand-off."""
    schema = json.loads((GENERATOR / "blueprint" / "wanka-v1.schema.json").read_text())
    networks = schema["properties"]["networks"]["properties"]
    border = schema["properties"]["zones"]["properties"]["border"]["properties"]
    named = {*networks, *networks["management"]["properties"], "border"} - {"management"}
    assert "provider" in border
    assert {p.value for p in Plane} == named | {"provider"}


def test_host_roles_are_the_catalog_server_kinds():
    catalog = yaml.safe_load((GENERATOR / "catalog" / "servers.yaml").read_text())
    kinds = {
        entry["kind"] for entry in catalog.values() if isinstance(entry, dict) and "kind" in entry
    }
    assert kinds == {r for r in Role if r.is_host}
    assert all(r.is_switch != r.is_host for r in Role)


def _schema_has(schema: dict, path: tuple[str, ...]) -> bool:
    node = schema
    for key in path:
        node = node.get("properties", {}).get(key)
        if node is None:
            return False
    return True


def test_zones_are_the_blueprint_zones_that_hold_racks():
    """Every `zones.<zone>` of the schema is a Zone, but the border: its routers and firewalls
    stand in the management zone's network racks (a Plane, not a floor zone)."""
    schema = json.loads((GENERATOR / "blueprint" / "wanka-v1.schema.json").read_text())
    zones = set(schema["properties"]["zones"]["properties"])
    assert {z.value for z in Zone} == zones - {"border"} and "border" in set(Plane)


def test_each_rack_kind_names_a_budget_setting_the_schema_has():
    """The setting a rack-power finding sends the user to is a key they can write (issue #41
    item 5: the network racks were sent to zones.<zone>.rack.power_kw)."""
    from generator.expand.racks import RACK_BUDGET

    schema = json.loads((GENERATOR / "blueprint" / "wanka-v1.schema.json").read_text())
    assert set(RACK_BUDGET) == set(RackKind)
    missing = [path for path in RACK_BUDGET.values() if not _schema_has(schema, path)]
    assert not missing
    assert RACK_BUDGET[RackKind.NETWORK] == ("zones", "training", "network_rack", "power_kw")
