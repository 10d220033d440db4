"""``grade batch --compare-public``: the class graded with the public seed as well, to find
answers that memorized the public examples.

A student's ``grade`` draws its examples from the public seed, so an answer can be tuned to
them (a lookup table of the configs the checks draw) and pass every check at home. The batch
grades with the course's seed; with ``--compare-public`` it also grades every submission with
the public seed into ``OUT/public-seed/`` (results and a database as in OUT, resumable the same
way, no reports), and the dashboard flags each exercise that gets full marks with the public
seed and fewer with the course's: the signature of a memorized answer (or of one that is right
only on the few cases the public seed happens to draw).

Only submissions graded from the same content, under the same settings apart from the seed,
are compared; ``grade merge`` does not carry ``public-seed/`` over.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from grader.judge.seeds import PUBLIC_SEED

if TYPE_CHECKING:
    from grader.batch.config import Settings
    from grader.batch.entries import Entry

PUBLIC_DIR = "public-seed"
FULL = 1e-9  # a score within this of the maximum is full marks


@dataclass(frozen=True)
class Gap:
    """An exercise with full marks on the public examples and fewer on the course's."""

    exercise_id: str
    public_score: float
    course_score: float
    max_score: float


def grade_public(
    out: Path, entries: list[Entry], hashes: dict[str, str], settings: Settings, jobs: int
) -> int:
    """Grade ``entries`` with the public seed into ``OUT/public-seed``; return how many were
    graded now (the others are still current from an earlier run)."""
    from grader.batch.deadline import deadline_hash
    from grader.batch.ledger import Ledger
    from grader.batch.pool import Job, judge_deadline, run_jobs
    from grader.batch.progress import Progress

    public = dataclasses.replace(settings, seed=PUBLIC_SEED)
    ledger = Ledger(out / PUBLIC_DIR)
    fingerprint = public.fingerprint()
    ledger.set_meta(public.ledger_meta())
    shutil.rmtree(ledger.scratch, ignore_errors=True)
    by_name = {e.name: e for e in entries}
    ledger.expect(by_name)  # file names that no two submissions share, on any file system
    again = deadline_hash(fingerprint, judge_deadline(public))  # a row given up on at this deadline
    todo = [e for e in entries if not ledger.done(e.name, hashes[e.name], fingerprint, again)]
    print(
        f"public seed (--compare-public): {len(todo)} to grade, "
        f"{len(entries) - len(todo)} from an earlier run",
        flush=True,
    )
    progress = Progress(len(entries), len(entries) - len(todo))

    def record(outcome) -> None:
        entry = by_name[outcome.name]
        row = {
            "name": entry.name,
            "source": entry.path.name,
            "kind": entry.kind,
            "content_hash": None if outcome.retry else hashes[entry.name],
            "settings_hash": (
                fingerprint
                if outcome.deadline is None
                else deadline_hash(fingerprint, outcome.deadline)
            ),
            "status": outcome.status,
            "reason": outcome.reason,
            "graded": int(outcome.graded),
        }
        ledger.record(row, outcome.result, render_report=False)
        result = outcome.result
        progress.update(
            entry.name, outcome.status, result["score"], result["max_score"], outcome.reason
        )

    try:
        run_jobs(
            [Job(e, ledger.scratch / ledger.stem(e.name), public) for e in todo],
            jobs,
            public.sandbox,
            record,
        )
    finally:
        progress.close()
    ledger.prune(set(by_name))
    shutil.rmtree(ledger.scratch, ignore_errors=True)
    ledger.close()
    return len(todo)


def _db_file(db: sqlite3.Connection) -> Path | None:
    for _, name, file in db.execute("PRAGMA database_list"):
        if name == "main" and file:
            return Path(file)
    return None


def _comparable(course: dict, public: dict) -> bool:
    """Whether the two settings differ in the seed alone."""
    return {**course, "seed": None} == {**public, "seed": None}


def _graded(db: sqlite3.Connection) -> tuple[dict, dict]:
    hashes = dict(db.execute("SELECT name, content_hash FROM submissions WHERE graded"))
    scores = {
        (s, e): (score, max_score)
        for s, e, score, max_score in db.execute(
            "SELECT submission, exercise_id, score, max_score FROM exercises"
        )
    }
    return hashes, scores


def public_gaps(db: sqlite3.Connection) -> dict[str, list[Gap]] | None:
    """For each submission of the batch database ``db``, the exercises that pass the public
    examples but not the course's; None when OUT holds no comparable public grading."""
    path = _db_file(db)
    public_path = path.parent / PUBLIC_DIR / path.name if path else None
    if public_path is None or not public_path.is_file():
        return None
    try:
        public = sqlite3.connect(f"file:{public_path}?mode=ro", uri=True)
        try:
            public_meta = dict(public.execute("SELECT key, value FROM meta"))
            public_hashes, public_scores = _graded(public)
        finally:
            public.close()
        course_meta = dict(db.execute("SELECT key, value FROM meta"))
        same = _comparable(json.loads(course_meta["settings"]), json.loads(public_meta["settings"]))
    except (sqlite3.Error, KeyError, ValueError):
        return None
    if not same:
        return None
    hashes, scores = _graded(db)
    gaps: dict[str, list[Gap]] = {}
    for (name, ex_id), (score, max_score) in sorted(scores.items()):
        content = hashes.get(name)
        if content is None or public_hashes.get(name) != content:
            continue  # not graded, or graded from other files than the public grading
        public_score = public_scores.get((name, ex_id), (0.0, 0.0))[0]
        if max_score > 0 and public_score >= max_score - FULL > score:
            gaps.setdefault(name, []).append(Gap(ex_id, public_score, score, max_score))
    return gaps
