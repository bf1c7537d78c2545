"""Bringing a Plan up in network namespaces, and taking every trace of it down again.

One run is one instance (generator.twin.instance): its namespaces start with `wt-<instance>-`,
its files are under BASE/<instance>, its helpers carry WANKA_TWIN_JOB=<instance> in their
environment, its SFTP account is wanka-twin-ztp-<instance>, and a run holds the instance's lock
while it works. Everything an instance makes is found again without its own records, so that
`twin down` works after a crash or a SIGKILL of `twin up`: the namespaces by their prefix (`ip
netns list`), the processes by the namespace they run in (`ip netns pids`) or by their
environment, the account by its name, the files under its state folder. `down` touches nothing
of another instance.
"""

from __future__ import annotations

import contextlib
import json
import os
import pwd
import re
import resource
import shutil
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from generator.twin.instance import (
    INSTANCE,
    PREFIX,
    STATE,
    ZTP_USER,
    InUse,
    claim,
    made_here,
    namespaces,
    release,
)
from generator.twin.intake import Refused
from generator.twin.kernel import restore_neighbour_table, size_neighbour_table
from generator.twin.plan import MAX_NAMESPACES
from generator.twin.records import Link, Netns, Plan

JOB_MARK = "WANKA_TWIN_JOB"  # in the environment of the helpers of an instance (its id)
# FRR daemons and the ZTP drill's servers one run may start; the memory they need (10.6 MiB per
# process measured on pod-128: 102 processes, 1,077 MiB) must be available before they start
MAX_PROCESSES = 4096
MIB_PER_PROCESS = 11


def abandon() -> None:
    """After a refusal or an error: take down what this process made (nothing of a twin that
    was up before it started)."""
    if made_here():
        down()


FRR = Path("/usr/lib/frr")
NEEDED = {
    "ip": "iproute2",
    "nft": "nftables",
    "dnsmasq": "dnsmasq-base",
    str(FRR / "zebra"): "frr",
}


def missing() -> list[str]:
    """What this machine lacks to run a twin (root, and the Debian packages), as words to print."""
    out = [] if os.geteuid() == 0 else ["root (namespaces, FRR and nftables need it)"]
    for tool, package in NEEDED.items():
        if not shutil.which(tool):
            out.append(f"{tool} (Debian package {package})")
    return out


def sh(*command: str, input: str | None = None, check: bool = True) -> str:
    run = subprocess.run(command, input=input, capture_output=True, text=True, check=False)
    if check and run.returncode != 0:
        raise RuntimeError(f"{' '.join(command)}: {(run.stderr or run.stdout).strip()[:2000]}")
    return run.stdout


JOBS = STATE / "jobs"


def background(name: str, command: list[str], env: dict[str, str]) -> subprocess.Popen:
    """A helper (ansible-playbook) started in its own process group while the twin comes up, its
    output into the state folder and its group recorded there, so that `down` kills it and what
    it forked even after a SIGKILL of this process."""
    claim()
    JOBS.mkdir(parents=True, exist_ok=True)
    with open(JOBS / f"{name}.log", "w", encoding="utf-8") as log:
        # niced: the namespaces, FRR and the probes come first, the helper takes what is left
        job = subprocess.Popen(["nice", "-n", "10", *command], env={**env, JOB_MARK: INSTANCE},
                               stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                               start_new_session=True)  # fmt: skip
    return job


def finish(name: str, job: subprocess.Popen) -> tuple[int, str]:
    """Wait for a background helper: its exit status and output."""
    code = job.wait()
    log = JOBS / f"{name}.log"
    return code, log.read_bytes()[-(1 << 20) :].decode("utf-8", errors="replace")


def _kill_jobs() -> set[int]:
    """Every process of this instance's helpers still running, found by the mark in their
    environment (inherited by whatever they fork; no record needed): ansible-playbook's workers
    leave its process group (os.setsid in ansible's WorkerProcess), so they are stopped (a
    stopped process forks no more) until no new one shows up, then killed. This process and its
    ancestors are never among them."""
    mark = f"{JOB_MARK}={INSTANCE}".encode() + b"\0"
    spared = _ancestors()
    stopped: set[int] = set()
    while new := {pid for pid in _marked(mark) if pid not in spared} - stopped:
        _signal(new, signal.SIGSTOP)
        stopped |= new
    _signal(stopped, signal.SIGKILL)
    _signal(stopped, signal.SIGCONT)
    return stopped


def _marked(mark: bytes) -> set[int]:
    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if b"\0" + mark in b"\0" + Path(f"/proc/{entry}/environ").read_bytes():
                    out.add(int(entry))
    return out


def _ancestors() -> set[int]:
    out, pid = set(), os.getpid()
    while pid > 1 and pid not in out:
        out.add(pid)
        try:
            pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
    return out


def _signal(pids: set[int], sig: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


def _gone(pids: set[int], seconds: float = 10.0) -> None:
    """Wait until every one of `pids` has exited (a SIGKILLed process dies when next scheduled)."""

    def alive(pid: int) -> bool:
        try:
            return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
        except (OSError, IndexError):
            return False

    _wait(lambda: not any(alive(pid) for pid in pids), seconds)


def frr_dir(ns: str) -> Path:
    return STATE / "frr" / ns.removeprefix(PREFIX)


class Clock:
    """Wall seconds per phase, in the order the phases first ran (a phase run again adds up)."""

    def __init__(self) -> None:
        self.times: dict[str, float] = {}

    @contextlib.contextmanager
    def __call__(self, phase: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.times[phase] = self.times.get(phase, 0.0) + time.perf_counter() - start


def up(
    p: Plan, progress=lambda message: None, clock: Clock | None = None, hosts: bool = True
) -> dict[str, float]:
    """Create everything (`hosts`: the hosts are configured after, from their keyfiles); return
    the seconds each step took."""
    vacant()
    bound(p)
    clock = clock or Clock()
    record(p, hosts)
    size_neighbour_table(len(p.links))
    with clock("namespaces and cables"):
        cabled = add(list(p.namespaces.values()), p.links)
    progress(f"{len(p.namespaces)} namespaces, {len(p.links)} cables")
    with clock("addresses, VLANs, routes, nftables"):
        each(lambda ns: configure(ns, ns.commands, cabled.get(ns.name, [])),
             list(p.namespaces.values()))  # fmt: skip
    progress("addresses, bridges, kernel routes and nftables in place")
    with clock("FRR started"):
        start_frr([ns for ns in p.namespaces.values() if ns.frr])
    progress(f"FRR in {sum(1 for n in p.namespaces.values() if n.frr)} namespaces")
    return clock.times


WORKERS = 8  # namespaces configured, daemons started at once (each is a few processes)


def each(work, items: list) -> None:
    """`work(item)` for every item, WORKERS at a time (threads: each waits on its subprocesses;
    the kernel configures namespaces independently); the first error is raised."""
    with ThreadPoolExecutor(WORKERS) as pool:
        for _ in pool.map(work, items):
            pass


def vacant() -> None:
    """Hold the instance, and Refused when a twin of it is already up."""
    claim()
    if namespaces():
        raise InUse(f"twin instance {INSTANCE} is already up: run `wanka twin down` first "
                    "(or another instance: WANKA_TWIN_INSTANCE)")  # fmt: skip


def bound(p: Plan, extra: int = 0) -> None:
    """Refused before anything is made when the plan needs more than one run may start: the
    namespaces, the processes (FRR's daemons, `extra` more) and the memory they take."""
    daemons = sum(len(ns.daemons) for ns in p.namespaces.values()) + extra
    need = daemons * MIB_PER_PROCESS
    try:
        meminfo = Path("/proc/meminfo").read_text()
        have = int(re.search(r"^MemAvailable:\s+(\d+) kB", meminfo, re.M).group(1)) // 1024
    except (OSError, AttributeError):
        have = need
    if len(p.namespaces) > MAX_NAMESPACES or daemons > MAX_PROCESSES or need > have:
        raise Refused(
            f"files/cabling.csv: {len(p.namespaces):,} namespaces and {daemons:,} FRR daemons "
            f"(about {need:,} MiB at {MIB_PER_PROCESS} MiB each): one run makes at most "
            f"{MAX_NAMESPACES:,} namespaces and {MAX_PROCESSES:,} processes, within the "
            f"{have:,} MiB this machine has available (a larger build: --pod N)"
        )


SAFE_BATCH = re.compile(r"[A-Za-z0-9 ./:_-]+", re.A)  # what a plan's `ip -batch` lines hold
SAFE_FRR = re.compile(r"[A-Za-z0-9 ./:_!-]*", re.A)
SAFE_BIRD = re.compile(r"[A-Za-z0-9 ./:_{}();=-]*", re.A)  # no quotes: no file name, no include
SAFE_NFT = re.compile(r'[A-Za-z0-9 ./:_;,{}"=!@-]*', re.A)


def _safe(lines: list[str], pattern: re.Pattern, what: str, ns: str) -> list[str]:
    """The lines when every one is made of what the plan writes (names and values were
    checked when the folder was read: this is the last guard before `ip`, FRR and nft)."""
    for line in lines:
        if not pattern.fullmatch(line) or line.lstrip().startswith(("include", "define")):
            raise Refused(f"{ns}: refusing to hand {what} the line '{line}'")
    return lines


def guard(text: str, what: str, ns: str) -> None:
    """`_safe` for a whole nftables ruleset, FRR or BIRD configuration."""
    pattern = {"nft": SAFE_NFT, "BIRD": SAFE_BIRD}.get(what, SAFE_FRR)
    _safe(text.splitlines(), pattern, what, ns)


def record(p: Plan, hosts: bool = True) -> None:
    """The state folder says which folder the running twin is of, and whether its hosts are
    configured (False: `twin up --no-hosts`)."""
    claim()
    STATE.mkdir(parents=True, exist_ok=True)
    (STATE / "twin.json").write_text(
        json.dumps(
            {
                "folder": str(p.folder.resolve()),
                "pod": p.pod,
                "namespaces": sorted(p.namespaces),
                "hosts": hosts,
            }
        ),
        encoding="utf-8",
    )


def add(namespaces: list[Netns], links: list[Link]) -> dict[str, list[str]]:
    """The namespaces, and a veth pair per cable; return namespace -> its new cable ends."""
    claim()
    if namespaces:
        adds = _safe([f"netns add {n.name}" for n in namespaces], SAFE_BATCH, "ip", "netns")
        sh("ip", "-batch", "-", input="".join(f"{line}\n" for line in adds))
    veths = [
        f"link add {a[1]} netns {a[0]} type veth peer name {b[1]} netns {b[0]}" for a, b in
        ((link.a, link.b) for link in links)
    ]  # fmt: skip
    # `ip -batch` keeps each `netns NAME` it opened for a line open to its end, two files per
    # veth line (measured: under a 100-file limit the 48th line between two namespaces fails
    # with 'Invalid "netns" value'; a wanka-10k shard's 13,505 lines failed so under 20,000
    # while 7,736 passed): one batch per as many lines as the limit holds
    _safe(veths, SAFE_BATCH, "ip", "links")
    per = max(1, (resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 64) // 2)
    for at in range(0, len(veths), per):
        sh("ip", "-batch", "-", input="".join(f"{v}\n" for v in veths[at : at + per]))
    ends: dict[str, list[str]] = {}
    for link in links:
        for ns, dev in (link.a, link.b):
            ends.setdefault(ns, []).append(dev)
    return ends


def configure(ns: Netns, commands: list[str], cabled: list[str], nft: bool = True) -> None:
    """Sysctls, then `commands` (the first, lo up, before the cable ends come up), nftables."""
    if ns.sysctls:
        sh("ip", "netns", "exec", ns.name, "sysctl", "-q", "-w",
           *(f"{k}={v}" for k, v in ns.sysctls.items()))  # fmt: skip
    batch = commands[:1] + [f"link set {d} up" for d in cabled] + commands[1:]
    if batch:
        _safe(batch, SAFE_BATCH, "ip", ns.name)
        sh("ip", "-n", ns.name, "-batch", "-", input="\n".join(batch) + "\n")
    if nft and ns.nft:
        _safe(ns.nft.splitlines(), SAFE_NFT, "nft", ns.name)
        sh("ip", "netns", "exec", ns.name, "nft", "-f", "-", input=ns.nft)


def reapply(ns: Netns, devices: list[str]) -> None:
    """After `devices` came back (a cut cable, a veth moved away): they up, the namespace's lines
    that name them, then its kernel routes, which the kernel dropped with the link."""
    again = [f"link set {d} up" for d in devices]
    again += [c for c in ns.commands if any(d in c.split() for d in devices)]
    again += [c for c in ns.commands if c.startswith("route") and c not in again]
    _safe(again, SAFE_BATCH, "ip", ns.name)
    sh("ip", "-n", ns.name, "-force", "-batch", "-", input="\n".join(again) + "\n", check=False)


def start_frr(routers: list[Netns], width: int = 0) -> None:
    """FRR's daemons in each of `routers`, zebra with room for `width` (default: the widest
    maximum-paths of them) next hops per route."""
    width = width or max((paths(ns.frr) for ns in routers), default=1)
    claim()
    for ns in routers:
        d = frr_dir(ns.name)
        d.mkdir(parents=True, exist_ok=True)
        _safe(ns.frr.splitlines(), SAFE_FRR, "FRR", ns.name)
        (d / "frr.conf").write_text(ns.frr, encoding="utf-8")
        shutil.chown(d, "frr", "frr")
        shutil.chown(d / "frr.conf", "frr", "frr")

    def launch(job: tuple[Netns, str]) -> None:
        ns, daemon = job
        d = frr_dir(ns.name)
        extra = ["-e", str(max(width, 2))] if daemon == "zebra" else []
        sh("ip", "netns", "exec", ns.name, str(FRR / daemon), "-d", "-P", "0",
           "--vty_socket", str(d), "-z", str(d / "zserv.api"), "-i", str(d / f"{daemon}.pid"),
           "-f", str(d / "frr.conf"), "--log", f"file:{d / daemon}.log", *extra)  # fmt: skip

    # zebra first everywhere (the others connect to it), then the others together
    each(launch, [(ns, "zebra") for ns in routers if "zebra" in ns.daemons])
    _wait(lambda: all((frr_dir(ns.name) / "zserv.api").exists() for ns in routers), 30)
    each(launch, [(ns, d) for ns in routers for d in DAEMONS[1:] if d in ns.daemons])


DAEMONS = ("zebra", "staticd", "bgpd", "ospfd")


def paths(frr: str) -> int:
    return max([int(w.split()[-1]) for w in frr.splitlines() if "maximum-paths" in w] or [1])


def _wait(done, seconds: float) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if done():
            return True
        time.sleep(0.1)
    return done()


def vtysh(ns: str, command: str) -> str:
    return sh("vtysh", "--vty_socket", str(frr_dir(ns)), "-c", command, check=False)


def up_folder() -> tuple[Path, int] | None:
    """The folder (and pod, 0 for all) of the twin that is up on this machine, None if none is."""
    if not namespaces():
        return None
    try:
        state = json.loads((STATE / "twin.json").read_text())
        return Path(state["folder"]).resolve(), state.get("pod", 0)  # vocabulary: state key
    except (OSError, ValueError, KeyError):
        return Path("an unknown folder"), 0


def hostless() -> bool:
    """The twin that is up was brought up without its hosts (`twin up --no-hosts`)."""
    try:
        return json.loads((STATE / "twin.json").read_text()).get("hosts") is False
    except (OSError, ValueError, AttributeError):
        return False


def vtysh_json(ns: str, command: str):
    text = vtysh(ns, command + " json")
    try:
        return json.loads(text)
    except ValueError:
        return {}


def processes(names: list[str]) -> set[int]:
    """The processes whose network namespace is one of `names` (what `ip netns pids` finds, for
    all of them in one pass over /proc)."""
    inodes = set()
    for name in names:
        with contextlib.suppress(OSError):
            st = os.stat(f"/run/netns/{name}")
            inodes.add((st.st_dev, st.st_ino))
    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                st = os.stat(f"/proc/{entry}/ns/net")
                if (st.st_dev, st.st_ino) in inodes:
                    out.add(int(entry))
    return out


def down() -> tuple[int, int]:
    """Kill every process of this instance (in its namespaces, or marked as its helpers),
    delete its namespaces, its SFTP account and its state folder, and give up its lock; return
    the number of namespaces and processes removed. Nothing of another instance is touched."""
    claim()
    jobs = _kill_jobs()
    names = namespaces()
    pids = processes(names)
    _signal(pids, signal.SIGKILL)
    _gone(pids | jobs)
    if names:
        sh("ip", "-batch", "-", input="".join(f"netns del {n}\n" for n in names), check=False)
    restore_neighbour_table()
    with contextlib.suppress(KeyError):
        pwd.getpwnam(ZTP_USER)  # the SFTP account generator.twin.ztp made
        sh("userdel", ZTP_USER, check=False)
    shutil.rmtree(STATE, ignore_errors=True)
    release()
    return len(names), len(pids | jobs)
