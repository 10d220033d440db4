"""``grade check-pack`` runs what a release and a student will meet (issue 42): it fails on a
solution that ``grade release`` would refuse to hand out (every file, and the remedy), on a
wrong answer's reproduce snippet that does not parse or does not run to the failure it shows,
and on a corpus file named neither ``correct_`` nor ``wrong_``; it warns on a mistake caught
only by a difference near float noise. The end-to-end run uses the tiny pack of
``tests/tinypack.py``, broken in each of these ways at once; the judgements themselves are
also held on their own, fast."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import tinypack
import torch
from support import grade_cli

from grader.authoring.pastes import PasteBox, pasting_env
from grader.authoring.reproduced import near_noise, snippet_problem, snippet_problems
from grader.judge.properties import CheckFailed, assert_close
from grader.result.schema import CheckResult, ExerciseResult

TWO_CHECKS = """

def _snippet(text):
    return lambda x: text.replace("X", str(x))


CHECKS = [
    Check(
        name="double(x) is twice x, its snippet naming what it never defined",
        points=10,
        strategy=st.integers(-1000, 1000),
        run=check_double,
        hint="multiply x by two",
        reproduce=_snippet("from exercises.double_it import double\\nprint(double(y))\\n"),
        max_examples=5,
    ),
    Check(
        name="double(x) again, its snippet not Python",
        points=5,
        strategy=st.integers(-1000, 1000),
        run=check_double,
        hint="multiply x by two",
        reproduce=_snippet("from exercises.double_it import double\\nprint(double(X)\\n"),
        max_examples=5,
    ),
]
"""


def broken_pack(folder: Path) -> Path:
    """The tiny pack with a module that holds its solution, two checks whose snippets do not
    run (one not even Python), and a corpus file without a prefix."""
    pack = tinypack.make_tiny_pack(folder)
    (pack / "notes.py").write_text(tinypack.SOLUTION)
    checks = (pack / "checks.py").read_text()
    (pack / "checks.py").write_text(checks[: checks.index("CHECKS = [")] + TWO_CHECKS)
    corpus = folder / "tiny_corpus" / f"ex{tinypack.ID}"
    (corpus / "triples.py").write_text(tinypack.WRONG)
    return pack


def test_check_pack_fails_on_a_leak_broken_snippets_and_an_unnamed_corpus_file(tmp_path):
    broken_pack(tmp_path)
    env = pasting_env()
    proc = grade_cli("check-pack", "tiny_pack", "--mutants", "0", cwd=tmp_path, env=env)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    lines = out.splitlines()
    (release,) = [line for line in lines if line.startswith("  release ")]
    assert "FAIL" in release and "1 file(s) hold a solution's lines" in release
    assert "tiny_pack/notes.py holds 2 line(s) of tiny-course's solution double_it.py" in out
    assert 'shared = ["exercises", "tiny_pack.notes"] in tiny_pack/pack.toml' in out
    (corpus,) = [line for line in lines if line.startswith("  corpus ")]
    assert "FAIL" in corpus
    wrong = "tiny_corpus/ext1/wrong_triples.py: "  # its snippets open with use_pack: 2 lines
    assert (
        f"{wrong}double(x) is twice x, its snippet naming what it never defined: its snippet "
        "stops at line 5 of the snippet with NameError: name 'y' is not defined, not the "
        "failure it shows"
    ) in out
    assert (
        f"{wrong}double(x) again, its snippet not Python: its snippet does not parse: '(' was "
        "never closed (line 5 of the snippet)"
    ) in out
    assert (
        "tiny_corpus/ext1/triples.py: named neither correct_*.py nor wrong_*.py, so not "
        "graded: rename it"
    ) in out
    assert "solution   PASS" in out and "stubs      PASS" in out
    assert lines[-1] == "check-pack: tiny-course does not hold: release, corpus failed"


# --- the judgements on their own -----------------------------------------------------------


@pytest.fixture(scope="module")
def box():
    box = PasteBox()
    yield box
    box.close()


def test_a_snippet_must_run_to_the_failure_it_shows(box, tmp_path):
    said = "double(2) returned 6, expected 4"
    for shows in ("print('got 6, expected 4')", "assert 6 == 4, 'got 6'"):
        assert snippet_problem(shows, said, tmp_path, box.run) is None
    raised = "your code raised ZeroDivisionError: division by zero"
    assert snippet_problem("1 / 0", raised, tmp_path, box.run) is None  # the failure shown
    problem = snippet_problem("import not_a_module_here", said, tmp_path, box.run)
    assert problem.startswith(
        "its snippet stops at line 1 of the snippet with ModuleNotFoundError: No module named "
        "'not_a_module_here', not the failure it shows"
    ), problem
    assert f"run with the grader's own Python, {sys.executable} -c" in problem  # not PATH's
    problem = snippet_problem("x = 1\nprint(double(x)", said, tmp_path, box.run)
    assert problem == "its snippet does not parse: '(' was never closed (line 2 of the snippet)"
    slow = snippet_problem("import time\ntime.sleep(30)", said, tmp_path, box.run, timeout=1)
    assert slow == "its snippet did not finish within 1 s"


def test_a_hung_paste_is_killed_with_what_it_started_and_the_box_goes_on(box, tmp_path):
    """Past its deadline a paste is -9, and so is every process it started (its group); the
    warm server is not started again (a second and more each time), and the next paste runs."""
    import os
    import time

    box.run("pass", tmp_path)
    server = box._proc.pid
    hang = (
        "import subprocess, sys, time\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
        "open('child', 'w').write(str(p.pid))\n"
        "time.sleep(60)\n"
    )
    assert box.run(hang, tmp_path, timeout=3).returncode == -9
    child = int((tmp_path / "child").read_text())
    for _ in range(50):  # killed; reaped by whoever is its parent now
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        with open(f"/proc/{child}/stat") as stat:
            if stat.read().rsplit(")", 1)[1].split()[0] == "Z":
                break
        time.sleep(0.1)
    else:
        raise AssertionError("the hung paste's own child still runs")
    done = box.run("print('after')", tmp_path)
    assert (done.returncode, done.stdout, box._proc.pid) == (0, "after\n", server)


def test_only_failing_checks_snippets_are_pasted_once_each(tmp_path):
    pasted = []

    def paste(snippet, cwd, timeout):
        pasted.append(snippet)
        return subprocess.CompletedProcess([], 0, "", "")

    checks = [
        CheckResult("a", 0, 1, False, "wrong", None, "print(1)"),
        CheckResult("b", 0, 1, False, "wrong", None, "print(1)"),
        CheckResult("c", 1, 1, True, "passed", None, "print(2)"),
        CheckResult("d", 0, 1, False, "wrong", None, None),
    ]
    exercise = ExerciseResult("t1", "T", 0, 4, "failed", checks)
    assert snippet_problems(exercise, tmp_path, paste) == [] and pasted == ["print(1)"]


def failed_by(expected: torch.Tensor, got: torch.Tensor) -> ExerciseResult:
    """A wrong answer's result whose one failing check compared ``got`` with ``expected``."""
    with pytest.raises(CheckFailed) as failed:
        assert_close(got, expected, "the loss after one step")
    check = CheckResult("one step lowers the loss", 0, 10, False, str(failed.value))
    return ExerciseResult("t1", "T", 0, 10, "failed", [check])


def test_a_mistake_caught_only_near_float_noise_gets_a_warning():
    expected = torch.tensor([0.5, -1.25, 2.0])
    near = failed_by(expected, expected + torch.tensor([0.0, 1.577e-4, 0.0]))
    warning = near_noise(near)
    assert warning.startswith(
        "caught only by a largest difference of 0.0001577, within 100x the tolerance"
    ), warning
    assert near_noise(failed_by(expected, expected * 2)) is None  # far beyond the noise
    shape = ExerciseResult(
        "t1", "T", 0, 10, "failed", [CheckResult("shape", 0, 10, False, "has shape (2,)")]
    )
    assert near_noise(shape) is None  # not a difference of values at all
