"""The first code a worker runs: bounds and isolation, then ``grader.worker.serve.serve``.

Two ways in. A fork-server worker calls ``run_worker`` right after ``isolate.confine`` (in
``grader.worker.forkserver.template``). A spawned worker
(``grader.judge.launch.spawn.start_spawn``: macOS, Windows, ``--no-sandbox``, or a fork server
that could not start) is a fresh interpreter running ``grader.protocol.boot.SPAWN_BOOT``, which
restores the judge's ``sys.path`` (``-I`` keeps the current folder and ``PYTHON*`` variables
out) and calls ``spawned``.
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import TYPE_CHECKING

from grader.protocol.boot import SETUP_FAILED, worker_environment
from grader.shared.course import current
from grader.worker import bounds

if TYPE_CHECKING:
    from grader.protocol.limits import Limits


def run_worker(
    exercise_id: str,
    student_file: str,
    submission_root: str,
    workdir: str,
    limits: Limits,
    own_user_namespace: bool,
    req_fd: int,
    rep_fd: int,
) -> None:
    """Bound this process, then serve the judge; never returns.

    Until ``serve`` tells the judge that the student's file is about to be imported, any
    failure is the grader's own (a torch or Python release it does not handle, a limit the
    host refuses): the judge is told why, and reports it as a failure of the grader, never
    of the student."""
    stage = ["setting up"]
    code = SETUP_FAILED
    try:
        from grader.worker import metakernels
        from grader.worker.serve import serve

        metakernels.install()  # inherited from the fork server; a fresh interpreter needs it
        current()  # the course it was started for, read before its environment is cleared
        environment = worker_environment(workdir)  # read before it is cleared (Windows'
        os.environ.clear()  # SYSTEMROOT and the rest of the allow-list are kept)
        os.environ.update(environment)
        tempfile.tempdir = None  # computed again from TMPDIR, inside the scratch
        sys.dont_write_bytecode = True  # never a .pyc next to the student's file
        os.chdir(workdir)
        show_data_files(student_file, submission_root)
        bounds.apply_limits(limits, own_user_namespace)
        bounds.cap_output(limits)
        if limits.torch_threads > 0:
            import torch  # already imported in a worker forked from the fork server

            torch.set_num_threads(limits.torch_threads)
        code = 1
        serve(
            exercise_id,
            student_file,
            submission_root,
            req_fd,
            rep_fd,
            started=lambda: stage.__setitem__(0, "serving"),
        )
        code = 0
    except BaseException as exc:
        if stage[0] == "setting up":
            code = SETUP_FAILED
            _tell_setup_failed(rep_fd, exc)
    os._exit(code)


MAX_DATA_FILES = 64  # in each folder


def show_data_files(student_file: str, submission_root: str) -> None:
    """Show the submission's data files in the current folder (the worker's scratch), as
    ``python exercises/exN.py`` run from the submission's folder would find them, or run from
    the exercise's folder: a link to each file at the submission's root, then to each beside
    the exercise file that the root does not have. The links lead to the sandbox's read-only
    copy; the scratch itself stays writable. ``.py`` files and hidden ones are left out."""
    for folder in dict.fromkeys((submission_root, os.path.dirname(student_file))):
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)[:MAX_DATA_FILES]
        except OSError:
            continue
        for entry in entries:
            if (
                entry.name.endswith(".py")
                or entry.name.startswith(".")
                or os.path.lexists(entry.name)
            ):
                continue
            try:
                if entry.is_file(follow_symlinks=False):
                    os.symlink(entry.path, entry.name)
            except OSError:  # no links here (Windows without the right): found by __file__
                pass


def _tell_setup_failed(rep_fd: int, exc: BaseException) -> None:
    try:
        from grader.protocol import wire

        text = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
        wire.send(rep_fd, {"ok": False, "setup_failed": text})
    except BaseException:  # noqa: BLE001 - the judge then reads the exit status instead
        pass


def spawned(spec: dict) -> None:
    """The main of a spawned worker (stdout and stderr already go to its output file)."""
    from grader.protocol.limits import Limits

    limits = Limits(**spec["limits"])
    req_fd, rep_fd = spec["req_fd"], spec["rep_fd"]
    if sys.platform == "win32" and spec.get("handles"):  # pragma: no cover - Windows
        import msvcrt

        req_fd = msvcrt.open_osfhandle(req_fd, os.O_RDONLY)
        rep_fd = msvcrt.open_osfhandle(rep_fd, os.O_WRONLY)
    abi = 0
    if spec["landlock"]:  # asked for on Linux: confined by Landlock where the kernel has it
        from grader.worker.sandbox.linux import landlock_abi

        abi = landlock_abi()
    if abi:
        import torch  # noqa: F401 - loaded before the read rules, as in the fork server

        from grader.worker import tables

        tables.load_all()
        from grader.worker.sandbox.isolate import (
            Placement,
            Plan,
            SetupError,
            confine,
            runtime_paths,
        )

        placement = Placement(
            spec["student_file"],
            spec["root"],
            spec["workdir"],
            read_roots=[spec["root"]],
            write_roots=[spec["workdir"]],
        )
        try:
            confine(Plan(frozenset({"landlock"}), abi), placement, runtime_paths())
        except SetupError as exc:
            print(f"the sandbox could not be set up: {exc}", file=sys.stderr, flush=True)
            os._exit(SETUP_FAILED)
    run_worker(
        spec["exercise"],
        spec["student_file"],
        spec["root"],
        spec["workdir"],
        limits,
        False,
        req_fd,
        rep_fd,
    )
