"""The isolation layers of a Linux worker, and the steps that put a fresh process inside them.

A worker is made in two forks from the fork server (``grader.worker.forkserver.template``), ahead of
time (a "spare" waits for its job, so that starting a worker costs no fork at all):

1. ``enter_namespaces`` runs in the first child: new user, network, mount, PID and IPC
   namespaces (the server writes the user mapping). It then forks the worker, PID 1 of the new
   PID namespace (when it dies the kernel kills every process it started), and exits.
2. ``prepare_filesystem`` runs in the worker once it has its job: a private size-capped
   ``tmpfs`` over ``/tmp`` holding a read-only copy of the submission (read by the server,
   never through a link) and a writable work folder; every other mount made read-only.
3. ``confine``: a fresh ``/proc`` that shows only its own processes (only ever mounted in a
   mount namespace of its own), its own session, Landlock (reads only the installation, less
   the packs' judge-only modules, and the submission's copy, ``grader.worker.sandbox.roots``;
   writes only in the scratch; no TCP, no signals out), no capabilities and no new
   privileges.

A grader run as root gives its workers the host's ``nobody`` (the nobody layer): root of the
worker's user namespace is mapped to it, or, where the kernel refuses user namespaces, the
worker becomes it by ``setresuid``. Folders of the installation that nobody cannot reach
(Python under ``/root``) are shown to it in its mount namespace (``roots.cover_hidden``).

Each layer is tried once by ``grader.worker.forkserver.layers``; a layer the kernel
refuses is left out of the plan and reported, never silently dropped.
"""

from __future__ import annotations

import json
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path

from grader.protocol.boot import LAYER_NAMES
from grader.protocol.limits import MAX_SUBMISSION_BYTES
from grader.shared.regular import read_regular
from grader.worker.sandbox import linux, roots
from grader.worker.sandbox.roots import NOBODY, SYSTEM_READ
from grader.worker.sandbox.roots import runtime_paths as runtime_paths  # the server's, entry's

LAYERS = {k: v for k, v in LAYER_NAMES.items() if k != "fork server"}
MAX_COPY_FILES = 64
MAX_COPY_BYTES = MAX_SUBMISSION_BYTES


class SetupError(Exception):
    """A layer could not be set up: ``layer`` is a key of ``LAYERS``."""

    def __init__(self, layer: str, reason: str):
        super().__init__(f"{layer}: {reason}")
        self.layer, self.reason = layer, reason


@dataclass(frozen=True)
class Plan:
    layers: frozenset[str]
    landlock_abi: int = 0
    host_mount_ns: int = 0  # the server's mount namespace: a worker never mounts in it

    def __contains__(self, layer: str) -> bool:
        return layer in self.layers

    @property
    def clone_flags(self) -> int:
        flags = {
            "user": linux.CLONE_NEWUSER,
            "net": linux.CLONE_NEWNET,
            "mount": linux.CLONE_NEWNS,
            "pid": linux.CLONE_NEWPID,
            "ipc": linux.CLONE_NEWIPC,
        }
        return sum(v for k, v in flags.items() if k in self.layers)


@dataclass
class Placement:
    """Where a worker finds its files once inside the plan."""

    student_file: str
    submission_root: str
    workdir: str
    read_roots: list[str] = field(default_factory=list)
    write_roots: list[str] = field(default_factory=list)


def scratch_mountpoint(runtime_paths: list[str]) -> str:
    """``/tmp``, unless Python or the grader live there (the tmpfs would hide them)."""
    for candidate in ("/tmp", "/var/tmp", "/dev/shm"):
        if os.path.isdir(candidate) and not any(
            p == candidate or p.startswith(candidate + "/") for p in runtime_paths
        ):
            return candidate
    raise SetupError("mount", "no folder to mount the scratch on")


def _regular_files(folder: Path, wanted, room: list[int]) -> list[tuple[str, bytes]]:
    """The regular files of ``folder`` whose names ``wanted(name)`` accepts, read never through
    a link, while ``room`` (files left, bytes left) lasts."""
    files = []
    names = sorted(os.listdir(folder)) if folder.is_dir() else []
    for name in [n for n in names if wanted(n)]:
        if room[0] <= 0:
            break
        data = read_regular(folder / name, room[1])
        if data is None:
            continue
        room[0] -= 1
        room[1] -= len(data)
        files.append((name, data))
    return files


def read_submission(student_file: Path, root: Path) -> tuple[str, list[tuple[str, bytes]]]:
    """The student's files as (the exercise folder relative to ``root``, [(name, bytes)]):
    the student's file, then the other ``.py`` files beside it (helper modules), then the
    other files there (data), then the files at the submission's root (a name starting with
    ``/``), each a regular file, never read through a symbolic link, within the size and
    number of files a worker takes in."""
    folder = student_file.parent
    try:
        rel = folder.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        rel = "."
    room = [MAX_COPY_FILES, MAX_COPY_BYTES]
    files = _regular_files(folder, lambda n: n == student_file.name, room)
    files += _regular_files(folder, lambda n: n.endswith(".py") and n != student_file.name, room)
    files += _regular_files(folder, lambda n: not n.endswith(".py") and n[:1] != ".", room)
    if rel not in (".", ""):
        files += [("/" + n, d) for n, d in _regular_files(root, lambda n: n[:1] != ".", room)]
    return rel, files


def write_maps(pid: int, plan: Plan) -> None:
    """Map the worker's user (run by the fork server, the parent, once the child unshared)."""
    if "nobody" in plan:
        uid = gid = NOBODY  # as root: the worker's files and processes belong to nobody
    else:
        uid, gid = os.geteuid(), os.getegid()
        with open(f"/proc/{pid}/setgroups", "w") as f:
            f.write("deny")
    with open(f"/proc/{pid}/uid_map", "w") as f:
        f.write(f"0 {uid} 1\n")
    with open(f"/proc/{pid}/gid_map", "w") as f:
        f.write(f"0 {gid} 1\n")


def enter_namespaces(plan: Plan, wait_for_maps) -> None:
    """Step 1 (in the spare's first child): new namespaces. ``wait_for_maps()`` asks the
    parent, which has the privileges for it, to write the user mapping."""
    if plan.clone_flags:
        try:
            linux.unshare(plan.clone_flags)
        except OSError as exc:
            raise SetupError(_failing_namespace(plan), str(exc)) from None
    if "user" in plan:
        wait_for_maps()


def _failing_namespace(plan: Plan) -> str:
    """The first namespace of ``plan`` that cannot be entered on its own (this process is
    about to exit: entering the others on the way does no harm)."""
    for layer in ("user", "net", "mount", "pid", "ipc"):
        if layer in plan:
            try:
                linux.unshare(Plan(frozenset({layer})).clone_flags)
            except OSError:
                return layer
    return "user" if "user" in plan else "mount"


def pack_files(rel: str, files: list[tuple[str, bytes]]) -> bytes:
    header = json.dumps({"rel": rel, "files": [[n, len(d)] for n, d in files]}).encode()
    return header + b"\n" + b"".join(d for _, d in files)


def unpack_files(blob: bytes) -> tuple[str, list[tuple[str, bytes]]]:
    header, _, body = blob.partition(b"\n")
    meta = json.loads(header)
    files, at = [], 0
    for name, size in meta["files"]:  # a name starting with "/": at the submission's root
        at_root = "/" if name.startswith("/") else ""
        files.append((at_root + os.path.basename(name), body[at : at + size]))
        at += size
    return meta["rel"], files


def prepare_filesystem(
    plan: Plan,
    packed: bytes,
    student_file: Path,
    root: Path,
    scratch: Path,
    scratch_mb: int,
    runtime: list[str],
) -> Placement:
    """Step 2 (in the worker, PID 1 of its namespace): the filesystem it will see. With the
    mount layer, a private tmpfs holds a read-only copy of the submission (``packed``, read by
    the server) and the work folder, and everything else is read-only."""
    if "mount" not in plan:
        _become_root_inside(plan)
        return Placement(
            str(student_file),
            str(root),
            str(scratch),
            read_roots=[str(root)],
            write_roots=[str(scratch)],
        )
    rel, files = unpack_files(packed)
    top = scratch_mountpoint(runtime)
    _own_mount_namespace(plan)
    try:
        linux.mount(None, "/", None, linux.MS_REC | linux.MS_PRIVATE)
        shown = roots.cover_hidden(runtime) if "nobody" in plan else []
        linux.mount(
            "tmpfs",
            top,
            "tmpfs",
            linux.MS_NOSUID | linux.MS_NODEV,
            f"size={scratch_mb}m,mode=0755,uid=0,gid=0",
        )
    except OSError as exc:
        raise SetupError("mount", str(exc)) from None
    _become_root_inside(plan)
    try:
        roots.show_again(shown)
    except OSError as exc:
        raise SetupError("nobody", f"the installation could not be shown to it: {exc}") from None
    sub, work = f"{top}/submission", f"{top}/work"
    folder = os.path.normpath(f"{sub}/{rel}")
    os.makedirs(folder, exist_ok=True)
    os.mkdir(work, 0o700)
    placed = [f"{sub}/{n[1:]}" if n[:1] == "/" else f"{folder}/{n}" for n, _ in files]
    for path, (_, data) in zip(placed, files, strict=True):
        with open(path, "wb") as f:
            f.write(data)
    if "nobody" in plan and "user" not in plan:  # written by root: nobody's from confine on
        for path in [top, work] + [d for d, _, _ in os.walk(sub)]:
            os.chown(path, NOBODY, NOBODY)
        for path in placed:
            os.chown(path, NOBODY, NOBODY)
    try:
        linux.mount(sub, sub, None, linux.MS_BIND | linux.MS_REC)
        _read_only_everywhere()
        linux.mount_setattr(linux.AT_FDCWD, top, 0, attr_clr=linux.MOUNT_ATTR_RDONLY)
    except OSError as exc:
        raise SetupError("mount", str(exc)) from None
    return Placement(
        f"{folder}/{student_file.name}", sub, work, read_roots=[sub], write_roots=[work]
    )


def mount_namespace() -> int:
    """An id of this process's mount namespace (0 if it cannot be read)."""
    try:
        return os.stat("/proc/self/ns/mnt").st_ino
    except OSError:
        return 0


def _own_mount_namespace(plan: Plan) -> None:
    """Refuse to mount anything unless this process is in a mount namespace of its own: a
    mount in the server's namespace would change the whole machine's filesystem."""
    here = mount_namespace()
    if not plan.host_mount_ns or not here or here == plan.host_mount_ns:
        raise SetupError("mount", "not in a mount namespace of its own")


def _become_root_inside(plan: Plan) -> None:
    """Become root of the worker's user namespace: with the nobody layer, that is the host's
    ``nobody``, whose file access is the world's."""
    if "user" not in plan:
        return
    try:
        if "nobody" in plan:
            os.setgroups([])
        os.setresgid(0, 0, 0)
        os.setresuid(0, 0, 0)
    except OSError as exc:
        raise SetupError("nobody" if "nobody" in plan else "user", str(exc)) from None
    if "nobody" in plan:
        _die_with_server()


def _become_nobody() -> None:
    """Without a user namespace (the grader is root, the kernel refuses one): become the
    host's ``nobody`` directly, keeping no capability."""
    try:
        linux.drop_bounding_set()
        os.setgroups([])
        os.setresgid(NOBODY, NOBODY, NOBODY)
        os.setresuid(NOBODY, NOBODY, NOBODY)
    except OSError as exc:
        raise SetupError("nobody", str(exc)) from None
    _die_with_server()


def _die_with_server() -> None:
    """A change of user clears the parent-death signal: set it again."""
    try:
        linux.prctl(linux.PR_SET_PDEATHSIG, signal.SIGKILL)
    except OSError:
        pass


def _read_only_everywhere() -> None:
    """Every mount read-only and nosuid: one call where the kernel has ``mount_setattr``
    (5.12+), else a bind-remount of each mount that keeps the flags locked on it."""
    try:
        linux.mount_setattr(
            linux.AT_FDCWD,
            "/",
            linux.AT_RECURSIVE,
            attr_set=linux.MOUNT_ATTR_RDONLY | linux.MOUNT_ATTR_NOSUID,
        )
        return
    except OSError as exc:
        if exc.errno not in (38, 22):  # ENOSYS, EINVAL: an older kernel
            raise
    with open("/proc/self/mountinfo") as f:
        points = [line.split()[4] for line in f]
    for point in sorted(set(points), key=len):
        flags = os.statvfs(point).f_flag
        kept = sum(
            bit
            for st, bit in (
                (os.ST_NOSUID, linux.MS_NOSUID),
                (os.ST_NODEV, linux.MS_NODEV),
                (os.ST_NOEXEC, linux.MS_NOEXEC),
            )
            if flags & st
        )
        linux.mount(
            None,
            point,
            None,
            linux.MS_REMOUNT | linux.MS_BIND | linux.MS_RDONLY | linux.MS_NOSUID | kept,
        )


def confine(plan: Plan, placement: Placement, runtime: list[str]) -> None:
    """Step 3 (in the worker, before it imports anything of the student's)."""
    if "pid" in plan and "mount" in plan:  # never over the host's own /proc
        _own_mount_namespace(plan)
        try:
            linux.mount(
                "proc",
                "/proc",
                "proc",
                linux.MS_NOSUID | linux.MS_NODEV | linux.MS_NOEXEC | linux.MS_RDONLY,
            )
        except OSError as exc:
            raise SetupError("pid", f"a private /proc could not be mounted: {exc}") from None
    if "nobody" in plan:
        if "user" not in plan:
            _become_nobody()
        unreadable = roots.unreadable_by_nobody(runtime + placement.read_roots)
        if unreadable:
            raise SetupError("nobody", f"the user nobody cannot read {unreadable}")
    try:
        os.setsid()
    except OSError:
        pass  # already a session leader
    readable = runtime + SYSTEM_READ + placement.read_roots
    if "landlock" in plan:
        read, listed = roots.carve(readable, roots.judge_only_files())
        try:
            linux.landlock_restrict(
                plan.landlock_abi,
                read_paths=read,
                write_paths=placement.write_roots,
                write_files=["/dev/null"],
                list_paths=listed,
            )
        except OSError as exc:
            raise SetupError("landlock", str(exc)) from None
    roots.forget_other_folders(readable + placement.write_roots)
    try:
        linux.set_no_new_privs()
        linux.drop_capabilities()
    except OSError as exc:
        raise SetupError("user", f"capabilities could not be dropped: {exc}") from None
