"""Day 0: the saved-format startup configurations, the ZTP server role (real ansible-playbook)
and the rolling order of day-2 changes."""

from __future__ import annotations

import hashlib
import re
import sys

import pytest
import yaml

from tests.ansible_run import ROOT, VAULT, Runner, recap

INVENTORY = ROOT / "inventories" / "pod-128"
INTERACTIVE = re.compile(r"^(system-view|commit|quit)\s*$", re.M)


def _sections(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    head = ""
    for line in text.splitlines():
        if line and not line.startswith((" ", "#")):
            head = line
            out.setdefault(head, [])
        elif line.startswith(" ") and head:
            out[head].append(line.strip())
    return out


def _files(example) -> dict[str, bytes]:
    return {f.path: f.data for f in example.files}


def test_startup_configs_are_saved_format_and_say_what_the_script_says(example):
    files = _files(example)
    scripts = {
        p: f for p, f in files.items() if p.startswith("files/switches/") and p.endswith(".cfg")
    }
    assert scripts
    listed = yaml.safe_load(files["files/ztp/switches.yml"])["switches"]
    assert sorted(s["name"] for s in listed) == sorted(p.rsplit("/", 1)[1][:-4] for p in scripts)
    for path, script in scripts.items():
        name = path.rsplit("/", 1)[1]
        startup = files[f"files/ztp/configs/{name}"].decode()
        assert not INTERACTIVE.search(startup), name
        assert startup.rstrip().endswith("\n#\nreturn")
        body = [
            line
            for line in script.decode().splitlines()
            if not INTERACTIVE.fullmatch(line) and line not in ("return",)
        ]
        assert [line for line in body if line != "#"] == [
            line
            for line in startup.splitlines()
            if line not in ("#", "return") and not line.startswith("!")
        ], name


def test_routed_ports_do_not_trust_dscp_and_host_ports_do(example):
    seen_access = False
    for path, data in _files(example).items():
        if not (path.startswith("files/ztp/configs/") and path.endswith(".cfg")):
            continue
        for head, lines in _sections(data.decode()).items():
            if not head.startswith("interface "):
                continue
            if "undo portswitch" in lines:
                assert "trust dscp" not in lines, (path, head)
            if "port link-type access" in lines and "dcb pfc enable mode manual" in lines:
                assert "trust dscp" in lines, (path, head)
                seen_access = True
    assert seen_access or not any("par-leaf" in f.path for f in example.files)


def test_rolling_batches_keep_mlag_peers_apart_and_spines_one_at_a_time(example):
    files = _files(example)
    plan = yaml.safe_load(files["files/switch-rollout.yml"])
    order, serial = plan["switch_rollout_order"], plan["switch_rollout_serial"]
    assert sum(serial) == len(order) == len(set(order))
    batches, at = [], 0
    for size in serial:
        batches.append(set(order[at : at + size]))
        at += size
    pairs = {
        (link.a_device, link.b_device) for link in example.cluster.links if link.kind == "peer-link"
    }
    for a, b in pairs:
        assert not any({a, b} <= batch for batch in batches), (a, b)
    role = {d.name: (d.plane, d.role) for d in example.cluster.devices}
    layer_size = {}
    for name in order:
        layer_size[role[name]] = layer_size.get(role[name], 0) + 1
    for batch in batches:
        layers = {role[n] for n in batch}
        assert len(layers) == 1
        (layer,) = layers
        if layer in {("parameter", "spine"), ("parameter", "core")}:
            assert len(batch) == 1
        assert len(batch) <= max(1, layer_size[layer] // 4)


# ---------------------------------------------------------------------------------------------
# The ZTP server role, run for real


def _identities(names: list[str]) -> dict:
    """Stand-in identities (a site supplies real ones): ESNs in Huawei's 20-character form for
    even switches, MACs for odd ones."""
    out = {}
    for i, name in enumerate(sorted(names)):
        out[name] = {"esn": f"2102311LDL{i:010d}"} if i % 2 == 0 else {"mac": f"00e0-fc00-{i:04x}"}
    return out


@pytest.fixture(scope="module")
def ztp(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ztp")
    names = [
        s["name"]
        for s in yaml.safe_load((INVENTORY / "files/ztp/switches.yml").read_text())["switches"]
    ]
    overrides = {
        "all": {
            "vars": {
                **VAULT,
                "ansible_connection": "local",
                "ansible_python_interpreter": sys.executable,
                "wanka_root": str(tmp / "root"),
                "ztp_server_manage_service": False,
                "ztp_server_identities": _identities(names),
            }
        }
    }
    runner = Runner(tmp, INVENTORY / "hosts.yml", overrides)
    return {
        "runner": runner,
        "root": tmp / "root",
        "names": names,
        "first": runner.play("playbooks/ztp.yml"),
    }


@pytest.mark.slow
def test_ztp_server_stages_rendered_configs_and_an_intermediate_file_that_lists_each(ztp):
    first = ztp["first"]
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-2000:]
    root = ztp["root"] / "srv/ztp"
    staged = sorted((root / "configs").glob("*.cfg"))
    assert [p.stem for p in staged] == sorted(ztp["names"])
    for p in staged:
        text = p.read_text()
        assert "{{" not in text and "{%" not in text, p.name
        assert not INTERACTIVE.search(text), p.name
        assert f"irreversible-cipher {VAULT['vault_switch_admin_password']}" in text
        assert f"cipher {VAULT['vault_snmp_priv_key']}" in text
    # nothing secret reached the output folder
    assert not any(
        v in p.read_text()
        for p in (INVENTORY / "files/ztp/configs").glob("*.cfg")
        for v in VAULT.values()
    )

    # VRP8 ZTP guide, INI intermediate file: #sha256sum over everything after the first line
    header, rest = (root / "ztp.ini").read_bytes().split(b"\n", 1)
    assert header == f'#sha256sum="{hashlib.sha256(rest).hexdigest()}"'.encode()
    ini = rest.decode()
    assert ini.startswith(";BEGIN ROUTER\n[GLOBAL CONFIG]\n") and ini.endswith(";END ROUTER\n")
    fileserver = re.search(r"^FILESERVER=(\S+)$", ini, re.M).group(1)
    assert fileserver.endswith("/configs")
    sections = re.findall(r"\[DEVICE(\d+) DESCRIPTION\]\n(.*?)(?=\n\[|\n;END)", ini, re.S)
    assert [int(n) for n, _ in sections] == list(range(1, len(staged) + 1))
    sums = dict(
        reversed(line.split("  ", 1)) for line in (root / "SHA256SUMS").read_text().splitlines()
    )
    identities = _identities(ztp["names"])
    listed = set()
    for _, body in sections:
        fields = dict(line.split("=", 1) for line in body.splitlines() if "=" in line)
        config = fields["SYSTEM-CONFIG"]
        name = config.removesuffix(".cfg")
        listed.add(name)
        assert fields["DEVICETYPE"] == "DEFAULT"
        assert fields["ESN"] == identities[name].get("esn", "DEFAULT")
        assert fields["MAC"] == identities[name].get("mac", "DEFAULT")
        assert (root / "configs" / config).is_file()
        assert (
            sums[f"configs/{config}"]
            == hashlib.sha256((root / "configs" / config).read_bytes()).hexdigest()
        )
    assert listed == set(ztp["names"])

    dhcp = (ztp["root"] / "etc/dnsmasq.d/wanka-ztp.conf").read_text()
    assert 'dhcp-option=67,"ztp.ini"' in dhcp and f"tftp-root={root}" in dhcp
    switches = yaml.safe_load((INVENTORY / "files/ztp/switches.yml").read_text())["switches"]
    for s in switches:
        if s["gateway"]:
            ident = identities[s["name"]]
            key = ident.get("mac") or f"id:{ident['esn']}"
            assert f"dhcp-host={key},{s['address']},{s['name']}" in dhcp

    second = ztp["runner"].play("playbooks/ztp.yml")
    assert second.returncode == 0
    assert {h: c for h, (_, c, _) in recap(second).items() if c} == {}

    # the CE V300R023C00 guide's form, for a release that reads that one
    third = ztp["runner"].play(
        "playbooks/ztp.yml", "--tags", "ztp_ini", "-e", "ztp_server_ini_format=ce-v300"
    )
    assert third.returncode == 0, third.stdout[-3000:]
    ini = (root / "ztp.ini").read_text()
    assert ini.startswith(";BEGIN ZTP CONFIG\n[GLOBAL CONFIG]\n") and ini.endswith(
        ";END ZTP CONFIG\n"
    )
    names = re.findall(r"^\*FILENAME_1=configs/(.+)\.cfg$", ini, re.M)
    assert int(re.search(r"\*DEVICE_TYPE_NUM=(\d+)", ini).group(1)) == len(names)
    assert sorted(names) == sorted(ztp["names"])


@pytest.mark.slow
def test_ztp_server_names_the_switches_whose_identity_is_missing(ztp):
    ids = _identities(ztp["names"])
    gone = sorted(ids)[:2]
    res = ztp["runner"].play(
        "playbooks/ztp.yml",
        "-e",
        yaml.safe_dump(
            {"ztp_server_identities": {k: v for k, v in ids.items() if k not in gone}},
            default_flow_style=True,
        ).strip(),
    )
    assert res.returncode != 0
    assert f"none is known for 2 switch(es): {', '.join(gone)}" in " ".join(res.stdout.split())
