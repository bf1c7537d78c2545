"""Hostile blueprint values (#16): nothing reaches a rendered file in that file's own syntax, and
every value of the wrong kind is refused at load time with a located message and exit 2.

Each test here failed on main before #16: the value was accepted (and rendered), or the command
ended in a traceback.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from generator import cli, pipeline
from generator.artifacts import hccl
from generator.artifacts.switch_ports import PLATFORMS
from tests.support.examples import TINY


def write(tmp_path: Path, text: str, name: str = "bp.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def refused(tmp_path: Path, capsys, text: str) -> str:
    """`wanka validate` of `text`: exit 2, every line located in the file; returns stderr."""
    path = write(tmp_path, text)
    code = cli.main(["validate", str(path)])
    out, err = capsys.readouterr()
    assert code == 2, out + err
    assert err.strip(), "exit 2 without a message"
    for line in err.strip().splitlines():
        if not line.startswith(("warning:", "info:")):
            assert line.startswith(f"{path}:"), line
    assert "Traceback" not in err
    return err


def test_the_tiny_blueprint_is_valid(tmp_path, capsys):
    assert cli.main(["validate", str(write(tmp_path, TINY))]) == 0, capsys.readouterr().err


# --- shell: files/hccl/env/<host>.sh ------------------------------------------------------------

SHELL_VALUES = [
    "a; touch {marker}",
    "$(touch {marker})",
    "`touch {marker}`",
    "x' ; touch {marker} '",
]


@pytest.mark.parametrize("template", SHELL_VALUES)
def test_hccl_env_values_stay_values_in_the_shell_script(tmp_path, template):
    """The env file is sourced by a shell on every NPU server: a value is one word, whatever it
    holds. Sourcing the generated file with a real bash runs nothing and sets exactly the value."""
    marker = tmp_path / "ran"
    value = template.format(marker=marker)
    bp = write(tmp_path, TINY + "hccl:\n  env:\n    HCCL_EVIL: " + _yaml_quote(value) + "\n")
    result = pipeline.run(bp, emit=False)
    assert dict(result.cluster.hccl_env)["HCCL_EVIL"] == value
    server = result.cluster.npu_servers[0]
    script = tmp_path / "env.sh"
    script.write_text(hccl.environment(result.cluster, server))
    shown = subprocess.run(
        ["bash", "-c", f'. "{script}" && printf %s "$HCCL_EVIL"'],
        capture_output=True,
        text=True,
        env={"PATH": os.environ["PATH"]},
        check=True,
    )
    assert shown.stdout == value
    assert not marker.exists(), "sourcing the env file ran a command"


def _yaml_quote(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


# U+202E RIGHT-TO-LEFT OVERRIDE ("Trojan Source"), U+200B ZERO WIDTH SPACE, U+00A0 NO-BREAK
# SPACE, U+E000 private use: each prints as something other than what it is
@pytest.mark.parametrize(
    "escape",
    ["\\n", "\\r", "\\x00", "\\x1b", "\\u2028", "\\x85", "\\u202e", "\\u200b", "\\xa0", "\\ue000"],
)
def test_control_characters_and_line_breaks_in_strings_are_refused(tmp_path, capsys, escape):
    err = refused(tmp_path, capsys, TINY + f'hccl:\n  env:\n    HCCL_X: "a{escape}touch /tmp/x"\n')
    assert "hccl.env.HCCL_X: the value holds the character U+" in err


# --- switch CLI: files/switches/*.cfg -----------------------------------------------------------


@pytest.mark.parametrize(
    "entry, where",
    [
        ('{mgmt_port: "MEth0/0/0\\ntelnet server enable"}', "mgmt_port"),
        ('{mgmt_port: "MEth0/0/0 ; reboot"}', "mgmt_port"),
        (
            '{ports: [{name: "400GE1/0/{port}\\nip route-static 0.0.0.0 0 1.2.3.4", '
            "count: 36, speed: 400}]}",
            "ports[0].name",
        ),
        ('{ports: [{name: "4 00GE1/0/{port}", count: 36, speed: 400}]}', "ports[0].name"),
        ('{ports: [{name: "x{port} undo shutdown", count: 36, speed: 400}]}', "ports[0].name"),
    ],
)
def test_catalog_strings_cannot_inject_switch_config_lines(tmp_path, capsys, entry, where):
    text = TINY + f"catalog:\n  switches:\n    ce9860-4c-ei: {entry}\n"
    err = refused(tmp_path, capsys, text)
    assert f"catalog.switches.ce9860-4c-ei.{where}:" in err


def test_server_port_names_are_interface_names(tmp_path, capsys):
    text = TINY + (
        "catalog:\n  servers:\n    atlas-800t-a2:\n      ports:\n"
        '        npu: {count: 8, speed: 200, name: "npu{n}\\n shutdown"}\n'
    )
    assert "catalog.servers.atlas-800t-a2.ports.npu.name:" in refused(tmp_path, capsys, text)


def test_an_unknown_platform_is_refused_instead_of_dropping_every_config(tmp_path, capsys):
    text = TINY + "catalog:\n  switches:\n    ce9860-4c-ei: {platform: huawei-cx}\n"
    err = refused(tmp_path, capsys, text)
    assert "platform: 'huawei-cx' is not one of 'huawei-ce', 'huawei-ne', 'huawei-usg'" in err


def test_every_shipped_switch_platform_is_one_the_schema_names():
    from generator.blueprint.validate import SCHEMA
    from generator.catalog import build_catalog

    allowed = set(SCHEMA["$defs"]["switch_model"]["properties"]["platform"]["enum"])
    assert {m.platform for m in build_catalog().switches.values()} <= allowed
    assert set(PLATFORMS) <= allowed


# --- exact types --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "yaml_text, where, words",
    [
        ("networks:\n  business: {vlan: 100.0}\n", "networks.business.vlan", "write 100"),
        (
            "networks:\n  parameter: {routing: {asn_base: 4200000000.0}}\n",
            "networks.parameter.routing.asn_base",
            "write 4200000000",
        ),
        ("compute:\n  cards: 16\n  index_start: 1.0\n", "compute.index_start", "write 1"),
    ],
)
def test_floats_are_refused_where_integers_are_meant(tmp_path, capsys, yaml_text, where, words):
    text = TINY.replace("compute:\n  cards: 16\n", "") if "compute" in yaml_text else TINY
    err = refused(tmp_path, capsys, text + yaml_text)
    assert f"{where}: expected a whole number" in err and words in err


@pytest.mark.parametrize(
    "written, words",
    [
        ("0200", "octal"),
        ("2:8", "base-60"),
        ("0x10", "hexadecimal"),
        ("0b101", "binary"),
        ("1_000", "'_' separators"),
        ("9" * 5000, "5,000 digits is too long"),
        ("123456789012345678901", "21 digits is too long"),
    ],
)
@pytest.mark.parametrize("directive", ["", "%YAML 1.2\n---\n"])
def test_yaml_1_1_integer_forms_and_huge_literals_are_refused(
    tmp_path, capsys, written, words, directive
):
    err = refused(
        tmp_path, capsys, directive + TINY + f"networks:\n  business: {{vlan: {written}}}\n"
    )
    assert "networks.business.vlan:" in err and words in err


@pytest.mark.parametrize("written", [".nan", ".inf", "-.inf", ".NaN", "1:30.5"])
@pytest.mark.parametrize(
    "where",
    [
        "zones:\n  training: {rack: {power_kw: %s}}\n",
        "zones:\n  training: {cdu: {capacity_kw: %s}}\n",
        "design:\n  failure_rates: {cable: %s}\n",
        "catalog:\n  switches:\n    ce9860-4c-ei: {power_w: %s}\n",
    ],
)
def test_nan_inf_and_base_60_floats_are_refused(tmp_path, capsys, written, where):
    if where.startswith("zones:\n"):  # one more entry in TINY's zones mapping
        text = TINY.replace("zones:\n", where % written, 1)
    else:
        text = TINY + where % written
    err = refused(tmp_path, capsys, text)
    assert "not a finite number" in err or "base-60" in err


@pytest.mark.parametrize("char", ["\u2028", "\u2029", "\u0085"])
def test_unicode_line_breaks_in_the_file_are_refused(tmp_path, capsys, char):
    """`# note{U+2028}compute: {cards: 99999}`: some readers see a comment, others a key."""
    text = TINY.replace("metadata:\n", f"# a comment{char}networks: {{}}\nmetadata:\n")
    err = refused(tmp_path, capsys, text)
    assert f"U+{ord(char):04X}" in err and ":3:12:" in err


# --- addresses, mount points, AS numbers ---------------------------------------------------------


@pytest.mark.parametrize(
    "pool, words",
    [
        ("127.0.0.0/16", "loopback"),
        ("224.0.0.0/16", "multicast"),
        ("169.254.0.0/16", "link-local"),
        ("240.0.0.0/16", "reserved"),
        ("0.0.0.0/16", "not inside a private range"),
        ("8.8.0.0/16", "not inside a private range"),
    ],
)
def test_pools_must_be_private_unicast(tmp_path, capsys, pool, words):
    err = refused(tmp_path, capsys, TINY + f"networks:\n  business: {{pool: {pool}}}\n")
    assert "networks.business.pool:" in err and words in err


@pytest.mark.parametrize(
    "filesystems, words",
    [
        ("[{name: a, mountpoint: /}]", "over the root file system"),
        ("[{name: a, mountpoint: /data/../etc}]", "not a normalised absolute path"),
        ("[{name: a, mountpoint: /data/./x}]", "not a normalised absolute path"),
        ("[{name: a, mountpoint: //data}]", "not a normalised absolute path"),
        ("[{name: a, mountpoint: /data/}]", "not a normalised absolute path"),
        ("[{name: a, mountpoint: /data}, {name: b, mountpoint: /data}]", "also given by"),
        ("[{name: a, mountpoint: /data}, {name: a, mountpoint: /x}]", "also given by"),
    ],
)
def test_mount_points_are_absolute_normalised_and_unique(tmp_path, capsys, filesystems, words):
    text = TINY.replace(
        "  storage: {nodes: {count: 1}}\n",
        f"  storage: {{nodes: {{count: 1}}, filesystems: {filesystems}}}\n",
    )
    err = refused(tmp_path, capsys, text)
    assert "zones.storage.filesystems[" in err and words in err


def test_as_numbers_stay_within_32_bits_after_the_plane_offsets(tmp_path, capsys):
    """asn_base is in range, but the storage plane's leaves add 100,000 and more."""
    text = TINY + "networks:\n  parameter: {routing: {asn_base: 4294900000}}\n"
    err = refused(tmp_path, capsys, text)
    assert "networks.parameter.routing.asn_base:" in err and "above 4,294,967,294" in err


def test_as_numbers_just_in_range_are_accepted(tmp_path, capsys):
    text = TINY + "networks:\n  parameter: {routing: {asn_base: 4294000000}}\n"
    assert cli.main(["validate", str(write(tmp_path, text))]) == 0, capsys.readouterr().err


# --- Markdown: docs/README.md --------------------------------------------------------------------


@pytest.mark.parametrize("site", ["a`b", "`x` <b>y</b>", "x``y`"])
def test_a_site_with_backticks_stays_one_code_span_in_the_readme(tmp_path, site):
    """CommonMark (markdown-it, a real parser) reads the site back as one code span."""
    markdown_it = pytest.importorskip("markdown_it")
    from generator.artifacts import docs

    bp = write(
        tmp_path, TINY.replace("  name: tiny\n", f"  name: tiny\n  site: {_yaml_quote(site)}\n")
    )
    result = pipeline.run(bp, emit=False)
    readme = next(f for f in docs.emit(result.cluster, result.analysis) if f.path.endswith(".md"))
    line = next(x for x in readme.data.decode().splitlines() if x.startswith("Generated by wanka"))
    tokens = markdown_it.MarkdownIt().parseInline(line)[0].children
    spans = [t.content for t in tokens if t.type == "code_inline"]
    assert spans[0] == site, spans
    assert not [t for t in tokens if t.type == "html_inline"]
