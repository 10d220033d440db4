"""Turning one entry of DIR into a ``Submission``, or into one clear reason why it cannot be.

Zips are unpacked (safely, see ``grader.batch.extract``) into a scratch folder inside OUT;
folders and notebooks go to ``grader.intake.load.load_submission``. Reasons name the entry as
the instructor sees it in DIR, never a scratch path; reproduce snippets name it as the student
has it (the root of their clone, or their notebook).
"""

from __future__ import annotations

import io
import shutil
import tokenize
from pathlib import Path

from grader.batch.entries import Entry
from grader.batch.extract import extract_zip, submission_root
from grader.intake.load import in_their_clone, load_submission
from grader.intake.submission import Submission, SubmissionError
from grader.shared.registry import BY_ID


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


def encoding_problems(submission: Submission) -> dict[str, str]:
    """Exercise id -> one line, for each exercise file that is not text in its declared
    encoding (UTF-8 unless a PEP 263 ``coding:`` line says otherwise).

    Such a file is not run: whether Python accepts a stray byte (in a comment, say) depends on
    its version, and a grade must not."""
    problems = {}
    for ex_id, path in sorted(submission.files.items()):
        name = f"exercises/{BY_ID[ex_id].filename}"
        data = path.read_bytes()
        try:
            encoding, bad_cookie = tokenize.detect_encoding(io.BytesIO(data).readline)[0], None
        except SyntaxError as exc:  # undecodable first lines, or a bad coding: line
            encoding, bad_cookie = "utf-8", exc.msg
        try:
            data.decode(encoding)
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            problems[ex_id] = (
                f"{name} is not {exc.encoding.upper()} text "
                f"(byte 0x{data[exc.start]:02x} on line {line}); save it as UTF-8"
            )
        else:
            if bad_cookie:
                problems[ex_id] = f"{name}: {bad_cookie}"
    return problems
