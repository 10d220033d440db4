"""An exercise's checks and how its points add up: its checks with the course's weights
(``checks_for``), the results of checks that did not run, and the exercise's result made of its
checks' results, their weights scaled to the exercise's points."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, cast

from grader.judge.causes import diagnosis
from grader.result.schema import CheckResult, ExerciseResult, Status, Verdict
from grader.shared.packs import resolve
from grader.shared.registry import BY_ID, Exercise, pack_of

if TYPE_CHECKING:  # a type only: the batch's main process reads this module without torch
    from grader.judge.hints import Known
    from grader.judge.properties import Check


def checks_for(exercise: Exercise, points: Mapping[str, float] | None = None) -> list[Check]:
    """The exercise's checks; ``points`` (check name -> weight) overrides their own weights."""
    # A pack's lists, read by name: what they hold is the pack's word (``check-pack`` proves it).
    declared = resolve(exercise.checks, "CHECKS")  # a list of checks, or one check alone
    checks: list[Check] = (
        [cast("Check", declared)]
        if _is_check(declared)
        else list(cast("Iterable[Check]", declared))
    )
    stem = exercise.filename.removesuffix(".py")
    checks = [c.bind(stem, exercise.names) if c.bind is not None else c for c in checks]
    pack = pack_of(exercise)
    if pack.hints:  # the pack's hints for known kinds of failure, before the grader's own
        known = tuple(cast("Iterable[Known]", resolve(pack.hints, "KNOWN")))
        checks = [dataclasses.replace(c, known=(*c.known, *known)) for c in checks]
    if points:
        checks = [
            dataclasses.replace(c, points=points[c.name]) if c.name in points else c for c in checks
        ]
    return checks


def _is_check(value: object) -> bool:
    from grader.judge.properties import Check

    return isinstance(value, Check)


def check_named(exercise_id: str, name: str) -> Check | None:
    """The check ``name`` of exercise ``exercise_id`` (its module's own object), or None."""
    exercise = BY_ID.get(exercise_id)
    checks = checks_for(exercise) if exercise is not None else []
    return next((c for c in checks if c.name == name), None)


def points_scale(exercise: Exercise, checks: list[Check]) -> float:
    """Points of the exercise per unit of check weight."""
    total = sum(c.points for c in checks)
    return exercise.max_score / total if total else 0.0


def unrun_checks(checks: list[Check], message: str) -> list[CheckResult]:
    """The results of checks that did not run, each saying ``message``."""
    return [CheckResult(c.name, 0.0, c.points, False, message) for c in checks]


def finish_exercise(
    exercise: Exercise,
    status: Status,
    results: list[CheckResult],
    scale: float,
    verdict: Verdict = "graded",
) -> ExerciseResult:
    """The exercise's result, with ``verdict``: its checks' weights scaled by ``scale`` and
    added up, the causes of its failures grouped (``causes.diagnosis``); a ``failed`` exercise
    all of whose checks passed is ``passed``."""
    for r in results:
        r.points, r.max_points = r.points * scale, r.max_points * scale
    score = round(sum(r.points for r in results), 6)
    if status == "failed" and all(r.passed for r in results):
        status = "passed"
    return ExerciseResult(
        exercise.id,
        exercise.title,
        score,
        exercise.max_score,
        status,
        results,
        diagnosis(results),
        verdict,
    )


def unrun_exercise(
    exercise: Exercise,
    status: Status,
    reason: str,
    check_points: Mapping[str, float] | None = None,
    verdict: Verdict = "graded",
) -> ExerciseResult:
    """The result of an exercise none of whose checks could run, each saying ``reason``, with
    ``verdict``."""
    checks = checks_for(exercise, check_points)
    return finish_exercise(
        exercise, status, unrun_checks(checks, reason), points_scale(exercise, checks), verdict
    )
