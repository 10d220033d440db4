"""The one way from what a student handed in to the result they may see.

Every front end (``grade`` and ``--watch``, ``grade batch``'s judges, the Gradescope bundle,
``pytest --grade``, ``grader.check`` in a notebook) takes these steps, in this order, and only
renders what comes out::

    take_in    a folder, a notebook, a zip (a batch) or a kernel's cells -> Submission
    refuse     set aside the files that must not run (not text, too large, nested too deep)
    judge      the property checks, in sandboxed workers -> GradeResult
    visible    what the reader may see of it (a course's seed is hidden)

``take_in`` and ``refuse`` come first and apart (``open_*``), because ``grade`` starts the
submission's workers while the judge is still importing torch; ``grade`` then runs the rest
(``finish``). A new front end calls ``open_*`` and ``finish``; a new refusal goes in
``refuse`` (``grader.intake.files``), a new visibility rule in ``visible``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from grader.intake.files import file_problems
from grader.intake.submission import Submission, SubmissionError
from grader.judge.request import Request
from grader.protocol.limits import Limits
from grader.result.schema import GradeResult
from grader.shared import timing
from grader.shared.course import Course, current, using

if TYPE_CHECKING:
    from grader.judge.launch.handle import Starter

__all__ = [
    "Request",
    "Submission",
    "SubmissionError",
    "default_start",
    "finish",
    "not_graded",
    "open_cells",
    "open_path",
    "open_zip",
    "refuse",
    "resolve",
    "visible",
]


# --- take in, then refuse ------------------------------------------------------------------


def refuse(submission: Submission) -> Submission:
    """``submission`` with the files that must not run set aside, each with its reason."""
    submission.refuse(file_problems(submission))
    return submission


def open_path(
    path: Path,
    name: str | None = None,
    elsewhere: bool = False,
    scratch_in: Path | None = None,
    called: str | None = None,
) -> Submission:
    """A folder (with ``exercises/`` or the exercise files loose) or a notebook, taken in and
    refused; ``SubmissionError`` (one line, naming it ``called``: by default the path as
    given) when it is not a submission. Graded ``elsewhere`` than in the student's clone (a
    batch, Gradescope), its snippets name the clone's root or the notebook; else its path
    from the working directory."""
    from grader.intake.load import in_their_clone, load_submission

    shown_as = in_their_clone(path) if elsewhere else None
    return refuse(load_submission(path, name, shown_as, scratch_in, called))


def open_zip(
    path: Path, scratch: Path, max_bytes: int, max_files: int, name: str | None = None
) -> Submission:
    """A zip unpacked (safely) into ``scratch``, taken in and refused; errors name the zip."""
    from grader.intake.load import load_zip

    return refuse(load_zip(path, scratch, max_bytes, max_files, name))


def open_cells(inputs: Sequence[str], name: str) -> Submission:
    """A live kernel's cells (its input history, oldest first), taken in and refused; the
    files of the kernel's current folder (the notebook's) go with them, as they do with a
    notebook's file (``grader.intake.notebook.copy_beside``)."""
    from grader.intake.beside import copy_beside
    from grader.intake.notebook import cells_submission, history_cells

    submission = cells_submission(history_cells(list(inputs)), name, name, ran=True)
    copy_beside(Path.cwd(), submission.root / "exercises", "")
    return refuse(submission)


# --- judge, then decide what the reader sees ------------------------------------------------


def resolve(request: Request) -> Request:
    """``request`` as a grade runs it, every choice left open made here, once: its course
    (this process's), its worker starter (``default_start``) and its limits (``Limits``'
    defaults). ``judge`` resolves what it is given; a request resolved already comes back
    unchanged."""
    if request.course is not None and request.start is not None and request.limits is not None:
        return request
    course = request.the_course()
    start = request.start if request.start is not None else default_start(course)
    limits = request.limits if request.limits is not None else Limits()
    return dataclasses.replace(request, course=course, start=start, limits=limits)


def default_start(course: Course | None = None) -> Starter:
    """The worker starter of a request that names none (``chosen_starter``'s default: the
    shared fork server, whose workers run in every layer the kernel allows), for ``course``
    (this process's). ``resolve`` asks for it; so does the notebook's judge, first thing, so
    that the fork server imports torch while the judge does (``grader.live.nbjudge``)."""
    from grader.judge.launch.starter import chosen_starter

    with using(course if course is not None else current()):  # the server preloads its probes
        return chosen_starter()


def judge(submission: Submission, request: Request) -> GradeResult:
    """Run the checks (``grader.judge.engine.grade_request``; never raises for anything the
    submission does) as the request, ``resolve``d, asks, for its course: this process's while
    it judges. With ``overlap``, the workers start while torch is being imported."""
    request = resolve(request)
    assert request.course is not None
    with using(request.course):
        return _judge(submission, request)


def _judge(submission: Submission, request: Request) -> GradeResult:
    early = None
    if request.overlap:
        from grader.judge.early import EarlyWorkers

        assert request.start is not None and request.limits is not None  # resolved
        early = EarlyWorkers(submission, _ids(request), request.limits, request.start)
    try:
        from grader.judge.ready import ready_to_judge

        ready_to_judge(_ids(request))
        from grader.judge.engine import grade_request

        timing.mark("imports")
    except BaseException:
        if early is not None:
            early.discard()
        raise
    return grade_request(submission, request, early)


def visible(result: GradeResult, request: Request) -> GradeResult:
    """The result as its reader may see it: every output may reach a student (reports, CI
    logs, a notebook), so a course's seed is never shown."""
    return result.with_seed_hidden() if request.seed.hidden else result


def finish(submission: Submission, request: Request) -> GradeResult:
    """Judge ``submission`` (already taken in and refused) and return what the reader may see;
    its temporary files are removed, whatever happens."""
    try:
        return visible(judge(submission, request), request)
    finally:
        submission.cleanup()


def not_graded(name: str, request: Request, reason: str) -> GradeResult:
    """The result of a submission that could not be taken in: every exercise ``error``, each
    check saying "not graded: ``reason``". Nothing is judged and no worker starts."""
    import torch  # loaded already where a batch's judge calls this

    from grader.judge.scoring import unrun_exercise
    from grader.shared.safetext import safe_name
    from grader.shared.version import __version__

    max_scores, check_points = request.max_scores or {}, request.check_points or {}
    course = request.the_course()
    with using(course):  # an exercise's checks are found through its pack
        exercises = [
            unrun_exercise(
                dataclasses.replace(ex, max_score=max_scores.get(ex.id, ex.max_score)),
                "error",
                f"not graded: {reason}",
                check_points.get(ex.id),
            )
            for ex in course.select(_ids(request))
        ]
    result = GradeResult(
        submission=safe_name(name),
        score=0.0,
        max_score=sum(e.max_score for e in exercises),
        grader_version=__version__,
        torch_version=str(torch.__version__),  # as grader.judge.engine writes it
        seed=request.seed.value,
        duration_s=0.0,
        exercises=exercises,
    )
    return visible(result, request)


def _ids(request: Request) -> list[str] | None:
    return list(request.exercises) if request.exercises else None
