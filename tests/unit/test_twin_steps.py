"""`twin test` is the table generator.twin.steps.STEPS, walked by its needs: the order the steps run
in and the order the report lists them in, on the whole twin and on one pod, with the drills or
without. The steps' own work is replaced by a recorder (a test double: it runs no check)."""

from __future__ import annotations

import dataclasses

import pytest

from generator.twin import steps
from generator.twin.outcome import Outcome


def _walked(pod: int, drills: bool) -> tuple[list[str], list[str], list[str]]:
    """(steps run, in order; progress messages; the outcomes reported, by name)."""
    ran: list[str] = []

    def recorder(name: str):
        def do(r: steps.Run):
            ran.append(name)
            return [Outcome(name)]

        return do

    table = tuple(dataclasses.replace(s, do=recorder(s.name)) for s in steps.STEPS)
    said: list[str] = []
    r = steps.Run(
        None, None, None, hosts_done=lambda: None, pod=pod, drills=drills, say=said.append
    )
    reported = [o.name for o in steps.walk(r, table)]
    return ran, said, reported


def test_the_whole_twin_checks_what_needs_no_host_while_the_hosts_are_rendered():
    ran, said, reported = _walked(pod=0, drills=True)
    assert ran == ["sessions", "ecmp", "dad", "npu", "hosts", "flows", "forbidden", "ztp render",
                   "drills", "ztp"]  # fmt: skip
    assert reported == ["sessions", "ecmp", "flows", "forbidden", "dad", "npu", "drills", "ztp"]
    assert said == ["checking ecmp", "checking dad", "checking npu", "checking flows",
                    "checking forbidden", "ZTP drill"]  # fmt: skip


def test_without_drills_the_ztp_drill_follows_the_checks():
    ran, _, reported = _walked(pod=0, drills=False)
    assert ran == ["sessions", "ecmp", "dad", "npu", "hosts", "flows", "forbidden", "ztp render",
                   "ztp"]  # fmt: skip
    assert "drills" not in reported


def test_one_pod_checks_its_boundary_and_runs_no_flows_no_ztp():
    ran, _, reported = _walked(pod=2, drills=True)
    assert ran == ["sessions", "ecmp", "boundary", "npu", "hosts", "drills"]
    assert reported == ["sessions", "ecmp", "boundary", "npu", "drills"]


def test_a_step_whose_needs_never_come_is_refused_not_skipped():
    lost = steps.Step("lost", lambda r: [], needs=("nothing of that name",))
    r = steps.Run(None, None, None, hosts_done=lambda: None)
    with pytest.raises(RuntimeError, match="can never run: lost"):
        steps.walk(r, (lost,))


def test_the_clock_names_each_timed_step():
    r = steps.Run(None, None, None, hosts_done=lambda: None)
    table = (dataclasses.replace(s, do=lambda r: []) for s in steps.STEPS)
    steps.walk(r, tuple(table))
    assert list(r.clock.times) == ["sessions up and FIBs settled", "check: ecmp", "check: dad",
                                   "check: npu", "check: flows", "check: forbidden", "ZTP drill"]  # fmt: skip
