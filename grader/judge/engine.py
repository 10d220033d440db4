"""The judge: grades one submission by running every exercise's checks against its worker.

The judge holds the reference models and the hypothesis strategies, builds every input and
makes every comparison; student code runs only in the workers (DESIGN §5).
"""

from __future__ import annotations

import dataclasses
import functools
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import torch

from grader.intake.submission import Submission
from grader.judge import parallel, snippets
from grader.judge.early import EarlyWorkers
from grader.judge.launch.handle import StudentError, WorkerHandle, WorkerLost
from grader.judge.properties import explain_student_error, run_check
from grader.judge.request import Request
from grader.judge.resilience import keeps_going
from grader.judge.scoring import (
    checks_for,
    finish_exercise,
    points_scale,
    unrun_checks,
    unrun_exercise,
)
from grader.protocol.limits import Limits
from grader.result.schema import (
    WORKER_NOT_STARTED,
    CheckResult,
    ExerciseResult,
    GradeResult,
    Status,
)
from grader.shared import timing
from grader.shared.registry import Exercise
from grader.shared.version import __version__


def _import_failure(info: dict) -> str:
    if info.get("type") == "SyntaxError" or info.get("type") == "IndentationError":
        return (
            f"your file does not parse: {info['type']}: {info.get('message', '')} "
            f"(in {info.get('file', '?')}, line {info.get('line', '?')}: {info.get('code', '')})"
        )
    return "importing your file failed: " + explain_student_error(info)


def _sentence(text: str) -> str:
    """``text`` with a capital first letter and the rest as it was (``str.capitalize`` lowers
    the rest: "3072 MB" became "3072 mb", an exception's own words changed case)."""
    return text[:1].upper() + text[1:]


def _not_started(exercise: Exercise, checks: list, scale: float, reason: str) -> ExerciseResult:
    """The exercise of a worker that failed before it imported the student's file: the
    grader's failure (verdict ``worker-not-started``), said in every check."""
    said = unrun_checks(checks, WORKER_NOT_STARTED + reason)
    return finish_exercise(exercise, "error", said, scale, "worker-not-started")


@keeps_going  # one exercise's trouble (a bug of ours, tampering) stays in its result
def grade_exercise(
    exercise: Exercise,
    worker: WorkerHandle | None,
    seed: int,
    max_examples: int | None,
    limits: Limits,
    check_points: Mapping[str, float] | None = None,
    not_found: str | None = None,
    progress: Callable[..., None] | None = None,
) -> ExerciseResult:
    """One exercise's result from its ``worker``; no worker: the exercise is missing, said as
    ``not_found`` (a notebook's words, ``snippets.not_found``) or, for a folder, by its file.
    ``progress`` is told each check begun (``"check"``) and its result (``"checked"``)."""
    if worker is None:
        return unrun_exercise(
            exercise,
            "missing",
            not_found or f"not submitted: exercises/{exercise.filename} was not found",
            check_points,
        )
    checks = checks_for(exercise, check_points)
    scale = points_scale(exercise, checks)
    began = time.monotonic()
    try:
        worker.receive(limits.import_timeout_s)  # the "ready" message, sent after the import
    except StudentError as exc:
        return finish_exercise(
            exercise, "error", unrun_checks(checks, _import_failure(exc.info)), scale
        )
    except WorkerLost as lost:
        if lost.ours:
            return _not_started(exercise, checks, scale, lost.reason)
        return finish_exercise(
            exercise,
            lost.status,
            unrun_checks(checks, f"importing your file failed: {lost.reason}"),
            scale,
        )

    timing.add("student_import", time.monotonic() - began)
    results: list[CheckResult] = []
    status: Status = "failed"
    lost_at: CheckResult | None = None
    deadline = time.monotonic() + limits.exercise_budget_s
    for i, check in enumerate(checks):
        if time.monotonic() > deadline:
            status = "timeout"
            results += unrun_checks(
                checks[i:],
                f"not run: the exercise used up its {limits.exercise_budget_s:g} s budget",
            )
            break
        try:
            if progress is not None:
                progress("check", id=exercise.id, check=check.name)
            results.append(run_check(check, worker, exercise.id, seed, max_examples))
            if progress is not None:
                progress("checked", id=exercise.id, result=results[-1])
        except WorkerLost as lost:
            status = lost.status
            lost_at = CheckResult(check.name, 0.0, check.points, False, _sentence(lost.reason))
            results.append(lost_at)
            results += unrun_checks(checks[i + 1 :], f"not run: {lost.reason}")
            break
    if lost_at is None:
        worker.finish()  # its exit status: Tampered if its tripwire went off
    printed = worker.output().strip()
    if printed and lost_at is not None:
        lost_at.message += f"\nYour code printed (last lines):\n{printed[-1500:]}"
    return finish_exercise(exercise, status, results, scale)


def grade_request(
    submission: Submission, request: Request, early: EarlyWorkers | None = None
) -> GradeResult:
    """Grade ``submission`` as ``request`` asks, for its course; never raises for anything the
    submission does.

    ``max_scores`` (exercise id -> points) and ``check_points`` (exercise id -> check name ->
    weight) override the defaults, as ``grading.toml`` asks; weights are scaled to max_score.
    ``processes`` caps the judge processes its exercises are spread over (default: one per
    core; a batch, whose judges already fill the cores, asks for 1). ``early`` holds workers
    started while torch was being imported (``grader.judge.early``); they are used instead of
    new ones. The workers' folders go in a scratch folder made in ``scratch_in`` (default: the
    system's temporary folder) and removed at the end. ``progress(kind, **record)`` is told
    each exercise begun (``"exercise"``, its id) and finished (``"done"``, its result), and each
    check begun and its result (``grade_exercise``); it must not raise.
    """
    course, start = request.the_course(), request.start
    if start is None:  # the pipeline chooses the starter (``grader.pipeline.resolve``)
        raise ValueError("grade_request takes a resolved Request: grade through grader.pipeline")
    began = time.monotonic()
    max_scores = request.max_scores or {}
    exercises = [
        dataclasses.replace(e, max_score=max_scores[e.id]) if e.id in max_scores else e
        for e in course.select(list(request.exercises) if request.exercises else None)
    ]
    processes = request.processes or parallel.processes()
    jobs = sum(ex.id in submission.files for ex in exercises)
    request = dataclasses.replace(  # each worker's share of the cores, for this submission
        request,
        limits=parallel.worker_limits(request.limits or Limits(), jobs, processes),
        processes=processes,
    )
    limits = request.limits
    assert limits is not None
    if early is not None:
        workers, scratch = early.take()
    else:
        scratch, workers = Path(tempfile.mkdtemp(prefix="grade-", dir=request.scratch_in)), {}
    try:
        # Start every worker first so that their imports overlap with each other's checks.
        for ex in exercises:
            if ex.id in submission.files and ex.id not in workers:
                workers[ex.id] = start(
                    ex.id, submission.files[ex.id], submission.root, limits, scratch
                )
        timing.mark("workers_started")
        results = _grade_all(request, exercises, workers, submission)
    finally:
        for w in workers.values():
            w.close()
        shutil.rmtree(scratch, ignore_errors=True)
    snippets.point_at(results, submission.shown_as, course.choice)
    snippets.in_cells(results, submission.places)  # a notebook's lines: its cells'
    return GradeResult(
        submission=submission.name,
        score=round(sum(r.score for r in results), 6),
        max_score=sum(r.max_score for r in results),
        grader_version=__version__,
        torch_version=str(torch.__version__),  # a plain str: a TorchVersion unpickles with torch
        seed=request.seed.value,
        duration_s=round(time.monotonic() - began, 3),
        exercises=results,
    )


# One exercise graded, as ``_grade_all`` binds it: exercise -> its result.
GradeOne = Callable[[Exercise], ExerciseResult]


def _grade_all(
    request: Request,
    exercises: list[Exercise],
    workers: dict[str, WorkerHandle],
    submission: Submission,
) -> list[ExerciseResult]:
    """Each exercise's result, in course order, from the runner chosen once: ``_forked`` when
    ``_may_fork``, else ``_serial``. ``request`` is the one ``grade_request`` runs (its limits
    the workers', its processes a number). A file the submission set aside (a symbolic link,
    not text) is an error that says why; a missing exercise of a notebook is said in its
    words (``snippets.not_found``)."""
    one: GradeOne = functools.partial(
        _grade_one,
        request=request,
        workers=workers,
        set_aside=submission.problems,
        not_found=snippets.not_found(submission.absent),
    )
    costs = {ex.id: ex.cost for ex in exercises if ex.id in workers}
    groups = parallel.balanced_groups(costs, request.processes or 1)
    if _may_fork(groups, workers, request.processes or 1):
        done = _forked(one, request, exercises, workers, groups)
    else:
        done = _serial(one, exercises)
    return [done[ex.id] for ex in exercises]


def _grade_one(
    ex: Exercise,
    *,
    request: Request,
    workers: Mapping[str, WorkerHandle],
    set_aside: Mapping[str, str],
    not_found: Mapping[str, str],
) -> ExerciseResult:
    """``ex``'s result: set aside, missing (no worker) or graded by its worker, which is closed
    after; ``request.progress`` is told the exercise begun and done."""
    check_points = (request.check_points or {}).get(ex.id)
    if (reason := set_aside.get(ex.id)) is not None:
        return unrun_exercise(ex, "error", f"not graded: {reason}", check_points)
    worker, progress = workers.get(ex.id), request.progress
    assert request.limits is not None
    try:
        if progress is not None:
            progress("exercise", id=ex.id)
        with timing.exercise(ex.id):
            result = grade_exercise(
                ex,
                worker,
                request.seed.value,
                request.max_examples,
                request.limits,
                check_points,
                not_found=not_found.get(ex.id),
                progress=progress,
            )
        if progress is not None:
            progress("done", result=result)
        return result
    finally:
        if worker is not None:
            worker.close()


def _may_fork(groups: list[list[str]], workers: Mapping[str, WorkerHandle], processes: int) -> bool:
    """Whether the exercises with a worker are graded in forked judge processes: forked judges
    are also the watchdog of a grade (``parallel.run_forked`` kills one past its deadline), so a
    single exercise is forked too, unless the caller's own processes fill the cores (a batch's
    judges, watched by the batch); only workers that any process can watch (fork-server
    workers, no ``Popen``); never beside another thread (pytest's, a library's)."""
    return (
        (len(groups) > 1 or (bool(groups) and processes > 1))
        and all(workers[ex_id].process is None for group in groups for ex_id in group)
        and parallel.alone()
    )


def _serial(one: GradeOne, exercises: list[Exercise]) -> dict[str, ExerciseResult]:
    """The runner in this process: each exercise graded after the other, in course order."""
    return {ex.id: one(ex) for ex in exercises}


def _forked(
    one: GradeOne,
    request: Request,
    exercises: list[Exercise],
    workers: dict[str, WorkerHandle],
    groups: list[list[str]],
) -> dict[str, ExerciseResult]:
    """The forked runner: each group of exercises with a worker graded in a judge process of
    its own (``parallel.run_forked``: a child that dies or overruns the deadline is an
    ``error`` or ``timeout`` of its exercises), then, here, in course order, those without a
    worker (missing or set aside: nothing to run)."""
    chosen = {ex.id: ex for ex in exercises}
    limits, check_points = request.limits, request.check_points or {}
    assert limits is not None
    names = {f"group{i}": group for i, group in enumerate(groups)}

    def job(group: list[str]) -> Callable[[], list[ExerciseResult]]:
        return lambda: list(_serial(one, [chosen[e] for e in group]).values())

    done = parallel.run_forked(
        {name: job(group) for name, group in names.items()},
        {
            name: tuple(fd for e in group for fd in workers[e].fds())
            for name, group in names.items()
        },
        names,
        limits.import_timeout_s + limits.exercise_budget_s * len(exercises) + parallel.GRACE_S,
        lambda ex_id, status, reason: unrun_exercise(
            chosen[ex_id], status, reason, check_points.get(ex_id)
        ),
    )
    for ex_id in done:
        workers[ex_id].release()
    done.update(_serial(one, [ex for ex in exercises if ex.id not in done]))
    return done
