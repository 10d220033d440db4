"""Makes this Linux interpreter look like macOS's to the grader (tests/macos_like.py installs it
in a venv, imported from a ``.pth`` file before anything else runs, so every process the grader
starts, workers included, gets it too).

What it changes, as macOS's Python has it:

- ``sys.platform`` is ``"darwin"`` (the grader keys the fork server, Landlock and user
  namespaces on ``linux``: none of them is used);
- there is no ``/proc``: opening, listing or looking at a path under it raises
  ``FileNotFoundError``;
- what macOS's Python lacks is taken away (pidfds, CPU affinity, ``epoll``, pipe sizes, ...);
- ``ru_maxrss`` is counted in bytes, as macOS counts it (Linux: KiB);
- ``_scproxy`` (the system proxy settings ``urllib.request`` reads on macOS) says "none".

What it cannot change: the kernel is Linux's, so ``RLIMIT_NPROC`` counts threads rather than
processes (the process limit asked for is translated, for a user other than root) and
``RLIMIT_AS`` would be enforced (the grader sets it only with ``/proc``, so never here).
"""

from __future__ import annotations

import builtins
import importlib
import io
import os
import resource
import select
import signal
import sys
import time
import types

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Linux
    fcntl = None  # type: ignore[assignment]

LINUX_ONLY = {
    os: (
        "pidfd_open",
        "sched_getaffinity",
        "sched_setaffinity",
        "memfd_create",
        "eventfd",
        "eventfd_read",
        "eventfd_write",
        "splice",
        "copy_file_range",
        "pipe2",
        "getxattr",
        "setxattr",
        "listxattr",
        "removexattr",
        "posix_fallocate",
        "posix_fadvise",
        "O_PATH",
        "O_TMPFILE",
        "O_DIRECT",
    ),
    signal: ("pidfd_send_signal",),
    select: ("epoll", "EPOLLIN", "EPOLLOUT"),
    time: ("CLOCK_BOOTTIME",),
    fcntl: ("F_SETPIPE_SZ", "F_GETPIPE_SZ"),
}


def in_proc(path) -> bool:
    """Whether ``path`` (a str, bytes or path-like; never a descriptor) is under ``/proc``."""
    if isinstance(path, int) or path is None:
        return False
    try:
        name = os.fsdecode(os.fspath(path))
    except TypeError:
        return False
    if not name.startswith("/"):
        name = os.path.join(_getcwd(), name)
    name = os.path.normpath(name)
    return name == "/proc" or name.startswith("/proc/")


def _refusing(real, *, first: int = 0, default: str | None = None):
    """``real`` that raises FileNotFoundError for a path under /proc (argument ``first``)."""

    def call(*args, **kwargs):
        path = args[first] if len(args) > first else kwargs.get("path", kwargs.get("file", default))
        if in_proc(path):
            raise FileNotFoundError(2, "No such file or directory (no /proc on macOS)", path)
        return real(*args, **kwargs)

    call.__name__ = call.__qualname__ = real.__name__
    call.__doc__ = real.__doc__
    return call


_getcwd = os.getcwd
_getrusage, _setrlimit = resource.getrusage, resource.setrlimit


def getrusage(who):
    """``resource.getrusage`` with ``ru_maxrss`` in bytes, as macOS has it."""
    used = list(_getrusage(who))
    used[2] *= 1024
    return resource.struct_rusage(used)


def _threads_beyond_processes(uid: int) -> int:
    threads = processes = 0
    for entry in _scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    processes += 1
                    threads += len(_listdir(f"/proc/{entry.name}/task"))
            except OSError:
                pass
    return threads - processes


def setrlimit(which, limits):
    """``resource.setrlimit``; a process limit (macOS counts processes) raised by the user's
    threads beyond their processes, which Linux counts too (root is never limited)."""
    soft, hard = limits
    if which == resource.RLIMIT_NPROC and os.geteuid() != 0:
        extra = _threads_beyond_processes(os.getuid())
        if soft != resource.RLIM_INFINITY:
            soft += extra
        if hard != resource.RLIM_INFINITY:
            hard += extra
    return _setrlimit(which, (soft, hard))


_scandir, _listdir = os.scandir, os.listdir


def _system_proxies() -> None:
    """macOS's ``_scproxy`` (its system proxy settings, which ``urllib.request`` reads on
    ``darwin``), with no proxy set."""
    scproxy = types.ModuleType("_scproxy")
    scproxy._get_proxy_settings = lambda: {"exclude_simple": False, "exceptions": ()}  # type: ignore[attr-defined]
    scproxy._get_proxies = dict  # type: ignore[attr-defined]
    sys.modules["_scproxy"] = scproxy


def simulate() -> None:
    import sysconfig

    built = importlib.import_module(sysconfig._get_sysconfigdata_name())  # type: ignore[attr-defined]
    sys.platform = "darwin"
    # How this Python was built, under the name sysconfig now looks for (_darwin_ in it).
    sys.modules[sysconfig._get_sysconfigdata_name()] = built  # type: ignore[attr-defined]
    _system_proxies()
    for module, names in LINUX_ONLY.items():
        for name in names:
            if module is not None and hasattr(module, name):
                delattr(module, name)
    builtins.open = io.open = _refusing(io.open)
    for name in ("open", "scandir", "listdir", "stat", "lstat"):
        real = getattr(os, name)
        wrapped = _refusing(real, default="." if name in ("scandir", "listdir") else None)
        setattr(os, name, wrapped)
        for supports in (os.supports_fd, os.supports_dir_fd, os.supports_follow_symlinks):
            if real in supports:  # what shutil.rmtree asks before it uses descriptors
                supports.add(wrapped)
    resource.getrusage = getrusage
    resource.setrlimit = setrlimit


simulate()
