"""Ansible's own warnings in a command's stderr, and nothing else there.

Ansible prints each warning as a line that starts "[WARNING]: " and each deprecation as one that
starts "[DEPRECATION WARNING]: " (ansible-core 2.19 lib/ansible/utils/display.py,
Display._warning and Display._deprecated; the same prefixes in 2.17). The other lines of the same
stderr are not Ansible's: a Python warning of a library Ansible imports says nothing about the
files under test (cryptography 51 prints "CryptographyDeprecationWarning: DSA is deprecated ..."
when ansible-core 2.19.14 imports it, on every ansible-inventory run), and a test failing on it
fails for a dependency's reason."""

from __future__ import annotations

import re

_COLOUR = re.compile(r"\x1b\[[0-9;]*m")  # ANSIBLE_FORCE_COLOR: COLOR_WARN around the line
_WARNING = re.compile(r"\[(?:DEPRECATION )?WARNING\]: ")

# what cryptography 51.0.1 printed on ansible-inventory's stderr (ansible-core 2.19.14)
PYTHON_WARNING = (
    ".../site-packages/ansible/_internal/_ssh/_ssh_agent.py:18: CryptographyDeprecationWarning: "
    "DSA is deprecated and support will be removed in a future release. Use a more modern "
    "signature algorithm.\n  from cryptography.hazmat.primitives.asymmetric.dsa import (\n"
)


def ansible_warnings(stderr: str) -> list[str]:
    """The lines of stderr that are Ansible's warnings, in order (colour codes removed)."""
    return [line for line in _COLOUR.sub("", stderr).splitlines() if _WARNING.match(line)]
