"""What a student hands in that the intake must refuse, or read right, rather than crash on
or follow (issue 40, items 5 and 6): an ``exercises/`` folder that is a symbolic link (to a
classmate's, or outside the class), a ``coding:`` line naming a codec that is no source
encoding (``rot13``, ``punycode``...), a notebook whose JSON holds a lone surrogate
(``"\\ud800"``), a zip whose names are not the UTF-8 they claim, a notebook named with quotes,
backslashes or bytes, a U+2028 in a notebook's comment. Each is refused in one line in the
student's terms, by ``grade``, ``grade batch`` (an ``error`` row, not graded again), and the
intake itself; never an "internal error"."""

from __future__ import annotations

import csv
import io
import json
import os
import stat
import subprocess
import zipfile
from pathlib import Path

import pytest
from nbsupport import solution_source
from support import grade_cli, make_submission

from grader.intake.submission import SubmissionError
from grader.pipeline import open_path, open_zip
from grader.shared.registry import EXERCISES

FIRST = EXERCISES[0]
FILE = f"exercises/{FIRST.filename}"
FAST = ["-e", FIRST.id, "--max-examples", "2", "--seed", "20241"]


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return grade_cli(*args, cwd=cwd, module="grader.commands.cli")


def notebook(path: Path, first_source: str, tagged: bool = True) -> Path:
    """The solution as a notebook, one exercise a cell, the first exercise's cell holding
    ``first_source``; written by ``json`` itself, which escapes a lone surrogate ("\\ud800")."""
    cells = []
    for ex in EXERCISES:
        source = first_source if ex.id == FIRST.id else solution_source(ex.id)
        metadata = {"tags": [f"exercise-{ex.id}"]} if tagged else {}
        cells.append(
            {
                "cell_type": "code",
                "execution_count": None,
                "metadata": metadata,
                "outputs": [],
                "source": source,
            }
        )
    document = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(document), encoding="ascii")
    return path


def with_coding(folder: Path, codec: str) -> Path:
    make_submission(folder)
    target = folder / FILE
    target.write_bytes(f"# -*- coding: {codec} -*-\n".encode() + target.read_bytes())
    return folder


SURROGATE_ANSWER = solution_source(FIRST.id) + '\nNOTE = "\ud800"\n'
SURROGATE_LINE = SURROGATE_ANSWER[: SURROGATE_ANSWER.index("\ud800")].count("\n") + 1
SURROGATE_SAID = (
    f"cell 1: line {SURROGATE_LINE} holds a lone surrogate (\\ud800), which is not text; "
    "retype that line"
)


def said_once(said: str, output: str) -> bool:
    """``said`` is in ``output`` once (a report wraps its lines to its width)."""
    return " ".join(output.split()).count(said) == 1


# --- item 5: an exercises/ folder that is a symbolic link -------------------------------------


@pytest.mark.parametrize("target", ["classmate", "outside", "dangling", "a file"])
def test_a_symlinked_exercises_folder_is_refused_never_followed(tmp_path, target):
    make_submission(tmp_path / "class" / "bob")
    make_submission(tmp_path / "elsewhere")
    (tmp_path / "notes.txt").write_text("")
    alice = tmp_path / "class" / "alice"
    alice.mkdir()
    points_to = {
        "classmate": "../bob/exercises",
        "outside": str(tmp_path / "elsewhere" / "exercises"),
        "dangling": "../nobody/exercises",
        "a file": str(tmp_path / "notes.txt"),
    }[target]
    (alice / "exercises").symlink_to(points_to)
    with pytest.raises(SubmissionError) as caught:
        open_path(alice, called="alice")
    said = str(caught.value)
    assert said == (
        f"alice: exercises/ is a symbolic link (to {points_to}): hand in the folder itself"
    )
    # The classmate it points to is taken in as before.
    assert set(open_path(tmp_path / "class" / "bob").files) == {e.id for e in EXERCISES}


def test_a_symlinked_exercises_folder_in_a_zip_is_refused(tmp_path):
    info = zipfile.ZipInfo("alice/exercises")
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    with zipfile.ZipFile(tmp_path / "alice.zip", "w") as zf:
        zf.writestr(info, "../bob/exercises")
    with pytest.raises(SubmissionError, match="'alice/exercises' is a symbolic link"):
        open_zip(tmp_path / "alice.zip", tmp_path / "unpacked", 2**20, 10)
    assert not (tmp_path / "unpacked" / "alice" / "exercises").is_symlink()


def test_grade_refuses_a_symlinked_exercises_folder_in_one_line(tmp_path):
    make_submission(tmp_path / "bob")
    (tmp_path / "alice").mkdir()
    (tmp_path / "alice" / "exercises").symlink_to("../bob/exercises")
    proc = cli("alice", *FAST, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stderr.strip().splitlines() == [
        "grade: error: alice: exercises/ is a symbolic link (to ../bob/exercises): "
        "hand in the folder itself"
    ]


# --- item 6: codings, surrogates, names ---------------------------------------------------------


@pytest.mark.parametrize(
    "codec",
    [
        "rot13",
        "punycode",
        "hex",
        "base64",
        "bz2",
        "zlib",
        "uu",
        "utf-16",
        "utf-32",
        "utf-7",
        "unicode_escape",
        "raw_unicode_escape",
        "idna",
    ],
)
def test_a_coding_that_is_no_source_encoding_is_refused(tmp_path, codec):
    submission = open_path(with_coding(tmp_path / "sub", codec))
    assert submission.problems == {FIRST.id: f"{FILE} declares coding {codec}: save it as UTF-8"}
    assert FIRST.id not in submission.files and len(submission.files) == len(EXERCISES) - 1


@pytest.mark.parametrize("codec", ["latin-1", "cp1252", "utf-8", "ascii", "shift_jis"])
def test_a_coding_of_source_text_is_taken_in(tmp_path, codec):
    assert open_path(with_coding(tmp_path / "sub", codec)).problems == {}


@pytest.mark.parametrize("codec", ["rot13", "punycode"])
def test_grade_says_a_bad_coding_in_one_line(tmp_path, codec):
    """These were "grade: internal error: LookupError: 'rot13' is not a text encoding" (and
    "UnicodeError: decoding with 'punycode' codec failed"), exit status 2, every exercise lost."""
    with_coding(tmp_path / "sub", codec)
    proc = cli("sub", *FAST, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # the exercise is an error
    said = f"not graded: {FILE} declares coding {codec}: save it as UTF-8"
    assert said_once(said, proc.stdout), proc.stdout
    assert "internal error" not in proc.stderr


@pytest.mark.parametrize("tagged", [True, False], ids=["tagged", "untagged"])
def test_a_lone_surrogate_in_an_answer_cell_refuses_that_exercise(tmp_path, tagged):
    path = notebook(tmp_path / "nb.ipynb", SURROGATE_ANSWER, tagged)
    assert '"\\ud800' in path.read_text()  # the escape, as a notebook file holds it
    submission = open_path(path)
    try:
        assert submission.problems == {FIRST.id: SURROGATE_SAID}
        assert set(submission.files) == {e.id for e in EXERCISES[1:]}  # the others are graded
    finally:
        submission.cleanup()


def test_a_lone_surrogate_elsewhere_leaves_the_answers_alone(tmp_path):
    path = notebook(tmp_path / "nb.ipynb", solution_source(FIRST.id))
    document = json.loads(path.read_text())
    document["cells"].append(
        {
            "cell_type": "code",
            "execution_count": None,
            "metadata": {},
            "outputs": [],
            "source": 'print("\ud800")',
        }
    )
    path.write_text(json.dumps(document))
    submission = open_path(path)
    try:
        assert submission.problems == {} and len(submission.files) == len(EXERCISES)
        assert (
            f"cell {len(EXERCISES) + 1} is not valid Python (line 1 holds a lone surrogate "
            "(\\ud800), which is not text) and was skipped"
        ) in submission.notes
    finally:
        submission.cleanup()


def test_a_surrogate_pair_split_over_two_strings_is_one_character(tmp_path):
    answer = solution_source(FIRST.id)
    cut = answer.rindex("\n    ") + 1  # a comment before the answer's last line
    lines = [answer[:cut] + "    # smile \ud83d", "\ude00\n" + answer[cut:]]
    submission = open_path(notebook(tmp_path / "nb.ipynb", lines))  # a source as a list
    try:
        assert submission.problems == {}
        assert "# smile \U0001f600" in submission.files[FIRST.id].read_text(encoding="utf-8")
    finally:
        submission.cleanup()


def test_grade_says_a_lone_surrogate_in_one_line(tmp_path):
    """This was "grade: internal error: UnicodeEncodeError: 'utf-8' codec can't encode
    character '\\ud800'", exit status 2."""
    notebook(tmp_path / "nb.ipynb", SURROGATE_ANSWER)
    proc = cli("nb.ipynb", *FAST, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert said_once(f"not graded: {SURROGATE_SAID}", proc.stdout), proc.stdout
    assert "internal error" not in proc.stderr


@pytest.mark.parametrize(
    "name", ['say "hi"\\N.ipynb', "caf\u00e9 '''.ipynb", os.fsdecode(b"\xff\\.ipynb")]
)
def test_a_notebook_named_with_quotes_backslashes_or_bytes(tmp_path, name):
    """Its name is in each exercise file's docstring: ``\\N`` made that a syntax error, a name
    that is not UTF-8 an internal error."""
    path = notebook(tmp_path / name, solution_source(FIRST.id))
    submission = open_path(path)
    try:
        assert submission.name == os.fsencode(name).decode("utf-8", "backslashreplace")
        text = submission.files[FIRST.id].read_text(encoding="utf-8")
        docstring = compile(text, "f", "exec").co_consts[0]
        assert docstring == f"Exercise {FIRST.id}, taken from the notebook {name}."
    finally:
        submission.cleanup()


@pytest.mark.parametrize("separator", ["\u2028", "\x0c", "\x1c", "\x85"])
def test_a_character_that_only_str_splitlines_breaks_at_keeps_the_lines(tmp_path, separator):
    """A U+2028 in a comment (pasted from a PDF) is no line break for Python: the exercise
    file lost the answer's last line and kept a comment's half for its first."""
    answer = solution_source(FIRST.id)
    source = f"# from the book{separator}page 72\n" + answer
    submission = open_path(notebook(tmp_path / "nb.ipynb", source))
    try:
        text = submission.files[FIRST.id].read_text(encoding="utf-8")
        assert "import torch\n" in text  # the statement after the comment, whole
        assert answer[answer.index("def ") :] in text  # the answer, to its last line
    finally:
        submission.cleanup()


def test_a_zip_name_that_is_not_the_utf8_it_claims_is_refused(tmp_path):
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr(f"exercises/\u00e9{FIRST.filename}", b"x = 1\n")  # flagged UTF-8
    path = tmp_path / "alice.zip"
    path.write_bytes(buffer.getvalue().replace("\u00e9".encode(), b"\xff\xfe"))
    with pytest.raises(SubmissionError) as caught:
        open_zip(path, tmp_path / "unpacked", 2**20, 10)
    assert str(caught.value) == (
        "alice.zip: an entry's name is marked as UTF-8 but is not UTF-8 text"
    )


# --- both items through grade batch ---------------------------------------------------------------


def test_batch_gives_each_one_error_row_and_grades_none_again(tmp_path):
    klass = tmp_path / "class"
    make_submission(klass / "bob")
    (klass / "alice").mkdir()
    (klass / "alice" / "exercises").symlink_to("../bob/exercises")
    (klass / "carol").symlink_to("bob")  # the whole entry a link to a classmate's folder
    with_coding(klass / "rot", "rot13")
    with_coding(klass / "puny", "punycode")
    notebook(klass / "sur.ipynb", SURROGATE_ANSWER)
    expected = {
        "alice": "alice: exercises/ is a symbolic link (to ../bob/exercises): "
        "hand in the folder itself",
        "carol": "carol: is a symbolic link (to bob): hand in the folder, zip or notebook itself",
        "rot": f"{FILE} declares coding rot13: save it as UTF-8",
        "puny": f"{FILE} declares coding punycode: save it as UTF-8",
        "sur": SURROGATE_SAID,
    }
    out = str(tmp_path / "out")
    proc = cli("batch", "class", "-o", out, "-j", "2", *FAST, cwd=tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    book = {
        row["name"]: row
        for row in csv.DictReader(io.StringIO((tmp_path / "out" / "gradebook.csv").read_text()))
    }
    assert book["bob"]["status"] == "passed" and book["bob"]["total"] == "10"  # unaffected
    for name, reason in expected.items():
        assert (book[name]["status"], book[name]["reason"]) == ("error", reason)
        result = json.loads((tmp_path / "out" / "results" / f"{name}.json").read_text())
        assert result["exercises"][0]["status"] == "error"
        assert reason in result["exercises"][0]["checks"][0]["message"]
    again = cli("batch", "class", "-o", out, "-j", "2", *FAST, cwd=tmp_path)
    assert "0 graded now, 6 from an earlier run" in again.stdout, again.stdout
