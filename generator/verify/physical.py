"""Physical rules of files/cabling.csv that no graph edge shows: what can be plugged in.

A split port (`400GE2/0/4:1` .. `:4`) is one cage holding one module. Its lanes leave on one
breakout cable (the rows share a cable_id), or on one optic whose lanes run through one MPO trunk
and breakout cassette (the rows share a trunk_id, each its own patch cord). Lanes of one port on
two cables, or a port cabled whole and by a lane as well, cannot be installed: a second plug
does not fit in the cage; nor can one breakout cable or trunk whose lanes end in two cages (it
has one module end). The rule and the breakout model: generator/catalog/cables.yaml
`breakouts` (its sources name the optics, trunks and cassettes)."""

from __future__ import annotations

from generator.verify.read import Cabling
from generator.verify.report import Problem, Report

FILE = "files/cabling.csv"


def split_ports(cabled: Cabling, report: Report) -> None:
    """Both directions of the rule: a split port on one cable (`_one_cable_per_port`), and a
    breakout cable or trunk in one split port (`_one_port_per_cable`)."""
    _one_cable_per_port(cabled, report)
    _one_port_per_cable(cabled, report)


def _one_port_per_cable(cabled: Cabling, report: Report) -> None:
    """A breakout cable or trunk has one module end: its lanes in the split ports of two cages
    (or two switches) cannot be one cable. One problem per such cable, naming its rows."""
    cages: dict[str, dict[tuple[str, str], list[int]]] = {}
    for device, port, cable, line in cabled.lanes:
        cages.setdefault(cable, {}).setdefault((device, port.partition(":")[0]), []).append(line)
    for cable, ends in cages.items():
        if len(ends) < 2 or not cable:
            continue
        said = "; ".join(
            f"{device} {parent} (line{'s' if len(ns) > 1 else ''} {', '.join(map(str, ns))})"
            for (device, parent), ns in ends.items()
        )
        report.problems.append(
            Problem(
                FILE,
                min(n for ns in list(ends.values())[1:] for n in ns),
                f"{cable} is one breakout cable or trunk, but its lanes end in {len(ends)} split "
                f"ports: {said} (a breakout has one module end: give each split port a cable "
                "of its own)",
            )
        )


def _one_cable_per_port(cabled: Cabling, report: Report) -> None:
    """One problem per split port whose lanes are on more than one cable (or that is also cabled
    whole), at the first row that adds a second cable, naming every row of that port."""
    ports: dict[tuple[str, str], list[tuple[str, str, int]]] = {}
    for device, port, cable, line in cabled.lanes:
        parent, _, lane = port.partition(":")
        ports.setdefault((device, parent), []).append((lane, cable, line))
    for (device, parent), lanes in ports.items():
        cables: dict[str, list[tuple[str, int]]] = {}
        for lane, cable, line in lanes:
            cables.setdefault(cable, []).append((lane, line))
        whole = cabled.ports.get((device, parent))
        if len(cables) == 1 and whole is None:
            continue
        said = [
            f"{'/'.join(f':{lane}' for lane, _ in legs)} on {cable or 'a row with no cable id'} "
            f"(line{'s' if len(legs) > 1 else ''} {', '.join(str(n) for _, n in legs)})"
            for cable, legs in cables.items()
        ]
        if whole is not None:
            said.append(f"the whole port on line {whole}")
        second = sorted(n for legs in list(cables.values())[1:] for _, n in legs)
        report.problems.append(
            Problem(
                FILE,
                min([*second, *([whole] if whole is not None else [])]),
                f"{device} {parent} is one cage for one module, but its lanes are on "
                f"{len(cables) + (whole is not None)} cables: {'; '.join(said)} (give the port "
                "one breakout cable, or one optic with one trunk and cassette, for all its "
                "lanes; or put the other links on a port of their own)",
            )
        )
