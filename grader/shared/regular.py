"""Reading one file of a submission the safe way, for the judge's intake and the fork server's
copy of a submission alike: never through a symbolic link, never anything but a regular file
(a FIFO would block, a device never end), never more than asked for."""

from __future__ import annotations

import os
import stat
from pathlib import Path

# Windows has neither O_NOFOLLOW nor O_NONBLOCK (a link is refused by a look before the open
# there), and reads in text mode unless told O_BINARY.
FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_BINARY", 0)
)


def read_regular(path: Path, limit: int) -> bytes | None:
    """The bytes of the regular file at ``path``, or None when it is not one (a link, a folder,
    a FIFO, gone), cannot be read, or holds more than ``limit`` bytes."""
    try:
        if not hasattr(os, "O_NOFOLLOW") and os.path.islink(path):
            return None
        fd = os.open(path, FLAGS)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            data = f.read(limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)
    return data if len(data) <= limit else None
