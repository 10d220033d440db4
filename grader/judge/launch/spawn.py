"""The ``spawn`` launcher: a fresh interpreter per worker, bounded (resource limits, capped
output, a clean environment, its own session) but not isolated beyond Landlock. It is the
portable path (macOS, Windows), ``--no-sandbox`` and the fallback when the fork server cannot
start; the fork server (``grader.judge.launch.forkserver``) implements the same signature.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from grader.judge.launch import handle
from grader.protocol.boot import spawn_arguments, worker_environment
from grader.protocol.limits import Limits
from grader.shared.course import child_environment


def start_spawn(
    exercise_id: str,
    student_file: Path,
    submission_root: Path,
    limits: Limits,
    scratch: Path,
    landlock: bool = False,
    reader_thread: bool = os.name == "nt",
) -> handle.WorkerHandle:
    """Start a worker as a fresh interpreter: bounded, in its own session, with a clean
    environment; isolated only by Landlock when ``landlock`` is asked for (Linux).

    On Windows the pipes are handed over as inheritable handles and replies are read by a
    thread (``reader_thread``, which can be forced elsewhere to test that path)."""
    workdir, output_path = handle.worker_folders(exercise_id, scratch)
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    extra: dict[str, Any] = {}
    if sys.platform != "win32":  # not os.name: mypy checks only this platform's branch
        child_ends = (req_r, rep_w)
        extra.update(pass_fds=child_ends, start_new_session=True)
    else:  # pragma: no cover - Windows
        import msvcrt

        child_ends = tuple(msvcrt.get_osfhandle(fd) for fd in (req_r, rep_w))
        for end in child_ends:
            os.set_handle_inheritable(end, True)
        info = subprocess.STARTUPINFO()
        info.lpAttributeList = {"handle_list": list(child_ends)}
        extra.update(startupinfo=info, creationflags=subprocess.CREATE_NEW_PROCESS_GROUP)
    argv = spawn_arguments(
        exercise_id,
        str(student_file),
        str(submission_root),
        str(workdir),
        limits,
        landlock,
        *child_ends,
        handles=sys.platform == "win32",
    )
    try:
        with open(output_path, "ab") as out:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=workdir,
                env=worker_environment(str(workdir), child_environment()),
                **extra,
            )
    finally:
        os.close(req_r)
        os.close(rep_w)
    return handle.WorkerHandle(
        process.pid,
        req_w,
        rep_r,
        output_path,
        limits,
        process=process,
        killer=_in_a_job(process, limits) if sys.platform == "win32" else None,
        reader=handle.ReplyReader(rep_r) if reader_thread else None,
    )


def _in_a_job(process: subprocess.Popen, limits: Limits) -> Callable[[], None] | None:
    """Windows: the worker in a job object of its own (its memory, its processes, and every
    process it starts ended with it); what kills the job, or None where none could be made."""
    from grader.judge.launch.winjob import Job

    try:
        job = Job(int(process._handle), limits)  # type: ignore[attr-defined]
    except (OSError, AttributeError) as exc:
        if not _NO_JOB_SAID:
            _NO_JOB_SAID.append(True)
            print(
                f"grade: sandbox layers off here: job object ({exc}): a worker's memory and "
                "processes are not bounded",
                file=sys.stderr,
            )
        return None
    return job.kill


_NO_JOB_SAID: list[bool] = []  # the line above is printed once a process
