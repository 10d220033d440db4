"""``grade notebook OUT.ipynb``: the student notebook with the six exercises."""

from __future__ import annotations

import ast
import copy
import subprocess
import sys

import nbformat
import pytest
from nbsupport import solution_source
from support import ROOT

from grader.commands.notebook import split_stub
from grader.intake.load import load_submission
from grader.judge.engine import grade
from grader.shared.registry import EXERCISES


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader.commands.cli", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )


@pytest.fixture(scope="module")
def notebook_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("nb") / "chapter34.ipynb"
    proc = run("notebook", str(path))
    assert proc.returncode == 0, proc.stderr
    return path


@pytest.fixture(scope="module")
def notebook(notebook_path):
    nb = nbformat.read(str(notebook_path), as_version=4)
    nbformat.validate(nb)
    return nb


def tagged_cells(nb) -> dict[str, nbformat.NotebookNode]:
    return {
        tag.removeprefix("exercise-"): cell
        for cell in nb.cells
        for tag in cell.metadata.get("tags", [])
        if tag.startswith("exercise-")
    }


def test_one_tagged_answer_cell_per_exercise_holding_its_stub(notebook):
    answers = tagged_cells(notebook)
    assert list(answers) == [e.id for e in EXERCISES]
    for ex in EXERCISES:
        cell = answers[ex.id]
        assert cell.cell_type == "code"
        ast.parse(cell.source)
        assert "raise NotImplementedError" in cell.source
        assert f"Exercise {ex.id} is not done yet" in cell.source


def test_each_answer_follows_its_statement(notebook):
    cells = notebook.cells
    for ex in EXERCISES:
        i = next(
            k for k, c in enumerate(cells) if f"exercise-{ex.id}" in c.metadata.get("tags", [])
        )
        statement = cells[i - 1]
        doc, _ = split_stub((ROOT / "exercises" / ex.filename).read_text())
        assert statement.cell_type == "markdown"
        assert statement.source.startswith(f"## Exercise {ex.id}")
        assert "What is graded" in statement.source and "``" not in statement.source
        assert doc.splitlines()[-1].replace("``", "`") in statement.source


def test_first_cell_installs_last_cell_grades_itself_with_the_html_report(notebook):
    code = [c for c in notebook.cells if c.cell_type == "code"]
    assert code[0].source.splitlines()[-1] == "%pip install -q -c constraints.txt -e ."
    last = code[-1].source
    ast.parse(last)
    assert '"grader.commands.cli", NOTEBOOK, "--html"' in last
    assert "chapter34.ipynb" in last and "display(HTML(" in last


def test_the_notebook_as_handed_out_scores_zero_not_done_yet(notebook_path):
    sub = load_submission(notebook_path)
    try:
        result = grade(sub, max_examples=2)
    finally:
        sub.cleanup()
    assert result.score == 0 and result.max_score == 60
    for ex in result.exercises:
        assert ex.status == "failed", (ex.id, [c.message for c in ex.checks])
        assert any("not done yet" in c.message for c in ex.checks), ex.id


def test_answers_written_into_the_cells_get_full_marks_on_3_1(notebook, tmp_path):
    answered = copy.deepcopy(notebook)
    tagged_cells(answered)["3.1"].source = solution_source("3.1")
    path = tmp_path / "answered.ipynb"
    nbformat.write(answered, str(path))
    proc = run(str(path), "-e", "3.1", "--max-examples", "4")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "graded from cell" in proc.stdout and "tagged exercise-3.1" in proc.stdout


def test_never_overwrites_a_notebook_without_force(notebook_path):
    proc = run("notebook", str(notebook_path))
    assert proc.returncode == 2 and "--force" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_run_in_a_kernel_the_last_cell_grades_the_saved_notebook_and_shows_the_report(
    notebook, tmp_path
):
    from nbclient import NotebookClient

    nb = copy.deepcopy(notebook)
    nb.cells = [c for c in nb.cells if "%pip install" not in c.source]  # installed already
    nbformat.write(nb, str(tmp_path / "chapter34.ipynb"))  # the name the grading cell uses
    NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = nb.cells[-1].outputs
    printed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "Score: 0/60" in printed and "not done yet" in printed
    shown = [o.data["text/html"] for o in outputs if "text/html" in o.get("data", {})]
    assert len(shown) == 1 and shown[0].startswith("<iframe srcdoc=")
    assert (tmp_path / "grade-report.html").is_file()
