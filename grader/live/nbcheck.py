"""``grader.check(ID)`` in a notebook: grade what the kernel has run, without a save.

The kernel's input history (IPython's raw inputs, ``In [1]``, ``In [2]``, ...: every cell run,
in the order run, the current one included) is sent as plain JSON to a judge process of its
own (``grader.live.nbjudge``), started from this kernel with a fresh interpreter on the
first check (never before: ``import grader`` starts no process, so a kernel that never checks
never pays the judge's few hundred MB) and kept for the kernel's lifetime. That process
reads the inputs with ``grader.intake.notebook`` (never runs them) and grades the exercise files in
sandboxed workers, exactly as ``grade`` grades a notebook. Nothing is graded in the kernel:
a cell that patched ``torch.allclose`` or redefined a class of the pack's reference changes
nothing but the student's own kernel. The judge process exits when the kernel does (its stdin
closes).

This module imports nothing heavy (no torch): ``import grader`` stays cheap in a kernel.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO, Any

from grader.protocol import boot
from grader.shared.course import child_environment
from grader.shared.registry import BY_ID, EXERCISES
from grader.shared.safetext import one_line

BOOT = boot.BOOT.format(module="grader.live.nbjudge", function="main")


class CheckError(ValueError):
    """``grader.check`` cannot grade: shown by IPython as its one-line message, no traceback."""

    def _render_traceback_(self) -> list[str]:
        return [f"grader.check: {self}"]


class JudgeProcess:
    """The kernel's judge process (``grader.live.nbjudge``): started once, asked over pipes."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._owner = os.getpid()
        self._asked = 0
        self._stderr: IO[bytes] | None = None  # what the process wrote there, for a failure

    def _start_locked(self) -> None:
        """Start the process unless it runs here: on the first ``ask`` (the first check), or
        the first after it stopped or this process forked."""
        if self._proc is not None and self._proc.poll() is None and self._owner == os.getpid():
            return
        self._owner = os.getpid()
        debug = bool(os.environ.get("GRADER_SANDBOX_DEBUG"))
        self._stderr = None if debug else tempfile.TemporaryFile()
        self._proc = subprocess.Popen(
            boot.boot_arguments(BOOT, {}),
            env=child_environment(),  # the kernel's course, read there when it starts
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            start_new_session=True,  # a Ctrl-C in a terminal IPython is the kernel's only
        )

    def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """The judge's reply to ``request``; ``CheckError`` when the process is gone."""
        with self._lock:
            self._start_locked()
            proc = self._proc
            assert proc is not None and proc.stdin is not None and proc.stdout is not None
            self._asked += 1
            request = {**request, "id": self._asked}
            try:
                proc.stdin.write(json.dumps(request).encode() + b"\n")
                proc.stdin.flush()
                line = _reply_line(proc.stdout, request["id"])
            except KeyboardInterrupt:  # the grading it was doing is abandoned with it
                self._stop_locked(kill=True)
                raise
            except BrokenPipeError:
                line = b""
            if not line:
                said = self._last_words()
                self._stop_locked()  # the next check starts a new one
                raise CheckError(
                    f"the grader's judge process stopped unexpectedly{said}; run the check again"
                )
            return json.loads(line)

    def _last_words(self) -> str:
        """`` (the last line the process wrote to stderr)``, or nothing."""
        if self._stderr is None:
            return ""
        self._stderr.seek(0, os.SEEK_END)
        self._stderr.seek(max(0, self._stderr.tell() - 2000))
        lines = self._stderr.read().decode("utf-8", "replace").strip().splitlines()
        return f" ({one_line(lines[-1], 300)})" if lines else ""

    def close(self) -> None:
        with self._lock:
            self._stop_locked()

    def _stop_locked(self, kill: bool = False) -> None:
        """Close the process's stdin (it closes its fork server and exits), or ``kill`` it (its
        fork server then sees its socket close, and exits too)."""
        proc, self._proc = self._proc, None
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if proc is None or self._owner != os.getpid():
            return
        assert proc.stdin is not None  # a pipe (``_start_locked``)
        try:
            if not kill:
                proc.stdin.close()
                proc.wait(timeout=5)
        except (OSError, subprocess.TimeoutExpired):
            kill = True
        if kill:
            proc.kill()
            proc.wait()


def _reply_line(stream: IO[bytes], wanted: int) -> bytes:
    """The reply line numbered ``wanted`` (earlier ones, of abandoned requests, are skipped)."""
    while True:
        line = stream.readline()
        if not line:
            return line
        try:
            if json.loads(line).get("id") == wanted:
                return line
        except (ValueError, AttributeError):
            return b""


JUDGE = JudgeProcess()
atexit.register(JUDGE.close)


def kernel_inputs() -> list[str]:
    """Every input the running IPython shell has run, ``[0]`` empty: ``inputs[n]`` is In [n]."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    if shell is None:
        raise CheckError(
            "it grades the cells a notebook's kernel ran; outside a notebook run `grade` "
            "in a terminal"
        )
    history = getattr(shell, "history_manager", None)
    inputs = history.input_hist_raw if history is not None else shell.user_ns.get("In", [])
    return [str(text) for text in inputs]


def exercise_id(value: object) -> str:
    """``value`` as an exercise id (an id that reads as a number may be given as one: its
    ``str`` is taken); ``CheckError`` else."""
    text = str(value).strip()
    if text not in BY_ID:
        known = ", ".join(f'"{e.id}"' for e in EXERCISES)
        shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:37] + "..."
        raise CheckError(f"no exercise {shown}; the exercises are {known}")
    return text


def notebook_name() -> str:
    """The notebook's file name where the front end tells it, else ``notebook``."""
    ipython = sys.modules.get("IPython")
    shell = ipython.get_ipython() if ipython is not None else None
    user_ns = getattr(shell, "user_ns", {}) or {}
    for path in (os.environ.get("JPY_SESSION_NAME"), user_ns.get("__vsc_ipynb_file__")):
        if isinstance(path, str) and path.endswith(".ipynb"):
            return Path(path).name
    return "notebook"


def grade_inputs(
    exercises: list[str] | None,
    inputs: list[str],
    name: str = "notebook",
    seed: int | None = None,
    max_examples: int | None = None,
):
    """The ``CheckReport`` of ``exercises`` (all when ``None``) graded from ``inputs``."""
    from grader.result.nbview import CheckReport

    reply = JUDGE.ask(
        {
            "inputs": inputs,
            "exercises": exercises,
            "name": name,
            "seed": seed,
            "max_examples": max_examples,
        }
    )
    if reply.get("said"):
        from grader.shared.safetext import safe_text

        print(safe_text(reply["said"]).rstrip(), file=sys.stderr)
    if "error" in reply:
        raise CheckError(str(reply["error"]))
    return CheckReport(reply["result"], [str(n) for n in reply.get("notes", [])])


def check(exercise: str, *, seed: int | None = None, max_examples: int | None = None):
    """Grade the exercise whose id is ``exercise`` from the cells this kernel has run."""
    ex_id = exercise_id(exercise)
    return grade_inputs([ex_id], kernel_inputs(), notebook_name(), seed, max_examples)


def check_all(*, seed: int | None = None, max_examples: int | None = None):
    """Grade every exercise from the cells this kernel has run."""
    return grade_inputs(None, kernel_inputs(), notebook_name(), seed, max_examples)
