"""Where the wanka.cluster Ansible collection is: ansible.cfg, site.yml, roles/, playbooks/,
plugins/ and galaxy.yml.

A wheel carries it inside the package (generator/ansible_collections/wanka/cluster, mapped there by
pyproject.toml), so `pip install wanka` users get the roles that consume the inventories; a source
checkout (an editable install) uses the checkout itself, whose root is the collection.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
INSTALLED = PACKAGE / "ansible_collections" / "wanka" / "cluster"


def ansible_collection() -> Path:
    """The collection folder: the installed copy, else the source checkout's root."""
    for folder in (INSTALLED, PACKAGE.parent):
        if (folder / "galaxy.yml").is_file() and (folder / "roles").is_dir():
            return folder
    raise FileNotFoundError(f"no wanka.cluster collection in {INSTALLED} or {PACKAGE.parent}")
