"""``grade export OUT --roster ROSTER --format moodle|canvas|csv``: the grades of a batch's
gradebook as the CSV an LMS imports, one row per student of the roster (GitHub Classroom's
``classroom_roster.csv`` or a plain ``folder,identifier`` CSV), in points or percent per
exercise and in total.

The file goes to stdout, or to ``-o FILE``; what could not be joined (submissions with no
roster entry, roster entries with no submission, an entry that fits two submissions,
submissions that could not be graded, students whose identifier cannot go into an LMS file as
it is: ``grader.classview.lms.unusable_identifier``) is listed on stderr (on stdout with
``-o``), every roster text with its control characters spelled out. Exit
status: 0 when the file is written, 2 on a usage error (no gradebook in OUT, a missing roster,
a roster without the expected columns).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path
from typing import TextIO

from grader.commands.options import EXIT_PASSED
from grader.shared.errors import UsageError
from grader.shared.safetext import one_line


def parser() -> argparse.ArgumentParser:
    from grader.classview.lms import CANVAS_ID_COLUMNS, FORMATS, ITEMS, MOODLE_ID_COLUMNS

    p = argparse.ArgumentParser(
        prog="grade export",
        description="Write the grades of OUT's gradebook as the CSV an LMS imports (Moodle, "
        "Canvas, or a plain CSV), one row per student of a roster, and list the submissions "
        "and students that could not be joined.",
    )
    p.add_argument("out", type=Path, metavar="OUT", help="the OUT folder of 'grade batch'")
    p.add_argument(
        "--roster",
        type=Path,
        required=True,
        metavar="FILE",
        help="GitHub Classroom's classroom_roster.csv (identifier, github_username, ...) or a "
        "CSV with the columns folder,identifier (and optionally name)",
    )
    p.add_argument("--format", choices=FORMATS, default="csv", help="what to write (default: csv)")
    scale = p.add_mutually_exclusive_group()
    scale.add_argument(
        "--points", dest="percent", action="store_false", help="grades in points (the default)"
    )
    scale.add_argument(
        "--percent", dest="percent", action="store_true", help="grades in percent (0-100)"
    )
    p.set_defaults(percent=False)
    p.add_argument(
        "--items",
        choices=ITEMS,
        default=None,
        help="a column per exercise, one for the total, or both (default: both in a csv; "
        "total for moodle and canvas, one grade item: both would count the points twice there)",
    )
    p.add_argument(
        "--total-name",
        default="Total",
        metavar="TEXT",
        help="the total's column: the grade item or assignment it goes to (default: Total)",
    )
    p.add_argument(
        "--id-column",
        choices=[*MOODLE_ID_COLUMNS, *CANVAS_ID_COLUMNS],
        default=None,
        help="what the roster's identifier is in the LMS. Moodle: email, username or idnumber "
        "(default: email when every identifier is an e-mail address, else idnumber); Canvas: "
        "sis_login_id, sis_user_id or id (default: sis_login_id)",
    )
    p.add_argument(
        "--zero-missing",
        action="store_true",
        help="give roster entries with no submission 0 (default: no row in an LMS file, no "
        "grade in a csv)",
    )
    p.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here, not stdout")
    return p


def _open_gradebook(out: Path) -> sqlite3.Connection:
    from grader.batch.ledger import DB_NAME

    if not out.is_dir():
        raise UsageError(f"{out}: no such folder (give the OUT folder of 'grade batch')")
    path = out / DB_NAME
    if not path.is_file():
        raise UsageError(f"{out}: no {DB_NAME} (is it the OUT folder of 'grade batch'?)")
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=30.0)
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"{path}: not a gradebook database ({exc})") from None
    if not {"meta", "submissions", "exercises"} <= tables:
        db.close()
        raise UsageError(f"{path}: not written by 'grade batch' (no submissions table)")
    return db


def _check_id_column(fmt: str, id_column: str | None) -> None:
    from grader.classview.lms import CANVAS_ID_COLUMNS, MOODLE_ID_COLUMNS

    if id_column is None:
        return
    allowed = {"moodle": MOODLE_ID_COLUMNS, "canvas": CANVAS_ID_COLUMNS}.get(fmt, {})
    if id_column not in allowed:
        choices = ", ".join(allowed) or "none: a csv names it 'identifier'"
        raise UsageError(f"--id-column {id_column} is not for --format {fmt} (choose: {choices})")


def _listing(stream: TextIO, title: str, lines: list[str]) -> None:
    if not lines:
        return
    print(f"{title} ({len(lines)}):", file=stream)
    for line in lines:
        print(f"  {one_line(line, 300)}", file=stream)


def report(stream: TextIO, grades, roster, matched, written: int, refused=()) -> None:
    """What was exported, and every submission or student that was not joined or not
    exported (``refused``: student, why)."""
    from grader.classview.roster import CLASSROOM

    def who(student) -> str:
        extra = [student.name] if student.name else []
        if roster.kind == CLASSROOM:
            extra.append(f"GitHub: {student.github_username or 'not joined'}")
        else:
            extra.append(f"folder: {student.folder}")
        return f"{student.identifier} ({', '.join(extra)}; line {student.line})"

    print(
        f"{written} rows for {len(roster.students)} students in the roster "
        f"({roster.kind}); {len(matched.whose)} of {len(grades.rows)} submissions matched",
        file=stream,
    )
    _listing(stream, "submissions with no roster entry", matched.no_student)
    _listing(stream, "roster entries with no submission", [who(s) for s in matched.no_submission])
    _listing(
        stream,
        "roster entries that fit several submissions (not exported: rename one, or use a "
        "folder,identifier roster)",
        [f"{who(s)}: {', '.join(names)}" for s, names in matched.ambiguous],
    )
    _listing(
        stream,
        "roster entries not exported (enter their grade by hand, or fix the identifier)",
        [f"{who(s)}: {why}" for s, why in refused],
    )
    _listing(
        stream,
        "submissions that could not be graded (exported with no grade; see gradebook.csv)",
        [
            f"{name} -> {s.identifier}"
            for name, s in sorted(matched.whose.items())
            if grades.rows[name].status == "error"
        ],
    )


def main(argv: list[str]) -> int:
    args = parser().parse_args(argv)
    _check_id_column(args.format, args.id_column)
    from grader.batch.ledger import atomic_write
    from grader.classview import lms
    from grader.classview.roster import RosterError, match, read_roster

    try:
        roster = read_roster(args.roster)
    except RosterError as exc:
        raise UsageError(str(exc)) from None
    db = _open_gradebook(args.out)
    try:
        grades = lms.read_grades(db)
    except sqlite3.DatabaseError as exc:
        raise UsageError(f"{args.out}: the gradebook cannot be read ({exc})") from None
    finally:
        db.close()
    matched = match(roster, grades.sources)
    options = lms.Options(
        format=args.format,
        percent=args.percent,
        items=args.items or ("both" if args.format == "csv" else "total"),
        total_name=args.total_name,
        id_column=args.id_column or lms.default_id_column(args.format, roster.students),
        zero_missing=args.zero_missing,
    )
    text, written, refused = lms.render(grades, roster, matched, options)
    if args.format == "moodle" and not args.percent and grades.max_total > lms.MOODLE_MAX_GRADE:
        print(
            f"grade export: note: the total is out of {grades.max_total:g} points; Moodle refuses "
            f"grades above {lms.MOODLE_MAX_GRADE} unless its unlimitedgrades and gradepointmax "
            "settings allow them (or use --percent)",
            file=sys.stderr,
        )
    if args.output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        report(sys.stderr, grades, roster, matched, written, refused)
    else:
        try:
            atomic_write(args.output, text)
        except OSError as exc:
            raise UsageError(f"{args.output}: cannot be written ({exc.strerror or exc})") from None
        report(sys.stdout, grades, roster, matched, written, refused)
        print(f"written: {args.output} ({args.format})", file=sys.stdout)
    return EXIT_PASSED
