"""Turning one entry of DIR into a ``Submission``, or into one clear reason why it cannot be.

Zips are unpacked (safely, see ``grader.batch.extract``) into a scratch folder inside OUT;
folders and notebooks go to ``grader.intake.load.load_submission``. Reasons name the entry as
the instructor sees it in DIR, never a scratch path; reproduce snippets name it as the student
has it (the root of their clone, or their notebook).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from grader.batch.entries import Entry
from grader.batch.extract import extract_zip, submission_root
from grader.intake.load import in_their_clone, load_submission
from grader.intake.submission import Submission, SubmissionError


def _relative(message: str, replacements: dict[str, str]) -> str:
    for long, short in sorted(replacements.items(), key=lambda kv: -len(kv[0])):
        message = message.replace(long, short)
    return message


def open_entry(entry: Entry, scratch: Path, max_bytes: int, max_files: int) -> Submission:
    """The submission in ``entry``; ``SubmissionError`` (one line, no scratch paths) if none.
    A zip is unpacked in ``scratch``, a notebook's exercise files are written there."""
    if entry.kind == "other":
        raise SubmissionError(
            f"{entry.path.name}: not a submission (expected a folder, a .zip or a .ipynb)"
        )
    if entry.kind != "zip":
        if entry.kind == "notebook":  # its exercise files are written in the scratch
            scratch.mkdir(parents=True, exist_ok=True)
        try:
            return load_submission(entry.path, entry.name, in_their_clone(entry.path), scratch)
        except SubmissionError as exc:
            raise SubmissionError(_relative(str(exc), {str(entry.path): entry.path.name})) from None
    shutil.rmtree(scratch, ignore_errors=True)
    try:
        extract_zip(entry.path, scratch, max_bytes, max_files)
        root = submission_root(scratch)
        return load_submission(root, entry.name, in_their_clone(root), scratch)
    except SubmissionError as exc:
        text = _relative(
            str(exc), {str(scratch.resolve()): entry.path.name, str(scratch): entry.path.name}
        )
        if not text.startswith(entry.path.name):
            text = f"{entry.path.name}: {text}"
        raise SubmissionError(text) from None
