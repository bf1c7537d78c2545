"""A filter for ztp_server: which of a generated folder's files are not regular files of it,
looked at on the controller in one pass instead of one `ansible.builtin.stat` module run per
switch (a module run is a Python process: 22 of them were about half the role's CPU on pod-128).

Each name is looked at without following a link at its end (lstat(2), what `stat` with
`follow: false` does) and its real path compared with the folder's: a file the role would stage
must exist, be no symbolic link, be a regular file (a FIFO or a device would hang or flood the
read), hold at most 8 MiB and not be reached through a linked folder."""

from __future__ import annotations

import os
import stat

LIMIT = 8388608  # bytes: a CE startup configuration is far smaller


def wanka_not_regular_files(names: list[str], root: str, limit: int = LIMIT) -> list[str]:
    """For each of `names` (paths relative to `root`) that is not a regular file of the folder,
    what it is instead, naming its path; [] when all are."""
    real_root = os.path.realpath(root)
    out = []
    for name in names:
        path = f"{root}/{name}"
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            out.append(f"{path} is missing")
            continue
        if stat.S_ISLNK(st.st_mode):
            out.append(f"{path} is a symbolic link")
        elif not stat.S_ISREG(st.st_mode):
            out.append(f"{path} is not a regular file")
        elif st.st_size > limit:
            out.append(f"{path} is {st.st_size} bytes (over 8 MiB)")
        elif os.path.realpath(path) != f"{real_root}/{name}":
            out.append(f"{path} goes through a symbolic link")
    return out


class FilterModule:
    def filters(self):
        return {"wanka_not_regular_files": wanka_not_regular_files}
