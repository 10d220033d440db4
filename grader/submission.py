"""Finding a submission's exercise files: a folder with ``exercises/``, the six files loose in a
folder, or a notebook (``.ipynb``, turned into exercise files by ``grader.notebook``).

``load_exercise`` is the other way round, for the student: the module that was graded, loaded
from the submission's path as the grader loads it. Reproduce snippets call it, so that they run
the graded code wherever it lies, and never an installed copy of the stubs.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

from grader.registry import EXERCISES
from grader.safetext import safe_name, safe_text


class SubmissionError(Exception):
    """The submission cannot be read at all; the message is one line for the user."""


@dataclass
class Submission:
    name: str
    root: Path  # the folder that holds ``exercises/`` (put first on the worker's sys.path)
    files: dict[str, Path]  # exercise id -> file, for the files that exist
    notes: list[str] = field(default_factory=list)  # e.g. which notebook cells were used
    # exercise id -> why its file is not run (one line, in the student's terms): the exercise
    # is an ``error`` whose checks say "not graded: <reason>"
    problems: dict[str, str] = field(default_factory=dict)
    _tmp: tempfile.TemporaryDirectory | None = None
    # How a reproduce snippet names the submission for ``load_exercise``: its path from where
    # the student runs Python. None: snippets keep ``from exercises.<module> import ...``.
    shown_as: str | None = None

    def __post_init__(self) -> None:
        # A folder's or notebook's name and cell labels are the student's text: made safe once.
        self.name = safe_name(self.name)
        self.notes = [safe_text(note) for note in self.notes]
        self.problems = {k: safe_text(v) for k, v in self.problems.items()}

    def refuse(self, problems: dict[str, str]) -> None:
        """Set these exercises' files aside, each with the reason it is not run."""
        self.problems.update((k, safe_text(v)) for k, v in problems.items())
        self.files = {k: v for k, v in self.files.items() if k not in self.problems}

    def cleanup(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


def _files_in(folder: Path, shown: str) -> tuple[dict[str, Path], dict[str, str]]:
    """The exercise files in ``folder`` and, apart, those that are symbolic links (the workers
    read a submission's files without following links: a link would be a missing file there).
    ``shown`` is how the student sees the folder (``exercises/`` or nothing)."""
    files, links = {}, {}
    for e in EXERCISES:
        path = folder / e.filename
        if path.is_symlink():
            links[e.id] = f"{shown}{e.filename} is a symbolic link: submit the file itself"
        elif path.is_file():
            files[e.id] = path
    return files, links


def shown_path(path: Path) -> str:
    """``path`` as a snippet names it: relative to the working directory (where the student
    ran ``grade`` and pastes the snippet), ``/``-separated; absolute on another drive."""
    try:
        return Path(os.path.relpath(path)).as_posix()
    except ValueError:  # another drive on Windows
        return str(Path(path).resolve())


def in_their_clone(path: Path) -> str:
    """How the student names a submission graded elsewhere (a batch, Gradescope): the root of
    their clone, or the notebook's name."""
    return Path(path).name if Path(path).suffix == ".ipynb" else "."


def load_submission(path: Path, name: str | None = None, shown_as: str | None = None) -> Submission:
    """Locate the exercise files of ``path``; raise ``SubmissionError`` when it is unusable.
    Snippets name it ``shown_as`` (default: its path from the working directory)."""
    path = Path(path)
    if not path.exists():
        raise SubmissionError(f"{path}: no such file or folder")
    if path.is_file():
        if path.suffix == ".ipynb":
            from grader.notebook import notebook_submission

            submission = notebook_submission(path, name)
            submission.shown_as = shown_as or shown_path(path)
            return submission
        if path.suffix == ".zip":
            raise SubmissionError(
                f"{path}: grade a zip with 'grade batch', or unzip it and grade the folder"
            )
        if path.suffix == ".py":
            path = path.parent
        else:
            raise SubmissionError(
                f"{path}: not a submission (expected a folder with exercises/, or a .ipynb)"
            )
    name = name or path.resolve().name
    shown_as = shown_as or shown_path(path)
    if (path / "exercises").is_dir():
        files, links = _files_in((path / "exercises").resolve(), "exercises/")
        return Submission(name, path.resolve(), files, problems=links, shown_as=shown_as)
    files, links = _files_in(path.resolve(), "")
    if files or links:
        # The six files handed in without their folder (as Gradescope uploads them).
        return Submission(name, path.resolve(), files, problems=links, shown_as=shown_as)
    raise SubmissionError(
        f"{path}: no exercises/ folder and none of the exercise files "
        "(ex3_1_weight_transfer.py, ...)"
    )


def load_exercise(path: str | Path, exercise_id: str) -> ModuleType:
    """The module graded as ``exercise_id`` in the submission at ``path`` (a folder, the
    exercise files, or a notebook, whose answer is taken from its cells as ``grade`` takes it),
    imported by its path the way the grader's worker imports it."""
    from grader.worker import load_student_module

    submission = load_submission(Path(path))
    if exercise_id not in submission.files:
        raise LookupError(f"{path}: no answer to exercise {exercise_id} in it")
    module = load_student_module(exercise_id, submission.files[exercise_id], submission.root)
    module.__submission__ = submission  # a notebook's extracted file lives as long as the module
    return module
