"""``grade notebook OUT.ipynb``: the student notebook with the exercises of the packs in use:
the first pack's, and a second, tiny pack's (``tests/tinypack.py``) with ``grade --pack``."""

from __future__ import annotations

import ast
import copy
import subprocess

import nbformat
import pytest
import tinypack
from nbsupport import solution_source
from support import ROOT, grade, grade_cli

from grader.editions.notebook import split_stub, statement_markdown
from grader.intake.load import load_submission
from grader.shared.packs import read_pack
from grader.shared.registry import EXERCISES

FIRST_PACK = read_pack(ROOT / "llm_pack")


def run(*args: str) -> subprocess.CompletedProcess:
    return grade_cli(*args, timeout=300, module="grader.commands.cli")


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
        doc, _ = split_stub((FIRST_PACK.path("stubs") / ex.filename).read_text())
        assert statement.cell_type == "markdown"
        assert statement.source.startswith(f"## Exercise {ex.id}: {ex.title}\n")
        assert "What is graded" in statement.source and "``" not in statement.source
        assert doc.splitlines()[-1].replace("``", "`") in statement.source


def test_the_introduction_is_the_packs_words(notebook):
    intro = notebook.cells[0]
    assert intro.cell_type == "markdown"
    for needle in (
        f"# {FIRST_PACK.text['heading']}\n",
        f"{len(EXERCISES)} exercises from {FIRST_PACK.text['about']}",
        f"- {FIRST_PACK.text['imports']}",
        f"`exercise-{EXERCISES[0].id}` ... `exercise-{EXERCISES[-1].id}`",
        f'`grader.check("{EXERCISES[0].id}")`',
        f"`{EXERCISES[0].names[0]}`",
        f"all {len(EXERCISES)} exercises",
    ):
        assert needle in intro.source, needle


def test_first_cell_installs_and_imports_a_check_under_each_answer_check_all_last(notebook):
    code = [c for c in notebook.cells if c.cell_type == "code"]
    install = code[0].source.splitlines()
    assert "%pip install -q -c constraints.txt -e ." in install
    assert install[-1].startswith("import grader")
    for ex in EXERCISES:  # the cell right under each answer checks it, in one line
        i = next(k for k, c in enumerate(code) if f"exercise-{ex.id}" in c.metadata.get("tags", []))
        assert code[i + 1].source == f'grader.check("{ex.id}")'
        assert not code[i + 1].metadata.get("tags")
    assert code[-1].source == "grader.check_all()"
    assert len(code) == 1 + 2 * len(EXERCISES) + 1
    assert not any("grader.commands.cli" in c.source or "iframe" in c.source for c in code)


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


def test_run_in_a_kernel_each_check_cell_shows_its_result_and_the_last_one_all_six(notebook):
    from nbclient import NotebookClient

    nb = copy.deepcopy(notebook)
    install = next(c for c in nb.cells if "%pip install" in c.source)
    install.source = "import grader"  # installed already
    tagged_cells(nb)["4.1"].source = solution_source("4.1")  # one answered, never saved
    NotebookClient(nb, timeout=600, kernel_name="python3").execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    shown = {}
    for cell in code:
        if cell.source.startswith("grader.check"):
            (result,) = [o for o in cell.outputs if o.output_type == "execute_result"]
            assert "text/html" in result.data and "text/plain" in result.data
            shown[cell.source] = result.data
    assert set(shown) == {f'grader.check("{e.id}")' for e in EXERCISES} | {"grader.check_all()"}
    for ex in EXERCISES:
        html = shown[f'grader.check("{ex.id}")']["text/html"]
        assert f'data-exercise="{ex.id}"' in html
        if ex.id == "4.1":
            assert 'data-status="passed"' in html and "10 / 10" in html
        else:
            assert "not done yet" in html and "0 / 10" in html
    assert "Score: 10/60" in shown["grader.check_all()"]["text/plain"]


# --- a second pack ---------------------------------------------------------------------------


def test_a_second_packs_notebook_holds_its_stub_and_grades_with_it(tmp_path):
    folder = tinypack.make_tiny_pack(tmp_path / "course")
    path = tmp_path / "tiny.ipynb"
    proc = run("--pack", str(folder), "notebook", str(path))
    assert proc.returncode == 0, proc.stderr
    assert f"1 exercise, answer cells tagged exercise-{tinypack.ID}\n" in proc.stdout
    nb = nbformat.read(str(path), as_version=4)
    nbformat.validate(nb)
    answers = tagged_cells(nb)
    assert list(answers) == [tinypack.ID]
    _, stub_code = split_stub(tinypack.STUB)
    in_cell = stub_code.replace(
        f"exercises/{tinypack.FILENAME}", f"the cell tagged exercise-{tinypack.ID}"
    )
    assert in_cell.strip() in answers[tinypack.ID].source
    intro = nb.cells[0].source
    assert intro.startswith(f"# {tinypack.HEADING}\n")
    assert "1 exercise from the tiny course" in intro and "Nothing to import" in intro
    assert "the exercise." in intro and f'grader.check("{tinypack.ID}")' in intro
    statement = nb.cells[2].source
    assert statement.startswith(f"## Exercise {tinypack.ID}: {tinypack.TITLE}\n")
    assert "What is graded" in statement and "``" not in statement
    assert f'grader.check("{tinypack.ID}")' in nb.cells[1].source
    code = [c.source for c in nb.cells if c.cell_type == "code"]
    assert code[2:] == [f'grader.check("{tinypack.ID}")', "grader.check_all()"]
    everything = "\n".join(c.source for c in nb.cells)
    for line in (*tinypack.SOLUTION_LINES, tinypack.CORPUS_LINE, "3.1", "reference"):
        assert line not in everything, line

    answered = copy.deepcopy(nb)
    tagged_cells(answered)[tinypack.ID].source = (
        tmp_path / "course" / "tiny_solution" / tinypack.FILENAME
    ).read_text()
    nbformat.write(answered, str(path))
    proc = run("--pack", str(folder), str(path), "--max-examples", "3")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Score: 10/10" in proc.stdout and f"tagged exercise-{tinypack.ID}" in proc.stdout


def test_the_statements_first_line_is_a_sentence_of_its_own_in_the_notebook():
    """The stub says "Exercise E.1: low-rank adaptation" (lower case after the colon); under the
    notebook's heading, without "Exercise E.1:", that line starts a sentence: capitalized. A
    name of code keeps its case."""
    lora = read_pack(ROOT / "tests" / "lora_pack" / "lora_pack").exercises[0]
    said = statement_markdown(lora, "Exercise E.1: low-rank adaptation (appendix E).\n\nWrite")
    assert said.startswith(f"## Exercise E.1: {lora.title}\n\nLow-rank adaptation (appendix E).")
    code = statement_markdown(lora, "Exercise E.1: generate_text with top-k.\n")
    assert "\n\ngenerate_text with top-k." in code
    as_written = statement_markdown(lora, "low-rank adaptation, said first.\n")
    assert "\n\nlow-rank adaptation, said first." in as_written
