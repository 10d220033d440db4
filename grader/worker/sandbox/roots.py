"""What a worker may read: its own copy of the submission and the installation it runs from,
never a folder because it is on ``sys.path`` or is the current one (DESIGN 5.10).

``sys.path`` is the judge's (``grader.protocol.boot``): it may hold the folder ``grade`` was
run from (``python -m grader`` puts it there, and a notebook's kernel, pytest's rootdir ...),
which can be a course folder with the course's seed and every classmate's submission. So the
read roots are derived from the installation itself (``runtime_paths``): the standard library
and the site folders of this interpreter, the shared libraries beside it, and the folder of
each package the worker has imported (torch, numpy, the grader, a pack's packages: in an
editable install ``grader/`` and the pack's folders of the checkout, never the checkout
itself, whose ``exercises/`` may hold someone's answers). The system's libraries and a few files of
``/etc``, ``/dev`` and ``/sys`` that Python and torch read are added by ``SYSTEM_READ``.

A grader run as root gives its workers the user ``nobody`` (``grader.worker.sandbox.isolate``);
a folder of the installation that ``nobody`` cannot reach (Python under ``/root``, mode 0700)
is shown to it by ``hidden_from_nobody`` and ``isolate``: a small ``tmpfs`` over the folder that
blocks the way, holding only the installation's folders, bound in place.

The installation holds the packs' judge-only modules (their checks, strategies, oracles:
what computes the expected answers), which no worker may read: ``carve`` takes their files
out of the read roots, so that Landlock, which only grants, never grants them, to the worker
or to anything it starts (a child interpreter, ``cat``). A folder that holds one is split:
it may be listed, and each of its entries but the judge-only ones is a read root of its own.
"""

from __future__ import annotations

import os
import site
import stat
import sys
import sysconfig

from grader.worker.sandbox import linux

NOBODY = 65534

# The system's libraries and programs, the kernel's views the worker needs (its own /proc once
# it has a PID namespace; the CPU topology torch and OpenMP read), and single files: the
# dynamic linker's cache (a library loaded late, e.g. by ``import sqlite3``), the time zone,
# and the harmless devices. Not /etc, /home, /root, /srv, /opt, /usr/src, /usr/local/src.
SYSTEM_READ = [
    "/usr/lib",
    "/usr/lib32",
    "/usr/lib64",
    "/usr/libx32",
    "/usr/libexec",
    "/usr/share",
    "/usr/bin",
    "/usr/sbin",
    "/usr/local/lib",
    "/usr/local/lib64",
    "/usr/local/bin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/bin",
    "/sbin",
    "/proc",
    "/sys/devices/system",
    "/etc/ld.so.cache",
    "/etc/localtime",
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
]


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _outermost(paths: set[str]) -> list[str]:
    """``paths`` without those inside another of them."""
    kept: list[str] = []
    for path in sorted(paths, key=lambda p: (p.count("/"), p)):
        if not any(_within(path, k) for k in kept):
            kept.append(path)
    return sorted(kept)


def installation_paths() -> set[str]:
    """The interpreter's own folders: its standard library and site folders (as ``sysconfig``
    and ``site`` name them, and the ``sys.path`` entries inside its prefixes, such as
    ``lib-dynload``), its shared libraries' folder and the executable."""
    found: set[str] = set()
    paths = sysconfig.get_paths()
    found.update(paths[k] for k in ("stdlib", "platstdlib", "purelib", "platlib") if k in paths)
    try:
        found.update(site.getsitepackages())
    except AttributeError:  # an old virtualenv's site module
        pass
    libdir = sysconfig.get_config_var("LIBDIR")
    if libdir:
        found.add(libdir)
    prefixes = {
        os.path.realpath(p)
        for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix)
    }
    prefixes.discard("/")
    on_path = [os.path.realpath(p) for p in sys.path if isinstance(p, str) and p]
    for entry in on_path:
        if os.path.basename(entry) in ("site-packages", "dist-packages") or any(
            _within(entry, p) and entry != p for p in prefixes
        ):
            found.add(entry)
    user_site = site.getusersitepackages() if hasattr(site, "getusersitepackages") else ""
    if user_site and os.path.realpath(user_site) in on_path:
        found.add(user_site)
    if sys.executable:
        found.add(sys.executable)
    return {os.path.realpath(p) for p in found if p and os.path.exists(p)}


def module_paths(covered: set[str]) -> set[str]:
    """The folder of each top-level package imported here (the file of a lone module) that is
    not inside ``covered``: an editable install's ``grader/`` and a pack's packages, a package on
    ``PYTHONPATH``. Namespace packages (no file) are left out: their parts could be anywhere."""
    found = set()
    for name, module in list(sys.modules.items()):
        if "." in name or name in ("__main__", "__mp_main__"):
            continue
        file = getattr(module, "__file__", None)
        if not isinstance(file, str) or not os.path.isabs(file):
            continue
        file = os.path.realpath(file)
        if any(_within(file, c) for c in covered):
            continue
        path = os.path.dirname(file) if hasattr(module, "__path__") else file
        if os.path.exists(path) and path != "/":
            found.add(path)
    return found


def runtime_paths() -> list[str]:
    """The read roots of the installation (``SYSTEM_READ`` comes on top), outermost only."""
    roots = installation_paths()
    roots |= module_paths(roots | set(SYSTEM_READ))
    return _outermost(roots)


_judge_only: list[str] = []


def judge_only_files() -> list[str]:
    """The real paths of every pack's judge-only modules (a package's folder, a module's file,
    and the start of its compiled files' names: ``.../__pycache__/strategies.``), worked out
    once (the fork server does it before it forks a spare)."""
    if not _judge_only:
        from grader.shared.course import packs
        from grader.worker.judgeonly import files_of

        names = [name for pack in packs() for name in pack.judge_only]
        for path, _ in files_of(names):
            path = path.rstrip(os.sep)
            _judge_only.append(path)
            folder, name = os.path.split(path)
            if name.endswith(".py"):
                _judge_only.append(os.path.join(folder, "__pycache__", name[:-2]))
        _judge_only.append("")  # worked out: an installation without packs stays empty
    return [p for p in _judge_only if p]


def carve(roots: list[str], hidden: list[str]) -> tuple[list[str], list[str]]:
    """``roots`` without the paths ``hidden`` (real paths; one that ends with ``.`` stands
    for every file whose name starts with it): the read roots left, and the folders split
    on the way to a hidden path, which may only be listed."""
    read: list[str] = []
    listed: list[str] = []

    def is_hidden(real: str) -> bool:
        return any(real == h or (h.endswith(".") and real.startswith(h)) for h in hidden)

    def visit(path: str, depth: int) -> None:
        real = os.path.realpath(path)
        if is_hidden(real):
            return
        if not any(h.startswith(real.rstrip("/") + "/") for h in hidden):
            read.append(path)
            return
        if depth > 16 or not os.path.isdir(path):
            return
        listed.append(path)
        try:
            names = sorted(os.listdir(path))
        except OSError:
            return
        for name in names:
            visit(os.path.join(path, name), depth + 1)

    for root in roots:
        visit(root, 0)
    return read, listed


def _nobody_may(st: os.stat_result, bits: int) -> bool:
    mode = st.st_mode
    if st.st_uid == NOBODY:
        mode >>= 6
    elif st.st_gid == NOBODY:
        mode >>= 3
    return mode & bits == bits


_hidden: dict[tuple[str, ...], dict[str, list[str]]] = {}


def hidden_from_nobody(paths: list[str]) -> dict[str, list[str]]:
    """For each top-most folder the user ``nobody`` cannot pass through (e.g. ``/root``,
    mode 0700) on the way to one of ``paths``: the paths below it (outermost only).

    Worked out once, by the fork server (before it forks a spare): inside a worker's user
    namespace, a file of the host's root shows as owned by nobody (an unmapped owner)."""
    key = tuple(paths)
    if key not in _hidden:
        _hidden.clear()
        _hidden[key] = _hidden_from_nobody(paths)
    return _hidden[key]


def _hidden_from_nobody(paths: list[str]) -> dict[str, list[str]]:
    hidden: dict[str, list[str]] = {}
    for path in _outermost(set(paths)):
        parts = path.strip("/").split("/")
        for n in range(1, len(parts)):
            folder = "/" + "/".join(parts[:n])
            try:
                st = os.stat(folder)
            except OSError:
                break
            if not _nobody_may(st, 1):  # no search permission for nobody
                hidden.setdefault(folder, []).append(path)
                break
    return hidden


def cover_hidden(runtime: list[str]) -> list[tuple[str, int]]:
    """As root still (the host's uid 0, before the worker becomes root of its namespace): the
    folders of the installation that ``nobody`` cannot reach, held open, then a small tmpfs
    over each folder in their way (``/root``, mode 0700), which also hides the rest of it."""
    hidden = hidden_from_nobody(runtime)
    shown = [
        (path, os.open(path, os.O_PATH | os.O_CLOEXEC))
        for paths in hidden.values()
        for path in paths
    ]
    for folder in hidden:
        linux.mount(
            "tmpfs",
            folder,
            "tmpfs",
            linux.MS_NOSUID | linux.MS_NODEV,
            "size=64k,nr_inodes=4096,mode=0755,uid=0,gid=0",
        )
    return shown


def show_again(shown: list[tuple[str, int]]) -> None:
    """Bind each held folder (or file) at its own path inside the tmpfs that covers it."""
    for path, fd in shown:
        try:
            if stat.S_ISDIR(os.fstat(fd).st_mode):
                os.makedirs(path, 0o755, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(path), 0o755, exist_ok=True)
                os.close(os.open(path, os.O_CREAT | os.O_WRONLY | os.O_CLOEXEC, 0o644))
            linux.mount(f"/proc/self/fd/{fd}", path, None, linux.MS_BIND | linux.MS_REC)
        finally:
            os.close(fd)


def unreadable_by_nobody(paths: list[str]) -> str | None:
    """The first of ``paths`` this process (become ``nobody``) cannot read, or None."""
    for path in paths:
        try:
            is_dir = stat.S_ISDIR(os.stat(path).st_mode)
        except OSError:
            return path
        if not os.access(path, os.R_OK | (os.X_OK if is_dir else 0)):
            return path
    return None


def forget_other_folders(roots: list[str]) -> None:
    """Drop from ``sys.path`` the folders a worker may not read (the judge's current folder,
    pytest's rootdir, ``PYTHONPATH``), and what the import system remembers of them (the
    names in each folder it listed): student code could print them. (String prefixes first:
    the cache holds a finder for each of torch's hundreds of packages.)"""
    inside = tuple(r.rstrip("/") + "/" for r in roots)
    exact = set(roots)

    def readable(path: str) -> bool:
        return path in exact or path.startswith(inside)

    kept = []
    for entry in sys.path:
        if isinstance(entry, str) and entry and readable(os.path.realpath(entry)):
            kept.append(entry)
    sys.path[:] = kept
    inside += tuple(k.rstrip("/") + "/" for k in kept)
    exact.update(kept)
    for key in list(sys.path_importer_cache):
        if isinstance(key, str) and key and (readable(key) or readable(os.path.realpath(key))):
            continue
        del sys.path_importer_cache[key]
