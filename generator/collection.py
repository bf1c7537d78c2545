"""Where the wanka.cluster Ansible collection is: ansible.cfg, site.yml, roles/, playbooks/,
plugins/ and galaxy.yml.

A wheel carries it inside the package (generator/ansible_collections/wanka/cluster, mapped there by
pyproject.toml), so `pip install wanka` users get the roles that consume the inventories; a source
checkout (an editable install) uses the checkout itself, whose root is the collection.
"""

from __future__ import annotations

import re
from pathlib import Path

import yaml

PACKAGE = Path(__file__).resolve().parent
INSTALLED = PACKAGE / "ansible_collections" / "wanka" / "cluster"


def ansible_collection() -> Path:
    """The collection folder: the installed copy, else the source checkout's root."""
    for folder in (INSTALLED, PACKAGE.parent):
        if (folder / "galaxy.yml").is_file() and (folder / "roles").is_dir():
            return folder
    raise FileNotFoundError(f"no wanka.cluster collection in {INSTALLED} or {PACKAGE.parent}")


# A role's README.md: the part above MARK is written from its meta/argument_specs.yml (and the
# playbooks that run it) by `python -m generator.collection readme`; the part below is by hand
# and kept as it is.
MARK = (
    "<!-- Above: generated from meta/argument_specs.yml by `python -m generator.collection readme`"
    " (edit that file). Below: written by hand, kept. -->\n"
)
FQCN = re.compile(r"\bwanka\.cluster\.(\w+)")
ROLE_LINE = re.compile(r"^\s*- role: (\w+)\n\s*tags: \[([^\]]*)\]", re.M)


def _cell(value) -> str:
    text = " ".join(value) if isinstance(value, list) else str(value)
    return " ".join(text.split()).replace("|", "\\|")


def _options(options: dict, prefix: str = "") -> list[str]:
    rows = []
    for name, spec in options.items():
        kind = spec.get("type", "str")
        kind += f" of {spec['elements']}" if "elements" in spec else ""
        kind += f" ({', '.join(map(str, spec['choices']))})" if "choices" in spec else ""
        need = "yes" if spec.get("required") else ""
        default = f"`{_cell(spec['default'])}`" if "default" in spec else ""
        rows.append(
            f"| `{prefix}{name}` | {kind} | {need} | {default} | {_cell(spec['description'])} |"
        )
        rows += _options(spec.get("options") or {}, f"{prefix}{name}.")
    return rows


def _runs(root: Path, role: str) -> list[str]:
    """`playbook (tags ...)` for each play of the collection that runs the role."""
    out = []
    for book in [root / "site.yml", *sorted((root / "playbooks").glob("*.yml"))]:
        for name, tags in ROLE_LINE.findall(book.read_text()):
            if name == role:
                out.append(f"`{book.relative_to(root)}` (tags: {tags})")
    return sorted(set(out))


def readme(role: Path) -> str:
    """The role's README.md: the generated part, then the hand-written part already there."""
    specs = yaml.safe_load((role / "meta" / "argument_specs.yml").read_text())["argument_specs"]
    root = role.parent.parent
    used = sorted(
        {m for f in sorted(role.rglob("*.yml")) for m in FQCN.findall(f.read_text())}
        | {m for f in sorted(role.rglob("*.j2")) for m in FQCN.findall(f.read_text())}
    )
    main = specs["main"]
    lines = [f"# {role.name}", "", _cell(main["short_description"]) + ".", ""]
    lines += [" ".join(p.split()) + "\n" for p in main.get("description") or []]
    runs = _runs(root, role.name)
    lines += [f"Run by: {', '.join(runs) or 'no playbook (include it from yours)'}.", ""]
    if used:
        lines += [
            "Plugins of the collection it calls: "
            + ", ".join(f"`wanka.cluster.{m}`" for m in used)
            + ".",
            "",
        ]
    for entry, spec in specs.items():
        title = "Variables" if entry == "main" else f"Variables of `tasks_from: {entry}.yml`"
        lines += [f"## {title}", ""]
        if entry != "main":
            lines += [_cell(spec["short_description"]) + ".", ""]
        lines += ["| variable | type | required | default | description |", "|---|---|---|---|---|"]
        lines += [*_options(spec.get("options") or {}), ""]
    path = role / "README.md"
    kept = path.read_text().partition(MARK)[2] if path.is_file() else ""
    return "\n".join(lines) + "\n" + MARK + kept


def write_readmes(root: Path) -> list[Path]:
    """Rewrite every role's README.md whose generated part is stale; the paths written."""
    written = []
    for role in sorted(p.parent.parent for p in (root / "roles").glob("*/meta/argument_specs.yml")):
        text = readme(role)
        path = role / "README.md"
        if not path.is_file() or path.read_text() != text:
            path.write_text(text)
            written.append(path)
    return written


if __name__ == "__main__":
    import sys

    if sys.argv[1:] != ["readme"]:
        raise SystemExit("usage: python -m generator.collection readme")
    for written in write_readmes(PACKAGE.parent):
        print(written)
