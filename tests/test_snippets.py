"""Reproduce snippets run the code that was graded, pasted as the report says into a fresh
Python started where ``grade`` ran: a submission in another folder (with the repository's stubs
in the working directory), the stubs themselves, a notebook, and a submission graded in a batch
(named as the student has it: their clone)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from nbsupport import write_notebook
from support import CORPUS, ROOT, grade_folder, make_submission, paste

from grader.intake.load import in_their_clone, load_submission
from grader.judge.snippets import load_source

MUTANTS = {
    "3.1": CORPUS / "ex3_1" / "wrong_reshape_not_transpose.py",
    "4.1": CORPUS / "ex4_1" / "wrong_counts_mask_buffer.py",
}
SHOWS = {"3.1": "same output: False", "4.1": "same: False"}  # what each snippet prints


def first_snippet(result, exercise_id: str) -> str:
    (exercise,) = [e for e in result.exercises if e.id == exercise_id]
    check = next(c for c in exercise.checks if not c.passed and c.reproduce)
    assert "from exercises" not in check.reproduce  # never the stubs an install provides
    return check.reproduce


def test_a_submission_elsewhere_runs_from_the_clone_holding_the_stubs(tmp_path, monkeypatch):
    folder = make_submission(tmp_path / "alice", MUTANTS)
    monkeypatch.chdir(ROOT)  # the working directory holds the stubs in exercises/
    result = grade_folder(Path(os.path.relpath(folder)), ["3.1", "4.1"], max_examples=4)
    for exercise_id, shows in SHOWS.items():
        snippet = first_snippet(result, exercise_id)
        assert f"load_exercise({os.path.relpath(folder)!r}, {exercise_id!r})" in snippet
        proc = paste(snippet, ROOT)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert shows in proc.stdout, proc.stdout


def test_a_paste_into_the_warm_interpreter_is_a_paste_into_a_fresh_one(tmp_path, monkeypatch):
    """The suite pastes snippets into a warm interpreter (tests/pastebox.py); a fresh
    ``python -c`` gives the same output and exit status, for a snippet that shows a failure
    and for one that raises."""
    from pastebox import BOX, fresh

    folder = make_submission(tmp_path / "alice", MUTANTS)
    monkeypatch.chdir(ROOT)
    result = grade_folder(Path(os.path.relpath(folder)), ["3.1", "4.1"], max_examples=4)
    raises = "import torch\nfrom reference import GELU\nprint(GELU()(torch.ones(2)))\n1 / 0\n"
    for snippet in (first_snippet(result, "3.1"), first_snippet(result, "4.1"), raises):
        warm, cold = BOX.run(snippet, ROOT), fresh(snippet, ROOT)
        assert (warm.returncode, warm.stdout) == (cold.returncode, cold.stdout)
        assert warm.stderr.splitlines()[-1:] == cold.stderr.splitlines()[-1:]
    assert "ZeroDivisionError" in warm.stderr and "tensor([0.8412, 0.8412])" in warm.stdout


def test_the_stubs_snippet_shows_not_done_yet(monkeypatch):
    monkeypatch.chdir(ROOT)
    result = grade_folder(Path("."), ["3.1"], max_examples=1)
    snippet = first_snippet(result, "3.1")
    assert "load_exercise('.', '3.1')" in snippet
    proc = paste(snippet, ROOT)
    assert proc.returncode != 0
    assert "NotImplementedError: Exercise 3.1 is not done yet" in proc.stderr


def test_a_notebook_snippet_loads_the_answer_from_the_notebook(tmp_path, monkeypatch):
    answer = MUTANTS["3.1"].read_text(encoding="utf-8")
    write_notebook(
        tmp_path / "my work.ipynb",
        [("markdown", "# Exercise 3.1"), ("code", answer), ("code", "print('a demo cell')")],
    )
    monkeypatch.chdir(tmp_path)
    result = grade_folder(Path("my work.ipynb"), ["3.1"], max_examples=4)
    snippet = first_snippet(result, "3.1")
    assert "load_exercise('my work.ipynb', '3.1')" in snippet
    proc = paste(snippet, tmp_path)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert SHOWS["3.1"] in proc.stdout


def test_a_batch_or_gradescope_snippet_names_the_students_clone(tmp_path):
    folder = make_submission(tmp_path / "scratch" / "bob", {"3.1": MUTANTS["3.1"]})
    submission = load_submission(folder, "bob", in_their_clone(folder))
    assert submission.shown_as == "."
    assert in_their_clone(tmp_path / "bob.ipynb") == "bob.ipynb"
    from support import grade

    result = grade(submission, ["3.1"], max_examples=4)
    snippet = first_snippet(result, "3.1")
    assert "load_exercise('.', '3.1')" in snippet and str(tmp_path) not in snippet
    proc = paste(snippet, folder)  # the student pastes it in their clone
    assert SHOWS["3.1"] in proc.stdout, proc.stderr[-2000:]


@pytest.mark.parametrize(
    ("line", "loads"),
    [
        (
            "from exercises.ex3_1_weight_transfer import transfer_weights",
            ["transfer_weights = load_exercise('sub', '3.1').transfer_weights"],
        ),
        (
            "from exercises.ex4_3_split_dropout import GPTModel as YourGPTModel",
            ["YourGPTModel = load_exercise('sub', '3.1').GPTModel"],
        ),
        (
            "from exercises.ex4_1_parameter_counts import feedforward_params, attention_params",
            [
                "graded = load_exercise('sub', '3.1')",
                "feedforward_params, attention_params = graded.feedforward_params, "
                "graded.attention_params",
            ],
        ),
    ],
)
def test_the_import_line_becomes_a_load_by_path(line, loads):
    source = load_source(f"import torch\n{line}\nprint(1)\n", "3.1", "sub")
    lines = source.splitlines()
    assert lines[0] == "import torch" and lines[-1] == "print(1)"
    assert lines[1].startswith("from grader.commands.reproduce import load_exercise")
    assert lines[2:-1] == loads
