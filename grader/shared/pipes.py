"""Waiting for a pipe to have something to read, on every platform.

POSIX waits with ``select``. Windows' ``select`` takes sockets only, so there a pipe is asked
how many bytes it holds (``PeekNamedPipe``) every few milliseconds until the time is up; a pipe
whose writer has gone counts as readable, as it does for ``select``: the read that follows
sees its end. A handle that cannot be asked (under Wine, a Unix pipe handed to a Windows
program: "Request not supported") never counts as readable: a wait on it times out.
"""

from __future__ import annotations

import os
import time

POLL_S = (0.001, 0.005, 0.02)  # Windows: the waits between looks, growing to the last


def wait_readable(fd: int, timeout: float) -> bool:
    """Whether ``fd`` (a pipe) has something to read, or has reached its end, within
    ``timeout`` seconds (0: look once)."""
    if os.name != "nt":
        import select

        return bool(select.select([fd], [], [], max(0.0, timeout))[0])
    return _wait_windows(fd, timeout)


def _wait_windows(fd: int, timeout: float) -> bool:
    deadline = time.monotonic() + max(0.0, timeout)
    looks = 0
    while True:
        if _has_data(fd):
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        time.sleep(min(left, POLL_S[min(looks, len(POLL_S) - 1)]))
        looks += 1


def _has_data(fd: int) -> bool:
    """Windows: bytes are waiting in the pipe behind ``fd``, or its writer has closed it."""
    import _winapi
    import msvcrt

    try:
        handle = msvcrt.get_osfhandle(fd)  # type: ignore[attr-defined]  # Windows only
        available, _left = _winapi.PeekNamedPipe(handle, 0)  # type: ignore[attr-defined]
    except BrokenPipeError:  # the writer is gone: a read returns the end
        return True
    except OSError:  # not a pipe that can be asked (Wine's view of a Unix pipe): unknown
        return False
    return available > 0
