"""Finding a submission's exercise files: a folder with ``exercises/``, the six files loose in a
folder, or a notebook (``.ipynb``, turned into exercise files by ``grader.intake.notebook``)."""

from __future__ import annotations

from pathlib import Path

from grader.intake.submission import Submission, SubmissionError
from grader.shared.registry import EXERCISES


def _files_in(folder: Path) -> dict[str, Path]:
    return {e.id: folder / e.filename for e in EXERCISES if (folder / e.filename).is_file()}


def load_submission(path: Path, name: str | None = None) -> Submission:
    """Locate the exercise files of ``path``; raise ``SubmissionError`` when it is unusable."""
    path = Path(path)
    if not path.exists():
        raise SubmissionError(f"{path}: no such file or folder")
    if path.is_file():
        if path.suffix == ".ipynb":
            from grader.intake.notebook import notebook_submission

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
        return Submission(name, path.resolve(), _files_in((path / "exercises").resolve()))
    loose = _files_in(path.resolve())
    if loose:
        # The six files handed in without their folder (as Gradescope uploads them).
        return Submission(name, path.resolve(), loose)
    raise SubmissionError(
        f"{path}: no exercises/ folder and none of the exercise files "
        "(ex3_1_weight_transfer.py, ...)"
    )
