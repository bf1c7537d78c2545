"""Bringing a Plan up in network namespaces, and taking every trace of it down again.

Everything the twin makes is found again without its own records, so that `twin down` works
after a crash or a SIGKILL of `twin up`: the namespaces by their prefix (`ip netns list`), the
processes by the namespace they run in (`ip netns pids`), the files under one state folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from generator.twin.plan import PREFIX, Link, Netns, Plan

STATE = Path(os.environ.get("WANKA_TWIN_STATE", "/run/wanka-twin"))
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


NEIGH = Path("/proc/sys/net/ipv4/neigh/default")
NEIGH_PER_CABLE = {"gc_thresh1": 2, "gc_thresh2": 4, "gc_thresh3": 8}


def size_neighbour_table(cables: int) -> None:
    """The kernel's ARP table is one table for every namespace, with its limits (gc_thresh1..3,
    by default 128/512/1024 entries) settable only in the host's namespace: past gc_thresh3 it
    drops packets (measured: cluster-1k's 2,469 cables lost a quarter of the NPU probes). Raised
    to a few entries per cable for the twin's life; `down` puts the old values back."""
    saved = STATE / "neigh.json"
    old = {k: int((NEIGH / k).read_text()) for k in NEIGH_PER_CABLE}
    if not saved.exists():
        saved.write_text(json.dumps(old), encoding="utf-8")
    for k, per in NEIGH_PER_CABLE.items():
        (NEIGH / k).write_text(str(max(old[k], per * cables)))


def restore_neighbour_table() -> None:
    with contextlib.suppress(OSError, ValueError):
        for k, v in json.loads((STATE / "neigh.json").read_text()).items():
            (NEIGH / k).write_text(str(v))


JOBS = STATE / "jobs"


def background(name: str, command: list[str], env: dict[str, str]) -> subprocess.Popen:
    """A helper (ansible-playbook) started in its own process group while the twin comes up, its
    output into the state folder and its group recorded there, so that `down` kills it and what
    it forked even after a SIGKILL of this process."""
    JOBS.mkdir(parents=True, exist_ok=True)
    with open(JOBS / f"{name}.log", "w", encoding="utf-8") as log:
        # niced: the namespaces, FRR and the probes come first, the helper takes what is left
        job = subprocess.Popen(["nice", "-n", "10", *command], env=env, stdout=log,
                               stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                               start_new_session=True)  # fmt: skip
    (JOBS / f"{name}.pgid").write_text(str(job.pid), encoding="utf-8")
    return job


def finish(name: str, job: subprocess.Popen) -> tuple[int, str]:
    """Wait for a background helper: its exit status and output."""
    code = job.wait()
    (JOBS / f"{name}.pgid").unlink(missing_ok=True)
    return code, (JOBS / f"{name}.log").read_text(encoding="utf-8", errors="replace")


def _kill_jobs() -> set[int]:
    """Every process of the helpers still running: ansible-playbook's workers leave its process
    group (os.setsid in ansible's WorkerProcess), so each helper's tree is stopped (a stopped
    process forks no more) until no new descendant shows up, then killed."""
    killed: set[int] = set()
    for record in JOBS.glob("*.pgid") if JOBS.is_dir() else ():
        with contextlib.suppress(OSError, ValueError):
            leader = int(record.read_text())
            # still the helper this twin started (not a reused pid)
            if b"ansible" not in Path(f"/proc/{leader}/cmdline").read_bytes():
                continue
            tree: set[int] = set()
            while new := _tree(leader) - tree:
                _signal(new, signal.SIGSTOP)
                tree |= new
            _signal(tree, signal.SIGKILL)
            killed |= tree
    return killed


def _tree(root: int) -> set[int]:
    """`root` and its descendants (by the parent pid in /proc/PID/stat)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, ValueError, IndexError):
                stat = Path(f"/proc/{entry}/stat").read_text()
                ppid = int(stat.rsplit(")", 1)[1].split()[1])
                children.setdefault(ppid, []).append(int(entry))
    out, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid not in out:
            out.add(pid)
            todo += children.get(pid, [])
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
    return STATE / "frr" / ns


def namespaces() -> list[str]:
    """The twin's namespaces on this machine (by prefix), whoever made them."""
    out = sh("ip", "netns", "list", check=False)
    return sorted(line.split()[0] for line in out.splitlines() if line.startswith(PREFIX))


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


def up(p: Plan, progress=lambda message: None, clock: Clock | None = None) -> dict[str, float]:
    """Create everything; return the seconds each step took."""
    if namespaces():
        raise RuntimeError("a twin is already up on this machine: run `wanka twin down` first")
    clock = clock or Clock()
    record(p)
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


def record(p: Plan) -> None:
    """The state folder says which folder the running twin is of."""
    STATE.mkdir(parents=True, exist_ok=True)
    (STATE / "twin.json").write_text(
        json.dumps(
            {"folder": str(p.folder.resolve()), "pod": p.pod, "namespaces": sorted(p.namespaces)}
        ),
        encoding="utf-8",
    )


def add(namespaces: list[Netns], links: list[Link]) -> dict[str, list[str]]:
    """The namespaces, and a veth pair per cable; return namespace -> its new cable ends."""
    if namespaces:
        sh("ip", "-batch", "-", input="".join(f"netns add {n.name}\n" for n in namespaces))
    veths = [
        f"link add {a[1]} netns {a[0]} type veth peer name {b[1]} netns {b[0]}\n" for a, b in
        ((link.a, link.b) for link in links)
    ]  # fmt: skip
    if veths:
        sh("ip", "-batch", "-", input="".join(veths))
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
        sh("ip", "-n", ns.name, "-batch", "-", input="\n".join(batch) + "\n")
    if nft and ns.nft:
        sh("ip", "netns", "exec", ns.name, "nft", "-f", "-", input=ns.nft)


def reapply(ns: Netns, devices: list[str]) -> None:
    """After `devices` came back (a cut cable, a veth moved away): they up, the namespace's lines
    that name them, then its kernel routes, which the kernel dropped with the link."""
    again = [f"link set {d} up" for d in devices]
    again += [c for c in ns.commands if any(d in c.split() for d in devices)]
    again += [c for c in ns.commands if c.startswith("route") and c not in again]
    sh("ip", "-n", ns.name, "-force", "-batch", "-", input="\n".join(again) + "\n", check=False)


def start_frr(routers: list[Netns], width: int = 0) -> None:
    """FRR's daemons in each of `routers`, zebra with room for `width` (default: the widest
    maximum-paths of them) next hops per route."""
    width = width or max((paths(ns.frr) for ns in routers), default=1)
    for ns in routers:
        d = frr_dir(ns.name)
        d.mkdir(parents=True, exist_ok=True)
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
        return Path(state["folder"]).resolve(), state.get("pod", 0)
    except (OSError, ValueError, KeyError):
        return Path("an unknown folder"), 0


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
    """Kill every process in the twin's namespaces, delete them and the state folder; return the
    number of namespaces and processes removed."""
    jobs = _kill_jobs()
    names = namespaces()
    pids = processes(names)
    _signal(pids, signal.SIGKILL)
    _gone(pids | jobs)
    if names:
        sh("ip", "-batch", "-", input="".join(f"netns del {n}\n" for n in names), check=False)
    restore_neighbour_table()
    if (STATE / "ztp-user").exists():  # the SFTP account generator.twin.ztp made
        sh("userdel", (STATE / "ztp-user").read_text().strip(), check=False)
    shutil.rmtree(STATE, ignore_errors=True)
    return len(names), len(pids | jobs)
