"""index.html: the class dashboard, rendered from gradebook.sqlite with
``templates/dashboard.html.j2``.

It shows the class summary, a histogram of total scores and each check's failure rate (both
drawn in HTML and CSS: text a screen reader reads, a long check name cut with an ellipsis and
whole on hover), each check's failures grouped by kind, the pairs of alike answers side by side
(``grader.classview.insight_view``), and a table of submissions, sortable by any column (by mouse
or keyboard), linking to each report. The page is self-contained: no script, style sheet or
font is fetched from anywhere. Failure rates count the submissions that were graded (not those
that could not be read).
"""

from __future__ import annotations

import sqlite3
import statistics
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from grader.analysis.compare import public_gaps
from grader.batch.ledger import atomic_write, exercise_ids
from grader.classview.insight_view import failures_view, similarity_view
from grader.judge.seeds import PUBLIC_SEED
from grader.result.report_html import environment
from grader.shared.csvtext import number
from grader.shared.registry import BY_ID
from grader.shared.version import __version__

BINS = 10


@dataclass
class Bar:
    count: int
    label: str
    height: float  # percent of the tallest bar


@dataclass
class CheckRate:
    exercise_id: str
    name: str
    failed: int
    total: int

    @property
    def width(self) -> float:
        """The failure rate in percent, for the bar."""
        return 100 * self.failed / self.total if self.total else 0.0

    @property
    def percent(self) -> str:
        return f"{100 * self.failed / self.total:.0f}%" if self.total else "-"


def histogram(fractions: list[float]) -> list[Bar]:
    """Total scores as fractions of the maximum, in ``BINS`` bins (100% in the last)."""
    counts = [0] * BINS
    for f in fractions:
        counts[min(BINS - 1, max(0, int(f * BINS)))] += 1
    tallest = max(counts) or 1
    return [
        Bar(count, f"{100 * i // BINS}-{100 * (i + 1) // BINS}%", 100 * count / tallest)
        for i, count in enumerate(counts)
    ]


def seed_text(seed: str) -> str:
    """The batch's seed for the instructor: the course's grading seed, or the public one."""
    return f"public seed {seed}" if seed == str(PUBLIC_SEED) else f"course seed {seed}"


def check_rates(db: sqlite3.Connection) -> list[CheckRate]:
    rows = db.execute(
        """
        SELECT c.exercise_id, c.name, MIN(c.position),
               SUM(CASE WHEN c.passed THEN 0 ELSE 1 END), COUNT(*)
        FROM checks AS c JOIN submissions AS s ON s.name = c.submission
        WHERE s.graded
        GROUP BY c.exercise_id, c.name
        """
    ).fetchall()
    rows.sort(key=lambda r: (r[0], r[2]))
    return [CheckRate(ex, name, failed, total) for ex, name, _, failed, total in rows]


def tampered_exercises(db: sqlite3.Connection) -> dict[str, set[str]]:
    """Submission -> the exercises whose worker caught student code rewriting the grader (the
    ``tampered`` verdict)."""
    found: dict[str, set[str]] = {}
    for submission, exercise_id in db.execute(
        "SELECT submission, exercise_id FROM exercises WHERE verdict = 'tampered'"
    ):
        found.setdefault(submission, set()).add(exercise_id)
    return found


def context(db: sqlite3.Connection, title: str) -> dict:
    ids = exercise_ids(db)
    scores = {
        (s, e): (v, m, st)
        for s, e, v, m, st in db.execute(
            "SELECT submission, exercise_id, score, max_score, status FROM exercises"
        )
    }
    meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
    tampered = tampered_exercises(db)
    rows = []
    for name, score, max_score, status, reason, graded, result_path, report_path in db.execute(
        "SELECT name, score, max_score, status, reason, graded, result_path, report_path "
        "FROM submissions ORDER BY name"
    ):
        rows.append(
            {
                "name": name,
                "href": quote(report_path or result_path),
                "json_href": quote(result_path),
                "score": score,
                "score_text": number(score),
                "max_score": number(max_score),
                "percent": 100 * score / max_score if max_score else 0.0,
                "status": status,
                "reason": reason,
                "graded": bool(graded),
                "tampered": sorted(tampered.get(name, ())),
                "exercises": [
                    {
                        "score": scores[(name, i)][0],
                        "text": number(scores[(name, i)][0]),
                        "status": scores[(name, i)][2],
                        "tampered": i in tampered.get(name, ()),
                    }
                    if (name, i) in scores
                    else None
                    for i in ids
                ],
            }
        )
    gaps = public_gaps(db)  # None: no --compare-public grading to compare with
    for row in rows:
        row["public_only"] = [
            {
                "id": g.exercise_id,
                "text": f"{g.exercise_id}: {number(g.public_score)}/{number(g.max_score)} with "
                f"the public seed, {number(g.course_score)} with the course's",
            }
            for g in (gaps or {}).get(row["name"], [])
        ]
    graded = [r for r in rows if r["graded"]]
    fractions = [r["percent"] / 100 for r in graded]
    rates = check_rates(db)
    return {
        "title": title,
        "grader_version": meta.get("grader_version", __version__),
        "seed": seed_text(meta.get("seed", "")),
        "public_only": None if gaps is None else len(gaps),
        "exercises": [{"id": i, "title": BY_ID[i].title if i in BY_ID else i} for i in ids],
        "rows": rows,
        "n_tampered": sum(bool(r["tampered"]) for r in rows),
        "summary": {
            "submissions": len(rows),
            "graded": len(graded),
            "errors": sum(r["status"] == "error" for r in rows),
            "passed": sum(r["status"] == "passed" for r in rows),
            "mean": f"{100 * statistics.fmean(fractions):.0f}%" if fractions else "-",
            "median": f"{100 * statistics.median(fractions):.0f}%" if fractions else "-",
        },
        "hist": {"bars": histogram(fractions)},
        "rates": {"rows": rates},
        "failures": failures_view(db, rates),  # each check's failures, grouped by kind
        "similar": similarity_view(db),  # pairs of alike answers, side by side
    }


def render_dashboard(db: sqlite3.Connection, title: str = "Class dashboard") -> str:
    return environment().get_template("dashboard.html.j2").render(context(db, title))


def write_dashboard(db: sqlite3.Connection, path: Path, title: str = "Class dashboard") -> None:
    atomic_write(path, render_dashboard(db, title))
