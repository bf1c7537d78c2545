"""`wanka twin exec DEVICE CMD` through the real parser and dispatch, as a user types it.

Its CMD used to be parsed under the name the command dispatch reads (`command`), so every call
ended in `TypeError: unhashable type: 'list'`. No twin runs here: the namespace list and the final
`ip netns exec` are answered by a stand-in for subprocess.run, or the machine's answer is a clean
refusal (no root, no such namespace)."""

from __future__ import annotations

import os
import subprocess
import sys

import generator.twin as twin
from generator.cli import main
from generator.twin import plan


def wanka(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_exec_runs_the_command_in_the_devices_namespace(capsys, monkeypatch):
    ns = plan.ns_name("par-leaf-0001")
    ran: list[list[str]] = []

    def fake_run(command, *args, **kwargs):
        command = list(command)
        if command[:3] == ["ip", "netns", "list"]:  # iproute2's listing: "NAME (id: N)"
            return subprocess.CompletedProcess(command, 0, f"{ns} (id: 7)\nother (id: 1)\n", "")
        ran.append(command)
        return subprocess.CompletedProcess(command, 3, "", "")

    monkeypatch.setattr(twin.run, "missing", list)  # root and the packages, as on a twin host
    monkeypatch.setattr(subprocess, "run", fake_run)
    code, _, err = wanka(capsys, "twin", "exec", "par-leaf-0001", "ip", "a")
    assert ran == [["ip", "netns", "exec", ns, "ip", "a"]], err
    assert code == 3  # the command's own exit code
    ran.clear()
    code, _, err = wanka(capsys, "twin", "exec", "par-leaf-0001", "vtysh", "-c", "show bgp summary")
    assert len(ran) == 1 and ran[0][:5] == ["ip", "netns", "exec", ns, "vtysh"], err
    assert ran[0][-2:] == ["-c", "show bgp summary"] and "--vty_socket" in ran[0]


def test_exec_without_root_is_refused_as_up_is(capsys, monkeypatch):
    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    up = wanka(capsys, "twin", "up", "inventories/pod-128")
    exec_ = wanka(capsys, "twin", "exec", "dev", "ip", "a")
    assert up[0] == exec_[0] == 2
    assert exec_[2] == up[2] and exec_[2].startswith("wanka: the twin needs root"), exec_[2]


def test_the_real_command_ends_in_a_clean_refusal():
    # this machine: without root, the twin's refusal; as root, no twin namespace `dev`
    run = subprocess.run(
        [sys.executable, "-m", "generator", "twin", "exec", "dev", "ip", "a"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 2 and run.stderr.startswith("wanka: "), run.stderr
    assert "Traceback" not in run.stderr and len(run.stderr.splitlines()) == 1, run.stderr
