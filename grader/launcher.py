"""Starting workers and talking to them: the judge's side of the worker protocol.

``WorkerHandle.call`` sends one request and waits, with a time limit, for the reply. A worker
that dies, hangs or breaks the protocol raises ``WorkerLost`` (a ``BaseException``, so that it
escapes hypothesis at once instead of being shrunk like a wrong answer).

This module holds the plain ``spawn`` launcher: a fresh interpreter per worker. The sandboxed
fork-server launcher (``grader.sandbox``) implements the same ``start`` signature.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from grader import wire


@dataclass(frozen=True)
class Limits:
    """Bounds on student code; every one can be changed from the CLI or ``grading.toml``."""

    call_timeout_s: float = 20.0  # one call into student code
    exercise_budget_s: float = 90.0  # all checks of one exercise
    import_timeout_s: float = 20.0  # importing the student's file
    memory_mb: int = 3072  # address space beyond the worker's own baseline
    max_processes: int = 64
    max_file_mb: int = 16
    max_output_kb: int = 64  # what student code may print; the rest is dropped


class WorkerLost(BaseException):  # noqa: N818 - it is an event, not an error of ours
    """The worker can no longer answer: ``status`` is ``"timeout"`` or ``"error"``."""

    def __init__(self, status: str, reason: str):
        super().__init__(reason)
        self.status = status
        self.reason = reason


class StudentError(Exception):
    """Student code raised; ``info`` is the worker's plain description of the exception."""

    def __init__(self, info: dict):
        super().__init__(info.get("message", ""))
        self.info = info


def describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "the worker stopped answering"
    if returncode < 0:
        sig = -returncode
        name = signal.Signals(sig).name if sig in signal.valid_signals() else str(sig)
        if sig == signal.SIGSEGV:
            return "the worker crashed with a segmentation fault (SIGSEGV)"
        if sig == signal.SIGKILL:
            return "the worker was killed (SIGKILL), most often for using too much memory"
        return f"the worker was killed by signal {name}"
    return f"the worker exited with status {returncode} while the grader was waiting for it"


@dataclass
class WorkerHandle:
    pid: int
    req_fd: int
    rep_fd: int
    output_path: Path
    limits: Limits
    process: Any = None  # a Popen in spawn mode; None when a fork server owns the process
    reaper: Any = None  # callable(pid) -> returncode | None, for fork-server children
    closed: bool = field(default=False)

    def returncode(self) -> int | None:
        if self.process is not None:
            try:
                return self.process.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                return None
        return self.reaper(self.pid) if self.reaper else None

    def kill(self) -> None:
        for target in (lambda: os.killpg(self.pid, signal.SIGKILL), lambda: os.kill(self.pid, 9)):
            try:
                target()
            except (ProcessLookupError, PermissionError, OSError):
                pass
        if self.process is not None:
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        elif self.reaper:
            self.reaper(self.pid)

    def receive(self, timeout: float) -> Any:
        try:
            reply = wire.recv(self.rep_fd, timeout)
        except wire.ChannelTimeout:
            self.kill()
            raise WorkerLost(
                "timeout", f"student code did not finish within {timeout:g} s"
            ) from None
        except wire.ChannelClosed:
            code = self.returncode()
            self.kill()
            raise WorkerLost("error", describe_exit(code)) from None
        except wire.BadMessage as exc:
            self.kill()
            raise WorkerLost("error", f"the worker sent a message the grader refuses ({exc})")
        if not isinstance(reply, dict) or "ok" not in reply:
            self.kill()
            raise WorkerLost("error", "the worker sent a reply of the wrong shape")
        if not reply["ok"]:
            raise StudentError(reply.get("error") or {})
        return reply.get("value")

    def call(self, action: str, timeout: float | None = None, **args: Any) -> Any:
        """Run one probe in the worker and return its plain-data value."""
        if self.closed:
            raise WorkerLost("error", "the worker is already closed")
        try:
            wire.send(self.req_fd, {"action": action, "args": args})
        except (BrokenPipeError, OSError):
            code = self.returncode()
            self.kill()
            raise WorkerLost("error", describe_exit(code)) from None
        return self.receive(self.limits.call_timeout_s if timeout is None else timeout)

    def output(self) -> str:
        """What student code printed (capped at ``limits.max_output_kb``)."""
        cap = self.limits.max_output_kb * 1024
        try:
            with open(self.output_path, "rb") as f:
                data = f.read(cap + 1)
        except OSError:
            return ""
        text = data[:cap].decode("utf-8", "replace")
        if len(data) > cap:
            text += f"\n[output cut at {self.limits.max_output_kb} KiB]"
        return text

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for fd in (self.req_fd, self.rep_fd):
            try:
                os.close(fd)
            except OSError:
                pass
        self.kill()


def start_spawn(
    exercise_id: str, student_file: Path, submission_root: Path, limits: Limits, scratch: Path
) -> WorkerHandle:
    """Start a worker as a fresh interpreter (no sandbox): the portable fallback."""
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    output_path = Path(tempfile.mkstemp(prefix="out-", suffix=".txt", dir=scratch)[1])
    with open(output_path, "wb") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "grader.worker",
                exercise_id,
                str(student_file),
                str(submission_root),
                str(req_r),
                str(rep_w),
            ],
            pass_fds=(req_r, rep_w),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=scratch,
            start_new_session=True,
        )
    os.close(req_r)
    os.close(rep_w)
    return WorkerHandle(process.pid, req_w, rep_r, output_path, limits, process=process)
