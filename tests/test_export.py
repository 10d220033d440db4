"""``grade export``: a batch's gradebook joined with a roster, written as Moodle's and Canvas's
grade import CSVs (their columns, in their order) or a plain CSV, with the submissions and
students that could not be joined listed both ways, and bad input refused in one line.

One small class is graded once for the module (``grade batch`` on 3.1 and 4.1 with 2 examples
per check): ``hw1-alice`` (right), ``hw1-bob`` (3.1 wrong: 5 of 10), ``stranger`` (on no
roster) and ``broken.zip`` (not a zip: an error row). The roster's rules are also tested on
their own, with no gradebook.
"""

from __future__ import annotations

import csv
import io
import re
import sqlite3
from pathlib import Path

import pytest
from support import CORPUS, grade_cli, make_submission

from grader.classview.roster import CLASSROOM, PLAIN, RosterError, match, read_roster
from grader.commands.cli import main
from grader.shared.registry import BY_ID

FAST = ["-e", "3.1", "-e", "4.1", "--max-examples", "2", "--seed", "20241"]
ITEM_31 = f"3.1 {BY_ID['3.1'].title}"
ITEM_41 = f"4.1 {BY_ID['4.1'].title}"
CLASSROOM_ROSTER = (
    "identifier,github_username,github_id,name\n"
    "alice@uni.edu,Alice,1001,Alice Andersen\n"
    "bob@uni.edu,bob,1002,\n"
    "carol@uni.edu,,,Carol Chen\n"  # has not joined the classroom: no GitHub account yet
    "dan@uni.edu,broken,1004,Dan Dahl\n"
)


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("export")
    subs = root / "subs"
    make_submission(subs / "hw1-alice")
    make_submission(subs / "hw1-bob", {"3.1": CORPUS / "ex3_1" / "wrong_reshape_not_transpose.py"})
    make_submission(subs / "stranger")
    (subs / "broken.zip").write_bytes(b"not a zip")
    proc = grade_cli(
        "batch", str(subs), "-o", str(root / "out"), *FAST, module="grader.commands.cli"
    )
    assert proc.returncode == 1, proc.stderr  # broken.zip is an error row
    return root / "out"


@pytest.fixture
def roster(tmp_path) -> Path:
    path = tmp_path / "classroom_roster.csv"
    path.write_text(CLASSROOM_ROSTER, encoding="utf-8")
    return path


def export(capsys, *args: str) -> tuple[int, list[list[str]], str]:
    """Run ``grade export ARGS`` here; its exit status, the CSV on stdout, and stderr."""
    code = main(["export", *args])
    captured = capsys.readouterr()
    return code, list(csv.reader(io.StringIO(captured.out))), captured.err


def listed(report: str, title: str) -> list[str]:
    """The entries of one list of the report (``title (N):`` then indented lines)."""
    block = re.search(rf"^{re.escape(title)}[^\n]*\((\d+)\):\n((?:  .*\n?)*)", report, re.M)
    if block is None:
        return []
    entries = [line.strip() for line in block.group(2).splitlines()]
    assert len(entries) == int(block.group(1))
    return entries


# --- Moodle -------------------------------------------------------------------------------


def test_moodle_identifier_column_first_then_one_column_per_grade_item(out, roster, capsys):
    code, rows, err = export(
        capsys, str(out), "--roster", str(roster), "--format", "moodle", "--items", "both"
    )
    assert code == 0, err
    assert rows == [
        ["Email address", ITEM_31, ITEM_41, "Total"],
        ["alice@uni.edu", "10", "10", "20"],
        ["bob@uni.edu", "5", "10", "15"],
        ["dan@uni.edu", "-", "-", "-"],  # could not be graded: no grade, not a zero
    ]  # carol handed nothing in: no row (Moodle stops an import at a row it cannot use)


def test_moodle_grades_are_numbers_or_no_grade_and_percent_stays_within_100(out, roster, capsys):
    code, rows, _ = export(
        capsys,
        str(out),
        "--roster",
        str(roster),
        "--format",
        "moodle",
        "--percent",
        "--id-column",
        "username",
        "--items",
        "both",
    )
    assert code == 0
    assert rows[0][0] == "Username"
    assert rows[1:] == [
        ["alice@uni.edu", "100", "100", "100"],
        ["bob@uni.edu", "50", "100", "75"],
        ["dan@uni.edu", "-", "-", "-"],
    ]
    for row in rows[1:]:  # what Moodle's load_data accepts: a float, or '-' for no grade
        assert all(v == "-" or 0 <= float(v) <= 100 for v in row[1:])


def test_moodle_id_number_is_the_default_when_identifiers_are_not_addresses(out, tmp_path, capsys):
    plain = tmp_path / "roster.csv"
    plain.write_text("folder,identifier\nhw1-alice,20240001\n", encoding="utf-8")
    _, rows, _ = export(
        capsys,
        str(out),
        "--roster",
        str(plain),
        "--format",
        "moodle",
        "--total-name",
        "Attention lab",
    )
    assert rows == [["ID number", "Attention lab"], ["20240001", "20"]]  # the total by default


# --- Canvas -------------------------------------------------------------------------------


def canvas_reads_the_header(rows: list[list[str]]) -> None:
    """The checks of Canvas's GradebookImporter (app/models/gradebook_importer.rb) on the
    first two rows: Student, ID, SIS User ID, SIS Login ID, then Section; Points Possible."""
    header = rows[0]
    assert len(header) > 3 and "Student" in header[0] and "ID" in header[1]
    assert re.search(r"SIS\s+User\s+ID", header[2]) and re.search(r"SIS\s+Login\s+ID", header[3])
    assert "Section" in header[4]
    assert "Points Possible" in rows[1][0]


def test_canvas_student_columns_then_assignments_and_a_points_possible_row(out, roster, capsys):
    code, rows, err = export(
        capsys, str(out), "--roster", str(roster), "--format", "canvas", "--items", "both"
    )
    assert code == 0, err
    canvas_reads_the_header(rows)
    assert rows == [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", ITEM_31, ITEM_41, "Total"],
        ["Points Possible", "", "", "", "", "10", "10", "20"],
        ["Alice Andersen", "", "", "alice@uni.edu", "", "10", "10", "20"],
        ["bob@uni.edu", "", "", "bob@uni.edu", "", "5", "10", "15"],  # no name: the identifier
        ["Dan Dahl", "", "", "dan@uni.edu", "", "", "", ""],
    ]


@pytest.mark.parametrize("id_column, where", [("sis_user_id", 2), ("id", 1)])
def test_canvas_identifier_goes_where_asked(out, roster, capsys, id_column, where):
    _, rows, _ = export(
        capsys, str(out), "--roster", str(roster), "--format", "canvas", "--id-column", id_column
    )
    canvas_reads_the_header(rows)
    assert [r[where] for r in rows[2:]] == ["alice@uni.edu", "bob@uni.edu", "dan@uni.edu"]
    assert [r[3] for r in rows[2:]] == ["", "", ""]


def test_canvas_one_assignment_for_the_total_in_percent(out, roster, capsys):
    _, rows, _ = export(
        capsys,
        str(out),
        "--roster",
        str(roster),
        "--format",
        "canvas",
        "--percent",
        "--items",
        "total",
        "--total-name",
        "Attention lab",
    )
    canvas_reads_the_header(rows)
    assert [r[5:] for r in rows] == [["Attention lab"], ["100"], ["100"], ["75"], [""]]


def test_zero_missing_gives_students_with_no_submission_a_row_of_zeros(out, roster, capsys):
    _, rows, _ = export(
        capsys,
        str(out),
        "--roster",
        str(roster),
        "--format",
        "canvas",
        "--zero-missing",
        "--items",
        "both",
    )
    assert ["Carol Chen", "", "", "carol@uni.edu", "", "0", "0", "0"] in rows


# --- csv ----------------------------------------------------------------------------------


def test_csv_has_every_student_of_the_roster_with_a_status(out, roster, capsys):
    code, rows, _ = export(capsys, str(out), "--roster", str(roster))
    assert code == 0
    assert rows == [
        ["identifier", "name", "submission", "3.1", "4.1", "total", "max_total", "status"],
        ["alice@uni.edu", "Alice Andersen", "hw1-alice", "10", "10", "20", "20", "passed"],
        ["bob@uni.edu", "", "hw1-bob", "5", "10", "15", "20", "failed"],
        ["carol@uni.edu", "Carol Chen", "", "", "", "", "20", "missing"],
        ["dan@uni.edu", "Dan Dahl", "broken", "", "", "", "20", "error"],
    ]


def test_csv_items_exercises_only(out, roster, capsys):
    _, rows, _ = export(
        capsys, str(out), "--roster", str(roster), "--items", "exercises", "--percent"
    )
    assert rows[0] == ["identifier", "name", "submission", "3.1", "4.1", "status"]
    assert rows[2] == ["bob@uni.edu", "", "hw1-bob", "50", "100", "failed"]


# --- the lists of what was not joined, and -o ----------------------------------------------


def test_unmatched_are_listed_both_ways_on_stderr(out, roster, capsys):
    _, _, err = export(capsys, str(out), "--roster", str(roster), "--format", "moodle")
    assert listed(err, "submissions with no roster entry") == ["stranger"]
    assert listed(err, "roster entries with no submission") == [
        "carol@uni.edu (Carol Chen, GitHub: not joined; line 4)"
    ]
    assert listed(err, "submissions that could not be graded") == ["broken -> dan@uni.edu"]
    assert err.startswith("3 rows for 4 students in the roster (GitHub Classroom); 3 of 4 ")


def test_output_file_and_the_report_on_stdout(out, roster, tmp_path, capsys):
    target = tmp_path / "grades" / "canvas.csv"
    code = main(
        ["export", str(out), "--roster", str(roster), "--format", "canvas", "-o", str(target)]
    )
    captured = capsys.readouterr()
    assert code == 0 and captured.err == ""
    assert target.read_text(encoding="utf-8").startswith("Student,ID,SIS User ID,SIS Login ID,")
    assert listed(captured.out, "submissions with no roster entry") == ["stranger"]
    assert f"written: {target} (canvas)" in captured.out


def test_a_plain_roster_names_folders_or_their_zip_and_leaves_out_the_rest(out, tmp_path, capsys):
    plain = tmp_path / "roster.csv"
    plain.write_text(
        "\ufeffIdentifier,Folder,Name\n"  # Excel's byte-order mark; headers in any case
        "s1,HW1-ALICE,Alice\ns2,broken.zip,\ns3,nobody,No Body\n",
        encoding="utf-8",
    )
    _, rows, err = export(capsys, str(out), "--roster", str(plain), "--format", "csv")
    assert [r[:3] + r[-1:] for r in rows[1:]] == [
        ["s1", "Alice", "hw1-alice", "passed"],
        ["s2", "", "broken", "error"],
        ["s3", "No Body", "", "missing"],
    ]
    assert listed(err, "submissions with no roster entry") == ["hw1-bob", "stranger"]
    assert listed(err, "roster entries with no submission") == [
        "s3 (No Body, folder: nobody; line 4)"
    ]


# --- bad input: one line, exit 2 -----------------------------------------------------------


def refused(capsys, *args: str) -> str:
    code = main(["export", *args])
    err = capsys.readouterr().err
    assert code == 2, err
    assert err.startswith("grade: error: ") and len(err.strip().splitlines()) == 1, err
    return err


def test_bad_input_is_one_line(out, roster, tmp_path, capsys):
    assert "no such roster file" in refused(capsys, str(out), "--roster", str(tmp_path / "no.csv"))
    wrong = tmp_path / "wrong.csv"
    wrong.write_text("student,grade\nalice,1\n", encoding="utf-8")
    err = refused(capsys, str(out), "--roster", str(wrong))
    assert "expected the columns identifier,github_username" in err
    assert "found: student, grade" in err
    latin = tmp_path / "latin.csv"
    latin.write_bytes("folder,identifier\nj\xf6rg,1\n".encode("latin-1"))
    assert "not UTF-8" in refused(capsys, str(out), "--roster", str(latin))
    assert "no gradebook.sqlite" in refused(capsys, str(tmp_path), "--roster", str(roster))
    assert "no such folder" in refused(capsys, str(tmp_path / "nope"), "--roster", str(roster))
    fake = tmp_path / "fake"
    fake.mkdir()
    (fake / "gradebook.sqlite").write_bytes(b"this is not a database" * 100)
    assert "not a gradebook database" in refused(capsys, str(fake), "--roster", str(roster))
    err = refused(
        capsys,
        str(out),
        "--roster",
        str(roster),
        "--format",
        "moodle",
        "--id-column",
        "sis_login_id",
    )
    assert "--id-column sis_login_id is not for --format moodle" in err


def test_a_database_that_is_not_a_gradebook(roster, tmp_path, capsys):
    other = tmp_path / "other"
    other.mkdir()
    sqlite3.connect(other / "gradebook.sqlite").execute("CREATE TABLE t (x)").connection.commit()
    assert "not written by 'grade batch'" in refused(capsys, str(other), "--roster", str(roster))


def test_roster_mistakes_name_the_line(tmp_path):
    path = tmp_path / "r.csv"
    for text, expected in [
        ("", "empty"),
        ("folder,identifier\nalice,\n", "line 2: no identifier"),
        ("folder,identifier\n,s1\n", "line 2: no folder for s1"),
        ("folder,identifier\na,s1\nb,s1\n", "line 3: identifier 's1' is also on line 2"),
        ("folder,identifier\na,s1\nA.zip,s2\n", "line 3: folder 'a' is also on line 2"),
        ("identifier,github_username\nx,Bob\ny,bob\n", "line 3: github_username 'bob'"),
    ]:
        path.write_text(text, encoding="utf-8")
        with pytest.raises(RosterError, match=re.escape(expected)):
            read_roster(path)


# --- the join on its own ------------------------------------------------------------------


def test_classroom_names_match_the_username_after_a_dash_ignoring_case_the_longest(tmp_path):
    path = tmp_path / "classroom_roster.csv"
    path.write_text(
        "identifier,github_username,github_id,name\nb@x,bob,1,\njb@x,Jim-Bob,2,\na@x,al,3,\n",
        encoding="utf-8",
    )
    roster = read_roster(path)
    assert roster.kind == CLASSROOM
    subs = ["hw1-bob", "hw1-jim-bob", "HW1-AL", "hw1-sal", "bob", "hw1-bobby"]
    matched = match(roster, {name: name for name in subs})
    assert {n: s.identifier for n, s in matched.whose.items()} == {
        "hw1-jim-bob": "jb@x",
        "HW1-AL": "a@x",
    }
    assert [(s.identifier, names) for s, names in matched.ambiguous] == [
        ("b@x", ["bob", "hw1-bob"])  # two submissions fit bob: neither is exported
    ]
    assert matched.no_student == ["hw1-bobby", "hw1-sal"]
    assert matched.no_submission == []


def test_plain_roster_matches_the_entry_in_dir_too(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("folder,identifier\nalice.ipynb,s1\nbob/,s2\n", encoding="utf-8")
    roster = read_roster(path)
    assert roster.kind == PLAIN
    matched = match(roster, {"alice": "alice.ipynb", "bob": "bob", "bob.zip": "bob.zip"})
    assert {n: s.identifier for n, s in matched.whose.items()} == {"alice": "s1", "bob": "s2"}
    assert matched.no_student == ["bob.zip"]  # named exactly, 'bob' wins over 'bob.zip'
    assert matched.ambiguous == [] and matched.no_submission == []
