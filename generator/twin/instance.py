"""One run, one instance: the name every namespace, process, state folder and lock of a run
carries.

Two runs on one machine (two CI jobs, a test and a user) never touch each other's. The id is
WANKA_TWIN_INSTANCE, else derived from where the run is started (the working folder) and the
CI job it runs in, so that `twin up` and `twin down` of one checkout meet, and two jobs (each
in its own workspace, with its own job id) never do.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import os
import re
import subprocess
from pathlib import Path

from generator.twin.intake import Refused, checked

INSTANCE_PATTERN = re.compile(r"[a-z0-9]{1,12}")  # no "-": it ends the instance in a name
CI_JOB = ("GITHUB_RUN_ID", "GITHUB_RUN_ATTEMPT", "GITHUB_JOB", "RUNNER_NAME", "CI_JOB_ID",
          "BUILD_TAG", "EXECUTOR_NUMBER", "BUILDKITE_JOB_ID", "CIRCLE_WORKFLOW_JOB_ID")  # fmt: skip


def instance_id(env=os.environ) -> str:
    """This run's instance: WANKA_TWIN_INSTANCE as given (checked by `instance_error`), else
    8 hex digits of the working folder and the CI job variables that are set."""
    if given := env.get("WANKA_TWIN_INSTANCE"):
        return given
    try:
        here = os.getcwd()
    except OSError:
        here = "?"
    seed = "\0".join([here, *(f"{k}={env[k]}" for k in CI_JOB if k in env)])
    return hashlib.sha256(seed.encode("utf-8", "surrogateescape")).hexdigest()[:8]


INSTANCE = instance_id()
PREFIX = f"wt-{INSTANCE}-"  # every namespace of this instance starts with it


def instance_error() -> str:
    """Why INSTANCE cannot name a twin ("" when it can)."""
    if INSTANCE_PATTERN.fullmatch(INSTANCE):
        return ""
    return (f"WANKA_TWIN_INSTANCE='{INSTANCE}': an instance id is 1 to 12 lower-case letters "
            "and digits")  # fmt: skip


def ns_name(device: str, part: str = "") -> str:
    return f"{PREFIX}{device}" + (f".{part.strip('_')}" if part else "")


def checked_ns_name(device: str, part: str = "") -> str:
    """ns_name of names given by a user (`twin exec`): Refused unless they are names."""
    checked("device", device, "device")
    if part:
        checked("VPN instance", part, "--part")
    return ns_name(device, part)


BASE = Path(os.environ.get("WANKA_TWIN_STATE", "/run/wanka-twin"))
STATE = BASE / INSTANCE
LOCK = BASE / f"{INSTANCE}.lock"
ZTP_USER = f"wanka-twin-ztp-{INSTANCE}"  # the SFTP account of the ZTP drill (useradd: 32 at most)
# FRR's vty and zserv sockets live under STATE/frr/<device>/ (unix(7): sun_path is 108 bytes)
MAX_STATE_PATH = 107 - len("/frr//zserv.api") - 63


class InUse(Refused):
    """Another run holds this instance."""


_held: int | None = None  # the lock's descriptor, while this process holds the instance
_made = False  # this process made the instance's state folder (a refused run takes it down)


def claim() -> None:
    """Hold this instance for the rest of this process (idempotent): InUse when another
    process holds it. The lock file may be removed by a run that ended meanwhile: a lock taken
    on a removed file is dropped and taken again on the new one."""
    global _held, _made
    if _held is not None:
        return
    if error := instance_error():
        raise Refused(error)
    if len(str(STATE)) > MAX_STATE_PATH:
        raise Refused(f"WANKA_TWIN_STATE: {STATE} is longer than FRR's socket paths allow "
                      f"({MAX_STATE_PATH} characters with the instance)")  # fmt: skip
    BASE.mkdir(mode=0o755, parents=True, exist_ok=True)
    while True:
        fd = os.open(LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode("utf-8", "replace").strip()
            os.close(fd)
            raise InUse(
                f"twin instance {INSTANCE} is in use by {holder or 'another process'}: wait "
                "for it to end, or run another instance (WANKA_TWIN_INSTANCE=<1-12 lower-case "
                "letters and digits>)"
            ) from None
        try:
            same = os.stat(LOCK, follow_symlinks=False).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            same = False
        if same:
            break
        os.close(fd)
    os.ftruncate(fd, 0)
    argv = Path(f"/proc/{os.getpid()}/cmdline").read_bytes().decode("utf-8", "replace")
    argv = " ".join("".join(c if c.isprintable() else " " for c in argv).split())
    os.pwrite(fd, f"process {os.getpid()} ({argv[:200]})\n".encode(), 0)
    _held = fd
    _made = not STATE.exists() and not namespaces()
    atexit.register(_exit)


def _exit() -> None:
    """At this process's end: the lock file goes too when the instance has nothing up."""
    if _held is not None and not STATE.exists() and not namespaces():
        release()


def release() -> None:
    """Give the instance up, its lock file removed (called once the instance is down)."""
    global _held, _made
    if _held is None:
        return
    with contextlib.suppress(OSError):
        LOCK.unlink()
    os.close(_held)
    _held, _made = None, False
    with contextlib.suppress(OSError):
        BASE.rmdir()  # when no other instance has anything there


def made_here() -> bool:
    """This process made the instance's state (it found nothing of it up when it claimed it):
    a refused run takes down what it made."""
    return _made


def all_namespaces() -> list[str]:
    """Every network namespace of this machine, of any instance (`ip netns list`)."""
    out = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=False)
    return [line.split()[0] for line in out.stdout.splitlines() if line.strip()]


def namespaces() -> list[str]:
    """This instance's namespaces on this machine (by prefix)."""
    return sorted(n for n in all_namespaces() if n.startswith(PREFIX))
