"""gradebook.csv: one row per submission, read from gradebook.sqlite.

Columns: ``name, total, max_total``, one column per graded exercise (its score), ``status``
(passed, failed or error), ``reason`` (why it is an error), ``grader_version``, ``seed``.
Rows are in name order and scores have at most two decimals, so the same grades give the same
bytes however the batch was run (in one go, resumed, or sharded and merged). Text that a
spreadsheet would run as a formula (a name starting with ``=``) is quoted with ``'``.
"""

from __future__ import annotations

import csv
import io
import sqlite3
from pathlib import Path

from grader.batch.ledger import atomic_write, exercise_ids
from grader.shared.csvtext import cell, number


def gradebook_csv(db: sqlite3.Connection) -> str:
    ids = exercise_ids(db)
    scores: dict[tuple[str, str], float] = {
        (s, e): v for s, e, v in db.execute("SELECT submission, exercise_id, score FROM exercises")
    }
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(
        ["name", "total", "max_total", *ids, "status", "reason", "grader_version", "seed"]
    )
    rows = db.execute(
        "SELECT name, score, max_score, status, reason, grader_version, seed "
        "FROM submissions ORDER BY name"
    )
    for name, score, max_score, status, reason, version, seed in rows:
        per_exercise = [number(scores[(name, i)]) if (name, i) in scores else "" for i in ids]
        writer.writerow(
            [
                cell(name),
                number(score),
                number(max_score),
                *per_exercise,
                status,
                cell(reason),
                version,
                seed,
            ]
        )
    return buf.getvalue()


def write_gradebook(db: sqlite3.Connection, path: Path) -> None:
    atomic_write(path, gradebook_csv(db))
