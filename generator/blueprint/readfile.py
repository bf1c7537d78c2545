"""Read one untrusted input file: a regular file only, never more than a limit, never blocking.

`open()` on a FIFO blocks until a writer appears, and a character device such as /dev/zero or
/dev/urandom never ends; both are refused before a byte is read. The file is opened with
O_NONBLOCK (so opening a FIFO returns at once), checked with fstat on the open descriptor (so a
swap after the check cannot matter), and read up to `limit + 1` bytes.
"""

from __future__ import annotations

import errno
import os
import stat

_KINDS = (
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


class ReadRefused(Exception):
    """The file cannot be read as input: `message` says why, `hint` what to do."""

    def __init__(self, message: str, hint: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


def kind_of(mode: int) -> str:
    """`a named pipe (FIFO)`, `a folder`, ... for a file mode that is not a regular file."""
    return next((word for test, word in _KINDS if test(mode)), "not a regular file")


def read_regular(
    path: str | os.PathLike[str], limit: int, dir_fd: int | None = None, links: bool = True
) -> bytes:
    """The bytes of a regular file of at most `limit` bytes; ReadRefused for anything else.
    `dir_fd`: `path` is relative to that open folder; `links=False`: a symbolic link is
    refused, not followed (open(2) O_NOFOLLOW: ELOOP when the last component is a link)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(path, flags | (0 if links else os.O_NOFOLLOW), dir_fd=dir_fd)
    except OSError as error:
        if error.errno == errno.ELOOP and not links:
            raise ReadRefused(
                f"it is a symbolic link{_target(path, dir_fd)}, which is not followed",
                "replace it with the file itself",
            ) from None
        raise ReadRefused(f"cannot read the file: {error.strerror or error}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ReadRefused(
                f"cannot read the file: it is {kind_of(info.st_mode)}, not a regular file",
                "give the path of a file",
            )
        if info.st_size > limit:
            raise _too_large(info.st_size, limit)
        os.set_blocking(fd, True)
        chunks, size = [], 0
        while size <= limit:
            # ask for what fstat announced (+1 to see the end), not the limit: os.read allocates
            # the size it is asked for, 256 MiB per call for verify's limit
            chunk = os.read(fd, min(limit + 1 - size, max(info.st_size - size, 0) + 65536))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as error:
        raise ReadRefused(f"cannot read the file: {error.strerror or error}") from None
    finally:
        os.close(fd)
    if size > limit:  # it grew while being read
        raise _too_large(size, limit)
    return b"".join(chunks)


def _target(path: str | os.PathLike[str], dir_fd: int | None) -> str:
    try:
        return f" to {os.readlink(path, dir_fd=dir_fd)}"
    except OSError:
        return ""


def _too_large(size: int, limit: int) -> ReadRefused:
    return ReadRefused(
        f"the file is too large: {size:,} bytes, the limit is {limit:,} bytes",
        "is this the right file?",
    )
