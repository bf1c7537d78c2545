"""Day 0: the saved-format startup configurations, the ZTP server role (real ansible-playbook)
and the rolling order of day-2 changes."""

from __future__ import annotations

import calendar
import hashlib
import re
import sys
import time

import pytest
import yaml

from generator.cli import main
from generator.model import ip
from generator.twin.ztp_client import parse_intermediate
from tests.support.ansible_run import ROOT, VAULT, Runner, recap

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


def test_ztp_lists_the_switches_behind_a_relay_and_none_it_needs_to_route(example):
    """files/ztp/switches.yml (what roles/ztp_server stages, names in the intermediate file and leases to) holds
    the switches with a configuration that can get a relayed lease, and none of the switches that
    must route first (the ZTP path, docs/bring-up.md step 1): not a relay, not a switch without a
    gateway, not the controllers' in-band gateway."""
    files = _files(example)
    configs = {
        p.rsplit("/", 1)[1][:-4]: f.decode()
        for p, f in files.items()
        if p.startswith("files/switches/") and p.endswith(".cfg")
    }
    listed = yaml.safe_load(files["files/ztp/switches.yml"])["switches"]
    names = {s["name"] for s in listed}
    path = {name for name, _kind in example.cluster.ztp_path}
    assert names and path and names == set(configs) - path
    relays = {n for n, text in configs.items() if "dhcp relay server-ip" in text}
    assert relays and not relays & names
    relay_addresses = {
        a for n in relays for a in re.findall(r"^ ip address (\S+) ", configs[n], re.M)
    }
    for s in listed:  # each leases through a relaying gateway (dnsmasq's router option)
        assert s["gateway"] in relay_addresses, s
    # the controllers' in-band gateway is built from the console, not served by itself
    controllers = example.cluster.devices_with("management-node")
    gateways = {ip(d.mgmt.gateway) for d in controllers if d.mgmt and d.mgmt.gateway}
    owners = {n for n in configs for g in gateways if f" ip address {g} " in configs[n]}
    assert owners and not owners & names


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
    folder = tmp / "pod-128"  # today's output, not the committed example
    assert main(["generate", str(ROOT / "blueprints/pod-128.yaml"), "-o", str(folder), "-q"]) == 0
    names = [
        s["name"]
        for s in yaml.safe_load((folder / "files/ztp/switches.yml").read_text())["switches"]
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
    runner = Runner(tmp, folder / "hosts.yml", overrides)
    return {
        "folder": folder,
        "runner": runner,
        "root": tmp / "root",
        "names": names,
        "first": runner.play("playbooks/ztp.yml"),
    }


def _ini_sections(ini: str, head: str) -> list[tuple[str, dict[str, str]]]:
    found = re.findall(rf"\[{head}(\d+) DESCRIPTION\]\n(.*?)(?=\n\[|\n;END)", ini, re.S)
    return [
        (n, dict(line.split("=", 1) for line in body.splitlines() if "=" in line))
        for n, body in found
    ]


@pytest.mark.slow
def test_ztp_server_stages_rendered_configs_and_an_intermediate_file_that_lists_each(ztp):
    first = ztp["first"]
    assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-2000:]
    root = ztp["root"] / "srv/ztp"
    staged = sorted(root.glob("*.cfg"))  # in the SFTP root, beside the intermediate file
    assert [p.stem for p in staged] == sorted(ztp["names"])
    for p in staged:
        text = p.read_text()
        assert "{{" not in text and "{%" not in text, p.name
        assert not INTERACTIVE.search(text), p.name
        assert f"irreversible-cipher {VAULT['vault_switch_admin_password']}" in text
        # no SNMPv3 key in a startup file (`cipher` takes device-encrypted text): switch_deploy
        # types the keys at the switch's prompts
        assert VAULT["vault_snmp_auth_key"] not in text and VAULT["vault_snmp_priv_key"] not in text
        assert re.search(r"^snmp-agent usm-user v3 \S+ privacy-mode \S+$", text, re.M)
        assert p.stat().st_mode & 0o777 == 0o640
    # nothing secret reached the output folder
    assert not any(
        v in p.read_text()
        for p in (ztp["folder"] / "files/ztp/configs").glob("*.cfg")
        for v in VAULT.values()
    )
    sums = dict(
        reversed(line.split("  ", 1)) for line in (root / "SHA256SUMS").read_text().splitlines()
    )
    assert set(sums) == {p.name for p in staged}
    url = f"sftp://wanka-ztp:{VAULT['vault_ztp_sftp_password']}@"

    # default: the CE V300R023C00 guide's ;BEGIN ZTP CONFIG form, bare file names in the root
    ini = (root / "ztp_script.ini").read_text()  # the CE guide example's name
    assert ini.startswith(";BEGIN ZTP CONFIG\n[GLOBAL CONFIG]\n") and ini.endswith(
        ";END ZTP CONFIG\n"
    )
    fileserver = re.search(r"^\*FILESERVER=(\S+)$", ini, re.M).group(1)
    assert fileserver.startswith(url) and "/" not in fileserver.removeprefix("sftp://")
    # *TIME_SN a time, yyyymmddhhmmss as the CE example's 20200526120159 (the staging time)
    stamp = re.search(r"^\*TIME_SN=(\d{14})$", ini, re.M).group(1)
    assert abs(calendar.timegm(time.strptime(stamp, "%Y%m%d%H%M%S")) - time.time()) < 3600
    # the CE example's fields only (ztp_client.EXAMPLE); SHA256_n is opt-in
    assert len(parse_intermediate(ini)[1]) == len(staged)  # refuses a field beyond them
    sections = _ini_sections(ini, "DEVICE_TYPE_")
    assert [int(n) for n, _ in sections] == list(range(1, len(staged) + 1))
    assert int(re.search(r"\*DEVICE_TYPE_NUM=(\d+)", ini).group(1)) == len(sections)
    identities = _identities(ztp["names"])
    listed = set()
    for _, fields in sections:
        config = fields["*FILENAME_1"]
        name = config.removesuffix(".cfg")
        listed.add(name)
        assert (fields["ESN"], fields["MAC"]) == (
            identities[name].get("esn", ""),
            identities[name].get("mac", ""),
        )
        assert (fields["*TYPE_1"], fields["*EFFECTIVE_MODE_1"]) == ("CFG", "0")
        data = (root / config).read_bytes()
        assert "SHA256_1" not in fields and sums[config] == hashlib.sha256(data).hexdigest()
    assert listed == set(ztp["names"])

    # DHCP only, options 66 (SFTP URL) and 67 as the CE guide's Table 2 gives them
    dhcp = (ztp["root"] / "etc/dnsmasq.d/wanka-ztp.conf").read_text()
    assert "tftp" not in "\n".join(ln for ln in dhcp.splitlines() if not ln.startswith("#"))
    assert f'dhcp-option-force=66,"{fileserver}"' in dhcp
    # option 67: path/filename in the root, as the guide's /script/ztp_script.py
    assert 'dhcp-option-force=67,"/ztp_script.ini"' in dhcp
    switches = yaml.safe_load((ztp["folder"] / "files/ztp/switches.yml").read_text())["switches"]
    for s in switches:
        assert s["gateway"], s  # every switch ZTP builds leases through a relay
        ident = identities[s["name"]]
        if "mac" in ident:
            mac = ":".join(re.findall("..", ident["mac"].replace("-", "")))
            assert f"dhcp-host={mac},{s['address']},{s['name']}" in dhcp
        else:  # CE option 61 is "<ESN> <MAC>": matched by substring, never id:<ESN>
            tag = re.search(rf'^dhcp-match=set:(\w+),61,"{ident["esn"]}"$', dhcp, re.M).group(1)
            assert f"dhcp-host=tag:{tag},*:*:*:*:*:*,{s['address']},{s['name']}" in dhcp
            assert f"id:{ident['esn']}" not in dhcp

    # sshd: the dedicated account, SFTP only, chrooted to the root
    sshd = (ztp["root"] / "etc/ssh/sshd_config.d/wanka-ztp.conf").read_text()
    body = [ln.strip() for ln in sshd.splitlines() if ln.strip() and not ln.startswith("#")]
    assert body[0] == "Match User wanka-ztp"
    assert f"ChrootDirectory {root}" in body and "ForceCommand internal-sftp -R" in body

    second = ztp["runner"].play("playbooks/ztp.yml")
    assert second.returncode == 0
    assert {h: c for h, (_, c, _) in recap(second).items() if c} == {}
    assert f"*TIME_SN={stamp}\n" in (root / "ztp_script.ini").read_text()  # same set, same stamp

    # the VRP8 guide's form: #sha256sum over everything after the first line
    third = ztp["runner"].play(
        "playbooks/ztp.yml", "--tags", "ztp_ini", "-e", "ztp_server_ini_format=vrp8"
    )
    assert third.returncode == 0, third.stdout[-3000:]
    header, rest = (root / "ztp_script.ini").read_bytes().split(b"\n", 1)
    assert header == f'#sha256sum="{hashlib.sha256(rest).hexdigest()}"'.encode()
    ini = rest.decode()
    assert ini.startswith(";BEGIN ROUTER\n[GLOBAL CONFIG]\n") and ini.endswith(";END ROUTER\n")
    names = [f["SYSTEM-CONFIG"].removesuffix(".cfg") for _, f in _ini_sections(ini, "DEVICE")]
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


@pytest.mark.slow
def test_ztp_server_refuses_an_intermediate_file_name_the_ce_guide_does_not_allow(ztp):
    # option 67: "ztp***.ini or ztp***.py ... maximum length of 64 characters" (CE guide Table 2)
    for name in ("boot.ini", f"ztp{'x' * 58}.ini", "ztp#1.ini"):
        res = ztp["runner"].play("playbooks/ztp.yml", "-e", f"ztp_server_ini_name={name}")
        assert res.returncode != 0, name
        assert f"ztp_server_ini_name {name}" in " ".join(res.stdout.split()), res.stdout[-2000:]
