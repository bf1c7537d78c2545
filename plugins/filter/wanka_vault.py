"""Filters for the roles that deploy generated switch configurations (ztp_server, switch_deploy):
fill in a configuration's Vault placeholders without templating it.

A generated configuration names each secret as `{{ vault_<name> }}` (generator/artifacts/
switches.py, border.py). Rendering the file with `lookup('template')` would also run any other
Jinja2 in it (a `{{ lookup('pipe', ...) }}` that reached a description); here only those exact
placeholders are replaced, by the values given, and a file holding any other template syntax
(`{{`, `{%`, `{#`) is refused with its line. The secrets' own text is inserted as it is."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ansible.errors import AnsibleFilterError

PLACEHOLDER = re.compile(r"\{\{ (vault_[a-z0-9_]+) \}\}")  # as the generator writes it
TEMPLATE = re.compile(r"\{\{|\{%|\{#")  # what starts a Jinja2 expression, statement or comment


def wanka_vault_names(text: str, where: str = "the configuration") -> list[str]:
    """The Vault variables `text` names, sorted; AnsibleFilterError naming `where` and the line
    when it holds template syntax other than those placeholders."""
    for number, line in enumerate(str(text).splitlines(), 1):
        rest = TEMPLATE.search(PLACEHOLDER.sub("", line))
        if rest is not None:
            raise AnsibleFilterError(
                f"{where}:{number}: template syntax {rest.group()!r} that is not a Vault "
                "placeholder `{{ vault_<name> }}`: the file is never templated; regenerate it "
                "from a blueprint without template syntax"
            )
    return sorted(set(PLACEHOLDER.findall(str(text))))


def wanka_vault_fill(
    text: str, secrets: Mapping[str, Any], where: str = "the configuration"
) -> str:
    """`text` with each `{{ vault_<name> }}` replaced by secrets[vault_<name>] (checked as
    wanka_vault_names checks it); AnsibleFilterError when a named secret is not given."""
    missing = [n for n in wanka_vault_names(text, where) if secrets.get(n) is None]
    if missing:
        raise AnsibleFilterError(f"{where}: no value for {', '.join(missing)} (Vault)")
    return PLACEHOLDER.sub(lambda m: str(secrets[m.group(1)]), str(text))


class FilterModule:
    def filters(self) -> dict[str, Any]:
        return {"wanka_vault_names": wanka_vault_names, "wanka_vault_fill": wanka_vault_fill}
