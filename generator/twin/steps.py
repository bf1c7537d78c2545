"""`wanka twin test` as a table: each step, what it needs done first, on which twin it runs. The
runner walks the table: the first step (in table order) whose needs are met runs next; a lazy
step (the hosts' keyfiles, rendered in the background) is waited for only when nothing else can
run. So what needs no host runs while the host_network role still renders, and the report lists
the outcomes in table order, whatever order they ran in."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from generator.twin import checks, drills, mlag, ztp
from generator.twin.outcome import Outcome
from generator.twin.plan import Plan
from generator.twin.run import Clock


@dataclass(slots=True)
class Run:
    """What the steps of one `twin test` share."""

    p: Plan
    folder: Path
    collection: Path
    hosts_done: Callable[[], None]  # waits for the hosts' keyfiles and configures the hosts
    pod: int = 0  # a one-pod twin (--pod), else the whole build
    drills: bool = True
    say: Callable[[str], None] = lambda message: None
    clock: Clock = field(default_factory=Clock)
    results: dict[str, Any] = field(default_factory=dict)  # step name -> what it returned


def always(r: Run) -> bool:
    return True


def whole(r: Run) -> bool:
    return not r.pod


def one_pod(r: Run) -> bool:
    return bool(r.pod)


def drilling(r: Run) -> bool:
    return r.drills


@dataclass(frozen=True, slots=True)
class Step:
    name: str
    do: Callable[[Run], Any]  # a reported step returns its outcomes
    needs: tuple[str, ...] = ()  # steps done first; one that does not run on this twin is done
    when: Callable[[Run], bool] = always  # whether it runs on this twin
    lazy: bool = False  # run only when no other step can
    reported: bool = True
    said: str = ""  # the progress message before it
    timed: str = ""  # its phase on the clock


def _check(name: str, check: Callable[[Plan], Outcome], **kw) -> Step:
    return Step(name, lambda r: [check(r.p)], said=f"checking {name}", timed=f"check: {name}", **kw)


def _sessions(r: Run) -> list[Outcome]:
    outcomes = checks.sessions(r.p)
    outcomes[0].note = f"converged {outcomes[0].seconds:.1f} s after FRR started"
    return outcomes


def _hosts(r: Run) -> None:
    r.hosts_done()


def _render(r: Run):
    """The ztp_server role, started in the background; its drill waits for it."""
    return ztp.render(r.p, r.collection)


def _drills(r: Run) -> list[Outcome]:
    """The flows that worked (no failure of the flows step names them) must work again."""
    broken = {f.subject for o in r.results.get("flows", ()) for f in o.failures}
    working = {f.name for f in checks.read_flows(r.folder)} - broken
    return drills.run(r.p, working, r.say, r.clock)


def _ztp(r: Run) -> list[Outcome]:
    return ztp.drill(r.p, r.collection, r.results.get("ztp render"))


HOSTS = "hosts"

# In report order. The hosts' keyfiles are waited for only once the checks that need no host
# have run; the ZTP drill is last: its dnsmasq and sshd then hold UDP 67 and TCP 22 on the
# controller.
STEPS = (
    Step("sessions", _sessions, timed="sessions up and FIBs settled"),
    _check("ecmp", checks.ecmp),
    _check("boundary", checks.pod_boundary, when=one_pod),
    _check("flows", checks.flows, needs=(HOSTS,), when=whole),
    _check("forbidden", checks.forbidden, needs=(HOSTS,), when=whole),
    _check("dad", mlag.check, when=whole),
    _check(drills.NPU_PATHS, partial(checks.npu_paths, every=True)),
    Step(HOSTS, _hosts, lazy=True, reported=False),
    Step("ztp render", _render, needs=(HOSTS,), when=whole, reported=False),
    Step("drills", _drills, needs=(HOSTS, "flows"), when=drilling),
    Step(
        "ztp", _ztp, needs=("ztp render", "drills"), when=whole, said="ZTP drill", timed="ZTP drill"
    ),
)


def walk(r: Run, steps: tuple[Step, ...] = STEPS) -> list[Outcome]:
    """Run each step of `steps` that runs on this twin, each once its needs are done; return
    the reported steps' outcomes in table order."""
    pending = [s for s in steps if s.when(r)]
    done = {s.name for s in steps} - {s.name for s in pending}
    while pending:
        ready = [s for s in pending if set(s.needs) <= done]
        step = next((s for s in ready if not s.lazy), None) or next(
            (s for s in pending if s.lazy), None
        )
        if step is None or not set(step.needs) <= done:
            names = ", ".join(s.name for s in pending)
            raise RuntimeError(f"twin test steps that can never run: {names}")
        if step.said:
            r.say(step.said)
        if step.timed:
            with r.clock(step.timed):
                r.results[step.name] = step.do(r)
        else:
            r.results[step.name] = step.do(r)
        pending.remove(step)
        done.add(step.name)
    return [o for s in steps if s.reported and s.name in r.results for o in r.results[s.name]]
