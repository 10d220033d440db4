"""The dashboard's two insight sections, as data for ``templates/dashboard_insight.html.j2``:
each check's failures grouped by kind (under its failure rate), and the pairs of alike answers
with both answers side by side, the matching regions highlighted in matching colours."""

from __future__ import annotations

import json
import sqlite3
from typing import Any
from urllib.parse import quote

from grader.analysis import similarity
from grader.analysis.insight import FLOOR
from grader.shared.safetext import safe_text

MAX_PAIRS_SHOWN = 100  # the rest are in similarity.csv
MATCH_COLOURS = 6
RATE_BAR = 160  # pixels of a 100% failure-rate bar


def _links(db: sqlite3.Connection) -> dict[str, str]:
    return {
        name: quote(report or result)
        for name, report, result in db.execute(
            "SELECT name, report_path, result_path FROM submissions"
        )
    }


def _table_exists(db: sqlite3.Connection, name: str) -> bool:
    row = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,))
    return row.fetchone() is not None


def failures_view(db: sqlite3.Connection, rates: list[Any]) -> list[dict]:
    """One entry per check that some graded submission failed, in the order of ``rates``
    (``dashboard.CheckRate``), with its groups largest first."""
    if not _table_exists(db, "failure_groups"):
        return []
    links = _links(db)
    members: dict[tuple[str, str, int], list[str]] = {}
    for ex, check, rank, name in db.execute(
        "SELECT exercise_id, check_name, rank, submission FROM failure_group_members "
        "ORDER BY submission"
    ):
        members.setdefault((ex, check, rank), []).append(name)
    groups: dict[tuple[str, str], list[dict]] = {}
    for row in db.execute(
        "SELECT exercise_id, check_name, rank, count, kind, exception, counterexample_kind, "
        "example, example_message, hint, counterexample FROM failure_groups "
        "ORDER BY exercise_id, position, check_name, rank"
    ):
        ex, check, rank, count, kind, exception, ce_kind, example, message, hint, ce = row
        groups.setdefault((ex, check), []).append(
            {
                "rank": rank,
                "count": count,
                "kind": kind,
                "exception": exception,
                "counterexample_kind": ce_kind,
                "example": example,
                "example_href": links.get(example, ""),
                "message": message,
                "first_line": (message.splitlines() or [""])[0],
                "hint": hint,
                "counterexample": "" if ce is None else json.dumps(json.loads(ce)),
                "members": [
                    {"name": n, "href": links.get(n, "")}
                    for n in members.get((ex, check, rank), [])
                ],
            }
        )
    out = []
    for rate in rates:
        if not rate.failed:
            continue
        out.append(
            {
                "exercise_id": rate.exercise_id,
                "name": rate.name,
                "failed": rate.failed,
                "total": rate.total,
                "percent": rate.percent,
                "bar": round(RATE_BAR * rate.failed / rate.total, 1) if rate.total else 0,
                "bar_width": RATE_BAR,
                "groups": groups.get((rate.exercise_id, rate.name), []),
            }
        )
    return out


def segments(text: str, regions: list[list[int]]) -> list[dict]:
    """``text`` cut into plain and matching pieces (``match`` is the colour, or ``None``).
    Each piece is shown, never obeyed: a bidi control or zero-width character in a student's
    code is spelled out (``safe_text``), so the code reads as it runs (Trojan Source)."""
    out: list[dict] = []
    at = 0
    for start, end, match in sorted(regions):
        if start < at or end <= start:
            continue
        if start > at:
            out.append({"text": safe_text(text[at:start], None), "match": None})
        colour = match % MATCH_COLOURS if match >= 0 else MATCH_COLOURS
        out.append({"text": safe_text(text[start:end], None), "match": colour, "number": match + 1})
        at = end
    if at < len(text):
        out.append({"text": safe_text(text[at:], None), "match": None})
    return out


def similarity_view(db: sqlite3.Connection) -> dict:
    """The pairs to show (the most similar first) and, per exercise, what was compared."""
    empty = {
        "exercises": [],
        "pairs": [],
        "total": 0,
        "floor": FLOOR,
        "shown": 0,
        "min_tokens": similarity.MIN_TOKENS,
    }
    if not _table_exists(db, "similarity_runs"):
        return empty
    exercises = []
    counts = dict(db.execute("SELECT exercise_id, COUNT(*) FROM similarity GROUP BY exercise_id"))
    for ex, n_answers, scored, short in db.execute(
        "SELECT exercise_id, answers, scored, short FROM similarity_runs ORDER BY exercise_id"
    ):
        short_names = json.loads(short)
        exercises.append(
            {
                "id": ex,
                "answers": n_answers,
                "scored": scored,
                "short": len(short_names),
                "short_names": short_names,
                "pairs": counts.get(ex, 0),
            }
        )
    total = sum(counts.values())
    rows = db.execute(
        "SELECT exercise_id, submission_a, submission_b, similarity, regions_a, regions_b "
        "FROM similarity ORDER BY similarity DESC, exercise_id, submission_a, submission_b "
        "LIMIT ?",
        (MAX_PAIRS_SHOWN,),
    ).fetchall()
    texts = {
        (s, e): t for s, e, t in db.execute("SELECT submission, exercise_id, text FROM answers")
    }
    links = _links(db)
    pairs = []
    for i, (ex, a, b, value, regions_a, regions_b) in enumerate(rows, start=1):
        pairs.append(
            {
                "id": f"pair-{i}",
                "exercise_id": ex,
                "value": value,
                "percent": f"{100 * value:.0f}%",
                "width": round(100 * value),
                "sides": [
                    {
                        "name": n,
                        "href": links.get(n, ""),
                        "segments": segments(texts.get((n, ex), ""), json.loads(regions)),
                    }
                    for n, regions in ((a, regions_a), (b, regions_b))
                ],
            }
        )
    return {**empty, "exercises": exercises, "pairs": pairs, "total": total, "shown": len(pairs)}
