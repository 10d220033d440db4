"""Finding a submission's exercise files: a folder with ``exercises/``, the six files loose in a
folder, or a notebook (``.ipynb``, turned into exercise files by ``grader.notebook``)."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

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


def load_submission(path: Path, name: str | None = None) -> Submission:
    """Locate the exercise files of ``path``; raise ``SubmissionError`` when it is unusable."""
    path = Path(path)
    if not path.exists():
        raise SubmissionError(f"{path}: no such file or folder")
    if path.is_file():
        if path.suffix == ".ipynb":
            from grader.notebook import notebook_submission

            return notebook_submission(path, name)
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
    if (path / "exercises").is_dir():
        files, links = _files_in((path / "exercises").resolve(), "exercises/")
        return Submission(name, path.resolve(), files, problems=links)
    files, links = _files_in(path.resolve(), "")
    if files or links:
        # The six files handed in without their folder (as Gradescope uploads them).
        return Submission(name, path.resolve(), files, problems=links)
    raise SubmissionError(
        f"{path}: no exercises/ folder and none of the exercise files "
        "(ex3_1_weight_transfer.py, ...)"
    )
