"""The grades of OUT's gradebook.sqlite as an LMS imports them, one row per student of a roster
(``grade export``; the roster and the join are ``roster``'s).

Three formats (docs/batch.md, "Sending grades to the LMS", says where each was read):

- ``moodle``: Moodle's CSV grade import. The first column identifies the user (``Email
  address``, ``Username`` or ``ID number``: what the import's "Map from" / "Map to" pair maps
  to ``useremail``, ``username`` or ``useridnumber``), then one column per grade item. Moodle
  stops the whole import at a user it does not know or a grade that is not a number, so only
  students with a submission get a row, and "no grade" is written ``-``.
- ``canvas``: Canvas's Gradebook import. ``Student, ID, SIS User ID, SIS Login ID, Section``,
  then one column per assignment, and a second row starting ``Points Possible``. A column whose
  name is not an assignment's creates one with that name and those points.
- ``csv``: one row per roster entry, for a spreadsheet or another LMS: ``identifier, name,
  submission``, each exercise's id, ``total, max_total, status``.

A grade item is an exercise (``ID title``) or the total (``Options.total_name``), in points or
percent. A submission that could not be graded (status error) gets no grade rather than a zero.

Text a spreadsheet would run as a formula (starting ``=``, ``+``, ``-``, ``@``) is quoted with
``'`` in a ``csv``, as in gradebook.csv. An LMS file cannot quote its identifier so: Moodle
looks the user up by the exact value (and stops the whole import at one it does not know),
Canvas by the exact SIS or login id, and neither strips a ``'``. So a student whose identifier
starts so, or holds control characters, gets no row in a ``moodle`` or ``canvas`` file, and the
export lists them (``unusable_identifier``) for their grade to be entered by hand. Names, which
no import matches exactly first, are written with control characters spelled out (``\x1b``):
the file may be printed on a terminal.
"""

from __future__ import annotations

import csv
import io
import json
import sqlite3
from dataclasses import dataclass, field, replace

from grader.batch.ledger import exercise_ids
from grader.classview.roster import Match, Roster, Student
from grader.shared.csvtext import FORMULA_STARTS, cell, number
from grader.shared.safetext import one_line, safe_text

FORMATS = ("moodle", "canvas", "csv")
ITEMS = ("both", "exercises", "total")
# What the first column of a Moodle file says, by what the roster's identifier is.
MOODLE_ID_COLUMNS = {"email": "Email address", "username": "Username", "idnumber": "ID number"}
CANVAS_ID_COLUMNS = {"id": "ID", "sis_user_id": "SIS User ID", "sis_login_id": "SIS Login ID"}
CANVAS_STUDENT_COLUMNS = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")
MOODLE_NO_GRADE = "-"
MOODLE_MAX_GRADE = 100  # Moodle's import refuses more unless unlimitedgrades/gradepointmax
NAME_LIMIT = 500  # characters of a roster's name written in a file


@dataclass
class Graded:
    """One submission's row of the gradebook."""

    status: str  # passed, failed or error
    score: float
    max_score: float
    exercises: dict[str, float] = field(default_factory=dict)  # id -> score


@dataclass
class ClassGrades:
    ids: list[str]  # the exercises graded, in order
    titles: dict[str, str]
    max_points: dict[str, float]  # id -> the exercise's points
    sources: dict[str, str]  # submission -> its entry in DIR
    rows: dict[str, Graded]

    @property
    def max_total(self) -> float:
        return sum(self.max_points.get(i, 0.0) for i in self.ids)


@dataclass(frozen=True)
class Options:
    format: str = "csv"
    percent: bool = False
    items: str = "both"
    total_name: str = "Total"
    id_column: str | None = None  # one of MOODLE_ID_COLUMNS or CANVAS_ID_COLUMNS' keys
    zero_missing: bool = False  # roster entries with no submission get 0 rather than no row


def read_grades(db: sqlite3.Connection) -> ClassGrades:
    """What the gradebook holds, as an export needs it."""
    ids = exercise_ids(db)
    titles: dict[str, str] = {}
    max_points: dict[str, float] = {}
    for exercise_id, title, max_score in db.execute(
        "SELECT exercise_id, MIN(title), MAX(max_score) FROM exercises GROUP BY exercise_id"
    ):
        titles[exercise_id], max_points[exercise_id] = title, float(max_score)
    row = db.execute("SELECT value FROM meta WHERE key = 'settings'").fetchone()
    configured = (json.loads(row[0]).get("max_scores") or {}) if row else {}
    for exercise_id in ids:  # an exercise no submission has a row for: grading.toml's points
        if exercise_id not in max_points and exercise_id in configured:
            max_points[exercise_id] = float(configured[exercise_id])
    rows: dict[str, Graded] = {}
    sources: dict[str, str] = {}
    for name, source, status, score, max_score in db.execute(
        "SELECT name, source, status, score, max_score FROM submissions ORDER BY name"
    ):
        rows[name] = Graded(status, float(score), float(max_score))
        sources[name] = source
    for name, exercise_id, score in db.execute(
        "SELECT submission, exercise_id, score FROM exercises"
    ):
        if name in rows:
            rows[name].exercises[exercise_id] = float(score)
    return ClassGrades(ids, titles, max_points, sources, rows)


def default_id_column(fmt: str, students: list[Student]) -> str | None:
    """Moodle: e-mail addresses when every identifier is one, else ID numbers; Canvas: the
    SIS login (what most schools' Canvas logins are: an e-mail or a user name)."""
    if fmt == "moodle":
        return "email" if students and all("@" in s.identifier for s in students) else "idnumber"
    if fmt == "canvas":
        return "sis_login_id"
    return None


def unusable_identifier(identifier: str) -> str | None:
    """Why ``identifier`` cannot go into a Moodle or Canvas file as it is; None when it can."""
    if identifier.startswith(FORMULA_STARTS):
        return (
            f"its identifier starts with {identifier[0]!r}: a spreadsheet would run it as a "
            "formula, and quoted with ' the LMS would not find the student"
        )
    if safe_text(identifier, None) != identifier or "\t" in identifier or "\n" in identifier:
        return "its identifier holds control characters, which no LMS's identifiers have"
    return None


def shown_name(name: str) -> str:
    """A roster's name as a file holds it: one line, control characters spelled out, quoted
    if a spreadsheet would run it."""
    return cell(one_line(name, NAME_LIMIT))


def _items(grades: ClassGrades, options: Options) -> list[tuple[str | None, str]]:
    """(exercise id, or None for the total; the column's name in an LMS file)."""
    items: list[tuple[str | None, str]] = []
    if options.items in ("both", "exercises"):
        items += [(i, f"{i} {grades.titles.get(i, '')}".strip()) for i in grades.ids]
    if options.items in ("both", "total"):
        items.append((None, options.total_name))
    return items


def _out_of(grades: ClassGrades, item: str | None) -> float | None:
    out_of = grades.max_total if item is None else grades.max_points.get(item)
    return out_of or None


def _value(grades: ClassGrades, graded: Graded | None, item: str | None, options: Options):
    """The item's grade as the export writes it; None for no grade."""
    if graded is None:
        return 0.0 if options.zero_missing else None
    if graded.status == "error":
        return None
    out_of: float | None
    if item is None:
        score, out_of = graded.score, graded.max_score or grades.max_total
    else:
        if item not in graded.exercises:
            return None
        score, out_of = graded.exercises[item], grades.max_points.get(item)
    if options.percent:
        return 100.0 * score / out_of if out_of else None
    return score


def _shown(value: float | None, no_grade: str = "") -> str:
    return no_grade if value is None else number(value)


def _points_possible(grades: ClassGrades, item: str | None, options: Options) -> str:
    out_of = _out_of(grades, item)
    return "" if out_of is None else ("100" if options.percent else number(out_of))


def _chosen(
    roster: Roster, matched: Match, options: Options
) -> tuple[list[tuple[Student, str | None]], list[tuple[Student, str]]]:
    """The students given a row, each with their submission's name (None for none), in
    roster order; and the students an LMS file refuses, each with why."""
    submission_of = {s.identifier: name for name, s in matched.whose.items()}
    absent = {s.identifier for s in matched.no_submission}
    wanted = [
        (s, submission_of.get(s.identifier))
        for s in roster.students
        if s.identifier in submission_of
        or (options.zero_missing and s.identifier in absent)
        or options.format == "csv"
    ]
    refused: list[tuple[Student, str]] = []
    exported = []
    for student, name in wanted:
        why = unusable_identifier(student.identifier) if options.format != "csv" else None
        if why is None:
            exported.append((student, name))
        else:
            refused.append((student, why))
    return exported, refused


Rows = list[tuple[Student, str | None]]


def _moodle(writer, grades: ClassGrades, exported: Rows, matched: Match, options: Options) -> None:
    """Moodle's grade import: the identifier column, then one column per item."""
    items = _items(grades, options)
    id_column = MOODLE_ID_COLUMNS[options.id_column or "email"]
    writer.writerow([id_column, *(name for _, name in items)])
    for student, name in exported:
        graded = grades.rows.get(name) if name else None
        values = [_value(grades, graded, item, options) for item, _ in items]
        writer.writerow([student.identifier, *(_shown(v, MOODLE_NO_GRADE) for v in values)])


def _canvas(writer, grades: ClassGrades, exported: Rows, matched: Match, options: Options) -> None:
    """Canvas's gradebook import: its student columns, a Points Possible row, the items."""
    items = _items(grades, options)
    where = CANVAS_STUDENT_COLUMNS.index(CANVAS_ID_COLUMNS[options.id_column or "sis_login_id"])
    writer.writerow([*CANVAS_STUDENT_COLUMNS, *(name for _, name in items)])
    possible = [_points_possible(grades, item, options) for item, _ in items]
    writer.writerow(["Points Possible", "", "", "", "", *possible])
    for student, name in exported:
        graded = grades.rows.get(name) if name else None
        who = [shown_name(student.name or student.identifier), "", "", "", ""]
        who[where] = student.identifier
        values = [_value(grades, graded, item, options) for item, _ in items]
        writer.writerow([*who, *(_shown(v) for v in values)])


def _csv(writer, grades: ClassGrades, exported: Rows, matched: Match, options: Options) -> None:
    """The plain CSV: every roster student, their submission, items, total and status."""
    ids = [item for item, _ in _items(grades, options) if item is not None]
    ambiguous = {s.identifier for s, _ in matched.ambiguous}
    total = options.items != "exercises"
    totals = ["total", "max_total"] if total else []
    writer.writerow(["identifier", "name", "submission", *ids, *totals, "status"])
    for student, name in exported:
        graded = grades.rows.get(name) if name else None
        status = graded.status if graded else "missing"
        own = options
        if student.identifier in ambiguous:  # not a zero: whose it is is unknown
            status, own = "ambiguous", replace(options, zero_missing=False)
        values = [_shown(_value(grades, graded, i, own)) for i in ids]
        if total:
            out_of = 100.0 if options.percent else grades.max_total
            values += [_shown(_value(grades, graded, None, own)), number(out_of)]
        who = [shown_name(student.identifier), shown_name(student.name), cell(name or "")]
        writer.writerow([*who, *values, status])


_WRITERS = {"moodle": _moodle, "canvas": _canvas, "csv": _csv}


def render(
    grades: ClassGrades, roster: Roster, matched: Match, options: Options
) -> tuple[str, int, list[tuple[Student, str]]]:
    """The file the LMS imports (``options.format``), students in roster order; how many
    students it has a row for; and the students left out of an LMS file, each with why
    (``unusable_identifier``)."""
    buf = io.StringIO()
    exported, refused = _chosen(roster, matched, options)
    write = _WRITERS.get(options.format, _csv)
    write(csv.writer(buf, lineterminator="\n"), grades, exported, matched, options)
    return buf.getvalue(), len(exported), refused
