"""The day-0 path end to end with real daemons: the ztp_server role (real ansible-playbook) writes
into one folder, the real dnsmasq and sshd run from what it wrote in one network namespace, and
the CloudEngine ZTP test double (generator/twin/ztp_client.py) in another, across a veth pair,
ends with exactly the staged startup configuration; the intermediate file has the CE example's
fields only unless the SHA256_n opt-in is asked for, and then a wrong sha256 is refused."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from generator.cli import main
from tests.support.ansible_run import ROOT, VAULT, Runner

CLIENT = ROOT / "generator" / "twin" / "ztp_client.py"
SSHD = "/usr/sbin/sshd"
TAG = f"{os.getpid() % 100000}"
SRV, SW = f"zt-srv{TAG}", f"zt-sw{TAG}"  # namespaces
SRV_IF, SW_IF = f"zt-s{TAG}", f"zt-c{TAG}"  # the veth pair
USER = f"zt-sftp{TAG}"
SERVER_IP = "10.102.0.1"  # the pod-128 OOB gateway address, here the ZTP server itself
ESN = "2102311LDL0000000806"  # the CE guide example's DeviceA


def _missing() -> str | None:
    if os.geteuid() != 0:
        return "not root (network namespaces, a system user and sshd's chroot need root)"
    for name, path in (("dnsmasq", shutil.which("dnsmasq")), ("sshd", SSHD), ("ip", "ip")):
        if not (shutil.which(path) if path else None):
            return f"{name} is missing (Debian packages dnsmasq-base, openssh-server, iproute2)"
    try:
        import paramiko  # noqa: F401
    except ImportError:
        return "paramiko is missing: pip install -e '.[test]'"
    return None


pytestmark = [pytest.mark.slow, pytest.mark.skipif(bool(_missing()), reason=_missing() or "")]


def sh(*cmd: str, check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess:
    res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if check and res.returncode:
        raise AssertionError(f"{' '.join(cmd)}: {res.stderr.strip()}")
    return res


def _wait_for(path: Path, proc: subprocess.Popen, what: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while not (path.exists() and path.stat().st_size):
        if proc.poll() is not None:
            raise AssertionError(f"{what} exited {proc.returncode}: {proc.stderr.read()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} not ready after {timeout}s")
        time.sleep(0.05)


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)


def _identities(folder: Path) -> dict:
    names = [
        s["name"]
        for s in yaml.safe_load((folder / "files/ztp/switches.yml").read_text())["switches"]
    ]
    out = {n: {"mac": f"00e0-fc00-{i:04x}"} for i, n in enumerate(sorted(names), 1)}
    out["par-leaf-0001"] = {"esn": ESN}  # one switch known by its ESN, the others by MAC
    return out


@pytest.fixture(scope="module")
def ztp(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ztp-client")
    folder = tmp / "pod-128"  # today's output, not the committed example
    assert main(["generate", str(ROOT / "blueprints/pod-128.yaml"), "-o", str(folder), "-q"]) == 0
    # sshd's ChrootDirectory needs every path component root-owned and not group/world-writable:
    # not under /tmp (1777), so the role's folder is under /run.
    base = Path(tempfile.mkdtemp(prefix="zt-", dir="/run"))
    procs: list[subprocess.Popen] = []
    made_privsep = not Path("/run/sshd").exists()
    try:
        sh("useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
           "--shell", "/usr/sbin/nologin", USER)  # fmt: skip
        subprocess.run(["chpasswd"], input=f"{USER}:{VAULT['vault_ztp_sftp_password']}\n",
                       text=True, check=True, timeout=30)  # fmt: skip
        ids = _identities(folder)
        overrides = {
            "all": {
                "vars": {
                    **VAULT,
                    "ansible_connection": "local",
                    "ansible_python_interpreter": sys.executable,
                    "wanka_root": str(base),
                    "ztp_server_manage_service": False,
                    "ztp_server_identities": ids,
                    "ztp_server_address": SERVER_IP,
                    "ztp_server_interface": SRV_IF,
                    "ztp_server_sftp_user": USER,
                    "ztp_server_file_group": USER,
                }
            }
        }
        runner = Runner(tmp, folder / "hosts.yml", overrides)
        played = runner.play("playbooks/ztp.yml")
        assert played.returncode == 0, played.stdout[-3000:] + played.stderr[-2000:]
        root, etc = base / "srv/ztp", base / "etc"

        sh("ip", "netns", "add", SRV)
        sh("ip", "netns", "add", SW)
        sh("ip", "link", "add", SRV_IF, "netns", SRV, "type", "veth", "peer", SW_IF, "netns", SW)
        sh("ip", "-n", SRV, "addr", "add", f"{SERVER_IP}/26", "dev", SRV_IF)
        sh("ip", "-n", SRV, "link", "set", "dev", SRV_IF, "up")
        sh("ip", "-n", SRV, "link", "set", "dev", "lo", "up")

        run = base / "run"
        run.mkdir(mode=0o700)
        dnsmasq = [
            "ip", "netns", "exec", SRV, shutil.which("dnsmasq"), "--keep-in-foreground",
            f"--conf-file={etc}/dnsmasq.d/wanka-ztp.conf", f"--dhcp-leasefile={run}/leases",
            f"--pid-file={run}/dnsmasq.pid", "--log-facility=-", "--log-dhcp",
        ]  # fmt: skip
        procs.append(subprocess.Popen(dnsmasq, stderr=subprocess.PIPE, text=True))
        _wait_for(run / "dnsmasq.pid", procs[-1], "dnsmasq")

        sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(run / "host_key"))
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation dir
        (run / "sshd_config").write_text(
            f"Include {etc}/ssh/sshd_config.d/*.conf\n"  # first, as Debian's sshd_config does
            f"ListenAddress {SERVER_IP}\nPort 22\nHostKey {run}/host_key\nPidFile {run}/sshd.pid\n"
            "UsePAM no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\n"
            "PermitRootLogin no\nSubsystem sftp internal-sftp\n"
        )
        sshd = ["ip", "netns", "exec", SRV, SSHD, "-D", "-e", "-f", str(run / "sshd_config")]
        sh("ip", "netns", "exec", SRV, SSHD, "-t", "-f", str(run / "sshd_config"))
        procs.append(subprocess.Popen(sshd, stderr=subprocess.PIPE, text=True))
        _wait_for(run / "sshd.pid", procs[-1], "sshd")
        yield {"root": root, "ids": ids, "procs": procs, "folder": folder, "runner": runner}
    finally:
        for proc in procs:
            _stop(proc)
        for ns in (SW, SRV):
            sh("ip", "netns", "del", ns, check=False)
        sh("userdel", USER, check=False)
        if made_privsep:
            shutil.rmtree("/run/sshd", ignore_errors=True)
        shutil.rmtree(base, ignore_errors=True)


def _switch(name: str, ids: dict, tmp: Path, *more: str) -> subprocess.CompletedProcess:
    """The double, in the switch's namespace, as factory-default switch `name`."""
    ident = ids[name]
    mac = ident.get("mac", "00e0-fc12-3456")
    sh("ip", "-n", SW, "addr", "flush", "dev", SW_IF)
    sh("ip", "-n", SW, "link", "set", "dev", SW_IF, "address",
       ":".join(mac.replace("-", "")[i : i + 2] for i in range(0, 12, 2)))  # fmt: skip
    cmd = ["ip", "netns", "exec", SW, sys.executable, str(CLIENT), "--interface", SW_IF,
           "--esn", ident.get("esn", "2102311LDL0000009999"), "--mac", mac, "--timeout", "15",
           "--out", str(tmp / f"{name}.cfg"), *more]  # fmt: skip
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


def _address(folder: Path, name: str) -> str:
    switches = yaml.safe_load((folder / "files/ztp/switches.yml").read_text())["switches"]
    return next(s["address"] for s in switches if s["name"] == name)


@pytest.mark.parametrize("name", ["par-leaf-0001", "par-leaf-0002"])  # by ESN, by MAC
def test_a_factory_switch_ends_with_exactly_its_staged_config(ztp, name, tmp_path):
    res = _switch(name, ztp["ids"], tmp_path)
    assert res.returncode == 0, res.stderr + "\n".join(
        p.stderr.read() if p.poll() is not None else "" for p in ztp["procs"]
    )
    out = json.loads(res.stdout)
    staged = (ztp["root"] / f"{name}.cfg").read_bytes()
    assert (tmp_path / f"{name}.cfg").read_bytes() == staged
    assert out["config_name"] == f"{name}.cfg"
    assert out["config_sha256"] == hashlib.sha256(staged).hexdigest()
    lease = out["lease"]
    assert (lease["address"], lease["prefix"], lease["router"]) == (
        _address(ztp["folder"], name),
        26,
        SERVER_IP,
    )
    assert bytes.fromhex(lease["options"]["66"]).decode().startswith(f"sftp://{USER}:")
    assert "150" not in lease["options"]
    # the double configured the lease itself, inside its namespace
    shown = sh("ip", "-n", SW, "-o", "addr", "show", "dev", SW_IF).stdout
    assert f"{_address(ztp['folder'], name)}/26" in shown


def test_a_config_whose_sha256_differs_from_the_intermediate_file_is_refused(ztp, tmp_path):
    """SHA256_n is the role's opt-in, beyond the CE example: the double refuses it unless asked to
    read it (--beyond-example), and then checks the configuration against it."""
    ini = ztp["root"] / "ztp_script.ini"
    assert "SHA256_" not in ini.read_text()  # the default: the example's fields only
    stamp = [ln for ln in ini.read_text().splitlines() if ln.startswith("*TIME_SN=")]
    again = ztp["runner"].play("playbooks/ztp.yml", "--tags", "ztp_ini",
                               "-e", "ztp_server_ini_sha256=true")  # fmt: skip
    assert again.returncode == 0, again.stdout[-3000:]
    assert "\nSHA256_1=" in ini.read_text()
    assert [ln for ln in ini.read_text().splitlines() if ln.startswith("*TIME_SN=")] == stamp
    name = "par-leaf-0003"
    strict = _switch(name, ztp["ids"], tmp_path)
    assert strict.returncode == 2 and "['SHA256_n']: no field of the CE example" in strict.stderr
    staged = ztp["root"] / f"{name}.cfg"
    staged.write_bytes(staged.read_bytes() + b"#\n")  # changed after ztp.ini was written
    res = _switch(name, ztp["ids"], tmp_path, "--beyond-example")
    assert res.returncode == 2, res.stdout + res.stderr
    err = json.loads(res.stderr.strip().splitlines()[-1])
    assert err["step"] == "config-sha256" and "the intermediate file says" in err["error"]
    assert not (tmp_path / f"{name}.cfg").exists()
