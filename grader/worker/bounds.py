"""Bounds a worker puts on itself before it imports student code, on every platform.

Resource limits (address space, processes, file size, CPU time, no core files) and a cap on
what student code may print (the rest is dropped). The small environment a worker runs with is
``grader.protocol.boot.worker_environment``.
"""

from __future__ import annotations

import io
import os
import signal
import sys
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from grader.protocol.limits import Limits


def thread_allowance() -> int:
    """Threads torch may start by itself (intra-op and inter-op pools), beyond student code."""
    return 2 * (os.cpu_count() or 1) + 8


def _tasks_of_uid(uid: int) -> int:
    count = 0
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    count += len(os.listdir(f"/proc/{entry.name}/task"))
            except OSError:
                pass
    return count


def _processes_of_uid(uid: int) -> int:
    """The processes ``uid`` runs now, as ``ps`` counts them (no ``/proc``: macOS, where
    ``RLIMIT_NPROC`` counts processes, not threads); a guess of 1,000 if ``ps`` fails."""
    import subprocess

    try:
        listed = subprocess.run(
            ["ps", "-U", str(uid), "-o", "pid="], capture_output=True, text=True, timeout=10
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return 1000
    return len(listed.split())


MEMORY_LOOK_S = 0.05  # how often the memory watch looks at the worker's resident memory


def watch_memory(allowed: int) -> None:
    """Where the OS enforces no memory limit (macOS ignores ``RLIMIT_AS``/``RLIMIT_RSS``): a
    daemon thread ends the worker with ``OUT_OF_MEMORY`` once its peak resident memory has
    grown by more than ``allowed`` bytes since now. Memory is looked at every
    ``MEMORY_LOOK_S``, so an allocation between two looks can pass the bound for that long.
    A peak, not the memory held now (which macOS gives only through its own calls): where a
    process starts with a peak it inherited (Linux keeps the parent's across exec), the bound
    counts from that higher peak, looser, never tighter."""
    import resource

    from grader.protocol.boot import OUT_OF_MEMORY

    unit = 1 if sys.platform == "darwin" else 1024  # ru_maxrss: bytes on macOS, KiB elsewhere
    limit = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * unit + allowed
    peak, sleep, leave = resource.getrusage, threading.Event().wait, os._exit

    def watch() -> None:
        while peak(resource.RUSAGE_SELF).ru_maxrss * unit <= limit:
            sleep(MEMORY_LOOK_S)
        os.write(2, b"\nthe worker used more memory than it may: ended by its memory watch\n")
        leave(OUT_OF_MEMORY)

    threading.Thread(target=watch, name="grader-memory-watch", daemon=True).start()


def _address_space_now() -> int | None:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return None


def apply_limits(limits: Limits, own_user_namespace: bool) -> list[str]:
    """Set this process's resource limits; return the ones the platform refused, in words.

    ``own_user_namespace``: the process counts only its own processes (a fresh user namespace),
    so the process limit can be set directly; otherwise it is added to what the user runs now.
    """
    try:
        import resource
    except ImportError:  # Windows
        return ["resource limits (no 'resource' module on this platform)"]
    off: list[str] = []

    def set_limit(name: str, soft: int, hard: int | None = None, what: str = "") -> None:
        which = getattr(resource, name, None)
        if which is None:
            off.append(what or name)
            return
        try:
            old_soft, old_hard = resource.getrlimit(which)
            hard = soft if hard is None else hard
            if old_hard != resource.RLIM_INFINITY:
                hard, soft = min(hard, old_hard), min(soft, old_hard)
            resource.setrlimit(which, (soft, hard))
        except (ValueError, OSError):
            off.append(what or name)

    base = _address_space_now()
    if base is not None:
        set_limit("RLIMIT_AS", base + limits.memory_mb * 2**20, what="memory limit")
    else:  # macOS: no limit on memory is enforced, so a thread of the worker's watches it
        watch_memory(limits.memory_mb * 2**20)
    set_limit("RLIMIT_FSIZE", limits.max_file_mb * 2**20, what="file size limit")
    set_limit("RLIMIT_CPU", int(limits.cpu_s), int(limits.cpu_s) + 5, what="CPU time limit")
    set_limit("RLIMIT_CORE", 0)
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # too large a file: an error, not a kill
    nproc = limits.max_processes + thread_allowance()
    if os.geteuid() == 0 and not own_user_namespace:
        off.append("process limit (the kernel does not apply it to root)")
    else:
        if not own_user_namespace and sys.platform.startswith("linux"):
            nproc += _tasks_of_uid(os.getuid())
        elif not own_user_namespace:  # macOS: the limit counts every process of the user
            nproc = limits.max_processes + _processes_of_uid(os.getuid())
        set_limit("RLIMIT_NPROC", nproc, what="process limit")
    return off


class OutputBudget:
    """Bytes student code may still print; shared by ``stdout`` and ``stderr``."""

    def __init__(self, cap: int):
        self.left = cap + 1  # one byte past the cap tells the judge that output was cut
        self.lock = threading.Lock()

    def take(self, data: bytes) -> bytes:
        with self.lock:
            part = data[: max(self.left, 0)]
            self.left -= len(part)
            return part


def _write_all(fd: int, data: bytes) -> None:
    while data:
        try:
            data = data[os.write(fd, data) :]
        except OSError:  # the file size limit, or a closed descriptor: drop it
            break


class CappedBytes(io.BufferedIOBase):
    """The binary stream under a ``CappedStream`` (``sys.stdout.buffer``), on the same budget."""

    def __init__(self, fd: int, budget: OutputBudget, name: str):
        self._fd, self._budget, self._name = fd, budget, name

    @property
    def name(self) -> str:
        return self._name

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return False

    def write(self, b) -> int:
        data = bytes(memoryview(b))  # bytes, bytearray, memoryview: what a buffer accepts
        _write_all(self._fd, self._budget.take(data))
        return len(data)

    def flush(self) -> None:
        pass


class CappedStream(io.TextIOBase):
    """A text stream onto a file descriptor that drops whatever goes past the budget; its
    ``buffer`` takes bytes on the same budget, as a real ``sys.stdout.buffer`` does."""

    def __init__(self, fd: int, budget: OutputBudget, name: str):
        self._buffer = CappedBytes(fd, budget, name)

    @property
    def buffer(self) -> CappedBytes:
        return self._buffer

    @property
    def name(self) -> str:
        return self._buffer.name

    # Read-only, as on a real stream (typeshed declares them plain attributes of TextIOBase).
    @property
    def encoding(self) -> str:  # type: ignore[override]
        return "utf-8"

    @property
    def errors(self) -> str:  # type: ignore[override]
        return "replace"

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self._buffer.fileno()

    def isatty(self) -> bool:
        return False

    def write(self, s: str) -> int:
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        self._buffer.write(s.encode("utf-8", "replace"))
        return len(s)

    def flush(self) -> None:
        pass


def cap_output(limits: Limits) -> None:
    """Route ``print`` and tracebacks through one budget of ``limits.max_output_kb``."""
    budget = OutputBudget(limits.max_output_kb * 1024)
    # The originals too (typeshed: Final, the interpreter's streams), so that code restoring
    # them gets the capped ones back.
    sys.stdout = sys.__stdout__ = CappedStream(1, budget, "<stdout>")  # type: ignore[misc,assignment]
    sys.stderr = sys.__stderr__ = CappedStream(2, budget, "<stderr>")  # type: ignore[misc,assignment]
