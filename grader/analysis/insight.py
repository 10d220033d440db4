"""What a class did, beyond scores: which answers are alike (``similarity.csv`` and the
``similarity`` table) and, for each check, its failures grouped by kind (the
``failure_groups`` and ``failure_group_members`` tables). Both are rebuilt from
gradebook.sqlite at the end of every ``grade batch`` and ``grade merge``, so a merged class is
compared as a whole.

Similarity is recomputed per exercise only when that exercise's answers changed (the state of
an exercise is the hash of its answers' hashes and of the algorithm): a resumed batch with
nothing new does no comparison at all, and a batch where one student resubmitted fingerprints
that one answer again.

    similarity(exercise_id, submission_a, submission_b, similarity, regions_a, regions_b)
    similarity_runs(exercise_id, state, answers, scored, short)
    failure_groups(exercise_id, check_name, position, rank, count, kind, exception,
                   counterexample_kind, example, example_message, hint, counterexample)
    failure_group_members(exercise_id, check_name, rank, submission)
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any

from grader.analysis import answers, similarity
from grader.analysis.failures import failure_groups
from grader.batch.entries import Entry
from grader.batch.ledger import Ledger, atomic_write, exercise_ids
from grader.shared.csvtext import cell

FLOOR = 0.5  # pairs below this similarity are not reported
CSV_NAME = "similarity.csv"

SCHEMA = """
CREATE TABLE IF NOT EXISTS similarity (
    exercise_id  TEXT NOT NULL,
    submission_a TEXT NOT NULL,
    submission_b TEXT NOT NULL,
    similarity   REAL NOT NULL,
    regions_a    TEXT NOT NULL,  -- JSON [[start, end, match], ...]: character spans in a's text
    regions_b    TEXT NOT NULL,
    PRIMARY KEY (exercise_id, submission_a, submission_b)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS similarity_runs (
    exercise_id TEXT PRIMARY KEY,
    state       TEXT NOT NULL,
    answers     INTEGER NOT NULL,
    scored      INTEGER NOT NULL,
    short       TEXT NOT NULL   -- JSON list of the answers too short to tell apart
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS failure_groups (
    exercise_id         TEXT NOT NULL,
    check_name          TEXT NOT NULL,
    position            INTEGER NOT NULL,
    rank                INTEGER NOT NULL,  -- 1: the largest group of this check
    count               INTEGER NOT NULL,
    kind                TEXT NOT NULL,     -- the message's shape (numbers as N)
    exception           TEXT NOT NULL,     -- the exception's type, or ''
    counterexample_kind TEXT NOT NULL,
    example             TEXT NOT NULL,     -- one submission of the group
    example_message     TEXT NOT NULL,     -- its message (without the hint)
    hint                TEXT NOT NULL,
    counterexample      TEXT,              -- its counterexample (JSON)
    PRIMARY KEY (exercise_id, check_name, rank)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS failure_group_members (
    exercise_id TEXT NOT NULL,
    check_name  TEXT NOT NULL,
    rank        INTEGER NOT NULL,
    submission  TEXT NOT NULL,
    PRIMARY KEY (exercise_id, check_name, rank, submission)
) WITHOUT ROWID;
"""


def ensure_schema(db: sqlite3.Connection) -> None:
    answers.ensure_schema(db)
    db.executescript(SCHEMA)


def _state(db: sqlite3.Connection, exercise_id: str) -> str:
    h = hashlib.sha256(
        f"{similarity.base_key()}/{FLOOR}/{similarity.MIN_TOKENS}/{similarity.MIN_SHARED}/"
        f"{similarity.COMMON_MIN}/{similarity.COMMON_SHARE}\0".encode()
    )
    for name, sha in db.execute(
        "SELECT submission, sha256 FROM answers WHERE exercise_id = ? ORDER BY submission",
        (exercise_id,),
    ):
        h.update(f"{name}\0{sha}\0".encode())
    return h.hexdigest()


def update_similarity(db: sqlite3.Connection) -> list[str]:
    """Compare the answers of every exercise whose answers changed; the exercises compared."""
    ids = exercise_ids(db)
    done = dict(db.execute("SELECT exercise_id, state FROM similarity_runs"))
    compared = []
    for exercise_id in ids:
        state = _state(db, exercise_id)
        if done.get(exercise_id) == state:
            continue
        fps = answers.fingerprints(db, exercise_id)
        result = similarity.compare(fps, FLOOR)
        members = {n for a, b, _ in result.pairs for n in (a, b)}
        texts = {
            n: t
            for n, t in db.execute(
                "SELECT submission, text FROM answers WHERE exercise_id = ?", (exercise_id,)
            )
            if n in members
        }
        rows = []
        for a, b, value in result.pairs:
            regions_a, regions_b = similarity.matching_regions(texts[a], texts[b], result.common)
            rows.append((exercise_id, a, b, value, json.dumps(regions_a), json.dumps(regions_b)))
        db.execute("BEGIN IMMEDIATE")
        db.execute("DELETE FROM similarity WHERE exercise_id = ?", (exercise_id,))
        db.executemany("INSERT INTO similarity VALUES (?, ?, ?, ?, ?, ?)", rows)
        db.execute(
            "INSERT OR REPLACE INTO similarity_runs VALUES (?, ?, ?, ?, ?)",
            (exercise_id, state, len(fps), len(result.scored), json.dumps(result.short)),
        )
        db.execute("COMMIT")
        compared.append(exercise_id)
    stale = [(e,) for (e,) in db.execute("SELECT exercise_id FROM similarity_runs") if e not in ids]
    if stale:
        db.execute("BEGIN IMMEDIATE")
        db.executemany("DELETE FROM similarity WHERE exercise_id = ?", stale)
        db.executemany("DELETE FROM similarity_runs WHERE exercise_id = ?", stale)
        db.execute("COMMIT")
    return compared


def update_failure_groups(db: sqlite3.Connection) -> int:
    """Rebuild the failure groups from the checks table; returns how many groups."""
    groups = failure_groups(db)
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute("DELETE FROM failure_groups")
        db.execute("DELETE FROM failure_group_members")
        for g in groups:
            db.execute(
                "INSERT INTO failure_groups VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    g.exercise_id,
                    g.check,
                    g.position,
                    g.rank,
                    g.count,
                    g.kind,
                    g.exception,
                    g.counterexample_kind,
                    g.example,
                    g.example_message,
                    g.hint,
                    None if g.counterexample is None else json.dumps(g.counterexample),
                ),
            )
            db.executemany(
                "INSERT INTO failure_group_members VALUES (?, ?, ?, ?)",
                [(g.exercise_id, g.check, g.rank, m) for m in g.members],
            )
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return len(groups)


def similarity_csv(db: sqlite3.Connection) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["exercise", "submission_a", "submission_b", "similarity"])
    for exercise_id, a, b, value in db.execute(
        "SELECT exercise_id, submission_a, submission_b, similarity FROM similarity "
        "ORDER BY similarity DESC, exercise_id, submission_a, submission_b"
    ):
        writer.writerow([exercise_id, cell(a), cell(b), f"{value:.2f}"])
    return buf.getvalue()


def write_insight(db: sqlite3.Connection, out: Path) -> list[str]:
    """Update the failure groups and the similarity tables, and write ``OUT/similarity.csv``.

    A failure here is ours, never a student's, and must not cost the batch its gradebook: it
    is reported (a warning on stderr, and returned) and the rest goes on."""
    problems = []
    for what, step in (
        ("failure groups", update_failure_groups),
        ("similarity", update_similarity),
        ("similarity.csv", lambda db: atomic_write(out / CSV_NAME, similarity_csv(db))),
    ):
        try:
            ensure_schema(db)
            step(db)
        except Exception as exc:  # reported, and the batch goes on
            if db.in_transaction:
                db.execute("ROLLBACK")
            problems.append(f"{what}: {type(exc).__name__}: {exc}")
            print(f"grade: warning: no {what} ({problems[-1]})", file=sys.stderr)
    return problems


def collect_answers(
    ledger: Ledger, entries: list[Entry], hashes: dict[str, str], settings: Any
) -> int:
    """Store the answers of the batch's entries (those not stored yet, or changed since) for
    the similarity report; returns how many entries were read."""
    import shutil

    scratch = ledger.scratch / "answers"
    try:
        ensure_schema(ledger.db)
        return answers.collect(
            ledger.db, entries, hashes, scratch, settings.unzip_mb * 2**20, settings.unzip_files
        )
    except Exception as exc:  # ours, never the student's: the gradebook still stands
        if ledger.db.in_transaction:
            ledger.db.execute("ROLLBACK")
        print(
            f"grade: warning: answers not read for the similarity report "
            f"({type(exc).__name__}: {exc})",
            file=sys.stderr,
        )
        return 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
