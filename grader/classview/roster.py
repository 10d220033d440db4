"""A class roster, and which graded submission is whose: the join behind ``grade export``.

Two kinds of roster are read (UTF-8, a byte-order mark allowed, column names in any case and
order, other columns ignored):

- GitHub Classroom's ``classroom_roster.csv`` (the Students tab's download): ``identifier,
  github_username, github_id, name``. A submission is a student's when its name is the
  student's GitHub username or ends in ``-<username>``, as GitHub Classroom names the
  repositories it creates (``<assignment>-<username>``), ignoring case; where two usernames
  fit (``bob`` and ``jim-bob`` for ``hw1-jim-bob``) the longer one wins. A student who has not
  joined yet (no username) has no submission.
- a plain CSV with ``folder, identifier`` (and optionally ``name``): ``folder`` is the
  submission's name in the gradebook or its entry in DIR (``alice``, ``alice.zip``,
  ``alice.ipynb``), matched exactly, else ignoring case and a ``.zip`` or ``.ipynb`` ending;
  a submission named exactly wins over one that only fits that way.

``identifier`` is what the LMS knows the student by (an e-mail address, a login, a student
number). Every mistake a roster can hold is a ``RosterError`` with one line that names the
file (and the line, where there is one).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

CLASSROOM, PLAIN = "GitHub Classroom", "folder,identifier"
MAX_ROSTER_BYTES = 20 << 20  # a class of a hundred thousand is still far below this
DIR_SUFFIXES = (".zip", ".ipynb")  # how a submission's name and its entry in DIR may differ


class RosterError(ValueError):
    """A roster that cannot be read, said in one line."""


@dataclass(frozen=True)
class Student:
    identifier: str
    name: str = ""
    github_username: str = ""  # GitHub Classroom rosters
    folder: str = ""  # plain rosters
    line: int = 0  # in the roster file, for messages


@dataclass(frozen=True)
class Roster:
    path: Path
    kind: str  # CLASSROOM or PLAIN
    students: list[Student]


@dataclass
class Match:
    """Who handed in what. ``whose`` maps a submission to its student; a student whose name
    fits more than one submission is in ``ambiguous`` (with those submissions) and in
    neither of the other two lists."""

    whose: dict[str, Student] = field(default_factory=dict)
    no_student: list[str] = field(default_factory=list)  # submissions, in name order
    no_submission: list[Student] = field(default_factory=list)  # in roster order
    ambiguous: list[tuple[Student, list[str]]] = field(default_factory=list)


def _text(path: Path) -> str:
    try:
        if path.is_dir():
            raise RosterError(f"{path}: is a folder, not a roster CSV file")
        size = path.stat().st_size
        if size > MAX_ROSTER_BYTES:
            raise RosterError(f"{path}: {size >> 20} MB is too large for a roster")
        raw = path.read_bytes()
    except FileNotFoundError:
        raise RosterError(f"{path}: no such roster file") from None
    except OSError as exc:
        raise RosterError(f"{path}: cannot be read ({exc.strerror or exc})") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise RosterError(
            f"{path}: not UTF-8 text (save it as 'CSV UTF-8' from a spreadsheet)"
        ) from None


def read_roster(path: Path) -> Roster:
    """The roster in ``path``: GitHub Classroom's or a plain ``folder,identifier`` one."""
    text = _text(path)
    try:
        rows = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise RosterError(f"{path}: not a CSV file ({exc})") from None
    rows = [r for r in rows if any(cell.strip() for cell in r)]
    if not rows:
        raise RosterError(f"{path}: empty (expected a header row and one row per student)")
    header = [h.strip().lower() for h in rows[0]]
    columns = {name: header.index(name) for name in reversed(header)}  # the first of a name
    if "folder" in columns and "identifier" in columns:
        kind = PLAIN
    elif "github_username" in columns and "identifier" in columns:
        kind = CLASSROOM
    else:
        found = ", ".join(h for h in header if h) or "none"
        raise RosterError(
            f"{path}: expected the columns identifier,github_username (GitHub Classroom's "
            f"classroom_roster.csv) or folder,identifier; found: {found}"
        )

    def cell(row: list[str], name: str) -> str:
        i = columns.get(name)
        return row[i].strip() if i is not None and i < len(row) else ""

    students: list[Student] = []
    seen: dict[tuple[str, str], int] = {}
    for number, row in enumerate(rows[1:], start=2):
        student = Student(
            identifier=cell(row, "identifier"),
            name=cell(row, "name"),
            github_username=cell(row, "github_username") if kind == CLASSROOM else "",
            folder=cell(row, "folder") if kind == PLAIN else "",
            line=number,
        )
        if not student.identifier:
            raise RosterError(f"{path}, line {number}: no identifier")
        if kind == PLAIN and not student.folder:
            raise RosterError(f"{path}, line {number}: no folder for {student.identifier}")
        keys = [("identifier", student.identifier)]
        if student.github_username:
            keys.append(("github_username", student.github_username.lower()))
        if student.folder:
            keys.append(("folder", _folder_key(student.folder)))
        for column, value in keys:
            if (column, value) in seen:
                raise RosterError(
                    f"{path}, line {number}: {column} {value!r} is also on line "
                    f"{seen[(column, value)]}"
                )
            seen[(column, value)] = number
        students.append(student)
    return Roster(path, kind, students)


def _folder_key(folder: str) -> str:
    name = folder.strip().rstrip("/\\").rsplit("/", 1)[-1].lower()
    for suffix in DIR_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def _classroom_owner(name: str, by_username: dict[str, Student]) -> Student | None:
    """The student whose GitHub username is ``name`` or ends it after a ``-``; the longest."""
    low = name.lower()
    fits = [u for u in by_username if low == u or low.endswith("-" + u)]
    return by_username[max(fits, key=len)] if fits else None


def _plain_owner(
    name: str, source: str, exact: dict[str, Student], folded: dict[str, Student]
) -> tuple[Student, bool] | None:
    """The student whose folder is this submission's name or entry: (student, exactly)."""
    for candidate in (name, source):
        if candidate in exact:
            return exact[candidate], True
    for candidate in (name, source):
        key = _folder_key(candidate)
        if key in folded:
            return folded[key], False
    return None


def match(roster: Roster, submissions: dict[str, str]) -> Match:
    """Join ``submissions`` (name -> its entry's file name in DIR) with the roster."""
    if roster.kind == CLASSROOM:
        by_username = {s.github_username.lower(): s for s in roster.students if s.github_username}

        def owner(name: str) -> tuple[Student, bool] | None:
            student = _classroom_owner(name, by_username)
            return None if student is None else (student, False)
    else:
        exact = {s.folder.strip().rstrip("/\\"): s for s in roster.students}
        folded = {_folder_key(s.folder): s for s in roster.students}

        def owner(name: str) -> tuple[Student, bool] | None:
            return _plain_owner(name, submissions[name], exact, folded)

    claims: dict[str, list[tuple[str, bool]]] = {}
    result = Match()
    for name in sorted(submissions):
        found = owner(name)
        if found is None:
            result.no_student.append(name)
        else:
            claims.setdefault(found[0].identifier, []).append((name, found[1]))
    for student in roster.students:
        claimed = claims.get(student.identifier, [])
        if any(exactly for _, exactly in claimed):  # the folder named exactly wins
            result.no_student += [name for name, exactly in claimed if not exactly]
            claimed = [(name, True) for name, exactly in claimed if exactly]
        names = [name for name, _ in claimed]
        if len(names) == 1:
            result.whose[names[0]] = student
        elif names:
            result.ambiguous.append((student, names))
        else:
            result.no_submission.append(student)
    result.no_student.sort()
    return result
