"""An exercise's verdict is a typed field of the result (``ExerciseResult.verdict``): the exit
status, the renderers' labels, the batch's row and the dashboard read it, never the words of a
message. Rewording a message changes nothing they decide; a result saved before the field
existed is read as its messages said then."""

from __future__ import annotations

import json
import sqlite3
from types import SimpleNamespace

import jsonschema
import pytest

from grader.batch.ledger import Ledger
from grader.classview.dashboard import render_dashboard, tampered_exercises
from grader.commands.batch import outcome_row
from grader.commands.cli import exit_status
from grader.commands.options import EXIT_FAILED, EXIT_PASSED, EXIT_USAGE
from grader.result import report_html, report_text
from grader.result.common import status_label
from grader.result.formats import github
from grader.result.schema import (
    GRADER_FAILED,
    SCHEMA_PATH,
    TAMPERED,
    VERDICTS,
    CheckResult,
    ExerciseResult,
    GradeResult,
    from_dict,
    grader_failed,
    is_tampered,
)

SCHEMA = json.loads(SCHEMA_PATH.read_text())
# What each verdict makes of one exercise whose only check failed: (exit status, label).
DECIDED = {
    "graded": (EXIT_FAILED, "error"),
    "tampered": (EXIT_FAILED, "tampered"),
    "grader-failed": (EXIT_USAGE, "error"),
    "check-raised": (EXIT_USAGE, "error"),
    "worker-not-started": (EXIT_USAGE, "error"),
}
WORDS = [
    "",
    "something else entirely",
    TAMPERED + "words of another verdict",
    GRADER_FAILED + "words of another verdict",
    "your check pack/checks.py line 3 raised KeyError",
    "the grader could not start a worker: no",
]


def result_with(verdict: str, message: str) -> GradeResult:
    check = CheckResult("c", 0.0, 10.0, False, message)
    exercise = ExerciseResult("4.3", "t", 0.0, 10.0, "error", [check], verdict=verdict)
    passed = ExerciseResult("4.1", "u", 5.0, 5.0, "passed", [CheckResult("d", 5, 5, True, "")])
    return GradeResult("s", 5.0, 15.0, "0", "0", 1, 0.0, [passed, exercise])


def test_the_schema_lists_every_verdict():
    item = SCHEMA["properties"]["exercises"]["items"]
    assert item["properties"]["verdict"]["enum"] == list(VERDICTS) == list(DECIDED)
    assert "verdict" not in item["required"]  # additive: results without it stay valid


@pytest.mark.parametrize("verdict", VERDICTS)
@pytest.mark.parametrize("message", WORDS)
def test_rewording_a_message_changes_no_decision(verdict, message):
    result = result_with(verdict, message)
    status, label = DECIDED[verdict]
    assert exit_status(result) == status
    exercise = result.exercises[1]
    assert status_label(exercise) == label
    assert is_tampered(exercise) == (verdict == "tampered")
    assert grader_failed(exercise) == (status == EXIT_USAGE)
    as_json = result.to_dict()
    jsonschema.validate(as_json, SCHEMA)
    assert as_json["exercises"][1]["verdict"] == verdict
    assert from_dict(as_json) == result  # the field survives a saved --json
    assert is_tampered(as_json["exercises"][1]) == (verdict == "tampered")
    assert grader_failed(as_json["exercises"][1]) == (status == EXIT_USAGE)


@pytest.mark.parametrize("message", WORDS)
def test_the_renderers_label_from_the_field(message):
    for verdict, label in (("tampered", "tampered"), ("graded", "error")):
        result = result_with(verdict, message)
        table = report_text.overview(result, unicode=False).splitlines()
        assert [line.split()[-1] for line in table if line.lstrip().startswith("4.3")] == [label]
        rows = [
            line
            for line in github.summary_markdown(result).splitlines()
            if line.startswith("| 4.3 t |")
        ]
        assert len(rows) == 1 and rows[0].endswith(f" {label} |")
        assert report_html.context(result)["exercises"][1].label == label


@pytest.mark.parametrize("message", WORDS)
def test_the_batch_row_reads_the_field(message):
    rows = {}
    for verdict in ("graded", "tampered", "grader-failed"):
        outcome = SimpleNamespace(
            result=result_with(verdict, message).to_dict(),
            status="failed",
            reason="",
            retry=False,
            graded=True,
        )
        rows[verdict] = outcome_row(outcome)
    (row, _, shown) = rows["graded"]
    assert row["status"] == "failed" and not row["retry"] and shown == ""
    (row, _, shown) = rows["tampered"]
    assert row["status"] == "failed" and shown == "tampered with the grader in 4.3"
    (row, _, shown) = rows["grader-failed"]
    assert row["status"] == "error" and row["retry"] and "the grader failed on 4.3" in shown


def ledger_row(name: str) -> dict:
    return {
        "name": name,
        "source": name,
        "kind": "folder",
        "content_hash": "h",
        "settings_hash": "s",
        "status": "failed",
        "reason": "",
        "graded": 1,
    }


def test_the_dashboard_flags_the_field_not_the_words(tmp_path):
    ledger = Ledger(tmp_path / "out")
    ledger.record(ledger_row("eve"), result_with("tampered", "reworded").to_dict(), False)
    ledger.record(ledger_row("bo"), result_with("graded", TAMPERED + "x").to_dict(), False)
    assert tampered_exercises(ledger.db) == {"eve": {"4.3"}}
    page = render_dashboard(ledger.db)
    assert page.count('class="flag"') == 1 and "tampered 4.3" in page
    ledger.close()


def test_results_saved_before_the_field_are_read_as_their_words_said(tmp_path):
    old = result_with("graded", TAMPERED + "your code changed the grader").to_dict()
    for exercise in old["exercises"]:
        del exercise["verdict"]
    jsonschema.validate(old, SCHEMA)
    assert from_dict(old).exercises[1].verdict == "tampered" and is_tampered(old["exercises"][1])
    assert from_dict(old).exercises[0].verdict == "graded"
    failed = json.loads(json.dumps(old).replace(TAMPERED, GRADER_FAILED))
    assert exit_status(from_dict(failed)) == EXIT_USAGE and grader_failed(failed["exercises"][1])

    # A gradebook written before exercises had a verdict gets the column, filled from the words.
    if sqlite3.sqlite_version_info < (3, 35):
        pytest.skip("ALTER TABLE ... DROP COLUMN needs SQLite 3.35")
    out = tmp_path / "out"
    ledger = Ledger(out)
    ledger.record(ledger_row("eve"), result_with("tampered", TAMPERED + "x").to_dict(), False)
    ledger.record(ledger_row("bo"), result_with("tampered", "reworded").to_dict(), False)
    ledger.db.execute("ALTER TABLE exercises DROP COLUMN verdict")
    ledger.close()
    ledger = Ledger(out)
    assert tampered_exercises(ledger.db) == {"eve": {"4.3"}}  # bo's words said nothing
    ledger.close()


def test_a_passed_exercise_is_graded_by_default():
    result = result_with("graded", "")
    result.exercises[1] = ExerciseResult("4.3", "t", 10.0, 10.0, "passed", [])
    assert result.exercises[1].verdict == "graded" and exit_status(result) == EXIT_PASSED
