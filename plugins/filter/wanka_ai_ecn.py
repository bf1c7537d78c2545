"""Filters for the switch_config role: is AI ECN running on a switch whose configuration enables
it, naming the licence it needs (review 2 finding 20, issue #29; the licence is the switch's
`licences` host variable, from the model, issue #32).

`display ai-ecn calculated state` "displays whether the AI ECN threshold function is enabled for
lossless queues and the calculated ECN thresholds" (CE6800/8800 V300R023C00 command reference,
cmd_corpus_json/.../AI_ECN_Configuration_Commands/display_ai-ecn_calculated_state.json; that page
shows no output). The output format is the configuration guide's "Example for Configuring AI
ECN" (config_corpus/.../AI_ECN_Configuration/Example_for_Configuring_AI_ECN.md, kept verbatim in
tests/data/captures/ce-v300-display-ai-ecn-calculated-state.txt): a model version line, a mode
legend, a rule, a two-line header (Interface Queue Low-Threshold High-Threshold Probability Mode
Active model Actived time), a rule, one row per interface and lossless queue, a rule. A row is
read by white space: interface, queue, low, high, probability, mode, model, time.
[unconfirmed] what a switch prints when AI ECN does not run: the guide says "AI ECN takes effect
only on interfaces in up state" (Configuring_AI_ECN_for_Lossless_Queues.md) and "AI ECN is under
license control (CE-LIC-AFRD)" (Configuration_Precautions_for_AI_ECN.md); the check takes "no
row for the lossless queue" as not running. Confirm on a switch without the licence.
"""

from __future__ import annotations

import re

ROW = re.compile(r"^(\S*\d+/\d+\S*)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\S+)")


def ce_ai_ecn_state(text: str) -> list[dict]:
    """Rows of `display ai-ecn calculated state` -> [{interface, queue, mode, model}]."""
    out = []
    for line in text.splitlines():
        m = ROW.match(line.strip())
        if m:
            out.append({"interface": m[1], "queue": int(m[2]), "mode": m[6], "model": m[7]})
    return out


def wanka_ai_ecn_problems(rows: list[dict], queue: int, licences: list[str]) -> list[str]:
    """One sentence when no interface shows AI ECN on the lossless queue, naming the licence."""
    if any(r["queue"] == int(queue) for r in rows):
        return []
    need = ", ".join(licences) or "its licence (host_vars lists none for this switch)"
    return [
        f"AI ECN is not running on lossless queue {queue}: display ai-ecn calculated state "
        f"shows no interface for it. AI ECN is under licence control: check that {need} is "
        "active (display license), and that the queue's ports are up"
    ]


class FilterModule:
    def filters(self) -> dict:
        return {
            "ce_ai_ecn_state": ce_ai_ecn_state,
            "wanka_ai_ecn_problems": wanka_ai_ecn_problems,
        }
