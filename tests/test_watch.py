"""``grade --watch``: graded again on save, only what changed, and Ctrl-C ends it with 0.

The end-to-end test runs ``python -m grader --watch`` as a student would and reads its output
as it comes; its waits are generous bounds against a hang, not timings.
"""

from __future__ import annotations

import json
import queue
import shutil
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from nbsupport import solution_notebook
from support import CORPUS, ROOT, make_submission

from grader.intake.load import load_submission
from grader.intake.notebook import notebook_submission
from grader.live.saves import HELPERS, changed, fingerprint, merged, watched
from grader.shared.registry import BY_ID

WAIT_S = 240.0  # a bound against a hang only
WATCHING = "Watching "


class Watch:
    """``grade --watch`` in a subprocess, its stdout read line by line in a thread."""

    def __init__(self, *args: str, stdin: int = subprocess.DEVNULL):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "grader", *args, "--watch"],
            stdin=stdin,  # not a pipe unless asked: its end would end the watch
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            # A shell may start background jobs with Ctrl-C ignored; a student's terminal
            # does not.
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def report(self) -> str:
        """Everything printed up to the next "Watching ..." line (the end of a report)."""
        text = []
        while True:
            try:
                line = self.lines.get(timeout=WAIT_S)
            except queue.Empty:
                self.stop()
                pytest.fail("grade --watch printed no report:\n" + "".join(text))
            if line is None:
                pytest.fail(f"grade --watch ended: {''.join(text)}{self.proc.stderr.read()}")
            text.append(line)
            if line.startswith(WATCHING) or WATCHING in line and "Graded again" in line:
                return "".join(text)

    def stop(self) -> tuple[int, str]:
        self.proc.send_signal(signal.SIGINT)
        try:
            _, err = self.proc.communicate(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return self.proc.returncode, err


def status_line(report: str, exercise_id: str) -> str:
    return next(line for line in report.splitlines() if line.strip().startswith(exercise_id))


def test_a_save_is_graded_again_and_ctrl_c_ends_with_0(tmp_path):
    sub = make_submission(tmp_path / "sub")
    target = sub / "exercises" / BY_ID["4.1"].filename
    watch = Watch(str(sub), "-e", "4.1", "-e", "3.1", "--max-examples", "4")
    try:
        first = watch.report()
        assert "passed" in status_line(first, "4.1") and "passed" in status_line(first, "3.1")
        shutil.copyfile(CORPUS / "ex4_1" / "wrong_forgets_biases.py", target)
        again = watch.report()
        assert "Graded again: 4.1." in again  # only the exercise whose file changed
        assert "failed" in status_line(again, "4.1")
        assert "passed" in status_line(again, "3.1")  # the other, as it was
        assert "\x1b[2J" not in again  # stdout is no terminal: the screen is not cleared
    finally:
        code, err = watch.stop()
    assert code == 0, err
    assert "Traceback" not in err


def test_the_end_of_a_piped_input_ends_the_watch_with_0(tmp_path):
    """An editor or a script that drives ``grade --watch`` through a pipe closes it when done
    (Windows has no Ctrl-C for a process without a console)."""
    sub = make_submission(tmp_path / "sub")
    watch = Watch(str(sub), "-e", "4.1", "--max-examples", "4", stdin=subprocess.PIPE)
    try:
        assert "passed" in status_line(watch.report(), "4.1")
        shutil.copyfile(
            CORPUS / "ex4_1" / "wrong_forgets_biases.py", sub / "exercises" / BY_ID["4.1"].filename
        )
        assert "failed" in status_line(watch.report(), "4.1")
        watch.proc.stdin.close()
        code = watch.proc.wait(timeout=WAIT_S)
    finally:
        if watch.proc.poll() is None:
            watch.stop()
    assert code == 0, watch.proc.stderr.read()


def test_what_is_graded_again_is_what_changed(tmp_path):
    sub = make_submission(tmp_path / "sub")
    ids = ["3.1", "4.1", "4.2"]
    before = fingerprint(load_submission(sub), ids)
    assert changed(before, fingerprint(load_submission(sub), ids), ids) == []
    path = sub / "exercises" / BY_ID["4.2"].filename
    path.write_text(path.read_text() + "\n# saved again\n")
    after = fingerprint(load_submission(sub), ids)
    assert changed(before, after, ids) == ["4.2"]
    (sub / "exercises" / BY_ID["3.1"].filename).unlink()  # deleted: graded again (missing)
    assert changed(after, fingerprint(load_submission(sub), ids), ids) == ["3.1"]
    (sub / "exercises" / "helpers.py").write_text("WIDTH = 2\n")  # a module they may import
    final = fingerprint(load_submission(sub), ids)
    assert final[HELPERS] != after[HELPERS]
    assert changed(after, final, ids) == ids
    folder, counts, shown = watched(sub)
    assert folder == (sub / "exercises").resolve() and shown == "exercises/"
    assert counts(Path("helpers.py")) and not counts(Path("report.html"))


def test_a_saved_notebook_grades_again_only_the_cells_that_changed(tmp_path):
    path = solution_notebook(tmp_path / "work.ipynb", tagged=True)
    folder, counts, shown = watched(path)
    assert folder == tmp_path.resolve() and shown == path.name
    assert counts(path) and not counts(tmp_path / "other.ipynb")
    ids = list(BY_ID)
    first = notebook_submission(path)
    before = fingerprint(first, ids)
    first.cleanup()
    doc = json.loads(path.read_text())
    cell = next(c for c in doc["cells"] if "exercise-4.1" in c.get("metadata", {}).get("tags", []))
    code = "".join(cell["source"])
    cell["source"] = code.replace(".att)", ".att) + 1")  # a wrong answer, saved
    assert cell["source"] != code
    path.write_text(json.dumps(doc))
    second = notebook_submission(path)
    try:
        assert changed(before, fingerprint(second, ids), ids) == ["4.1"]
    finally:
        second.cleanup()


def test_merged_keeps_the_exercises_not_graded_again():
    from grader.result.schema import ExerciseResult, GradeResult

    def result(*exercises: ExerciseResult) -> GradeResult:
        return GradeResult("s", 0.0, 0.0, "v", "t", 1, 0.5, list(exercises))

    a, b = (
        ExerciseResult("3.1", "A", 10, 10, "passed"),
        ExerciseResult("4.1", "B", 10, 10, "passed"),
    )
    b_failed = ExerciseResult("4.1", "B", 4, 10, "failed")
    both = merged(result(a, b), result(b_failed))
    assert [e.id for e in both.exercises] == ["3.1", "4.1"]
    assert both.exercises[1].status == "failed" and (both.score, both.max_score) == (14, 20)


def test_python_m_grader_is_the_grade_command():
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "--help"], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0 and "--watch" in proc.stdout
    assert proc.stdout.startswith("usage: grade")
