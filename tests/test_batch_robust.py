"""``grade batch`` never dies of one submission.

A class with a normal submission, one whose exception message carries a lone surrogate (which
once stopped the whole batch with a UnicodeEncodeError), a folder whose name is not UTF-8 and a
named pipe gets a full gradebook, and a second run finishes. A bug of the grader itself on one
submission (injected into the judge processes) becomes that submission's ``error`` row with a
one-line reason and its traceback in ``OUT/grader-errors.log``; the rest of the class is graded.
"""

from __future__ import annotations

import csv
import json
import os
import sqlite3
from pathlib import Path

import jsonschema
import pytest
from support import make_submission
from test_batch import batch

from grader.commands.batch import TRACE_LOG, record_safely
from grader.result.schema import SCHEMA_PATH

FAST = ["-e", "3.1", "--max-examples", "2", "-j", "2"]
SCHEMA = json.loads(SCHEMA_PATH.read_text())

SURROGATE_31 = """
def transfer_weights(sa_v2, sa_v1):
    raise ValueError("bad " + "\\ud800" + " \\x1b[31m text")
"""

# Loaded at start-up by every interpreter of the batch (PYTHONPATH): makes the grader itself
# fail on the submission named in GRADE_TEST_BREAK, as a bug of ours would.
FAULT = """
import importlib.abc, importlib.machinery, os, sys

BROKEN = os.environ.get("GRADE_TEST_BREAK")


class Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "grader.judge.properties":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            real = module.run_check

            def run_check(check, worker, exercise_id, *args, **kwargs):
                from grader.judge import resilience

                if resilience._label == BROKEN:
                    raise RuntimeError("injected fault \\ud800 in the grader")
                return real(check, worker, exercise_id, *args, **kwargs)

            module.run_check = run_check

        spec.loader.exec_module = exec_module
        return spec


if BROKEN:
    sys.meta_path.insert(0, Hook())
"""


def rows(out: Path) -> dict[str, dict]:
    with open(out / "gradebook.csv", encoding="utf-8") as f:
        return {r["name"]: r for r in csv.DictReader(f)}


@pytest.fixture
def klass(tmp_path):
    root = tmp_path / "class"
    make_submission(root / "alice")
    bad = tmp_path / "bad.py"
    bad.write_text(SURROGATE_31, encoding="utf-8")
    make_submission(root / "mallory", {"3.1": bad})
    make_submission(Path(os.fsdecode(bytes(root) + b"/caf\xe9")))  # not UTF-8
    os.mkfifo(root / "pipe.zip")
    return root


def test_a_lone_surrogate_does_not_stop_the_batch(klass, tmp_path):
    out = tmp_path / "out"
    run = batch(str(klass), "-o", str(out), *FAST)
    assert run.returncode == 1, run.stderr  # the pipe is an error row
    assert "internal error" not in run.stderr
    got = rows(out)
    assert set(got) == {"alice", "mallory", "caf\\xe9", "pipe.zip"}
    assert got["alice"]["status"] == "passed" and got["caf\\xe9"]["status"] == "passed"
    assert got["mallory"]["status"] == "failed"
    assert got["pipe.zip"]["status"] == "error" and "not a submission" in got["pipe.zip"]["reason"]
    result = json.loads((out / "results" / "mallory.json").read_text(encoding="utf-8"))
    jsonschema.validate(result, SCHEMA)
    message = result["exercises"][0]["checks"][0]["message"]
    assert "your code raised ValueError: bad \ufffd \\x1b[31m text" in message
    assert (out / "index.html").is_file() and (out / "reports" / "mallory.html").is_file()
    with sqlite3.connect(out / "gradebook.sqlite") as db:
        assert db.execute("SELECT COUNT(*) FROM submissions").fetchone() == (4,)

    again = batch(str(klass), "-o", str(out), *FAST)  # resumed: finishes, grades nothing new
    assert again.returncode == 1, again.stderr
    assert "(0 graded now, 4 from an earlier run)" in again.stdout
    assert rows(out) == got


def test_a_grader_failure_on_one_submission_is_its_error_row(klass, tmp_path):
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(FAULT, encoding="utf-8")
    env = {"PYTHONPATH": str(hooks), "GRADE_TEST_BREAK": "mallory"}
    out = tmp_path / "out"
    run = batch(str(klass), "-o", str(out), *FAST, env=env)
    assert run.returncode == 1, run.stderr
    assert "internal error" not in run.stderr
    got = rows(out)
    assert got["alice"]["status"] == "passed" and got["caf\\xe9"]["status"] == "passed"
    assert got["mallory"]["status"] == "error"
    assert got["mallory"]["reason"] == f"the grader failed on 3.1 (traceback in {TRACE_LOG})"
    result = json.loads((out / "results" / "mallory.json").read_text(encoding="utf-8"))
    jsonschema.validate(result, SCHEMA)
    assert result["exercises"][0]["checks"][0]["message"].startswith(
        "the grader failed on this exercise: RuntimeError: injected fault \ufffd in the grader"
    )
    log = (out / TRACE_LOG).read_text(encoding="utf-8")
    assert "mallory: exercise 3.1" in log and "Traceback (most recent call last)" in log
    assert "RuntimeError: injected fault" in log

    again = batch(str(klass), "-o", str(out), *FAST)  # the bug fixed: graded again, and right
    assert again.returncode == 1, again.stderr
    assert rows(out)["mallory"]["status"] == "failed"


class FlakyLedger:
    def __init__(self, failures: int):
        self.failures = failures
        self.rows: list[tuple[dict, bool]] = []

    def record(self, row, result, render_report=True, hide_seed=False):
        if self.failures:
            self.failures -= 1
            raise UnicodeEncodeError("utf-8", "\ud800", 0, 1, "surrogates not allowed")
        self.rows.append((row, render_report))


def test_a_result_that_cannot_be_recorded_becomes_an_error_row(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADE_TRACE_LOG", str(tmp_path / "log"))
    row = {"name": "x", "status": "passed", "reason": "", "content_hash": "h"}
    ledger = FlakyLedger(1)
    record_safely(ledger, dict(row), {})
    [(saved, rendered)] = ledger.rows
    assert saved["status"] == "error" and saved["content_hash"] is None and not rendered
    assert saved["reason"].startswith("the grader could not record its result (UnicodeEncodeError")
    assert "x: recording the result" in (tmp_path / "log").read_text()

    never = FlakyLedger(2)
    record_safely(never, dict(row), {})  # no row at all: the next run grades it again
    assert never.rows == []


def test_a_judge_past_its_deadline_is_killed_and_the_batch_finishes(tmp_path):
    """The watchdog (grader/batch/pool.py): with a deadline no grade can meet, every judge is
    killed on time, each submission gets an error row saying why, and the batch still writes
    its gradebook and dashboard. A second run does not grade them again."""
    klass = tmp_path / "class"
    for name in ("alice", "bob", "carol"):
        make_submission(klass / name)
    out = tmp_path / "out"
    env = {"GRADER_JUDGE_DEADLINE_S": "0.2"}
    six = ["--max-examples", "2", "-j", "2"]  # all six exercises: seconds, not a tenth
    proc = batch(str(klass), "-o", str(out), *six, env=env)
    assert proc.returncode == 1, proc.stderr + proc.stdout
    book = rows(out)
    assert set(book) == {"alice", "bob", "carol"}
    for row in book.values():
        assert row["status"] == "error"
        assert row["reason"].startswith("the grader gave up on it after 0.2 s, during ")
    assert (out / "index.html").exists() and (out / "gradebook.csv").exists()
    again = batch(str(klass), "-o", str(out), *six, env=env)
    assert "0 graded now, 3 from an earlier run" in again.stdout, again.stdout


# A wrapper that runs a batch and reports the largest resident set any process of it reached:
# RUSAGE_CHILDREN covers every descendant that was waited for (judges, fork server, workers).
MEASURED = """
import json, resource, subprocess, sys, time
began = time.monotonic()
proc = subprocess.run(sys.argv[1:], capture_output=True, text=True)
peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(json.dumps({"code": proc.returncode, "peak_kib": peak_kib, "out": proc.stdout,
                  "err": proc.stderr, "wall_s": time.monotonic() - began}))
"""

ATTACKS = {  # submission -> (exercise, hostile file, what its row or its exercise says)
    "shape": ("3.1", "forged_tensor_shape.py", "the worker sent a reply the grader refuses"),
    "lists": ("4.1", "forged_empty_lists.py", "the worker sent a reply the grader refuses"),
    "threads": ("4.3", "tamper_dup2_thread.py", "tampered: "),
    "rearm": ("4.3", "tamper_rearm_finalizer.py", "tampered: "),
    "silence": ("4.3", "tamper_silence_guard.py", "tampered: "),
    "memory": ("3.1", "memory_blowup.py", "ran out of memory"),
}


@pytest.mark.slow
def test_a_class_of_attacks_is_graded_within_bounds(tmp_path):
    """Issue 32's attacks handed in together as a class: the batch finishes with a row for
    each, each gets its verdict, no process of the grader grows past 3.5 GiB, and no judge runs
    past its deadline plus 5 s."""
    import subprocess
    import sys

    from support import ROOT

    from grader.batch.config import Settings
    from grader.batch.pool import judge_deadline
    from grader.protocol.limits import Limits

    hostile = ROOT / "tests" / "hostile"
    klass = tmp_path / "class"
    make_submission(klass / "honest")
    for name, (_, case, _) in ATTACKS.items():
        exercise = ATTACKS[name][0]
        make_submission(klass / name, {exercise: hostile / case})
    (klass / "deep.ipynb").write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    limits = Limits(
        call_timeout_s=8.0, import_timeout_s=8.0, exercise_budget_s=40.0, memory_mb=1024
    )
    (klass / "grading.toml").write_text(
        f"max_examples = 2\n[limits]\ncall_timeout_s = {limits.call_timeout_s:g}\n"
        f"import_timeout_s = {limits.import_timeout_s:g}\n"
        f"exercise_budget_s = {limits.exercise_budget_s:g}\n"
        f"memory_mb = {limits.memory_mb}\n",
        encoding="utf-8",
    )
    out = tmp_path / "out"
    command = [
        sys.executable,
        "-m",
        "grader.commands.cli",
        "batch",
        str(klass),
        "-o",
        str(out),
        "-j",
        "2",
    ]
    done = subprocess.run(
        [sys.executable, "-c", MEASURED, *command],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=1200,
    )
    report = json.loads(done.stdout)
    assert report["code"] == 1, report["err"] + report["out"]
    book = rows(out)
    assert set(book) == {"honest", "deep", *ATTACKS}
    assert book["honest"]["status"] == "passed"
    assert "nested too deeply" in book["deep"]["reason"]
    db = sqlite3.connect(out / "gradebook.sqlite")
    for name, (exercise, _, words) in ATTACKS.items():
        (said,) = db.execute(
            "SELECT group_concat(message, ' ') FROM checks "
            "WHERE submission = ? AND exercise_id = ?",
            (name, exercise),
        ).fetchone()
        assert said and words in said, (name, said)
    deadline = judge_deadline(Settings(limits=limits))
    for name, seconds in db.execute("SELECT name, duration_s FROM submissions"):
        assert seconds <= deadline + 5, (name, seconds, deadline)
    assert report["peak_kib"] < 3.5 * 2**20, report["peak_kib"]
    assert (out / "index.html").exists()
