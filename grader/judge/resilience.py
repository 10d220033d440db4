"""The judge keeps going: one exercise's trouble stays in that exercise's result.

``keeps_going`` wraps ``grader.judge.engine.grade_exercise``. Whatever happens while one
exercise is graded becomes that exercise's result, and the others are graded normally:

- ``Tampered`` (raised by ``WorkerHandle.receive`` when the worker's guard reports that
  student code rewrote the grader, see ``grader.worker.guard``) becomes the *tampered* verdict:
  status ``error``, no points, every check's message starting with ``result.TAMPERED``;
- any other exception (a bug of ours) becomes status ``error`` with every check's message
  starting with ``result.GRADER_FAILED`` and one line saying what failed; one that left from a
  pack's own file (its check, its reference) is the author's: "your check <file> line N raised
  <Type>: <message>" (``result.CHECK_RAISED``), with what to do for a backward pass under the
  judge's ``torch.no_grad()``; the traceback goes to
  the file named by ``$GRADE_TRACE_LOG`` (``grade batch`` points it into OUT), else one line on
  stderr;
- every string of the result is passed through ``grader.shared.safetext`` once more, so that no
  renderer ever sees unsafe text, whatever a check quoted.

Schema 1 has no status for these verdicts, so they are ``error`` with the exercise's
``verdict`` field saying which (``tampered``, ``grader-failed``, ``check-raised``); the
messages start with the verdict's words for people (``result.TAMPERED``, ...), and old readers
of the schema keep working. The batch dashboard and ``grade``'s exit status read the field.
"""

from __future__ import annotations

import functools
import os
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from grader.judge.launch.handle import Tampered
from grader.judge.scoring import unrun_exercise
from grader.result.schema import (
    CHECK_RAISED,
    GRADER_FAILED,
    TAMPERED,
    CheckResult,
    ExerciseResult,
    Verdict,
)
from grader.shared.safetext import MESSAGE_LIMIT, one_line, safe_text, safe_value

TRACE_LOG_ENV = "GRADE_TRACE_LOG"
_label = ""  # what is being graded (a batch sets the submission's name), for the trace log


def set_label(label: str) -> None:
    """Name what is graded next in the trace log (e.g. a batch's submission)."""
    global _label
    _label = label


def log_trace(where: str, trace: str | None = None) -> bool:
    """Append ``trace`` (default: the exception being handled) to ``$GRADE_TRACE_LOG``;
    False when no log is set or it cannot be written."""
    path = os.environ.get(TRACE_LOG_ENV)
    if not path:
        return False
    trace = traceback.format_exc() if trace is None else trace
    stamp = time.strftime("%Y-%m-%d %H:%M:%S")
    head = f"--- {stamp} pid {os.getpid()} {_label + ': ' if _label else ''}{where}\n"
    try:
        with open(path, "a", encoding="utf-8", errors="backslashreplace") as f:
            f.write(head + trace.rstrip("\n") + "\n")
    except OSError:
        return False
    return True


def tampered_message(exercise_id: str, what: str) -> str:
    return (
        f"{TAMPERED}your code changed the grader itself while it was being graded "
        f"({one_line(what)}). Results from a changed grader cannot be trusted, so exercise "
        f"{exercise_id} gets no points. Solve the exercise in your own code and leave the "
        "grader's modules alone."
    )


def failure(exc: BaseException) -> tuple[Verdict, str]:
    """The verdict of an exercise whose grading raised ``exc`` and what its checks say:
    ``check-raised`` with the author's code and line when the exception left from a pack's
    file (``author_frame``), else ``grader-failed``."""
    what = f"{type(exc).__name__}: {exc}"
    where = author_frame(exc)
    if where is None:
        return "grader-failed", GRADER_FAILED + one_line(what, 300)
    said = f"{CHECK_RAISED}{where[0]} line {where[1]} raised {one_line(what, 300)}{_advice(exc)}"
    return "check-raised", said


def author_frame(exc: BaseException) -> tuple[str, int] | None:
    """The last frame of ``exc``'s traceback inside the folder of a pack in use (its checks,
    its reference), as ``(file from the pack's parent folder, line)``; None when it never ran
    there (a failure of the grader's own)."""
    from grader.shared.course import packs
    from grader.shared.packs import PackError

    try:
        folders = [p.folder.resolve() for p in packs()]
    except (PackError, OSError):
        return None
    found = None
    for frame in traceback.extract_tb(exc.__traceback__):
        path = Path(frame.filename)
        for folder in folders:
            if path.is_absolute() and path.resolve().is_relative_to(folder):
                found = (path.resolve().relative_to(folder.parent).as_posix(), frame.lineno or 0)
    return found


NO_GRAD = "does not require grad"  # PyTorch's words for a backward() without gradients


def _advice(exc: BaseException) -> str:
    if NO_GRAD in str(exc):
        return (
            " (the judge runs checks under torch.no_grad(): wrap the code that needs gradients "
            "in `with torch.enable_grad():`)"
        )
    return ""


def verdict(exercise: Any, check_points: Any, message: str, kind: Verdict) -> ExerciseResult:
    """Exercise ``exercise`` with no points and the verdict ``kind``: status error, each check
    saying ``message``."""
    try:
        return unrun_exercise(exercise, "error", message, check_points, kind)
    except Exception:  # the checks themselves cannot be loaded: one line says it all
        results = [CheckResult(exercise.title, 0.0, exercise.max_score, False, message)]
    return ExerciseResult(
        exercise.id, exercise.title, 0.0, exercise.max_score, "error", results, verdict=kind
    )


def clean(result: ExerciseResult) -> ExerciseResult:
    """Every string of ``result`` made safe (a no-op on text that already is)."""
    for check in result.checks:
        check.name = safe_text(check.name, MESSAGE_LIMIT)
        check.message = safe_text(check.message, MESSAGE_LIMIT)
        check.counterexample = safe_value(check.counterexample, MESSAGE_LIMIT)
        if check.reproduce is not None:
            check.reproduce = safe_text(check.reproduce, None)
        if check.cause is not None:
            check.cause = {
                k: v if k == "rank" else safe_text(str(v), MESSAGE_LIMIT)
                for k, v in check.cause.items()
            }
    for entry in result.diagnosis:
        entry.update(
            {k: safe_text(str(entry[k]), MESSAGE_LIMIT) for k in ("key", "cause", "hint")},
            checks=[safe_text(str(n), MESSAGE_LIMIT) for n in entry["checks"]],
        )
    result.title = safe_text(result.title)
    return result


def keeps_going(grade_exercise: Callable[..., ExerciseResult]) -> Callable[..., ExerciseResult]:
    """``grade_exercise`` that returns a result for its exercise whatever happens (see the
    module's docstring); its first argument is the exercise, ``check_points`` its sixth."""

    @functools.wraps(grade_exercise)
    def run(exercise: Any, *args: Any, **kwargs: Any) -> ExerciseResult:
        check_points = kwargs.get("check_points", args[4] if len(args) > 4 else None)
        try:
            return clean(grade_exercise(exercise, *args, **kwargs))
        except Tampered as t:
            message = tampered_message(exercise.id, t.what)
            return clean(verdict(exercise, check_points, message, "tampered"))
        except Exception as exc:
            kind, message = failure(exc)
            if not log_trace(f"exercise {exercise.id}"):
                said = (
                    f"internal error while grading {exercise.id}: "
                    f"{message.removeprefix(GRADER_FAILED)} (the other"
                    if kind == "grader-failed"
                    else f"{message} (while grading {exercise.id}; the other"
                )
                print(
                    f"grade: {said} exercises are graded; set GRADE_TRACE_LOG=FILE to keep the "
                    "traceback)",
                    file=sys.stderr,
                )
            return clean(verdict(exercise, check_points, message, kind))

    return run
