"""How the judge starts a process of the worker side, as both sides agree: the environment it
gets (an allow-list: no secret of the grader's environment reaches student code), the command
lines that boot a spawned worker and the fork server, the exit status of a worker whose sandbox
could not be set up, the request that ends a worker and the statuses it ends with when it saw
tampering, and the names of the isolation layers the fork server reports."""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Mapping

    from grader.protocol.limits import Limits

# Variables a worker may inherit: locale, thread and speed settings, which change no result.
KEEP_ENV = (
    "PATH",
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
    "SYSTEMROOT",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "SYSTEMDRIVE",  # Windows: where the system is (some libraries look for their files there)
    "NUMBER_OF_PROCESSORS",
    "PROCESSOR_ARCHITECTURE",
    "GRADER_PACK",  # the course (grader.shared.course.child_environment): workers load its probes
    "GRADER_META_KERNELS",  # "off": the meta device on torch's own kernels (slower, same shapes)
)

SETUP_FAILED = 121  # the exit status of a worker whose sandbox could not be set up
# the exit status of a worker that its own memory watch ended: where the OS enforces no memory
# limit (macOS), a thread of the worker's ends it once it holds more than a worker may use
OUT_OF_MEMORY = 122

END = "end"  # the request after an exercise's last call: the worker's loop exits (status 0)

# The exit statuses of a worker that saw student code tamper with the grader, and what each
# says. An exit status is the one message student code can neither swallow nor forge into a
# pass: it is read from the kernel, however the channel between worker and judge was rerouted.
TAMPERED = {
    113: "it rewrote the code or defaults of one of the grader's functions",
    116: "it reached into the worker's memory or C API through ctypes",
    117: "it opened the worker's own memory (/proc/.../mem)",
    118: "the grader's own check found its modules, functions or channel changed",  # detail: sent
}

# The isolation layers, by the name the fork server reports each under, in words.
LAYER_NAMES = {
    "user": "user namespace",
    "net": "network namespace (no network)",
    "mount": "read-only filesystem with a private scratch (mount namespace)",
    "pid": "private process tree (PID namespace)",
    "ipc": "IPC namespace",
    "landlock": "Landlock (file access, TCP, signals)",
    "nobody": "unprivileged worker user (the grader runs as root)",
    "cgroup": "process limit for root (pids cgroup)",
    "fork server": "fork server (warm workers)",
}

# A fresh interpreter (``-I``: no current folder, no ``PYTHON*`` variables) restores the
# judge's ``sys.path`` from its JSON argument and calls the entry named, with that argument:
# the worker side (a spawned worker, the fork server), or the notebook's judge process.
BOOT = (
    "import json, sys; a = json.loads(sys.argv[1]); sys.path[:] = a['sys_path']; "
    "from {module} import {function}; {function}(a)"
)
SPAWN_BOOT = BOOT.format(module="grader.worker.entry", function="spawned")
FORK_SERVER_BOOT = BOOT.format(module="grader.worker.forkserver.template", function="main")


def worker_packages() -> set[str]:
    """The top-level packages the worker side imports: the grader's, and those of every pack
    in use (the pack's own and those of the modules its workers load, ``Pack.worker``)."""
    from grader.shared.course import packs
    from grader.shared.packs import PackError

    names = {"grader"}
    try:
        for pack in packs():
            names.add(pack.package)
            names.update(module.split(".")[0] for module in pack.worker)
    except PackError:
        pass  # said where the packs are read; the grader's own package still counts
    return names


def _imported_from(folder: str) -> bool:
    """Whether the worker side's code is imported from ``folder`` (a checkout that is not
    installed): the grader or one of the packages a pack's workers load is in it."""
    return any(
        os.path.isfile(os.path.join(folder, package, "__init__.py"))
        or os.path.isfile(os.path.join(folder, package + ".py"))
        for package in worker_packages()
    )


def boot_arguments(boot: str, config: dict, worker_side: bool = False) -> list[str]:
    """The command line of a fresh interpreter running ``boot`` with ``config`` and this
    process's ``sys.path``; for the ``worker_side`` (a spawned worker, the fork server),
    without the current folder (``python -m grader`` puts it there: a course folder, say)
    unless the grader is imported from it (a checkout that is not installed). Workers read
    nothing because it is on ``sys.path`` (``grader.worker.sandbox.roots``); this keeps even
    its name out of their process."""
    try:
        cwd = os.getcwd()
    except OSError:  # removed: nothing can be imported from it
        cwd = ""
    # A kernel's sys.path may hold other things than strings.
    path = [p or cwd for p in sys.path if isinstance(p, str) and (p or cwd)]
    if worker_side and cwd and not _imported_from(cwd):
        path = [p for p in path if os.path.abspath(p) != cwd]
    config = {"sys_path": path, **config}
    return [sys.executable, "-I", "-c", boot, json.dumps(config)]


def worker_environment(home: str, source: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment of a worker (and of the fork server): an allow-list, never a
    deny-list, so that no secret of the grader's environment can reach student code."""
    given: Mapping[str, str] = os.environ if source is None else source
    env = {k: given[k] for k in KEEP_ENV if k in given}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.update(
        HOME=home,
        TMPDIR=home,
        TEMP=home,
        TMP=home,
        # Windows finds the home folder (Path.home(), ~) in these, not in HOME
        USERPROFILE=home,
        APPDATA=home,
        LOCALAPPDATA=home,
        PYTHONHASHSEED="0",
        PYTHONDONTWRITEBYTECODE="1",
        PYTHONIOENCODING="utf-8",
        # torch.compile runs the eager code: a worker has no compiler, and what is graded is
        # what the code computes, which compiling does not change. (A leftover breakpoint()
        # does nothing either: grader.worker.serve replaces sys.breakpointhook.)
        TORCH_COMPILE_DISABLE="1",
        # OpenMP threads that finished their share sleep at once instead of spinning for a
        # while: with several workers on few cores, spinning threads burn the cores the
        # others (and the judge) need.
        OMP_WAIT_POLICY="PASSIVE",
        # glibc's malloc gives every large tensor fresh pages from mmap and returns them when
        # it is freed, so each forward pass pays a page fault per 4 KiB again (a 1,024-token
        # attention of 12 heads: 48 MiB a tensor). Kept by malloc instead, freed memory is
        # reused: such forward passes take a quarter less time. Workers are short-lived (and
        # the fork server never computes); peak use is the same.
        MALLOC_MMAP_MAX_="0",
        MALLOC_TRIM_THRESHOLD_=str(1 << 40),
    )
    return env


def spawn_arguments(
    exercise_id: str,
    student_file: str,
    submission_root: str,
    workdir: str,
    limits: Limits,
    landlock: bool,
    req_fd: int,
    rep_fd: int,
    handles: bool = False,
) -> list[str]:
    """The command line of a spawned worker; ``landlock``: it confines itself with Landlock
    where the kernel has it; ``handles``: the two ends are Windows handles."""
    spec = {
        "exercise": exercise_id,
        "student_file": student_file,
        "root": submission_root,
        "workdir": workdir,
        "limits": limits.__dict__,
        "landlock": landlock,
        "req_fd": req_fd,
        "rep_fd": rep_fd,
        "handles": handles,
    }
    return boot_arguments(SPAWN_BOOT, spec, worker_side=True)


def fork_server_arguments(config: dict) -> list[str]:
    """The command line of the fork server; ``config`` is what its ``main`` reads."""
    return boot_arguments(FORK_SERVER_BOOT, config, worker_side=True)
