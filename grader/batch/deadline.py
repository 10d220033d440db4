"""A judge's progress on its submission, and the result of one the batch gave up on.

A batch gives each submission a deadline (``grader.batch.pool.judge_deadline``) and kills the
judge process still on it past that. So that the row says where it stopped, and keeps what was
graded before, the judge notes each step in ``PROGRESS``, a file in the job's scratch: the
submission read, an exercise begun, a check begun, a check's result, an exercise's result. One
JSON line each, appended with one ``write`` and never parsed from student output: a judge
killed in the middle of a line leaves a torn last line, which ``read`` skips. The engine tells
the steps to the pipeline's ``Request.progress``, which is ``Tracker.note`` here (``tracking``):
never a step of the grade itself (a note that cannot be written is dropped).

When the batch kills a judge, ``given_up`` makes the submission's result from the file:

- the exercises finished before the deadline keep their results;
- the exercise in progress is a ``timeout``: its finished checks keep theirs, the check it
  stopped at says so, the checks after it were not run;
- the exercises not reached are ``error`` ("not graded: ...").

The row's reason names the exercise and the check, and its settings hash carries the deadline
(``deadline_hash``), so that a run with another deadline grades it again.

The file lies beside the judge's ``judge-started`` file in OUT, out of reach of the workers
(their sandbox lets them write in their own folder only); what is read back is checked all the
same: exercises of this job only, well-formed, points within their maximum (and a check of the
exercise in progress where the pack declares it).
"""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

PROGRESS = "judge-progress"  # in a job's scratch
VARIABLE = "GRADER_JUDGE_DEADLINE_S"
STATUSES = ("passed", "failed", "error", "timeout", "missing")
MAX_BYTES = 32 << 20  # a judge's notes on one submission are far smaller


@dataclass
class Progress:
    """What a judge had done when it was killed (``read``)."""

    opened: bool = False  # the submission was read in (its workers then start)
    done: dict[str, dict] = field(default_factory=dict)  # exercise id -> its result (JSON form)
    current: str | None = None  # the exercise begun and not finished
    check: str | None = None  # the check begun in it
    checked: list[dict | None] = field(default_factory=list)  # its checks' results, in order


# --- the judge's side ---------------------------------------------------------------------


class Tracker:
    """Notes one submission's steps in its ``PROGRESS`` file (in a judge process)."""

    def __init__(self, path: Path):
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_APPEND
            self.fd: int | None = os.open(path, flags, 0o600)
        except OSError:  # nothing is noted: the deadline's row will say less
            self.fd = None
        self.submission: Any = None
        self.exercise = ""  # the exercise being graded

    def note(self, kind: str, **record: Any) -> None:
        """Append one step; never raises (a note lost costs the deadline's message its
        detail, never the grade)."""
        if self.fd is None:
            return
        if "id" in record:
            self.exercise = str(record["id"])
        try:
            for key, value in record.items():
                if key == "result" and not isinstance(value, dict):
                    record[key] = self.shown(value)
            line = json.dumps({"k": kind, **record}, default=str) + "\n"
            os.write(self.fd, line.encode())
        except Exception:  # noqa: BLE001 - see above
            pass

    def opened(self, submission: Any) -> None:
        self.submission = submission
        self.note("opened")

    def shown(self, result: Any) -> dict:
        """An exercise's or a check's result as the finished grade shows it: its snippets
        load the submission, a notebook's places are its cells
        (``grader.judge.engine.grade_request`` does the same to the whole result, so a copy is
        changed)."""
        from grader.judge import snippets
        from grader.result.schema import CheckResult, ExerciseResult

        one = isinstance(result, CheckResult)
        exercise = (
            ExerciseResult(self.exercise, "", 0.0, 0.0, "failed", [result]) if one else result
        )
        exercise = copy.deepcopy(exercise)
        if self.submission is not None:
            snippets.point_at([exercise], self.submission.shown_as)
            snippets.in_cells([exercise], self.submission.places)
        return asdict(exercise.checks[0] if one else exercise)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)


@contextmanager
def tracking(path: Path) -> Iterator[Tracker]:
    """A tracker noting one submission's steps in ``path`` while inside: its ``note`` is the
    pipeline's ``Request.progress`` (``grader.judge.engine`` tells it each step)."""
    tracker = Tracker(path)
    try:
        yield tracker
    finally:
        tracker.close()


# --- the batch's side ---------------------------------------------------------------------


def read(path: Path) -> Progress:
    """What the judge noted in ``path`` (nothing when it cannot be read)."""
    progress = Progress()
    try:
        with open(path, "rb") as f:
            lines = f.read(MAX_BYTES).splitlines()
    except OSError:
        return progress
    for line in lines:
        try:
            _step(progress, json.loads(line))
        except (ValueError, TypeError, KeyError, AttributeError):
            continue  # the torn last line of a judge killed while writing it
    return progress


def _step(progress: Progress, record: dict) -> None:
    """Take one noted step into ``progress``."""
    kind = record["k"]
    if kind == "opened":
        progress.opened = True
    elif kind == "exercise":
        progress.current, progress.check, progress.checked = str(record["id"]), None, []
    elif kind == "check" and record.get("id") == progress.current:
        progress.check = str(record.get("check"))
    elif kind == "checked" and record.get("id") == progress.current:
        progress.checked.append(record.get("result"))
        progress.check = None
    elif kind == "done" and isinstance(record.get("result"), dict):
        result = record["result"]
        progress.done[str(result.get("id"))] = result
        progress.current, progress.check, progress.checked = None, None, []


def deadline_hash(fingerprint: str, seconds: float) -> str:
    """The settings hash of a row the batch gave up on after ``seconds``: the settings'
    fingerprint and the deadline, so that another deadline grades it again."""
    return f"{fingerprint}@deadline={seconds:g}"


def _check(raw: Any, points: float | None = None) -> Any:
    """A check's result read back, or None unless it is well-formed, its points within its
    maximum (``points``, when given)."""
    from grader.result.schema import CheckResult

    try:
        check = CheckResult(**raw)
    except TypeError:
        return None
    fine = (
        isinstance(check.name, str)
        and isinstance(check.message, str)
        and isinstance(check.passed, bool)
        and isinstance(check.max_points, int | float)
        and not isinstance(check.max_points, bool)
        and isinstance(check.points, int | float)
        and not isinstance(check.points, bool)
        and 0 <= check.points <= check.max_points
        and (points is None or check.max_points == points)
        and (check.reproduce is None or isinstance(check.reproduce, str))
        and (
            check.cause is None
            or (
                isinstance(check.cause, dict)
                and all(isinstance(check.cause.get(k), str) for k in ("key", "text", "hint"))
                and type(check.cause.get("rank", 0)) is int
            )
        )
    )
    return check if fine else None


def _finished(raw: Any, exercise: Any) -> Any:
    """A finished exercise's result read back, or None unless it is ``exercise``'s, its
    checks well-formed and its points those of its checks, within the exercise's maximum."""
    from grader.result.schema import VERDICTS, ExerciseResult

    try:
        checks = [_check(c) for c in raw["checks"]]
        result = ExerciseResult(**{**raw, "checks": checks})
        fine = (
            result.id == exercise.id
            and result.max_score == exercise.max_score
            and result.status in STATUSES
            and isinstance(result.title, str)
            and result.verdict in VERDICTS
            and all(c is not None for c in checks)
            and abs(result.score - sum(c.points for c in checks)) < 1e-6
            and sum(c.max_points for c in checks) <= exercise.max_score + 1e-6
        )
    except (TypeError, KeyError, ValueError):
        return None
    return result if fine else None


def _where(progress: Progress, current: str | None) -> str:
    """Where the judge was, in words: the exercise and the check."""
    if current is None and progress.done:
        return f"the end of exercise {list(progress.done)[-1]}"
    if current is None:
        return "the start of its workers" if progress.opened else "the reading of the submission"
    if progress.check:
        return f"exercise {current}, check '{progress.check}'"
    if progress.checked:
        last = progress.checked[-1]
        name = last.get("name") if isinstance(last, dict) else None
        return f"exercise {current}, after its check '{name}'"
    return f"exercise {current}, loading the student's file"


def _stopped(exercise: Any, checks: list, progress: Progress, after: str, where: str) -> Any:
    """The exercise the judge was in: a timeout, its finished checks kept."""
    from grader.judge.resilience import clean
    from grader.judge.scoring import finish_exercise, points_scale
    from grader.result.schema import CheckResult

    own: list[CheckResult] = []
    for check, raw in zip(checks, progress.checked, strict=False):
        found = _check(raw, check.points)
        if found is None or found.name != check.name:
            break
        own.append(found)
    for check in checks[len(own) :]:
        if check.name == progress.check:
            message = (
                f"{after[0].upper()}{after[1:]}, while this check was running (the batch's "
                f"deadline for one submission: an instructor can give more time with "
                f"{VARIABLE})."
            )
        else:
            message = f"not run: {after}, during " + (
                f"the check '{progress.check}'" if progress.check else where
            )
        own.append(CheckResult(check.name, 0.0, check.points, False, message))
    return clean(finish_exercise(exercise, "timeout", own, points_scale(exercise, checks)))


def given_up(
    exercises: list, check_points: dict, progress: Progress, seconds: float
) -> tuple[list, str]:
    """The results of ``exercises`` (``Exercise``, their points as graded) of a submission
    whose judge was killed after ``seconds``, from its ``progress``; and the row's reason."""
    from grader.judge.scoring import checks_for, unrun_exercise

    after = f"the grader gave up on this submission after {seconds:g} s"
    current = progress.current if any(e.id == progress.current for e in exercises) else None
    where = _where(progress, current)
    results, kept, unreached = [], [], []
    for exercise in exercises:
        points = check_points.get(exercise.id)
        raw = progress.done.get(exercise.id)
        finished = _finished(raw, exercise) if raw is not None else None
        if finished is not None:
            results.append(finished)
            kept.append(exercise.id)
        elif exercise.id == current:
            checks = checks_for(exercise, points)
            results.append(_stopped(exercise, checks, progress, after, where))
        else:
            message = f"not graded: {after}, during {where}, before it reached this exercise"
            results.append(unrun_exercise(exercise, "error", message, points))
            unreached.append(exercise.id)
    reason = f"the grader gave up on it after {seconds:g} s, during {where}"
    if kept:
        reason += f"; kept: {', '.join(kept)}"
    if unreached:
        reason += f"; not reached: {', '.join(unreached)}"
    return results, f"{reason} (more time: {VARIABLE})"


def graded_exercises(ids: list[str] | None, max_scores: dict[str, float]) -> list:
    """The exercises a job grades, with the points the batch gives them."""
    from grader.shared.registry import select

    return [
        replace(e, max_score=max_scores[e.id]) if e.id in max_scores else e for e in select(ids)
    ]
