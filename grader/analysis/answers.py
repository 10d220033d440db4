"""Each submission's answers, as graded, kept in gradebook.sqlite for the similarity report.

An answer is the text of one exercise file as the grader read it: a folder's or a zip's file,
or for a notebook the exercise file that ``grader.intake.notebook`` extracts from it (the same
extraction grading uses). Keeping the text in OUT lets ``grade merge`` compare the answers of
shards graded on other machines, and the dashboard show two answers side by side. A
submission's answers are read again only when its content hash changes; their fingerprints
are computed once per answer and algorithm (``fp_key``).

    answers(submission, exercise_id, sha256, text, fp_key, fingerprint, tokens, distinctive)
    answer_sources(submission, content_hash)   -- whose answers are stored, read from what
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from collections.abc import Iterable
from pathlib import Path

from grader.analysis.similarity import Fingerprint, base_key, fingerprint
from grader.batch.entries import Entry

MAX_ANSWER_BYTES = 256 * 1024  # an answer is a few KiB; more is read no further

SCHEMA = """
CREATE TABLE IF NOT EXISTS answer_sources (
    submission   TEXT PRIMARY KEY,
    content_hash TEXT
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS answers (
    submission  TEXT NOT NULL,
    exercise_id TEXT NOT NULL,
    sha256      TEXT NOT NULL,
    text        TEXT NOT NULL,
    fp_key      TEXT,
    fingerprint BLOB,
    tokens      INTEGER,
    distinctive INTEGER,
    PRIMARY KEY (submission, exercise_id)
) WITHOUT ROWID;
"""


def ensure_schema(db: sqlite3.Connection) -> None:
    db.executescript(SCHEMA)


def read_answers(
    entry: Entry, scratch: Path, max_bytes: int, max_files: int
) -> dict[str, str] | None:
    """Exercise id -> the text of that answer; empty when the entry cannot be read (its row
    in the gradebook already says why), ``None`` when reading it failed on a bug of ours. A
    file that is not UTF-8, or a link, is left out; only its first ``MAX_ANSWER_BYTES`` are
    read."""
    from grader.batch.entries import open_entry
    from grader.pipeline import SubmissionError

    try:
        submission = open_entry(entry, scratch, max_bytes, max_files)
    except SubmissionError:
        shutil.rmtree(scratch, ignore_errors=True)
        return {}
    except Exception:  # a bug of ours: no answers now, read it again next time
        shutil.rmtree(scratch, ignore_errors=True)
        return None
    texts = {}
    root = Path(submission.root).resolve()
    try:
        for exercise_id, path in sorted(submission.files.items()):
            if path.is_symlink() or not path.resolve().is_relative_to(root):
                continue  # never read (nor show on the dashboard) a file outside the submission
            try:
                with path.open("rb") as f:
                    data = f.read(MAX_ANSWER_BYTES + 1)
                texts[exercise_id] = _decode(data)
            except (OSError, UnicodeDecodeError):
                continue
    finally:
        submission.cleanup()
        shutil.rmtree(scratch, ignore_errors=True)
    return texts


def _decode(data: bytes) -> str:
    """UTF-8 text, strictly; a file cut at ``MAX_ANSWER_BYTES`` may end inside a character."""
    if len(data) <= MAX_ANSWER_BYTES:
        return data.decode("utf-8")
    data = data[:MAX_ANSWER_BYTES]
    for cut in range(3):  # a UTF-8 character is at most 4 bytes
        try:
            return data[: len(data) - cut].decode("utf-8")
        except UnicodeDecodeError:
            continue
    return data[: len(data) - 3].decode("utf-8")


def store(
    db: sqlite3.Connection, name: str, content_hash: str | None, texts: dict[str, str]
) -> None:
    """Replace ``name``'s answers in one transaction."""
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute("DELETE FROM answers WHERE submission = ?", (name,))
        db.executemany(
            "INSERT INTO answers (submission, exercise_id, sha256, text) VALUES (?, ?, ?, ?)",
            [(name, ex, hashlib.sha256(t.encode()).hexdigest(), t) for ex, t in texts.items()],
        )
        db.execute("INSERT OR REPLACE INTO answer_sources VALUES (?, ?)", (name, content_hash))
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def collect(
    db: sqlite3.Connection,
    entries: Iterable[Entry],
    hashes: dict[str, str],
    scratch: Path,
    max_bytes: int,
    max_files: int,
) -> int:
    """Store the answers of every entry whose stored answers are missing or were read from
    other contents; forget those of entries no longer there. Returns how many were read."""
    ensure_schema(db)
    known = dict(db.execute("SELECT submission, content_hash FROM answer_sources"))
    entries = list(entries)
    read = 0
    for entry in entries:
        content_hash = hashes.get(entry.name)
        if content_hash is not None and known.get(entry.name) == content_hash:
            continue
        texts = read_answers(entry, scratch / entry.name, max_bytes, max_files)
        store(db, entry.name, content_hash if texts is not None else None, texts or {})
        read += 1
    forget(db, {e.name for e in entries})
    return read


def forget(db: sqlite3.Connection, keep: set[str]) -> None:
    """Drop the answers of submissions not in ``keep``."""
    gone = [n for (n,) in db.execute("SELECT submission FROM answer_sources") if n not in keep]
    gone += [n for (n,) in db.execute("SELECT DISTINCT submission FROM answers") if n not in keep]
    if not gone:
        return
    db.execute("BEGIN IMMEDIATE")
    for name in set(gone):
        db.execute("DELETE FROM answers WHERE submission = ?", (name,))
        db.execute("DELETE FROM answer_sources WHERE submission = ?", (name,))
    db.execute("COMMIT")


def fingerprints(db: sqlite3.Connection, exercise_id: str) -> dict[str, Fingerprint]:
    """Submission -> the fingerprint of its answer to ``exercise_id``, computing (and
    storing) the ones that are missing or were computed with another algorithm or base."""
    key = base_key()
    out: dict[str, Fingerprint] = {}
    fresh = []
    rows = db.execute(
        "SELECT submission, text, fp_key, fingerprint, tokens, distinctive FROM answers "
        "WHERE exercise_id = ? ORDER BY submission",
        (exercise_id,),
    ).fetchall()
    for name, text, fp_key, blob, tokens, distinctive in rows:
        if fp_key == key and blob is not None:
            out[name] = Fingerprint.from_bytes(blob, tokens, distinctive)
            continue
        fp = out[name] = fingerprint(text)
        fresh.append((key, fp.to_bytes(), fp.tokens, fp.distinctive, name, exercise_id))
    if fresh:
        db.execute("BEGIN IMMEDIATE")
        db.executemany(
            "UPDATE answers SET fp_key = ?, fingerprint = ?, tokens = ?, distinctive = ? "
            "WHERE submission = ? AND exercise_id = ?",
            fresh,
        )
        db.execute("COMMIT")
    return out


def copy_from(db: sqlite3.Connection, schema: str, wanted: str) -> None:
    """Copy the answers of the submissions named in table ``wanted`` from the attached
    database ``schema`` (a shard being merged), if it has them (inside the caller's
    transaction, after ``ensure_schema``)."""
    tables = {n for (n,) in db.execute(f"SELECT name FROM {schema}.sqlite_master")}
    for table in ("answers", "answer_sources"):
        if table in tables:
            db.execute(
                f"INSERT OR REPLACE INTO {table} SELECT * FROM {schema}.{table} "
                f"WHERE submission IN (SELECT name FROM {wanted})"
            )
