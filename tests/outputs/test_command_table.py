"""The command table (generator/catalog/commands.yaml, issue #29 item 5): every line of every
rendered configuration of the committed examples is a form of the table for its platform and
view; every entry cites a reference page or says `[unconfirmed]`; the matcher rejects what the
table lacks and a known line typed in the wrong view.

WANKA_COMMAND_CORPUS=<checkout of WheaterW/INTA-project>/nassim-main/corpus/hw also checks that
every cited page exists there."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from generator.analysis.command_table import (
    FACTS,
    SOURCE_PATTERN,
    UNCONFIRMED,
    check,
    compile_form,
    load_table,
    parse_table,
    unconfirmed,
    walk,
)
from generator.catalog import shipped_data
from tests.support.examples import EXAMPLES as BLUEPRINTS
from tests.support.examples import LARGE_EXAMPLES, ROOT, generated

EXAMPLES = sorted(p for p in (ROOT / "inventories").iterdir() if (p / "files").is_dir())
_PLATFORM = re.compile(r'(platform|model): "?([\w.-]+)"?$')
_CONFIG = re.compile(r"files/(?:switches|ztp/configs|border)/[^/]+\.cfg")
COMMITTED = {p.name for p in EXAMPLES}
EXAMPLES_NOT_COMMITTED = [b for b in BLUEPRINTS if b.removesuffix(".yaml") not in COMMITTED]


def _platform(cfg: str, yml_text: Callable[[str], str]) -> str:
    """A rendered configuration's platform, from the device's structured config beside it
    (switches: `platform`; border devices: `model`, looked up in the catalog). `cfg` is the
    path under the output folder, `yml_text` reads a path there."""
    folder, name = cfg.rsplit("/", 1)
    stem = name.removesuffix(".cfg")
    yml = f"files/switches/{stem}.yml" if folder.endswith("ztp/configs") else f"{folder}/{stem}.yml"
    for line in yml_text(yml).splitlines():
        if m := _PLATFORM.match(line):
            key, value = m.groups()
            return value if key == "platform" else shipped_data()["switches"][value]["platform"]
    raise AssertionError(f"{yml}: no platform or model")


def _failures(configs: Iterable[tuple[str, str]], yml_text: Callable[[str], str]) -> list[str]:
    """file:line: [view] line: why, for every rendered line no form of the table matches, or
    that matches a form the generator must never emit (`emitted: false`: Telnet, SNMPv1/v2c)."""
    table = load_table()
    return [
        f"{path}:{line.number}: [{line.view}] {line.text!r}: "
        + (line.problem if line.command is None else "a form marked `emitted: false`")
        for path, text in configs
        for line in walk(text, _platform(path, yml_text), table)
        if line.command is None or not line.command.emitted
    ]


def _message(failures: list[str]) -> str:
    return (
        f"{len(failures)} rendered lines match no form of generator/catalog/commands.yaml "
        "for their platform and view (add the form with its page, or fix the template):\n"
        + "\n".join(failures[:60])
    )


def _configs(example: Path) -> list[Path]:
    files = example / "files"
    return [
        *sorted((files / "switches").glob("*.cfg")),
        *sorted((files / "ztp" / "configs").glob("*.cfg")),
        *sorted((files / "border").glob("*.cfg")),
    ]


def test_examples_render_configs() -> None:
    assert EXAMPLES, "no committed examples under inventories/"
    for example in EXAMPLES:
        assert _configs(example), f"{example.name}: no rendered configurations"


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_every_rendered_line_is_a_form_of_its_view(example: Path) -> None:
    configs = [
        (str(p.relative_to(example)), p.read_text(encoding="utf-8")) for p in _configs(example)
    ]
    failures = _failures(configs, lambda rel: (example / rel).read_text(encoding="utf-8"))
    assert not failures, f"{example.name}: " + _message(failures)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=pytest.mark.slow) if n in LARGE_EXAMPLES else n
        for n in EXAMPLES_NOT_COMMITTED
    ],
)
def test_forms_of_the_examples_not_committed(name: str) -> None:
    """The blueprints whose output is not kept in git (supernode-768; wanka-10k under -m slow)
    render forms the committed ones may not."""
    files = {f.path: f.data for f in generated(name).files}
    configs = [(p, files[p].decode("utf-8")) for p in sorted(files) if _CONFIG.fullmatch(p)]
    assert configs, f"{name}: no rendered configurations"
    failures = _failures(configs, lambda rel: files[rel].decode("utf-8"))
    assert not failures, f"{name}: " + _message(failures)


def test_every_entry_cites_a_page_or_is_unconfirmed() -> None:
    table = load_table()
    corpus = os.environ.get("WANKA_COMMAND_CORPUS")
    problems = []
    for platform, commands in table.commands.items():
        seen = set()
        for c in commands:
            where = f"{platform} [{c.view}] {c.form!r}"
            if (c.view, c.form) in seen:
                problems.append(f"{where}: listed twice")
            seen.add((c.view, c.form))
            if c.source.startswith(UNCONFIRMED):
                if len(c.source) < len(UNCONFIRMED) + 10:
                    problems.append(f"{where}: [unconfirmed] without what would confirm it")
            elif not SOURCE_PATTERN.fullmatch(c.source):
                problems.append(f"{where}: source {c.source!r} is not a corpus page path")
            elif corpus and not (Path(corpus) / c.source).is_file():
                problems.append(f"{where}: {c.source} is not in {corpus}")
            if c.models and not c.confirmed:
                problems.append(f"{where}: models without a page")
    assert not problems, "\n".join(problems)


def test_table_covers_the_catalog_platforms() -> None:
    platforms = {m["platform"] for m in shipped_data()["switches"].values()}
    assert platforms <= set(load_table().platforms)


def _lines(text: str, platform: str) -> list[tuple[str, str, bool]]:
    return [(line.view, line.text, line.command is not None) for line in walk(text, platform)]


def test_matcher_rejects_forms_the_table_lacks() -> None:
    router = "system-view\nsysname rtr-01\n#\ntelnet server disable\nundo telnet server enable\n"
    assert _lines(router, "huawei-ne") == [
        ("user", "system-view", True),
        ("system", "sysname rtr-01", True),
        ("system", "#", True),
        ("system", "telnet server disable", False),  # the CE V300 form; VRP8 has none
        ("system", "undo telnet server enable", True),
    ]
    [bad] = check("#\ndcqcn foo\n#\nlldp enable\nreturn\n", "huawei-ce")
    assert (bad.number, bad.view, bad.text) == (2, "system", "dcqcn foo")


def test_matcher_tracks_views_and_rejects_a_line_in_the_wrong_view() -> None:
    right = "#\ndcb pfc\n priority 4\n priority 4 turn-off threshold 20\n#\nreturn\n"
    assert check(right, "huawei-ce") == []
    wrong = "#\ndfs-group 1\n priority 4 turn-off threshold 20\n#\nreturn\n"
    [bad] = check(wrong, "huawei-ce")
    assert bad.view == "dfs-group" and "the table has it in dcb-pfc" in bad.problem
    # a sub-view line at column 0 is typed in the system view
    [bad] = check("#\nospf network-type p2p\n", "huawei-ce")
    assert bad.view == "system" and "interface" in bad.problem
    # indented under a line that opens no view
    [bad] = check("#\nlldp enable\n undo shutdown\n", "huawei-ce")
    assert bad.view == "?"
    # the interface kind: mac-address is documented for Eth-Trunk and VLANIF interfaces only
    vlanif = "#\ninterface Vlanif100\n mac-address 0000-5e00-0101\n"
    assert check(vlanif, "huawei-ce") == []
    [bad] = check(vlanif.replace("Vlanif100", "100GE1/0/1"), "huawei-ce")
    assert "not ethernet" in bad.problem
    # a value out of the page's range (DFS group priority 1-254)
    [bad] = check("#\ndfs-group 1\n priority 255\n", "huawei-ce")
    assert "out of range 1-254" in bad.problem


def test_a_script_starts_in_the_user_view_and_quit_returns_there() -> None:
    script = "system-view\nsysname a\ncommit\nquit\nsystem-view\nlldp enable\n#\ncommit\nreturn\n"
    lines = _lines(script, "huawei-ce")
    assert all(ok for _, _, ok in lines)
    assert [view for view, _, _ in lines] == [
        *("user", "system", "system", "system"),
        *("user", "system", "system", "system", "system"),
    ]
    assert check("sysname a\n", "huawei-ce") == []  # a saved configuration starts in system view
    [bad] = check("system-view\nquit\nsysname a\n", "huawei-ce")
    assert bad.view == "user"


def test_forms_compile_with_known_placeholders() -> None:
    pattern, checks = compile_form("port default vlan <int:1-4094>")
    assert pattern.fullmatch("port default vlan 100") and checks[0][2:] == (1, 4094)
    with pytest.raises(ValueError, match="unknown placeholder"):
        compile_form("vlan <vlan-id>")


def test_the_table_refuses_an_unknown_placeholder_when_loaded() -> None:
    """The table compiles a form when a line is first matched against it, but a misspelt
    placeholder is refused when the table is read, and every shipped form compiles."""
    entry = {"form": "vlan <vlan-id>", "view": "system", "source": UNCONFIRMED}
    with pytest.raises(ValueError, match="unknown placeholders"):
        parse_table({"views": {"system": ""}, "platforms": {"huawei-ce": [entry]}})
    for commands in load_table().commands.values():
        for c in commands:
            compile_form(c.form)


def test_unconfirmed_forms_per_platform_and_model() -> None:
    table = load_table()
    usg = {c.form for c, _ in unconfirmed("huawei-usg")}
    # the USG forms are unconfirmed but those a page of the USG CLI reference settles
    paged = {c.form for c in table.commands["huawei-usg"] if c.source.startswith("https://usg.")}
    assert paged == {"default action permit", "default action deny"}
    assert usg == {c.form for c in table.commands["huawei-usg"]} - paged
    assert all(c.confirmed for c in table.commands["huawei-ce"])
    # dcb pfc: the page supports it only on some V300 models
    on_8851 = {c.form for c, _ in unconfirmed("huawei-ce", "ce8851-32cq8dq-p")}
    on_6865 = {c.form: why for c, why in unconfirmed("huawei-ce", "ce6865-48s8cq-ei")}
    assert "dcb pfc" not in on_8851
    assert "only on" in on_6865["dcb pfc"]
    # restricted to the forms a configuration uses
    used = [line.command for line in walk("#\nlldp enable\n#\ndcb pfc\n", "huawei-ce")]
    assert [c.form for c, _ in unconfirmed("huawei-ce", "ce6865-48s8cq-ei", used)] == ["dcb pfc"]


def test_the_design_review_lists_every_fact_no_page_settles() -> None:
    """A fact of the table that says [unconfirmed] (a display rule, the RD of the built-in
    management VPN) is listed in the design review of every example that configures its
    platform, with the form it belongs to."""
    table = load_table()
    result = generated("pod-128.yaml")
    review = next(f.data.decode() for f in result.files if f.path == "docs/README.md")
    facts = review[review.index("Facts about confirmed forms") :].split("\n## ")[0]
    platforms = {d.platform for d in result.cluster.devices if d.platform}
    expected = [
        (p, c.form)
        for p in sorted(platforms)
        for c in table.commands[p]
        if c.emitted and c.confirmed and any(UNCONFIRMED in getattr(c, f) for f in FACTS)
    ]
    assert ("huawei-ce", "ipv4-family") in expected  # the management VPN without an RD
    for platform, form in expected:
        assert f"| {platform} | `{form}` | [unconfirmed] " in facts.replace("\\|", "|"), form
