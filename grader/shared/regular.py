"""Reading one file of a submission the safe way, for the judge's intake and the fork server's
copy of a submission alike: never through a symbolic link, never anything but a regular file
(a FIFO would block, a device never end), never more than asked for."""

from __future__ import annotations

import os
import stat
from pathlib import Path


def read_regular(path: Path, limit: int) -> bytes | None:
    """The bytes of the regular file at ``path``, or None when it is not one (a link, a folder,
    a FIFO, gone), cannot be read, or holds more than ``limit`` bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
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
