"""The batch's ledger under ``kill -9``: a submission's rows are all there or none are, a result
file is the old one or the new one, and what a crash leaves behind is cleaned up."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

from support import ROOT

from grader.batch.ledger import Ledger
from grader.result.schema import CheckResult, ExerciseResult, GradeResult


def result(name: str, passed: bool) -> dict:
    checks = [CheckResult(f"check {i}", 5.0 if passed else 0.0, 5.0, passed, "m") for i in (1, 2)]
    ex = ExerciseResult(
        "3.1",
        "Weight transfer",
        10.0 if passed else 0.0,
        10.0,
        "passed" if passed else "failed",
        checks,
    )
    return GradeResult(name, ex.score, 10.0, "0.1.0", "2.x", 1, 0.1, [ex]).to_dict()


def row(name: str, status: str) -> dict:
    return {
        "name": name,
        "source": name,
        "kind": "folder",
        "content_hash": status,
        "settings_hash": "s",
        "status": status,
        "reason": "",
        "graded": 1,
    }


def crash_while(out: Path, patch: str) -> subprocess.CompletedProcess:
    """Record alice as failed, then record her as passed with ``patch`` applied: a function of
    the ledger that kills the process with SIGKILL partway through."""
    script = textwrap.dedent(f"""
        import os, signal, sys
        sys.path.insert(0, {str(ROOT / "tests")!r})
        from pathlib import Path
        import grader.batch.ledger as ledger_module
        from test_batch_ledger import result, row
        ledger = ledger_module.Ledger(Path({str(out)!r}))
        ledger.record(row("alice", "failed"), result("alice", False), render_report=False)
        {patch}
        ledger.record(row("alice", "passed"), result("alice", True), render_report=False)
    """)
    return subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


def test_killed_inside_the_transaction_leaves_the_old_rows(tmp_path):
    out = tmp_path / "out"
    proc = crash_while(
        out,
        textwrap.dedent("""
        real = ledger_module.insert_rows
        def insert_then_die(db, full, res):
            real(db, full, res)
            os.kill(os.getpid(), signal.SIGKILL)
        ledger_module.insert_rows = insert_then_die
    """).replace("\n", "\n        "),
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    db = sqlite3.connect(out / "gradebook.sqlite")
    assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    assert db.execute("SELECT name, status, score FROM submissions").fetchall() == [
        ("alice", "failed", 0.0)
    ]
    assert db.execute("SELECT COUNT(*), SUM(passed) FROM checks").fetchone() == (2, 0)
    db.close()
    # The result file was already replaced, so the old row no longer describes it: alice is
    # not done, even for the contents and settings of the old row, and is graded again.
    assert json.loads((out / "results" / "alice.json").read_text())["score"] == 10.0
    ledger = Ledger(out)
    assert not ledger.done("alice", "failed", "s")
    ledger.record(row("alice", "failed"), result("alice", False), render_report=False)
    assert ledger.done("alice", "failed", "s")
    ledger.close()


def test_killed_while_writing_a_result_file(tmp_path):
    out = tmp_path / "out"
    proc = crash_while(
        out,
        textwrap.dedent("""
        def die(src, dst):
            os.kill(os.getpid(), signal.SIGKILL)
        os.replace = die
    """).replace("\n", "\n        "),
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    assert json.loads((out / "results" / "alice.json").read_text())["score"] == 0.0  # the old
    leftovers = [p for p in (out / "results").iterdir() if p.name.endswith(".tmp")]
    assert leftovers  # the half-done new one, under a temporary name
    ledger = Ledger(out)
    assert ledger.prune({"alice"}) == []
    assert sorted(p.name for p in (out / "results").iterdir()) == ["alice.json"]
    ledger.close()


def test_prune_forgets_withdrawn_submissions(tmp_path):
    ledger = Ledger(tmp_path / "out")
    for name in ("alice", "bob"):
        ledger.record(row(name, "passed"), result(name, True), render_report=False)
    (ledger.out / "results" / "stray.json").write_text("{}")
    assert ledger.prune({"alice"}) == ["bob"]
    assert [n for (n,) in ledger.db.execute("SELECT name FROM submissions")] == ["alice"]
    assert ledger.db.execute("SELECT COUNT(*) FROM checks WHERE submission = 'bob'").fetchone() == (
        0,
    )
    assert sorted(p.name for p in (ledger.out / "results").iterdir()) == ["alice.json"]
    ledger.close()
    assert not (tmp_path / "out" / "gradebook.sqlite-wal").exists()  # one file again
