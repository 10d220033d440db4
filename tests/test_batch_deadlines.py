"""A batch's deadlines and re-runs (issue 40, item 7).

A judge killed at a submission's deadline leaves a row that names the exercise and the check it
stopped at and keeps the exercises finished before (``grader/batch/deadline.py``: the judge
notes its steps in a file of its job's scratch, the batch reads it when it kills the judge);
such a row is graded again when the deadline changes. A pack whose code changes grades the class
again, and the batch says why.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path

import pytest
import tinypack
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import SOLUTION, grade_cli, grade_folder, make_submission

from grader.batch import deadline
from grader.batch.config import Settings, changes, pack_hash
from grader.batch.entries import Entry
from grader.batch.pool import Job, gave_up
from grader.judge.scoring import checks_for
from grader.shared.registry import BY_ID

SLOW_41 = """
import time

from reference import TransformerBlock


def feedforward_params(cfg):
    time.sleep(600)  # right, but far too slow


def attention_params(cfg):
    return sum(p.numel() for p in TransformerBlock(cfg).att.parameters())
"""


def grade(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return grade_cli(*args, env={**os.environ, **(env or {})}, module="grader.commands.cli")


def gradebook(out: Path) -> dict[str, tuple]:
    db = sqlite3.connect(out / "gradebook.sqlite")
    try:
        return {
            name: (status, reason, settings_hash)
            for name, status, reason, settings_hash in db.execute(
                "SELECT name, status, reason, settings_hash FROM submissions"
            )
        }
    finally:
        db.close()


def test_the_judge_notes_each_exercise_and_check(tmp_path):
    """The engine tells the tracker its real steps (``Request.progress``): every check begun
    and its result, and the exercise's result as graded."""
    path = tmp_path / "progress"
    with deadline.tracking(path) as tracker:
        result = grade_folder(SOLUTION, ["3.1"], max_examples=1, processes=1, progress=tracker.note)
    progress = deadline.read(path)
    assert progress.current is None
    [exercise] = result.exercises
    assert progress.done["3.1"]["score"] == exercise.score == 10
    assert [c["name"] for c in progress.done["3.1"]["checks"]] == [c.name for c in exercise.checks]
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    begun = [r["check"] for r in lines if r["k"] == "check"]
    assert begun == [c.name for c in checks_for(BY_ID["3.1"])]
    grade_folder(SOLUTION, ["3.1"], max_examples=1, processes=1)  # nothing noted outside
    assert path.read_text().count('"k": "done"') == 1


def test_a_killed_judge_keeps_what_it_finished_and_names_the_check(tmp_path):
    """What a judge noted before it was killed makes the row: 3.1 kept, 4.1 a timeout at its
    second check (the first one's result kept), the rest not reached; a forged or torn note is
    not believed."""
    scratch = tmp_path / "job"
    scratch.mkdir()
    with deadline.tracking(scratch / deadline.PROGRESS) as tracker:
        tracker.note("opened")
        grade_folder(SOLUTION, ["3.1"], max_examples=1, processes=1, progress=tracker.note)
    first, second = checks_for(BY_ID["4.1"])[:2]
    forged = {
        "id": "3.2",
        "title": "x",
        "score": 999.0,
        "max_score": 10.0,
        "status": "passed",
        "checks": [
            {
                "name": "c",
                "points": 999.0,
                "max_points": 999.0,
                "passed": True,
                "message": "",
                "counterexample": None,
                "reproduce": None,
            }
        ],
    }
    passed = {
        "name": first.name,
        "points": first.points,
        "max_points": first.points,
        "passed": True,
        "message": "passed",
        "counterexample": None,
        "reproduce": None,
    }
    with open(scratch / deadline.PROGRESS, "a", encoding="utf-8") as f:
        f.write(json.dumps({"k": "done", "result": forged}) + "\n")
        f.write(json.dumps({"k": "exercise", "id": "4.1"}) + "\n")
        f.write(json.dumps({"k": "check", "id": "4.1", "check": first.name}) + "\n")
        f.write(json.dumps({"k": "checked", "id": "4.1", "result": passed}) + "\n")
        f.write(json.dumps({"k": "check", "id": "4.1", "check": second.name}) + "\n")
        f.write('{"k": "done", "result": {"id": "4.1", "sco')  # killed while writing
    settings = Settings(exercises=("3.1", "3.2", "4.1", "4.2"), max_examples=1)
    outcome = gave_up(Job(Entry("slow", tmp_path, "folder"), scratch, settings), 15.0)

    assert outcome.status == "error" and outcome.deadline == 15.0 and outcome.graded
    assert outcome.reason == (
        f"the grader gave up on it after 15 s, during exercise 4.1, check '{second.name}'; "
        "kept: 3.1; not reached: 3.2, 4.2 (more time: GRADER_JUDGE_DEADLINE_S)"
    )
    by_id = {e["id"]: e for e in outcome.result["exercises"]}
    assert by_id["3.1"]["status"] == "passed" and by_id["3.1"]["score"] == 10
    assert by_id["3.2"]["status"] == "error" and by_id["3.2"]["score"] == 0
    assert "before it reached this exercise" in by_id["3.2"]["checks"][0]["message"]
    stopped = by_id["4.1"]
    assert stopped["status"] == "timeout"
    assert stopped["checks"][0]["passed"] and stopped["checks"][0]["points"] > 0
    assert "while this check was running" in stopped["checks"][1]["message"]
    assert stopped["checks"][2]["message"].startswith("not run: the grader gave up")
    assert outcome.result["score"] == 10 + stopped["score"]


def test_an_edited_pack_grades_the_class_again_and_says_why(tmp_path):
    """The fingerprint holds a hash of each pack's files: fixing a check grades every
    submission again (the same settings otherwise grade none), with one line saying so."""
    course = tmp_path / "course"
    pack = tinypack.make_tiny_pack(course)
    klass = tmp_path / "class"
    for name, text in (("right", tinypack.SOLUTION), ("wrong", tinypack.WRONG)):
        (klass / name / "exercises").mkdir(parents=True)
        (klass / name / "exercises" / tinypack.FILENAME).write_text(text)
    args = ("--pack", str(pack), "batch", str(klass), "-o", str(tmp_path / "out"), "--seed", "7")
    first = grade(*args)
    assert first.returncode == 0, first.stderr
    again = grade(*args)
    assert "0 graded now, 2 from an earlier run" in again.stdout, again.stdout
    assert "settings changed" not in again.stdout

    checks = pack / "checks.py"  # the instructor makes the check lenient
    checks.write_text(checks.read_text().replace("if got != 2 * x:", "if got is None:"))
    fixed = grade(*args)
    assert fixed.returncode == 0, fixed.stderr
    assert (
        "settings changed since the last run into "
        f"{tmp_path / 'out'} (pack {tinypack.NAME}'s code changed): 2 submissions graded again"
    ) in fixed.stdout, fixed.stdout
    assert "2 graded now, 0 from an earlier run" in fixed.stdout
    assert gradebook(tmp_path / "out")["wrong"][0] == "passed"  # graded by the fixed check


def test_the_pack_hash_reads_every_file_but_pythons_caches(tmp_path):
    folder = tinypack.make_tiny_pack(tmp_path)
    before = pack_hash(folder)
    (folder / "__pycache__").mkdir()
    (folder / "__pycache__" / "checks.cpython-312.pyc").write_bytes(b"\0cache")
    pack_hash.cache_clear()
    assert pack_hash(folder) == before
    (folder / "data.txt").write_text("a table the checks read")
    pack_hash.cache_clear()
    assert pack_hash(folder) != before
    pack_hash.cache_clear()


def test_changes_name_what_differs_but_never_a_value():
    before = {"seed": 1, "grader_version": "0.1.0", "packs": {"a": "1", "b": "2"}}
    now = {"seed": 2, "grader_version": "0.2.0", "packs": {"a": "9", "c": "3"}}
    said = changes(before, now)
    assert said == [
        "the grader's version (0.1.0 -> 0.2.0)",
        "pack a's code changed",
        "pack b is no longer graded",
        "pack c is new",
        "seed",
    ]
    assert changes({"seed": 1}, {"seed": 1, "packs": {"a": "1"}}) == [
        "the packs' code was not recorded"
    ]


@pytest.mark.slow
def test_a_slow_answer_keeps_its_finished_exercises_and_a_new_deadline_grades_it_again(tmp_path):
    """A right answer too slow for the deadline: its row names 4.1 and the check, keeps 3.1's
    10 points; the same deadline does not grade it again, another one does (issue 40)."""
    klass = tmp_path / "class"
    make_submission(klass / "fast")
    slow = tmp_path / "slow_41.py"
    slow.write_text(SLOW_41)
    make_submission(klass / "slow", {"4.1": slow})
    out = tmp_path / "out"
    common = (
        "batch",
        str(klass),
        "-o",
        str(out),
        "-e",
        "3.1",
        "-e",
        "4.1",
        "--max-examples",
        "1",
        "--call-timeout",
        "300",
        "-j",
        "2",
        "--seed",
        "11",
    )
    first = grade(*common, env={"GRADER_JUDGE_DEADLINE_S": "10"})
    assert first.returncode == 1, first.stderr + first.stdout
    book = gradebook(out)
    assert book["fast"][0] == "passed"
    status, reason, settings_hash = book["slow"]
    assert status == "error" and settings_hash.endswith("@deadline=10")
    assert reason.startswith("the grader gave up on it after 10 s, during exercise 4.1, check '")
    assert "feedforward_params" in reason and "kept: 3.1" in reason
    result = json.loads((out / "results" / "slow.json").read_text())
    assert [(e["id"], e["status"], e["score"]) for e in result["exercises"]] == [
        ("3.1", "passed", 10.0),
        ("4.1", "timeout", 0.0),
    ]

    same = grade(*common, env={"GRADER_JUDGE_DEADLINE_S": "10"})
    assert "0 graded now, 2 from an earlier run" in same.stdout, same.stdout
    other = grade(*common, env={"GRADER_JUDGE_DEADLINE_S": "6"})
    assert (
        "1 submission the grader gave up on after 10 s graded again (the deadline is now 6 s)"
    ) in other.stdout, other.stdout
    assert "1 graded now, 1 from an earlier run" in other.stdout
    assert gradebook(out)["slow"][1].startswith("the grader gave up on it after 6 s")


JSON = st.recursive(
    st.none() | st.booleans() | st.floats() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
STEP = st.fixed_dictionaries(
    {"k": st.sampled_from(["opened", "exercise", "check", "checked", "done", "?"])},
    optional={
        "id": st.sampled_from(["3.1", "4.1", "9.9"]) | JSON,
        "check": JSON,
        "result": JSON | st.fixed_dictionaries({"id": st.just("3.1"), "checks": JSON}),
    },
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=st.lists(STEP | JSON, max_size=8), tail=st.binary(max_size=20))
def test_any_notes_make_a_row_never_a_crash(tmp_path, steps, tail):
    """Whatever the file holds (forged, torn, not JSON), the batch gets a row for every
    exercise, within its points."""
    scratch = tmp_path / "fuzz"
    scratch.mkdir(exist_ok=True)
    lines = b"".join(json.dumps(s).encode() + b"\n" for s in steps)
    (scratch / deadline.PROGRESS).write_bytes(lines + tail)
    settings_ = Settings(exercises=("3.1", "4.1"), max_examples=1)
    outcome = gave_up(Job(Entry("x", tmp_path, "folder"), scratch, settings_), 5.0)
    assert [e["id"] for e in outcome.result["exercises"]] == ["3.1", "4.1"]
    assert 0 <= outcome.result["score"] <= outcome.result["max_score"] == 20
    assert outcome.reason.startswith("the grader gave up on it after 5 s, during ")
