"""Exercise files that must not run, refused at intake by every front end, each with one line
in the student's words: a file that is not text (a NUL byte, UTF-16), that declares (PEP 263
``coding:``) an encoding that is not one for source files, that is not text in its declared
encoding (UTF-8 unless a ``coding:`` line says otherwise), larger than a worker takes in, or
nested deeper than ``grader.shared.safeparse`` allows.

A source encoding is a text encoding that reads every ASCII byte as itself and no escape
sequences: Latin-1, CP1252, Shift JIS... Python itself honours some others (``hz``, ``utf-7``,
``unicode_escape``) and fails on the rest with an error of its own (``rot13``, ``punycode``,
``hex``, ``utf-16``); none of them is how a student's editor saves a file.

Such a file is not run: whether Python accepts a stray byte (in a comment, say), a NUL or
code nested thousands of levels deep depends on its version, and a grade must not; a file
over the size a worker copies into its sandbox would reach it as a missing file.
"""

from __future__ import annotations

import codecs
import functools
import io
import tokenize
import warnings

from grader.intake.submission import Submission
from grader.protocol.limits import MAX_SUBMISSION_BYTES
from grader.shared import safeparse
from grader.shared.registry import BY_ID

MAX_FILE_BYTES = MAX_SUBMISSION_BYTES  # what a worker copies of a submission
# Decoded as itself by a source encoding: ASCII, escape sequences, the ``xn--`` of a label of
# the ``idna`` codec.
_ASCII_PROBE = bytes(range(128)) + b" \\u0041 \\x41 \\101 .xn--ls8h. xn--\n"


@functools.lru_cache(maxsize=64)
def source_encoding(encoding: str) -> bool:
    """Whether a file declaring ``encoding`` (a codec Python knows) may be read: a text encoding
    that decodes ASCII and backslashes as they are (not ``rot13``, ``utf-16``, ``punycode``,
    ``raw_unicode_escape``), the same on every platform (not Windows' ``mbcs``)."""
    try:
        info = codecs.lookup(encoding)
        if not getattr(info, "_is_text_encoding", True) or info.name in ("mbcs", "oem"):
            return False
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # unicode_escape's invalid escape sequences
            return _ASCII_PROBE.decode(encoding) == _ASCII_PROBE.decode("ascii")
    except Exception:  # LookupError, UnicodeError, a codec's own failure: not one to read
        return False


def file_problem(name: str, data: bytes, size: int | None = None) -> str | None:
    """Why the exercise file ``name`` holding ``data`` (its first bytes, of ``size`` in all) is
    not run, or None."""
    size = len(data) if size is None else size
    if size > MAX_FILE_BYTES:
        return (
            f"{name} is {size / 2**20:.1f} MB; exercise files may be at most "
            f"{MAX_FILE_BYTES // 2**20} MiB"
        )
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return f"{name} is saved as UTF-16 text; save it as UTF-8"
    if b"\x00" in data:
        line = data[: data.index(b"\x00")].count(b"\n") + 1
        return f"{name} is not text (it holds a NUL byte, on line {line})"
    try:
        encoding, bad_cookie = tokenize.detect_encoding(io.BytesIO(data).readline)[0], None
    except SyntaxError as exc:  # undecodable first lines, or a bad coding: line
        encoding, bad_cookie = "utf-8", exc.msg
    if not source_encoding(encoding):
        return f"{name} declares coding {encoding[:40]}: save it as UTF-8"
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = exc.object[: exc.start].count(b"\n") + 1
        return (
            f"{name} is not {exc.encoding.upper()} text "
            f"(byte 0x{exc.object[exc.start]:02x} on line {line}); save it as UTF-8"
        )
    except UnicodeError:  # a codec that fails without saying where
        return f"{name} is not {encoding[:40]} text; save it as UTF-8"
    if bad_cookie:
        return f"{name}: {bad_cookie}"
    try:
        safeparse.parse(text)
    except RecursionError:  # Python 3.10 would crash importing it, 3.11-3.13 refuse it
        return f"{name} nests its code more than {safeparse.MAX_DEPTH} levels deep"
    except (SyntaxError, ValueError, MemoryError):
        pass  # the worker's import says it in Python's own words
    return None


def file_problems(submission: Submission) -> dict[str, str]:
    """Exercise id -> one line, for each of ``submission``'s files that is not run."""
    problems = {}
    for ex_id, path in sorted(submission.files.items()):
        name = f"exercises/{BY_ID[ex_id].filename}"
        try:
            with open(path, "rb") as f:
                data = f.read(MAX_FILE_BYTES + 1)
                size = len(data) if len(data) <= MAX_FILE_BYTES else path.stat().st_size
        except OSError as exc:
            problems[ex_id] = f"{name} cannot be read ({exc.strerror})"
            continue
        problem = file_problem(name, data, size)
        if problem:
            problems[ex_id] = problem
    return problems
