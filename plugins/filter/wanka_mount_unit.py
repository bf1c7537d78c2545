"""Filter for the dpc_client role: the systemd mount unit name of a mount point, refusing a
mount point that would hide the system (defence in depth: wanka's blueprint validation refuses
the same paths, generator/blueprint/refusals.py, whose lists these are)."""

from __future__ import annotations

import posixpath

# The whole tree belongs to the system (FHS 3.0 ch. 3: /bin /boot /dev /etc /lib* /sbin /usr;
# the kernel's virtual file systems /proc /sys and the runtime data /run): nothing mounts under it.
SYSTEM_TREES = (
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32",
    "/proc", "/run", "/sbin", "/sys", "/usr",
)  # fmt: skip
# Folders that hold other people's data (FHS 3.0 ch. 3 and 5): a path may lie under them, never
# be one of them.
SYSTEM_FOLDERS = (
    "/", "/home", "/media", "/mnt", "/opt", "/root", "/srv", "/tmp", "/var",
    "/var/cache", "/var/lib", "/var/local", "/var/log", "/var/mail", "/var/opt",
    "/var/spool", "/var/tmp",
)  # fmt: skip
_PLAIN = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:_.")


def system_path(path: str) -> str | None:
    """Why `path` is no place to mount or delete under, or None when it is a safe path."""
    if not path.startswith("/") or posixpath.normpath(path) != path or "//" in path:
        return f"{path!r} is not a normalised absolute path"
    if path in SYSTEM_FOLDERS:
        return f"{path!r} is a system folder"
    tree = next((t for t in SYSTEM_TREES if path == t or path.startswith(t + "/")), None)
    return f"{path!r} is inside the system tree {tree}" if tree else None


def systemd_escape_path(path: str) -> str:
    """`systemd-escape --path PATH` (systemd.unit(5), "String Escaping for Inclusion in Unit
    Names"): the leading and trailing "/" dropped, each other "/" becomes "-", every byte that
    is not an ASCII letter, digit, ":", "_" or "." (and a leading ".") becomes a C-style "\\xHH";
    the root folder is "-"."""
    path = posixpath.normpath(path).strip("/")
    if not path:
        return "-"
    out = []
    for i, byte in enumerate(path.encode()):
        char = chr(byte)
        if char == "/":
            out.append("-")
        elif char in _PLAIN and not (i == 0 and char == "."):
            out.append(char)
        else:
            out.append(f"\\x{byte:02x}")
    return "".join(out)


def wanka_mount_unit(path: str) -> str:
    """The mount unit for mount point `path` (systemd.mount(5): named after the path it
    controls, escaped as above); an AnsibleFilterError for a system folder."""
    why = system_path(path)
    if why:
        from ansible.errors import AnsibleFilterError

        raise AnsibleFilterError(f"refusing to mount over {why}")
    return systemd_escape_path(path) + ".mount"


def wanka_system_path(path: str) -> str:
    """Why `path` is no place to mount, or "" when it is one."""
    return system_path(path) or ""


class FilterModule:
    def filters(self):
        return {"wanka_mount_unit": wanka_mount_unit, "wanka_system_path": wanka_system_path}
