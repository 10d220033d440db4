"""A pack's corpus of answers: known wrong answers and unusual right ones, with what each must
get.

The corpus folder holds one folder per exercise, named by the exercise's module
(``Exercise.module``: the id with every non-word character made ``_``, after ``ex``). In it,
``correct_*.py`` must get full marks and ``wrong_*.py`` must lose points (a file named
otherwise is refused, not guessed: ``unnamed``); a wrong answer's header says more, one
line each, anywhere in the file::

    # expect-failing: <part of a check's name>     that check fails (repeatable)
    # expect-hint: <words>                         every failing check's hint says them
    # expect-no-hint: <words>                      no failing check's hint says them
    # expect-message: <words>                      some failing check's message says them

``grade check-pack`` and the project's own tests read the corpus here: one parser.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from grader.result.common import hint_of
from grader.result.schema import ExerciseResult
from grader.shared.packs import Exercise

HEADERS = ("failing", "hint", "no-hint", "message")


@dataclass(frozen=True)
class CorpusCase:
    exercise_id: str
    path: Path
    correct: bool
    expect_failing: tuple[str, ...]
    expect_hint: tuple[str, ...] = ()  # in the hint of every failing check
    expect_no_hint: tuple[str, ...] = ()  # in the hint of no failing check
    expect_message: tuple[str, ...] = ()  # in the message of some failing check

    @property
    def id(self) -> str:
        return f"{self.exercise_id}:{self.path.stem}"


def headers(text: str) -> dict[str, tuple[str, ...]]:
    """The ``# expect-<key>: value`` lines of an answer, by key (``failing``, ``hint``,
    ``no-hint``, ``message``), values stripped, in order."""
    return {
        key: tuple(m.strip() for m in re.findall(rf"^# expect-{key}:(.*)$", text, re.M))
        for key in HEADERS
    }


def read_case(exercise_id: str, path: Path) -> CorpusCase:
    expect = headers(path.read_text(encoding="utf-8"))
    return CorpusCase(
        exercise_id,
        path,
        path.stem.startswith("correct_"),
        expect["failing"],
        expect["hint"],
        expect["no-hint"],
        expect["message"],
    )


PREFIXES = ("correct_", "wrong_")


def _answers(folder: Path, exercises: Iterable[Exercise]) -> list[tuple[str, Path]]:
    found = []
    for ex in exercises:
        sub = folder / ex.module
        found += [(ex.id, path) for path in (sorted(sub.glob("*.py")) if sub.is_dir() else [])]
    return found


def corpus_cases(folder: Path, exercises: Iterable[Exercise]) -> list[CorpusCase]:
    """Every case of the corpus in ``folder`` for ``exercises``, in their order, each
    exercise's files sorted by name (``.py`` files named ``correct_*`` or ``wrong_*``; the
    others are no case: ``unnamed``)."""
    return [
        read_case(ex_id, path)
        for ex_id, path in _answers(folder, exercises)
        if path.name.startswith(PREFIXES)
    ]


def unnamed(folder: Path, exercises: Iterable[Exercise]) -> list[Path]:
    """The ``.py`` files of the corpus named neither ``correct_*`` nor ``wrong_*``: what they
    must get is unknown, so they are graded as nothing (``grade check-pack`` fails on them)."""
    return [path for _, path in _answers(folder, exercises) if not path.name.startswith(PREFIXES)]


def _shown_hint(hint: str) -> str:
    """The hint a check showed, quoted whole (the author compares it with what was expected)."""
    return f"it showed {hint!r}" if hint else "it showed no hint"


def problems(case: CorpusCase, exercise: ExerciseResult) -> list[str]:
    """What is wrong with ``exercise``, the result of grading ``case``: empty when the case
    gets what it must."""
    failing = [c.name for c in exercise.checks if not c.passed]
    if case.correct:
        if exercise.score == exercise.max_score and exercise.status == "passed":
            return []
        said = "; ".join(first_line(c.message) for c in exercise.checks if not c.passed)
        return [
            f"a correct answer got {_points(exercise)} ({exercise.status}): "
            f"{', '.join(failing) or 'no check failed'}" + (f" - {said}" if said else "")
        ]
    if exercise.score >= exercise.max_score:
        return [f"a wrong answer got full marks ({_points(exercise)})"]
    found = []
    if exercise.status not in ("failed", "error", "timeout"):
        found.append(f"a wrong answer's status is {exercise.status}")
    for expected in case.expect_failing:
        if not any(expected in name for name in failing):
            found.append(
                f"expect-failing: {expected!r} names no failing check (failing: "
                f"{'; '.join(failing) or 'none'})"
            )
    hints = {c.name: hint_of(c) for c in exercise.checks if not c.passed}
    for wanted in case.expect_hint:
        missing = [name for name, hint in hints.items() if wanted not in hint]
        if missing:
            shown = "; ".join(f"{name}: {_shown_hint(hints[name])}" for name in missing)
            found.append(f"expect-hint: {wanted!r} is not in the hint of {shown}")
    # A message as the student reads it: its cause (with the cause's hint) and its own text.
    messages = [
        f"{(c.cause or {}).get('text', '')}\n{c.message}\n{hint_of(c)}"
        for c in exercise.checks
        if not c.passed
    ]
    for wanted in case.expect_message:
        if not any(wanted in message for message in messages):
            found.append(f"expect-message: {wanted!r} is in no failing check's message")
    for unwanted in case.expect_no_hint:
        saying = [name for name, hint in hints.items() if unwanted in hint]
        if saying:
            found.append(f"expect-no-hint: {unwanted!r} is in the hint of {'; '.join(saying)}")
    return found


def _points(exercise: ExerciseResult) -> str:
    return f"{exercise.score:g}/{exercise.max_score:g}"


def first_line(text: str, limit: int = 1000) -> str:
    """The first line of a message, whole unless it is very long (an author compares it)."""
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."
