"""What a reproduce snippet imports: ``load_exercise``, the module that was graded, loaded from
the submission's path the way the grader's worker loads it (a notebook's answer taken from its
cells as ``grade`` takes it), so that a snippet pasted where the student is runs the graded
code wherever it lies, and never an installed copy of the stubs (``grader.judge.snippets``
writes the line that calls it). A snippet of a pack graded from its folder (``grade --pack
FOLDER``, not installed) first calls ``use_pack`` with that folder, so that it runs as pasted
without ``GRADER_PACK``."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

from grader import pipeline
from grader.shared.course import choose
from grader.shared.packs import FILE
from grader.worker.serve import load_student_module


def use_pack(folder: str | Path) -> None:
    """Use the pack in ``folder`` (the folder of its ``pack.toml``) from now on, as ``grade
    --pack FOLDER`` does, when it is there; where it is not (a student's clone of the release,
    whose pack is installed) the packs in use stay."""
    if Path(folder, FILE).is_file():
        choose(str(folder))


def load_exercise(path: str | Path, exercise_id: str) -> ModuleType:
    """The module graded as ``exercise_id`` in the submission at ``path`` (a folder, the
    exercise files, or a notebook, whose answer is taken from its cells as ``grade`` takes it),
    imported by its path the way the grader's worker imports it."""
    submission = pipeline.open_path(Path(path))
    if exercise_id in submission.problems:  # as grade would: a file that must not run
        raise LookupError(f"{path}: {submission.problems[exercise_id]}")
    if exercise_id not in submission.files:
        raise LookupError(f"{path}: no answer to exercise {exercise_id} in it")
    module = load_student_module(exercise_id, submission.files[exercise_id], submission.root)
    module.__dict__["__submission__"] = (
        submission  # a notebook's extracted file lives as long as the module
    )
    return module
