"""Turning one entry of DIR into a ``Submission``, or into one clear reason why it cannot be.

Zips are unpacked (safely, see ``grader.batch.extract``) into a scratch folder inside OUT;
folders and notebooks go to ``grader.submission.load_submission``. Reasons name the entry as
the instructor sees it in DIR, never a scratch path.
"""

from __future__ import annotations

import io
import shutil
import tokenize
from pathlib import Path

from grader.batch.entries import Entry
from grader.batch.extract import extract_zip, submission_root
from grader.registry import BY_ID
from grader.submission import Submission, SubmissionError, load_submission


def _relative(message: str, replacements: dict[str, str]) -> str:
    for long, short in sorted(replacements.items(), key=lambda kv: -len(kv[0])):
        message = message.replace(long, short)
    return message


def open_entry(entry: Entry, scratch: Path, max_bytes: int, max_files: int) -> Submission:
    """The submission in ``entry``; ``SubmissionError`` (one line, no scratch paths) if none."""
    if entry.kind == "other":
        raise SubmissionError(
            f"{entry.path.name}: not a submission (expected a folder, a .zip or a .ipynb)"
        )
    if entry.kind != "zip":
        try:
            return load_submission(entry.path, entry.name)
        except SubmissionError as exc:
            raise SubmissionError(_relative(str(exc), {str(entry.path): entry.path.name})) from None
    shutil.rmtree(scratch, ignore_errors=True)
    try:
        extract_zip(entry.path, scratch, max_bytes, max_files)
        return load_submission(submission_root(scratch), entry.name)
    except SubmissionError as exc:
        text = _relative(
            str(exc), {str(scratch.resolve()): entry.path.name, str(scratch): entry.path.name}
        )
        if not text.startswith(entry.path.name):
            text = f"{entry.path.name}: {text}"
        raise SubmissionError(text) from None


def encoding_problem(submission: Submission) -> str | None:
    """One line naming the first exercise file that is not text in its declared encoding
    (UTF-8 unless a PEP 263 ``coding:`` line says otherwise), or ``None``."""
    for ex_id, path in sorted(submission.files.items()):
        data = path.read_bytes()
        try:
            encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
            data.decode(encoding)
        except SyntaxError as exc:  # a bad coding: line
            return f"exercises/{BY_ID[ex_id].filename}: {exc.msg}"
        except UnicodeDecodeError as exc:
            line = data[: exc.start].count(b"\n") + 1
            return (
                f"exercises/{BY_ID[ex_id].filename} is not {exc.encoding.upper()} text "
                f"(byte 0x{data[exc.start]:02x} on line {line}); save it as UTF-8"
            )
    return None
