"""What grading does not offer, said in the student's terms when their code runs into it.

A worker has no network, no keyboard (its standard input is empty) and no writable shared
memory for the semaphores of process pools (docs/sandbox.md). Code that needs one of them
fails with an error that names none of this ("Temporary failure in name resolution",
``EOFError``, "Read-only file system"); ``explain`` turns such an error into one sentence: the
student's line, what grading lacks, and what to do. It is called by
``grader.worker.serve.describe_exception`` after the student's code failed, so it imports
nothing then: what it needs is imported with it, before the student's file runs.
"""

from __future__ import annotations

import errno
import socket

_NETWORK_ERRNOS = frozenset({errno.ENETUNREACH, errno.ENETDOWN, errno.EHOSTUNREACH})
_NETWORK = (socket.gaierror, socket.timeout, ConnectionRefusedError, ConnectionResetError)
_POOL_FILES = ("multiprocessing", "concurrent/futures/process", "concurrent\\futures\\process")
_MAIN_GUARD = 'under `if __name__ == "__main__":`'


def _chain(exc: BaseException) -> list[BaseException]:
    """``exc`` and the exceptions it was raised from or during (at most a few)."""
    seen: list[BaseException] = []
    now: BaseException | None = exc
    while now is not None and len(seen) < 8 and all(now is not s for s in seen):
        seen.append(now)
        now = now.__cause__ or now.__context__
    return seen


def _network(exc: BaseException) -> bool:
    return isinstance(exc, _NETWORK) or (isinstance(exc, OSError) and exc.errno in _NETWORK_ERRNOS)


def _pool(exc: BaseException) -> bool:
    """An error raised inside ``multiprocessing`` or a process pool (its semaphores, its
    shared memory, its children)."""
    if not isinstance(exc, OSError | NotImplementedError):
        return False
    tb = exc.__traceback__
    while tb is not None:
        if any(part in tb.tb_frame.f_code.co_filename for part in _POOL_FILES):
            return True
        tb = tb.tb_next
    return False


def explain(exc: BaseException, frames: list[dict]) -> str | None:
    """One sentence for an error caused by what grading lacks, naming the innermost line of
    the student's ``frames`` (``grader.worker.frames``); None for any other error."""
    chain = _chain(exc)
    where = ""
    if frames:
        last = frames[-1]
        where = f" at line {last['line']} of {last['file']} (`{last['code']}`)"
    if any(isinstance(e, EOFError) for e in chain):
        return (
            f"your code asks for keyboard input{where}, and grading runs with no keyboard "
            f"input: move that code {_MAIN_GUARD} (or give the value in the code)"
        )
    if any(_pool(e) for e in chain):
        return (
            f"your code starts a process pool{where} (multiprocessing.Pool, "
            "ProcessPoolExecutor), which grading does not offer here: use a thread pool "
            "(concurrent.futures.ThreadPoolExecutor) or a plain loop instead"
        )
    if any(_network(e) for e in chain) or any(type(e).__name__ == "URLError" for e in chain):
        return (
            f"your code uses the network{where}, and grading runs without a network: move "
            f"the download {_MAIN_GUARD}, or hand in the file it fetches beside your exercise"
        )
    return None
