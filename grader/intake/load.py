"""Finding a submission's exercise files: a folder with ``exercises/``, the exercise files loose
in a folder, or a notebook (``.ipynb``, turned into exercise files by
``grader.intake.notebook``).

Inside the submission nothing on the way to an exercise file is followed through a link: an
exercise file that is a symbolic link is refused (the workers read files without following
links), and so is the whole submission when its ``exercises/`` is a symbolic link (or a Windows
junction), whose files would be someone else's: a classmate's, or a folder outside the class.
The folder given to ``load_submission`` is the caller's choice (``grade`` run on a link to a
clone is fine); a batch's entry that is itself a link is ``grader.batch.entries``' to refuse.
"""

from __future__ import annotations

import os
from pathlib import Path

from grader.intake.submission import Submission, SubmissionError
from grader.shared.registry import EXERCISES
from grader.shared.safetext import safe_name


def is_link(path: Path) -> bool:
    """Whether ``path`` is a symbolic link, or a Windows junction (which ``is_symlink`` does
    not see; ``os.path.isjunction`` does, from Python 3.12)."""
    isjunction = getattr(os.path, "isjunction", None)
    return path.is_symlink() or bool(isjunction and isjunction(path))


def _link_target(path: Path) -> str:
    """`` (to TARGET)``, the link's target as it was written, or nothing if it cannot be read."""
    try:
        return f" (to {safe_name(os.readlink(path))})"
    except (OSError, ValueError):
        return ""


def _files_in(folder: Path, shown: str) -> tuple[dict[str, Path], dict[str, str]]:
    """The exercise files in ``folder`` and, apart, those that are symbolic links (the workers
    read a submission's files without following links: a link would be a missing file there).
    ``shown`` is how the student sees the folder (``exercises/`` or nothing)."""
    files, links = {}, {}
    for e in EXERCISES:
        path = folder / e.filename
        if is_link(path):
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


def load_submission(
    path: Path,
    name: str | None = None,
    shown_as: str | None = None,
    scratch_in: Path | None = None,
    called: str | None = None,
) -> Submission:
    """Locate the exercise files of ``path``; raise ``SubmissionError`` when it is unusable,
    naming it ``called`` (default: the path as given). Snippets name it ``shown_as`` (default:
    its path from the working directory). A notebook's exercise files are written in a folder
    made in ``scratch_in`` (default: the system's temporary folder), removed by
    ``Submission.cleanup``. The files are not yet refused: ``grader.pipeline.refuse`` does it."""
    path = Path(path)
    shown = called or str(path)
    if not path.exists():
        raise SubmissionError(f"{shown}: no such file or folder")
    if path.is_file():
        if path.suffix == ".ipynb":
            from grader.intake.notebook import notebook_submission

            submission = notebook_submission(path, name, scratch_in, shown)
            submission.shown_as = shown_as or shown_path(path)
            return submission
        if path.suffix == ".zip":
            raise SubmissionError(
                f"{shown}: grade a zip with 'grade batch', or unzip it and grade the folder"
            )
        if path.suffix == ".py":
            path = path.parent
        else:
            raise SubmissionError(
                f"{shown}: not a submission (expected a folder with exercises/, or a .ipynb)"
            )
    name = name or path.resolve().name
    shown_as = shown_as or shown_path(path)
    if is_link(path / "exercises"):  # whatever it points to, never followed
        raise SubmissionError(
            f"{shown}: exercises/ is a symbolic link{_link_target(path / 'exercises')}: "
            "hand in the folder itself"
        )
    if (path / "exercises").is_dir():
        files, links = _files_in((path / "exercises").resolve(), "exercises/")
        return Submission(name, path.resolve(), files, problems=links, shown_as=shown_as)
    files, links = _files_in(path.resolve(), "")
    if files or links:
        # The exercise files handed in without their folder (as Gradescope uploads them).
        return Submission(name, path.resolve(), files, problems=links, shown_as=shown_as)
    raise SubmissionError(
        f"{shown}: no exercises/ folder and none of the exercise files "
        f"({EXERCISES[0].filename}, ...)"
    )


def load_zip(
    path: Path, scratch: Path, max_bytes: int, max_files: int, name: str | None = None
) -> Submission:
    """The submission in the zip at ``path``, unpacked (``grader.intake.zips``) into
    ``scratch`` (emptied first); every error names the zip by its file name, never ``scratch``."""
    import shutil

    from grader.intake.zips import extract_zip, submission_root

    path = Path(path)
    shutil.rmtree(scratch, ignore_errors=True)
    try:
        extract_zip(path, scratch, max_bytes, max_files)
    except SubmissionError as exc:
        text = str(exc)
        raise SubmissionError(
            text if text.startswith(path.name) else f"{path.name}: {text}"
        ) from None
    root = submission_root(scratch)
    place = root.relative_to(scratch).as_posix()
    called = path.name if place == "." else f"{path.name}/{place}"
    return load_submission(root, name or path.stem, in_their_clone(root), scratch, called)
