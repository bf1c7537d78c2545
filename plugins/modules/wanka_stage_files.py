#!/usr/bin/python
"""Ansible module: write many files under one folder in one task, only those whose content
differs, each atomically (a temporary sibling renamed over it).

One `copy` task per switch costs two module runs per file: about 1,300 runs for the 650 startup
configurations of the 10,240-card example, minutes on the controller. Contents may hold secrets
rendered from Vault: the argument is no_log and no diff is shown.
"""

from __future__ import annotations

import grp
import os
import tempfile

from ansible.module_utils.basic import AnsibleModule

DOCUMENTATION = r"""
module: wanka_stage_files
short_description: Write many files under one folder, only those that differ, atomically
options:
  root: {description: Folder the paths are relative to, type: path, required: true}
  files: {description: "Relative path -> content (no '..', not absolute)", type: dict, required: true}
  mode: {description: Mode of each written file, type: str, default: '0640'}
  group: {description: "Group of each written file; empty: the writer's", type: str, default: ''}
"""


def _differs(path: str, data: bytes) -> bool:
    try:
        with open(path, "rb") as fh:
            return fh.read() != data
    except FileNotFoundError:
        return True


def _write(path: str, data: bytes, mode: int, gid: int) -> None:
    folder = os.path.dirname(path)
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".wanka-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        if gid >= 0:
            os.chown(tmp, -1, gid)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "root": {"type": "path", "required": True},
            "files": {"type": "dict", "required": True, "no_log": True},
            "mode": {"type": "str", "default": "0640"},
            "group": {"type": "str", "default": ""},
        },
        supports_check_mode=True,
    )
    root, mode = module.params["root"], int(module.params["mode"], 8)
    gid = -1
    if module.params["group"]:
        try:
            gid = grp.getgrnam(module.params["group"]).gr_gid
        except KeyError:
            module.fail_json(msg=f"group {module.params['group']!r} does not exist")
    changed = []
    for rel, content in sorted(module.params["files"].items()):
        parts = rel.split("/")
        if rel.startswith("/") or ".." in parts or "" in parts:
            module.fail_json(msg=f"unsafe path {rel!r}: give a path inside {root}")
        path = os.path.join(root, rel)
        data = str(content).encode("utf-8")
        if not _differs(path, data):
            st = os.stat(path)
            if st.st_mode & 0o7777 == mode and gid in (-1, st.st_gid):
                continue
        changed.append(rel)
        if not module.check_mode:
            _write(path, data, mode, gid)
    module.exit_json(changed=bool(changed), written=changed)


if __name__ == "__main__":
    main()
