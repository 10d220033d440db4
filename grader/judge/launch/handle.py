"""Talking to a started worker: the judge's side of the worker protocol.

``WorkerHandle.call`` sends one request and waits, with a time limit, for the reply. A worker
that dies, hangs, runs out of memory or breaks the protocol raises ``WorkerLost`` (a
``BaseException``, so that it escapes hypothesis at once instead of being shrunk like a wrong
answer). Every call is bounded by ``Limits.call_timeout_s`` and by what is left of the
exercise's ``Limits.exercise_budget_s``.

Workers are started by ``grader.judge.launch.spawn`` (a fresh interpreter each) or by the fork
server (``grader.judge.launch.forkserver``); both hand back a ``WorkerHandle``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from grader.judge.launch.reader import ReplyReader
from grader.protocol import wire
from grader.protocol.boot import END, OUT_OF_MEMORY, SETUP_FAILED, TAMPERED
from grader.protocol.limits import Limits
from grader.shared import timing
from grader.shared.safetext import SHORT_LIMIT, safe_info, safe_text

T = TypeVar("T")


class WorkerLost(BaseException):  # noqa: N818 - it is an event, not an error of ours
    """The worker can no longer answer: ``status`` is ``"timeout"`` or ``"error"``; ``ours``:
    it was lost before it began to import the student's file, so the grader is to blame."""

    def __init__(self, status: Literal["timeout", "error"], reason: str, ours: bool = False):
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.ours = ours


class Tampered(BaseException):  # noqa: N818 - a verdict, raised past hypothesis like WorkerLost
    """The worker reports that student code changed the grader's own objects."""

    def __init__(self, what: str):
        super().__init__(what)
        self.what = what


class StudentError(Exception):
    """Student code raised; ``info`` is the worker's plain description of the exception."""

    def __init__(self, info: dict):
        super().__init__(info.get("message", ""))
        self.info = info


FINISH_GRACE_S = 5.0  # how long a worker may take to end once asked to
START_TIMEOUT_S = 120.0  # how long a worker may take to start: a bound against a hang only

# Exit statuses of a Windows process that crashed (NTSTATUS codes, as unsigned numbers)
WINDOWS_CRASHES = {
    0xC0000005: "an access violation, Windows' segmentation fault",
    0xC00000FD: "a stack overflow",
    0xC0000017: "out of memory",
    0xC000001D: "an illegal instruction",
    0xC0000409: "a stack buffer overrun",
}

MEMORY_MARKERS = ("can't allocate memory", "not enough memory", "out of memory")


def describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "the worker stopped answering"
    if returncode < 0:
        sig = -returncode
        name = signal.Signals(sig).name if sig in signal.valid_signals() else str(sig)
        if sig == signal.SIGSEGV:
            return "the worker crashed with a segmentation fault (SIGSEGV)"
        if sig == getattr(signal, "SIGKILL", None):
            return "the worker was killed (SIGKILL), most often for using too much memory"
        if sig == getattr(signal, "SIGXCPU", None):
            return "the worker used up its CPU time limit (SIGXCPU)"
        return f"the worker was killed by signal {name}"
    if returncode in WINDOWS_CRASHES:  # an NTSTATUS: Windows' way of saying a signal
        return f"the worker crashed ({WINDOWS_CRASHES[returncode]})"
    if returncode == OUT_OF_MEMORY:
        return "the worker was ended for using too much memory (more than a worker may use)"
    if returncode == SETUP_FAILED:
        return "the grader could not set up the sandbox for this worker"
    return f"the worker exited with status {returncode} while the grader was waiting for it"


def out_of_memory(info: dict) -> bool:
    """Whether a student exception is the memory limit being hit."""
    if info.get("type") == "MemoryError":
        return True
    message = str(info.get("message", "")).lower()
    return info.get("type") == "RuntimeError" and any(m in message for m in MEMORY_MARKERS)


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
    killer: Any = None  # callable() that kills the worker and every process it started
    extra_fds: tuple[int, ...] = ()  # closed with the handle (status pipe, pidfd)
    deadline: float | None = None  # the end of the exercise's budget, set at the first call
    reader: ReplyReader | None = None  # replies read by a thread (Windows)
    started: bool = False  # the worker said it set itself up and imports the student's file
    diagnosed_s: float = 0.0  # the judge's time spent locating faults in this worker's answer

    def __post_init__(self) -> None:
        wire.widen(self.req_fd)
        wire.widen(self.rep_fd)

    def fds(self) -> tuple[int, ...]:
        """The descriptors this handle owns (a forked judge keeps only its own worker's)."""
        return (self.req_fd, self.rep_fd, *self.extra_fds)

    def returncode(self) -> int | None:
        if self.process is not None:
            try:
                return self.process.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                return None
        return self.reaper(self.pid) if self.reaper else None

    def kill(self) -> None:
        if self.killer is not None:
            self.killer()
        elif self.process is not None:
            if hasattr(os, "killpg") and self.process.returncode is None:  # not reaped yet
                try:  # its own session: what it started in its group goes with it
                    os.killpg(self.pid, signal.SIGKILL)
                except OSError:
                    pass
            try:
                self.process.kill()
            except OSError:
                pass
        if self.process is not None:
            try:
                self.process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        elif self.reaper:
            self.reaper(self.pid)

    def receive(self, timeout: float) -> Any:
        """The next reply's value, within ``timeout`` seconds; the worker's first message
        ("started", or why it could not set itself up) is read on the way, within
        ``START_TIMEOUT_S`` of its own: how long a worker takes to start (a fresh interpreter
        importing torch: seconds on Linux, up to a minute on a busy Windows laptop) is the
        grader's business, never counted against the student's import."""
        if not self.started:
            reply = self._next(max(timeout, START_TIMEOUT_S))
            if reply != {"ok": True, "value": "started"}:
                self.kill()
                why = reply.get("setup_failed") if isinstance(reply, dict) else None
                raise WorkerLost(
                    "error",
                    safe_text(why, 300) if isinstance(why, str) else "it broke the protocol",
                    ours=True,
                )
            self.started = True
        return self._value(self._next(timeout))

    def _next(self, timeout: float) -> Any:
        """The next message, or ``WorkerLost`` (``ours`` before the worker has started)."""
        try:
            if self.reader is not None:
                reply = self.reader.get(timeout)
            else:
                reply = wire.recv(self.rep_fd, timeout)
        except wire.ChannelTimeout:
            self.kill()
            if not self.started:
                raise WorkerLost(
                    "error", f"it did not start within {timeout:g} s", ours=True
                ) from None
            raise WorkerLost(
                "timeout", f"student code did not finish within {timeout:g} s"
            ) from None
        except wire.ChannelClosed:
            code = self.returncode()
            self.kill()
            if self.started and code in TAMPERED:  # its tripwire or guard went off
                raise Tampered(TAMPERED[code]) from None
            raise WorkerLost("error", self._exit_reason(code), ours=not self.started) from None
        except wire.BadMessage as exc:
            self.kill()
            raise WorkerLost(  # a forged frame too: checked before anything is computed
                "error",
                f"the worker sent a reply the grader refuses: {safe_text(exc, 200)}; only plain "
                "data and tensors, within the wire's bounds, may come back",
                ours=not self.started,
            ) from None
        if not isinstance(reply, dict) or "ok" not in reply:
            self.kill()
            raise WorkerLost(
                "error", "the worker sent a reply of the wrong shape", ours=not self.started
            )
        return reply

    def _exit_reason(self, code: int | None) -> str:
        """``describe_exit``, and before the worker started, what it wrote of its setup."""
        reason = describe_exit(code)
        if not self.started:
            said = self.output().strip().splitlines()
            if said:
                reason += f" ({safe_text(said[-1], 200)})"
        return reason

    def _value(self, reply: dict) -> Any:
        if isinstance(reply.get("t"), float):
            timing.add("worker_compute", reply["t"])
        if reply.get("tampered"):  # the worker's guard saw student code rewrite the grader
            self.kill()
            raise Tampered(safe_text(reply["tampered"], 2 * SHORT_LIMIT))
        if not reply["ok"]:
            info = safe_info(reply.get("error"))  # worker text is made safe where it enters
            if out_of_memory(info):
                self.kill()
                raise WorkerLost(
                    "error",
                    f"student code ran out of memory: it needed more than the "
                    f"{self.limits.memory_mb} MB a worker may use "
                    f"({info.get('type')}: {str(info.get('message', ''))[:200]})",
                )
            raise StudentError(info)
        # The answer's value as the student's code made it: a check compares it, and a control
        # character of a returned string may be part of a right answer. Text made from it is
        # made safe where it enters the result (``resilience.clean``), like every message.
        return reply.get("value")

    def call(self, action: str, timeout: float | None = None, **args: Any) -> Any:
        """Run one probe in the worker and return its plain-data value."""
        return self.call_while(action, None, timeout, **args)[0]

    def call_while(
        self,
        action: str,
        meanwhile: Callable[[], T] | None,
        timeout: float | None = None,
        **args: Any,
    ) -> tuple[Any, T | None]:
        """Run one probe in the worker and, while it runs, ``meanwhile()`` here (the judge's
        own share of the work, e.g. the expected value); return both results. The reply is
        read even when ``meanwhile`` raises, so that the channel stays in step."""
        if self.closed:
            raise WorkerLost("error", "the worker is already closed")
        budget = self.limits.exercise_budget_s
        if self.deadline is None:
            self.deadline = time.monotonic() + budget
        left = self.deadline - time.monotonic()
        if left <= 0:
            self.kill()
            raise WorkerLost("timeout", f"the exercise used up its {budget:g} s budget")
        wanted = self.limits.call_timeout_s if timeout is None else timeout
        began = time.monotonic()
        try:
            wire.send(self.req_fd, {"action": action, "args": args})
        except (BrokenPipeError, OSError):
            code = self.returncode()
            self.kill()
            raise WorkerLost("error", describe_exit(code)) from None
        ours: T | None = None
        failure: BaseException | None = None
        judged = 0.0
        if meanwhile is not None:
            started = time.monotonic()
            try:
                ours = meanwhile()
            except Exception as exc:  # raised once the reply is in
                failure = exc
            judged = time.monotonic() - started
        try:
            value = self._receive_within(left - (time.monotonic() - began), wanted, budget)
        finally:
            timing.add("in_calls", time.monotonic() - began - judged)
            timing.add("calls", 1)
        if failure is not None:
            raise failure
        return value, ours

    def _receive_within(self, left: float, wanted: float, budget: float) -> Any:
        if left < wanted:
            try:
                return self.receive(max(left, 0.0))
            except WorkerLost as lost:
                if lost.status == "timeout":
                    raise WorkerLost(
                        "timeout", f"the exercise used up its {budget:g} s budget"
                    ) from None
                raise
        return self.receive(wanted)

    def finish(self, grace: float = FINISH_GRACE_S) -> None:
        """End a worker that has answered every call: ask its loop to end and read its exit
        status; ``Tampered`` if its tripwire or guard went off, even after its last reply."""
        if self.closed:
            return
        try:
            wire.send(self.req_fd, {"action": END, "args": {}})
        except OSError:
            pass
        deadline = time.monotonic() + grace
        code = self.returncode()
        while code is None and time.monotonic() < deadline:
            code = self.returncode()
        if code is None:
            self.kill()
        elif code in TAMPERED:
            raise Tampered(TAMPERED[code])

    def output(self) -> str:
        """What student code printed (capped at ``limits.max_output_kb``)."""
        cap = self.limits.max_output_kb * 1024
        try:
            with open(self.output_path, "rb") as f:
                data = f.read(cap + 1)
        except OSError:
            return ""
        text = safe_text(data[:cap].decode("utf-8", "replace"), None)
        if len(data) > cap:
            text += f"\n[output cut at {self.limits.max_output_kb} KiB: the rest was dropped]"
        return text

    def release(self) -> None:
        """Close this process's copies of the worker's descriptors and kill it, without waiting
        for its exit status: a forked judge closed the worker (and read that status) already."""
        if self.closed:
            return
        self.closed = True
        if self.killer is not None:
            self.killer()
        for fd in self.fds():
            try:
                os.close(fd)
            except OSError:
                pass

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
        for fd in self.extra_fds:
            try:
                os.close(fd)
            except OSError:
                pass


# Starts one exercise's worker: (exercise id, student file, submission root, limits, scratch).
Starter = Callable[[str, Path, Path, Limits, Path], WorkerHandle]


def worker_folders(exercise_id: str, scratch: Path) -> tuple[Path, Path]:
    """A fresh private folder and output file for one worker inside the judge's scratch."""
    tag = "ex" + exercise_id.replace(".", "_")
    workdir = Path(tempfile.mkdtemp(prefix=f"{tag}-", dir=scratch))
    fd, output = tempfile.mkstemp(prefix=f"{tag}-out-", suffix=".txt", dir=scratch)
    os.close(fd)
    return workdir, Path(output)
