"""Day 0 in the twin: the controller runs the real dnsmasq and sshd (SFTP) from what the real
ztp_server role writes (ansible-playbook playbooks/ztp.yml, into the twin's state folder, with
stand-in Vault values and made-up switch identities: the site's are not in the output), every
out-of-band gateway that the rendered config makes a DHCP relay runs dnsmasq as that relay
(`--dhcp-relay` from the Vlanif address, as CE sends from the relay interface's primary
address), and for each relay one factory-default switch (generator/twin/ztp_client.py, a test
double written from Huawei's ZTP documentation) on its MEth cable must end with exactly the
staged startup configuration: DHCP through the relay and the firewall, SFTP back through it.
"""

from __future__ import annotations

import grp
import hashlib
import json
import os
import pwd
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from importlib.metadata import version
from itertools import zip_longest
from pathlib import Path

from generator.twin import cache, checks, explain, hosts, probe
from generator.twin.instance import BASE, STATE, ZTP_USER, claim
from generator.twin.outcome import Failure
from generator.twin.plan import Plan, Refused, ns_name
from generator.twin.run import background, finish, reapply, sh
from generator.twin.vrp import Device, Interface
from generator.verify import vrp
from generator.verify.safe import file_text, rel

USER = ZTP_USER  # the SFTP account the twin makes (per instance; twin down removes it)
VAULT = {  # stand-ins for the site's Vault: the twin never sees real secrets
    "vault_switch_admin_password": "twin-admin-pw",
    "vault_snmp_auth_key": "twin-snmp-auth-key",
    "vault_snmp_priv_key": "twin-snmp-priv-key",
    "vault_border_admin_password": "twin-border-pw",
    "vault_ztp_sftp_password": "twin-ztp-pw",
    "vault_dfs_password": "twin-dfs-pw",
}
CLIENT = Path(__file__).with_name("ztp_client.py")
# The role's output per input, as the host keyfiles' (generator.twin.hosts.CACHE): a run whose
# inventory copy, stand-in values, playbook, role, plugins, ansible.cfg, Ansible and earlier output
# in the state folder are those of a cached run takes that run's files instead of running the
# role again (pod-128: ~30 s of CPU). The stand-in values name this instance's state folder and
# SFTP account, so an entry serves its own instance only (a later twin of the same folder).
CACHE = BASE / "cache" / "ztp"
CACHED = 4  # entries kept, the most recently used
OUTPUT = ("srv", "etc")  # what the role writes under wanka_root (ztp_server_root, ztp_server_etc)
OWNERS = "owners.json"  # in an entry: the files the SFTP account owns or whose group it is


@dataclass
class Rendered:
    """The role started by `render`: its process (none when `key`'s output was cached) and the
    controller's address."""

    key: str
    address: str
    process: subprocess.Popen | None = None


def _key(base: Path, inventory: Path, collection: Path, command: list[str]) -> str:
    """SHA-256 of every byte the role's run reads: the command, the checked inventory copy, the
    stand-in values (base/run/overrides.yml), the playbook, the role, the collection's plugins,
    ansible.cfg, this Python and Ansible, and what an earlier run left in the state folder."""
    digest = hashlib.sha256("\0".join(command).encode())
    digest.update(f"\0{sys.executable}\0ansible-core {version('ansible-core')}\0".encode())
    digest.update((base / "run" / "overrides.yml").read_bytes())
    for tree in (inventory, collection / "roles" / "ztp_server", collection / "plugins",
                 *(base / name for name in OUTPUT)):  # fmt: skip
        cache.digest_tree(digest, tree)
    for path in (collection / "playbooks" / "ztp.yml", collection / "ansible.cfg"):
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _sftp_ids() -> tuple[int, int]:
    return pwd.getpwnam(USER).pw_uid, grp.getgrnam(USER).gr_gid


def _restore(base: Path, key: str) -> bool:
    """The cached output of `key` into the state folder, the SFTP account's files given to this
    run's account (its ids change with each twin); False when not cached."""
    entry = CACHE / key
    try:
        for name in OUTPUT:
            shutil.rmtree(base / name, ignore_errors=True)
            if (entry / name).is_dir():
                shutil.copytree(entry / name, base / name, symlinks=True)
        owners = json.loads((entry / OWNERS).read_text(encoding="utf-8"))
        os.utime(entry)
    except (OSError, ValueError):  # not cached (or pruned meanwhile by another instance)
        for name in OUTPUT:
            shutil.rmtree(base / name, ignore_errors=True)
        return False
    uid, gid = _sftp_ids()
    for where, (user, group) in owners.items():
        if Path(where).is_absolute() or ".." in Path(where).parts:
            raise Refused(f"{entry / OWNERS}: '{where}' is not a path inside the entry")
        os.chown(base / where, uid if user else -1, gid if group else -1, follow_symlinks=False)
    return True


def _keep(base: Path, key: str) -> None:
    """The role's output in the state folder into the cache, with which files the SFTP account
    owns or has as group."""
    uid, gid = _sftp_ids()

    def fill(entry: Path) -> None:
        entry.mkdir()
        owners = {}
        for name in OUTPUT:
            if (base / name).is_dir():
                shutil.copytree(base / name, entry / name, symlinks=True)
                for path in sorted([base / name, *(base / name).rglob("*")]):
                    st = path.lstat()
                    if st.st_uid == uid or st.st_gid == gid:
                        owners[str(path.relative_to(base))] = (st.st_uid == uid, st.st_gid == gid)
        (entry / OWNERS).write_text(json.dumps(owners, sort_keys=True), encoding="utf-8")

    cache.keep(CACHE, key, fill, CACHED)


def render(p: Plan, collection: Path) -> Rendered | None:
    """Start the collection's ztp_server role (into the state folder, in the background:
    generator.twin.run.background), or take an identical run's output from the cache; None:
    no controller."""
    controllers = sorted(p.groups.get("controller", ()))
    if not controllers:
        return None
    controller = controllers[0]
    claim()
    base = STATE / "ztp"
    base.mkdir(parents=True, exist_ok=True)
    os.chmod(STATE, 0o755)
    address = str(p.hostvars[controller]["ansible_host"])
    run = base / "run"
    run.mkdir(parents=True, exist_ok=True)
    inventory = hosts.inventory(p.folder, base)  # checked copy: what the role reads
    switches = _ztp_built(p)
    if sh("id", USER, check=False) == "":
        sh("useradd", "--system", "--user-group", "--no-create-home", "--home-dir", "/nonexistent",
           "--shell", "/usr/sbin/nologin", USER)  # fmt: skip
    subprocess.run(
        ["chpasswd"], input=f"{USER}:{VAULT['vault_ztp_sftp_password']}\n", text=True, check=True
    )
    ids = {name: {"esn": f"TWIN{i:016d}"} for i, name in enumerate(switches, 1)}
    overrides = {"all": {"vars": {
        **VAULT, "ansible_connection": "local", "ansible_python_interpreter": sys.executable,
        "wanka_root": str(base), "ztp_server_manage_service": False, "ztp_server_identities": ids,
        "ztp_server_address": address, "ztp_server_interface": "mgmt0",
        "ztp_server_sftp_user": USER, "ztp_server_file_group": USER,
    }}}  # fmt: skip
    (run / "overrides.yml").write_text(json.dumps(overrides))
    env = dict(os.environ, ANSIBLE_CONFIG=str(collection / "ansible.cfg"),
               ANSIBLE_ROLES_PATH=str(collection / "roles"), ANSIBLE_NOCOLOR="1")  # fmt: skip
    command = [
        str(Path(sys.executable).with_name("ansible-playbook")), "-i", str(inventory / "hosts.yml"),
        "-i", str(run / "overrides.yml"), "-e", f"ztp_server_host={controller}", *hosts.forced(),
        str(collection / "playbooks" / "ztp.yml"),
    ]  # fmt: skip
    key = _key(base, inventory, collection, command)
    if _restore(base, key):
        return Rendered(key, address)
    return Rendered(key, address, background("ztp_server", command, env))


def _start(base: Path, controller: str, address: str) -> None:
    """dnsmasq and sshd in the controller's namespace, from what the role wrote into `base`
    (each line checked first: `served`)."""
    run = base / "run"
    ns = ns_name(controller)
    etc = base / "etc"
    served(etc / "dnsmasq.d" / "wanka-ztp.conf", DNSMASQ)
    for conf in sorted((etc / "ssh" / "sshd_config.d").glob("*.conf")):
        served(conf, SSHD)
    dnsmasq = shutil.which("dnsmasq") or "dnsmasq"
    sh("ip", "netns", "exec", ns, dnsmasq, f"--conf-file={etc}/dnsmasq.d/wanka-ztp.conf",
       f"--dhcp-leasefile={run}/leases", f"--pid-file={run}/dnsmasq.pid",
       f"--log-facility={run}/dnsmasq.log", "--log-dhcp")  # fmt: skip
    sh("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(run / "host_key"))
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    (run / "sshd_config").write_text(
        f"Include {etc}/ssh/sshd_config.d/*.conf\nListenAddress {address}\nPort 22\n"
        f"HostKey {run}/host_key\nPidFile {run}/sshd.pid\nUsePAM no\nPasswordAuthentication no\n"
        "KbdInteractiveAuthentication no\nPermitRootLogin no\nSubsystem sftp internal-sftp\n"
    )
    sshd = ["/usr/sbin/sshd", "-f", str(run / "sshd_config"), "-E", str(run / "sshd.log")]
    sh("ip", "netns", "exec", ns, *sshd)


# What the ztp_server role writes (roles/ztp_server/templates/dnsmasq.conf.j2, sshd-ztp.conf.j2):
# each line of the files the twin hands dnsmasq and sshd (as root) must be one of these, with
# values of these forms: a value that carried a line break or an option of its own out of its
# line (dhcp-script, conf-file, AuthorizedKeysCommand, ...) is refused before a daemon starts.
_V4 = r"\d{1,3}(?:\.\d{1,3}){3}"
_NAME = r"[a-z0-9][a-z0-9.-]{0,62}"
DNSMASQ = [re.compile(x) for x in (
    r"#.*", r"\s*", "port=0", r"interface=[A-Za-z0-9_.-]{1,15}", "bind-dynamic",
    r'dhcp-option-force=66,"sftp://[A-Za-z0-9_.-]+:[^\s"/#@:,\'\\]+@' + _V4 + r'(?::\d{1,5})?"',
    r'dhcp-option-force=67,"/[A-Za-z0-9_.*-]{1,64}"',
    rf"dhcp-range=set:ztp\d+,{_V4},static,{_V4},\d+[smhd]?",
    rf"dhcp-option=tag:ztp\d+,option:router,{_V4}",
    rf"dhcp-host=(?:[0-9a-f]{{2}}:){{5}}[0-9a-f]{{2}},{_V4},{_NAME}",
    r'dhcp-match=set:esn\d+,61,"[A-Za-z0-9]{1,32}"',
    rf"dhcp-host=tag:esn\d+,\*:\*:\*:\*:\*:\*,{_V4},{_NAME}",
)]  # fmt: skip
SSHD = [re.compile(x) for x in (
    r"\s*#.*", r"\s*", r"Match User [a-z0-9_-]{1,32}", r"\s*ChrootDirectory /[A-Za-z0-9_./-]+",
    r"\s*ForceCommand internal-sftp -R", r"\s*PasswordAuthentication yes",
    r"\s*(?:AllowTcpForwarding|AllowAgentForwarding|AllowStreamLocalForwarding|PermitTunnel|"
    r"X11Forwarding|PermitTTY) no",
)]  # fmt: skip


def served(path: Path, forms: list[re.Pattern]) -> None:
    """Refused at the first line of a file the twin hands a daemon that is not of `forms`."""
    for n, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if not any(form.fullmatch(line) for form in forms):
            raise Refused(f"{path.name}:{n} (roles/ztp_server): '{line[:80]}' is not a line "
                          "the role writes; not handed to the daemon")  # fmt: skip


FILE_PORTS = {"tftp": ("udp", 69), "sftp": ("tcp", 22), "ftp": ("tcp", 21), "http": ("tcp", 80),
              "https": ("tcp", 443)}  # fmt: skip


def _ztp_built(p: Plan) -> list[str]:
    """The switches ZTP builds, in files/ztp/switches.yml order (the ZTP path, built from the
    console, is not in it)."""
    return hosts.ztp_switches(p.folder)


def _flat(lines: list[vrp.Line], depth: int = 0):
    for line in lines:
        yield depth, line
        yield from _flat(line.children, depth + 1)


def staged_differences(folder: Path, switches: list[str]) -> list[Failure]:
    """Where a switch's staged startup configuration (files/ztp/configs, what ZTP boots it
    with) does not read as the same lines, at the same depths, as its CLI script
    (files/switches, what the twin runs): its framing (system-view, commit, return, comments)
    aside, each line as the reader reads it. One failure per switch, at the first difference."""
    out = []
    for name in switches:
        script = folder / "files" / "switches" / f"{name}.cfg"
        staged = folder / "files" / "ztp" / "configs" / f"{name}.cfg"
        kind, want = vrp.read(folder, script)
        got = vrp.tree(file_text(folder, staged), kind, rel(folder, staged))
        for g, w in zip_longest(_flat(got), _flat(want)):
            if g is None or w is None or (g[0], g[1].text) != (w[0], w[1].text):
                there = rel(folder, script)
                theirs = f"{there}:{w[1].number} has {w[1].text!r}" if w else f"{there} has ended"
                out.append(
                    Failure(
                        rel(folder, staged),
                        g[1].number if g else 0,
                        f"{g[1].text!r} where {theirs}" if g else f"ends where {theirs}",
                        f"ZTP would boot {name} with another configuration",
                    )
                )
                break
    return out


def _meth(p: Plan, only: set[str] | None = None) -> dict[str, tuple[str, str]]:
    """Out-of-band gateway -> the MEth end (namespace, interface) of the first switch cabled to it
    (of `only`, when given: the switches ZTP builds, one of which stands in for a factory-default
    switch behind that relay)."""
    out: dict[str, tuple[str, str]] = {}
    for link in p.links:
        for near, far in ((link.a, link.b), (link.b, link.a)):
            switch = p.namespaces[near[0]].device
            if (
                near[1].startswith("meth")
                and switch in p.devices
                and (only is None or switch in only)
            ):
                out.setdefault(p.namespaces[far[0]].device, near)
    return out


def _file_service(p: Plan, base: Path, controller: str, address: str) -> checks.Outcome:
    """The file server URL the role wrote (the intermediate file's FILESERVER or *FILESERVER,
    ztp*.ini in the root, per the CE option 67 name form ztp***.ini), probed with a
    real packet from a switch's management address behind each out-of-band gateway to the
    controller on that protocol's port, before any server holds it: what the routes and the
    firewall do to the switches' file fetch."""
    out = checks.Outcome("ZTP: the switches' file fetch passes the routes and the firewall")
    written = sorted((base / "srv" / "ztp").glob("ztp*.ini"))
    ini = written[0].read_text(encoding="utf-8") if written else ""
    found = re.search(r"^\*?FILESERVER=(\w+)://", ini, re.M)
    if not found or found.group(1) not in FILE_PORTS:
        out.failures.append(
            Failure(
                subject="ztp*.ini (ztp_server role)",
                message="no FILESERVER URL of a known protocol",
            )
        )
        return out
    scheme = found.group(1)
    proto, port = FILE_PORTS[scheme]
    probes, names = [], []
    for gw, (ns, ifn) in sorted(_meth(p, set(_ztp_built(p))).items()):  # a switch that fetches
        src = next((str(ip) for ip, end in p.addresses.items() if end == (ns, ifn)), "")
        if src:
            probes.append(
                probe.Probe(ns, src, ns_name(controller), address, proto=proto, port=port)
            )
            names.append((gw, p.namespaces[ns].device))
    for pr, result, (gw, switch) in zip(probes, probe.run(probes), names, strict=True):
        out.total += 1
        if result.ok:
            out.proved += 1
        else:
            fetches = (
                f"{switch} fetches its day-0 files by {scheme.upper()} ({scheme}://{address}, "
                f"{proto}/{port}, as ztp_server's intermediate file says) from {pr.src} behind {gw}"
            )
            why = f"{result.error}; {explain.diagnose(p, pr, result)}"
            out.failures.append(Failure(p.devices[switch].path, subject=fetches, message=why))
    return out


def drill(p: Plan, collection: Path, rendered=None) -> list[checks.Outcome]:
    """The file service check, then one factory-default switch behind each relay (`rendered`:
    what `render` returned, when it was started earlier)."""
    out = checks.Outcome("ZTP: factory-default switches get their staged config through the relay")
    rendered = rendered or render(p, collection)
    if rendered is None:
        out.note = "no controller in the inventory"
        return [out]
    staged = _ztp_built(p)
    differ = staged_differences(p.folder, staged)
    out.failures += differ
    out.total += len(staged)
    out.proved += len(staged) - len(differ)
    controllers = sorted(p.groups.get("controller", ()))
    base = STATE / "ztp"
    address = rendered.address
    if rendered.process is not None:
        code, output = finish("ztp_server", rendered.process)
        if code != 0:
            raise RuntimeError("ztp_server role failed:\n" + output[-3000:])
        _keep(base, rendered.key)
    files = _file_service(p, base, controllers[0], address)
    try:
        _start(base, controllers[0], address)
        serving = True
    except RuntimeError as err:  # what the role configured does not run: that is the finding
        role = "the ztp_server role's file and DHCP service does not start"
        out.failures.append(Failure(subject=role, message=str(err)))
        serving = False
    relays = list(checks.relays(p))
    for dev, iface, relay, servers in relays:
        ns = ns_name(dev.name, iface.vpn)
        sh("ip", "netns", "exec", ns, shutil.which("dnsmasq") or "dnsmasq", "--port=0",
           *(f"--dhcp-relay={relay},{s}" for s in servers),
           f"--pid-file={base}/relay-{dev.name}.pid",
           f"--log-facility={base}/relay-{dev.name}.log", "--log-dhcp")  # fmt: skip
    gateways = {dev.name: (dev, iface) for dev, iface, _, _ in relays}
    meth, built = _meth(p), _meth(p, set(_ztp_built(p)))
    for gw, (dev, iface) in sorted(gateways.items()):
        if not serving:
            continue
        if gw in built:  # a switch ZTP builds, not one of the console-built ZTP path
            _one(p=p, out=out, switch=p.namespaces[built[gw][0]].device, end=built[gw], base=base)
        elif gw not in meth:
            alone = f"{dev.name} relays DHCP but no switch's MEth is cabled to it"
            out.failures.append(Failure(dev.path, iface.relay_line, message=alone))
    no_relay = sorted(set(built) - set(gateways))
    for gw in no_relay:
        out.total += 1
        dev = p.devices.get(gw)
        why = (
            f"{gw} is the out-of-band gateway of switch management ports and relays no DHCP "
            "(`dhcp select relay`): a factory-default switch behind it never gets a lease"
        )
        iface = dev and _serving(dev, p.devices.get(p.namespaces[built[gw][0]].device))
        out.failures.append(
            Failure(dev.path, iface.line if iface else 0, iface.name if iface else "", why)
            if dev
            else Failure(subject=gw, message=why)
        )
    return [files, out]


def _serving(gateway: Device, switch: Device | None) -> Interface | None:
    """The gateway's interface in the subnet of the switch's management address (the one whose
    view lacks `dhcp select relay`), None when none is."""
    meth = [a for i in switch.interfaces.values() if i.name.startswith("MEth")
            for a in i.addresses] if switch else []  # fmt: skip
    return next(
        (i for i in gateway.interfaces.values()
         if any(m.ip in a.network for a in i.addresses for m in meth)),
        None,
    )  # fmt: skip


def _one(p: Plan, out: checks.Outcome, switch: str, end: tuple[str, str], base: Path) -> None:
    """One factory-default switch on the MEth cable `end` (moved into a fresh namespace)."""
    out.total += 1
    home, ifn = end
    fresh = ns_name(f"ztp-{switch}")
    sh("ip", "netns", "add", fresh)
    try:
        sh("ip", "-n", home, "link", "set", ifn, "netns", fresh)
        index = _ztp_built(p).index(switch) + 1
        mac = json.loads(sh("ip", "-n", fresh, "-j", "link", "show", ifn))[0]["address"]
        got = subprocess.run(
            ["ip", "netns", "exec", fresh, sys.executable, str(CLIENT), "--interface", ifn,
             "--esn", f"TWIN{index:016d}", "--mac", mac, "--timeout", "20",
             "--out", str(base / f"got-{switch}.cfg")],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        staged = base / "srv" / "ztp" / f"{switch}.cfg"
        if got.returncode != 0:
            said = got.stderr.strip()[-400:]
            out.failures.append(Failure("files/ztp/switches.yml", 0, switch, said))
        elif (base / f"got-{switch}.cfg").read_bytes() != staged.read_bytes():
            differs = f"{switch} fetched a config that differs from the staged one"
            out.failures.append(Failure(f"files/ztp/configs/{switch}.cfg", message=differs))
        else:
            out.proved += 1
    finally:
        sh("ip", "-n", fresh, "link", "set", ifn, "netns", home, check=False)
        sh("ip", "netns", "del", fresh, check=False)
        reapply(p.namespaces[home], [ifn])
