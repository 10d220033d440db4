"""The judge keeps going: one exercise's trouble stays in that exercise's result.

``keeps_going`` wraps ``grader.judge.engine.grade_exercise``. Whatever happens while one exercise is
graded becomes that exercise's result, and the others are graded normally:

- ``Tampered`` (raised by ``WorkerHandle.receive`` when the worker's guard reports that
  student code rewrote the grader, see ``grader.worker.guard``) becomes the *tampered* verdict:
  status ``error``, no points, every check's message starting with ``result.TAMPERED``;
- any other exception (a bug of ours) becomes status ``error`` with every check's message
  starting with ``result.GRADER_FAILED`` and one line saying what failed; the traceback goes to
  the file named by ``$GRADE_TRACE_LOG`` (``grade batch`` points it into OUT), else one line on
  stderr;
- every string of the result is passed through ``grader.shared.safetext`` once more, so that no
  renderer ever sees unsafe text, whatever a check quoted.

Schema 1 has no status for these verdicts, so they are ``error`` with a fixed message prefix
(``grader.result.schema.is_tampered``, ``grader.result.schema.grader_failed``): old readers of
the schema keep working, and the batch dashboard and ``grade``'s exit status read the prefix.
"""

from __future__ import annotations

import functools
import os
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from grader.judge.launch.handle import Tampered
from grader.judge.scoring import unrun_exercise
from grader.result.schema import GRADER_FAILED, TAMPERED, CheckResult, ExerciseResult
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


def failure_message(exc: BaseException) -> str:
    return GRADER_FAILED + one_line(f"{type(exc).__name__}: {exc}", 300)


def verdict(exercise: Any, check_points: Any, message: str) -> ExerciseResult:
    """Exercise ``exercise`` with no points: status error, each check saying ``message``."""
    try:
        return unrun_exercise(exercise, "error", message, check_points)
    except Exception:  # the checks themselves cannot be loaded: one line says it all
        results = [CheckResult(exercise.title, 0.0, exercise.max_score, False, message)]
    return ExerciseResult(exercise.id, exercise.title, 0.0, exercise.max_score, "error", results)


def clean(result: ExerciseResult) -> ExerciseResult:
    """Every string of ``result`` made safe (a no-op on text that already is)."""
    for check in result.checks:
        check.name = safe_text(check.name, MESSAGE_LIMIT)
        check.message = safe_text(check.message, MESSAGE_LIMIT)
        check.counterexample = safe_value(check.counterexample, MESSAGE_LIMIT)
        if check.reproduce is not None:
            check.reproduce = safe_text(check.reproduce, None)
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
            return clean(verdict(exercise, check_points, tampered_message(exercise.id, t.what)))
        except Exception as exc:
            message = failure_message(exc)
            if not log_trace(f"exercise {exercise.id}"):
                what = message.removeprefix(GRADER_FAILED)
                print(
                    f"grade: internal error while grading {exercise.id}: {what} (the other "
                    "exercises are graded; set GRADE_TRACE_LOG=FILE to keep the traceback)",
                    file=sys.stderr,
                )
            return clean(verdict(exercise, check_points, message))

    return run
