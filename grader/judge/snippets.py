"""Reproduce snippets that run the code that was graded.

A check writes its snippet with the import a student's clone would use,
``from exercises.<module> import <names>``. ``point_at`` turns that line into a call of
``grader.commands.reproduce.load_exercise`` with the submission's own path
(``Submission.shown_as``), so that the snippet, pasted where the student ran ``grade``, runs
the graded file: a folder elsewhere, a notebook's cells, the files of a batch, and never the
stubs an installation provides.
"""

from __future__ import annotations

import re

from grader.result.schema import ExerciseResult

IMPORT = re.compile(r"^from exercises\.\w+ import (.+)$", re.M)
LOADER = (
    "from grader.commands.reproduce import load_exercise  # the graded file, not an installed copy"
)


def load_source(snippet: str, exercise_id: str, shown_as: str) -> str:
    """``snippet`` with its ``from exercises.<module> import ...`` line replaced by lines that
    load the names from the submission at ``shown_as``."""

    def replace(match: re.Match) -> str:
        pairs = []  # (the name the snippet uses, the name in the student's module)
        for item in match.group(1).split(","):
            name, _, alias = item.strip().partition(" as ")
            pairs.append((alias.strip() or name.strip(), name.strip()))
        load = f"load_exercise({shown_as!r}, {exercise_id!r})"
        if len(pairs) == 1:
            ((target, name),) = pairs
            return f"{LOADER}\n{target} = {load}.{name}"
        targets = ", ".join(target for target, _ in pairs)
        values = ", ".join(f"graded.{name}" for _, name in pairs)
        return f"{LOADER}\ngraded = {load}\n{targets} = {values}"

    return IMPORT.sub(replace, snippet)


def point_at(results: list[ExerciseResult], shown_as: str | None) -> None:
    """Make every snippet of ``results`` load the submission named ``shown_as`` (in place);
    None leaves them importing ``exercises``."""
    if shown_as is None:
        return
    for exercise in results:
        for check in exercise.checks:
            if check.reproduce:
                check.reproduce = load_source(check.reproduce, exercise.id, shown_as)
