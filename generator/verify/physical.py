"""Physical rules of files/cabling.csv that no graph edge shows: what can be plugged in.

A split port (`400GE2/0/4:1` .. `:4`) is one cage holding one module. Its lanes leave on one
breakout cable (the rows share a cable_id), or on one optic whose lanes run through one MPO trunk
and breakout cassette (the rows share a trunk_id, each its own patch cord). Lanes of one port on
two cables, or a port cabled whole and by a lane as well, cannot be installed: a second plug
does not fit in the cage. The rule and the breakout model: generator/catalog/cables.yaml
`breakouts` (its sources name the optics, trunks and cassettes)."""

from __future__ import annotations

from generator.verify.read import Cabling
from generator.verify.report import Problem, Report

FILE = "files/cabling.csv"


def split_ports(cabled: Cabling, report: Report) -> None:
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
