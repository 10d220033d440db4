"""Grading notebooks: tagged and untagged (seed-style) notebooks are turned into exercise files
by static analysis, without running them; corrupt files are one clear error."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from nbsupport import seed_style_notebook, solution_notebook, solution_source, write_notebook
from support import (
    CORPUS,
    ROOT,
    TEST_MAX_EXAMPLES,
    grade,
    grade_cli,
    grade_folder,
    make_submission,
)

from grader.intake.cells import CONTRACT, strip_magics
from grader.intake.load import load_submission
from grader.intake.notebook import notebook_submission
from grader.intake.submission import SubmissionError
from grader.shared.registry import EXERCISES

ALL = [e.id for e in EXERCISES]


def exercise_texts(path) -> dict[str, str]:
    sub = notebook_submission(path)
    try:
        return {k: p.read_text(encoding="utf-8") for k, p in sub.files.items()}
    finally:
        sub.cleanup()


# --- shell and magic lines ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("source", "kept", "dropped"),
    [
        ("!pip install torch\nimport torch", "import torch", 1),
        ("%matplotlib inline\nx = 1", "x = 1", 1),
        ("files = !ls\ny = 2", "y = 2", 1),
        ("if True:\n    !nvidia-smi\n    z = 3", "    z = 3", 1),
        ("torch.nn.Linear?\nw = 4", "w = 4", 1),
        ("%%time\nv = 5", "v = 5", 1),
    ],
)
def test_shell_magic_and_help_lines_are_dropped_and_the_rest_parses(source, kept, dropped):
    text, count = strip_magics(source)
    compile(text, "<cell>", "exec")
    assert kept in text.splitlines()
    assert count == dropped
    assert "!" not in text and "%" not in text and "?" not in text


def test_a_non_python_cell_magic_drops_the_whole_cell():
    text, count = strip_magics("%%bash\necho hi\nls -l")
    assert text == "" and count == 3


# --- which statements are kept ------------------------------------------------------------


@pytest.fixture(scope="module")
def seed_texts(tmp_path_factory) -> dict[str, str]:
    return exercise_texts(seed_style_notebook(tmp_path_factory.mktemp("nb") / "seed.ipynb"))


def test_seed_style_notebook_gives_all_six_files_that_compile(seed_texts):
    assert sorted(seed_texts) == ALL
    for ex_id, text in seed_texts.items():
        compile(text, ex_id, "exec")
        for name in CONTRACT[ex_id]:
            assert name in text, (ex_id, name)


def test_demo_code_prints_shell_and_magic_lines_are_left_out(seed_texts):
    for ex_id, text in seed_texts.items():
        assert "print(" not in text, ex_id
        assert "modelXL" not in text and "manual_seed" not in text, ex_id
        assert "\nmodel = GPTModel" not in text, ex_id  # the demo, not total_params' local
        for line in text.splitlines():
            assert not line.lstrip().startswith(("!", "%")), (ex_id, line)


def test_a_name_means_what_it_meant_where_it_was_used(seed_texts):
    # make_2d_wrapper relies on the global d_out = 1 of its own section, not on the
    # d_out = 768 of the 3.3 section further down.
    assert "d_in, d_out = 3, 1" in seed_texts["3.2"]
    assert "768, 768" not in seed_texts["3.2"]
    # 4.2's total_params was written against the book's GPTModel; 4.3 redefines it later.
    assert 'cfg["drop_rate"]' in seed_texts["4.2"] and "drop_rate_emb" not in seed_texts["4.2"]
    # 4.2's configs use the 12-head GPT_CONFIG_124M and keep their later mutations.
    assert '"n_heads": 12' in seed_texts["4.2"] and '"n_heads": 1,' not in seed_texts["4.2"]
    assert "GPT_CONFIG_MEDIUM.update" in seed_texts["4.2"]
    assert 'GPT_CONFIG_XL["n_heads"] = 25' in seed_texts["4.2"]


def test_for_4_3_the_last_definitions_are_the_answer(seed_texts):
    text = seed_texts["4.3"]
    assert text.count("class TransformerBlock") == 1 and text.count("class GPTModel") == 1
    assert 'cfg["drop_rate_attn"]' in text and 'cfg["drop_rate_emb"]' in text
    assert 'cfg["drop_rate"]' not in text
    # ... with the notebook's own copies of the classes they use.
    for cls in ("class MultiHeadAttention", "class FeedForward", "class LayerNorm", "class GELU"):
        assert cls in text


def test_notes_say_which_cells_were_used(tmp_path):
    sub = notebook_submission(seed_style_notebook(tmp_path / "seed.ipynb"))
    try:
        notes = "\n".join(sub.notes)
    finally:
        sub.cleanup()
    assert "3.1: graded from cells " in notes and "(untagged)" in notes
    assert "shell (!), magic (%)" in notes


def test_a_tagged_cell_wins_over_a_later_untagged_definition(tmp_path):
    path = write_notebook(
        tmp_path / "t.ipynb",
        [
            ("code", solution_source("3.1"), ["exercise-3.1"]),
            ("code", "def transfer_weights(sa_v2, sa_v1):\n    pass  # scratch"),
        ],
    )
    sub = notebook_submission(path)
    try:
        assert "copy_(sa_v2.W_query.weight.T)" in sub.files["3.1"].read_text()
        assert "tagged exercise-3.1" in sub.notes[0]
    finally:
        sub.cleanup()


def test_exercises_that_are_not_there_are_missing_with_a_note(tmp_path):
    path = write_notebook(tmp_path / "only31.ipynb", [("code", solution_source("3.1"))])
    sub = notebook_submission(path)
    try:
        assert sorted(sub.files) == ["3.1"]
        assert any("4.1: no definition of feedforward_params" in n for n in sub.notes)
        result = grade(sub, ["3.1", "4.1"], max_examples=TEST_MAX_EXAMPLES)
    finally:
        sub.cleanup()
    assert [e.status for e in result.exercises] == ["passed", "missing"]


def test_an_answer_cell_that_does_not_parse_is_an_error_with_its_line(tmp_path):
    broken = "import torch\n\ndef transfer_weights(sa_v2, sa_v1)\n    pass\n"
    path = write_notebook(tmp_path / "broken.ipynb", [("code", broken, ["exercise-3.1"])])
    sub = notebook_submission(path)
    try:
        assert any("not valid Python" in n for n in sub.notes)
        result = grade(sub, ["3.1"], max_examples=TEST_MAX_EXAMPLES)
    finally:
        sub.cleanup()
    (ex,) = result.exercises
    assert ex.status == "error" and ex.score == 0
    assert "line 3" in ex.checks[0].message


# --- bad files -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b'{"cells": [', "not a readable notebook"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "not a notebook"),
        (b'{"hello": "world"}', "not a readable notebook"),
        (b"[1, 2, 3]", "not a readable notebook"),
        (b"[" * 100_000 + b"]" * 100_000, "nested too deeply"),  # was an internal error
        (b'{"cells": ' + b"[" * 100_000 + b"]" * 100_000 + b"}", "nested too deeply"),
    ],
    ids=["truncated", "png", "not-a-notebook", "a-list", "deep", "deep-cells"],
)
def test_a_corrupt_or_non_notebook_file_is_one_clear_error(tmp_path, content, needle):
    path = tmp_path / "work.ipynb"
    path.write_bytes(content)
    with pytest.raises(SubmissionError, match=needle):
        load_submission(path)
    proc = grade_cli(str(path), timeout=120, module="grader.commands.cli")
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1 and needle in proc.stderr


# --- grading whole notebooks ---------------------------------------------------------------


def full_marks(path) -> None:
    sub = load_submission(path)
    try:
        result = grade(sub, max_examples=TEST_MAX_EXAMPLES)
    finally:
        sub.cleanup()
    lost = {
        e.id: [f"{c.name}: {c.message[:300]}" for c in e.checks if not c.passed]
        for e in result.exercises
        if e.score < e.max_score
    }
    assert result.score == result.max_score == 60, lost


@pytest.mark.parametrize("tagged", [True, False], ids=["tagged", "untagged"])
def test_the_solution_as_a_notebook_gets_full_marks(tmp_path, tagged):
    full_marks(solution_notebook(tmp_path / "solution.ipynb", tagged))


def test_a_seed_style_notebook_with_its_own_class_copies_loses_only_its_config_alias(tmp_path):
    """Its own copies of the book's classes are right; its ``"small": GPT_CONFIG_124M`` is the
    base config itself, not the copy 4.2's statement asks for (issue 41): that check alone
    fails, and says so."""
    sub = load_submission(seed_style_notebook(tmp_path / "seed.ipynb"))
    try:
        result = grade(sub, max_examples=TEST_MAX_EXAMPLES)
    finally:
        sub.cleanup()
    lost = [(e.id, c) for e in result.exercises for c in e.checks if not c.passed]
    assert [(ex_id, c.name.split(",")[0]) for ex_id, c in lost] == [
        ("4.2", "GPT2_CONFIGS holds the four sizes")
    ], lost
    assert "GPT2_CONFIGS['small'] is GPT_CONFIG_124M itself, not a copy" in lost[0][1].message
    assert result.score == result.max_score - lost[0][1].max_points


def test_grade_on_a_notebook_prints_which_cells_were_used(tmp_path):
    path = seed_style_notebook(tmp_path / "seed.ipynb")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader.commands.cli",
            str(path),
            "-e",
            "3.1",
            "--format",
            "json",
            "--max-examples",
            "4",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["score"] == 10
    assert "note: 3.1: graded from cells" in proc.stderr


def test_a_notebook_of_a_folders_files_is_graded_like_the_folder(tmp_path):
    """The example submission (some answers right, some wrong), one file per untagged cell:
    the same verdict for every check as the folder itself."""
    folder = ROOT / "examples" / "submission"
    cells = [("code", (folder / "exercises" / ex.filename).read_text()) for ex in EXERCISES]
    path = write_notebook(tmp_path / "example.ipynb", cells)

    def verdicts(p) -> dict:
        sub = load_submission(p)
        try:
            result = grade(sub, max_examples=TEST_MAX_EXAMPLES)
        finally:
            sub.cleanup()
        return {(e.id, c.name): c.passed for e in result.exercises for c in e.checks}

    from_notebook, from_folder = verdicts(path), verdicts(folder)
    assert from_notebook == from_folder
    assert set(from_folder.values()) == {True, False}


def test_code_too_deep_to_parse_is_skipped_without_harming_the_rest(tmp_path):
    cells = [
        ("code", "x = " + "1+" * 200_000 + "1"),
        ("code", "y = " + "(" * 5000 + ")" * 5000),
        ("code", solution_source("3.1")),
    ]
    sub = notebook_submission(write_notebook(tmp_path / "deep.ipynb", cells))
    try:
        assert sorted(sub.files) == ["3.1"]
        skipped = [n for n in sub.notes if "was skipped" in n]
        assert len(skipped) == 2 and "cell 1" in skipped[0] and "cell 2" in skipped[1]
    finally:
        sub.cleanup()


# --- places in the student's terms: the cell and the line in it ------------------------------

CRASHING_3_1 = (CORPUS / "ex3_1" / "wrong_no_transpose.py").read_text(encoding="utf-8")
BROKEN_3_3 = "import torch\n\n\ndef gpt2_small_attention()\n    return None\n"
STUB_4_1 = (ROOT / "exercises" / "ex4_1_parameter_counts.py").read_text(encoding="utf-8")


def line_of(source: str, text: str, after: str = "") -> int:
    """The line (from 1) of ``source`` where ``text`` first appears (after ``after``)."""
    lines = source.splitlines()
    start = next(i for i, line in enumerate(lines) if after in line) if after else 0
    return next(i for i, line in enumerate(lines) if i >= start and text in line) + 1


def places_notebook(path, tagged: bool):
    """A runtime error in 3.1 (cell 4), a syntax error in 3.3 (cell 6), 4.1 not written
    (cell 8): each after a markdown cell and behind a few lines of the student's own, so that
    neither the cell's position nor its line is the exercise file's."""

    def tags(ex_id):
        return [f"exercise-{ex_id}"] if tagged else []

    mine = "# my answer\n\n"
    return write_notebook(
        path,
        [
            ("markdown", "# Chapter 3"),
            ("code", "!pip install -q torch\nimport torch\nx = torch.rand(3)"),
            ("markdown", "## 3.1"),
            ("code", mine + CRASHING_3_1, tags("3.1")),
            ("markdown", "## 3.3"),
            ("code", mine + BROKEN_3_3, tags("3.3")),
            ("markdown", "## 4.1"),
            ("code", mine + STUB_4_1, tags("4.1")),
        ],
    )


@pytest.mark.parametrize("tagged", [True, False], ids=["tagged", "untagged"])
def test_a_notebooks_failures_name_the_cell_and_the_line_in_it(tmp_path, tagged):
    sub = load_submission(places_notebook(tmp_path / "places.ipynb", tagged))
    try:
        result = grade(sub, ["3.1", "3.3", "4.1"], max_examples=TEST_MAX_EXAMPLES)
    finally:
        sub.cleanup()
    crashed, broken, stub = result.exercises
    files = [e.filename for e in EXERCISES]

    # A traceback's frame: the cell (by position, markdown cells counted) and its line.
    line = line_of(CRASHING_3_1, "sa_v1.W_query.copy_(") + 2
    raised = [c.message for c in crashed.checks if "raised" in c.message]
    assert raised, [c.message for c in crashed.checks]
    for message in raised:
        assert f"(in cell 4, line {line}, in transfer_weights: sa_v1.W_query.copy_(" in message

    # A syntax error: the cell and the line, where Python says it and where the judge does.
    line = line_of(BROKEN_3_3, "def gpt2_small_attention()") + 2
    assert broken.status == "error"
    for check in broken.checks:
        assert "your cell does not parse" in check.message, check.message
        assert f"(cell 6, line {line})" in check.message
        assert f"(in cell 6, line {line}: def gpt2_small_attention()" in check.message

    # Not done yet: the cell and the line of the function still to write, not exercises/...
    assert stub.checks and all(c.message.startswith("not done yet") for c in stub.checks)
    for check in stub.checks:
        name = next(n for n in ("feedforward_params", "attention_params") if n in check.message)
        line = line_of(STUB_4_1, f"def {name}") + 2
        # where the stub said exercises/ex4_1_parameter_counts.py
        assert check.message.startswith(f"not done yet: write {name}() in cell 8, line {line}")

    for ex in result.exercises:
        for check in ex.checks:
            assert not any(f in check.message for f in files), check.message
            assert "In [" not in check.message  # a notebook file's cells go by position


def test_each_line_of_a_notebooks_exercise_file_knows_its_cell_and_line(tmp_path):
    cells = [
        ("markdown", "intro"),
        ("code", "import torch\n\nimport torch.nn as nn; A = 1"),
        (
            "code",
            "x = 1\n\n\n@torch.no_grad()\ndef transfer_weights(sa_v2, sa_v1):\n"
            "    sa_v1.W_query = nn.Parameter(sa_v2.W_query.weight.T * A)\n",
        ),
    ]
    sub = notebook_submission(write_notebook(tmp_path / "p.ipynb", cells))
    try:
        places = sub.places["ex3_1_weight_transfer.py"]
        text = sub.files["3.1"].read_text().splitlines()
    finally:
        sub.cleanup()
    assert places.names == {"transfer_weights": ("cell 3", 5)}  # its def, not its decorator
    where = {text[n - 1]: places.place(n) for n in range(1, len(text) + 1)}
    assert where["import torch"] == ("cell 2", 1)
    assert where["A = 1"] == ("cell 2", 3)  # written anew (it shared a line): its own line
    assert where["@torch.no_grad()"] == ("cell 3", 4)
    assert where["    sa_v1.W_query = nn.Parameter(sa_v2.W_query.weight.T * A)"] == ("cell 3", 6)
    assert places.place(1) is None  # the file's heading: no cell


def test_a_folders_messages_keep_their_file_and_line(tmp_path):
    folder = make_submission(tmp_path / "f", {"3.1": CORPUS / "ex3_1" / "wrong_no_transpose.py"})
    (ex,) = grade_folder(folder, ["3.1"]).exercises
    line = line_of(CRASHING_3_1, "sa_v1.W_query.copy_(")
    assert any(
        f"(in ex3_1_weight_transfer.py, line {line}, in transfer_weights:" in c.message
        for c in ex.checks
    ), [c.message for c in ex.checks]


def test_a_not_done_message_that_names_no_file_gets_the_cell_and_line_at_its_end():
    from grader.intake.submission import Places
    from grader.judge.snippets import cell_message

    places = {"ex3_1_weight_transfer.py": Places(names={"transfer_weights": ("cell 5", 3)})}
    said = "not done yet: write transfer_weights() in the cell tagged exercise-3.1.\nmore"
    assert cell_message(said, "3.1", "a check", places) == (
        "not done yet: write transfer_weights() in the cell tagged exercise-3.1. "
        "(in cell 5, line 3)\nmore"
    )


def test_every_place_in_a_message_is_said_as_a_cell_and_the_words_fit_a_notebook():
    from grader.intake.submission import Places, Span
    from grader.judge.snippets import cell_message

    places = {"ex3_2_wrapper_2d.py": Places([Span(4, 6, "cell In [9]", 2)])}
    said = (
        "importing your file failed: your code raised NameError: name 'torhc' is not defined "
        "(in ex3_2_wrapper_2d.py, line 5, in <module>: import torhc)"
    )
    assert cell_message(said, "3.2", "c", places) == (
        "running your cells failed: your code raised NameError: name 'torhc' is not defined "
        "(in cell In [9], line 3, in <module>: import torhc)"
    )
    said = "your file does not parse: SyntaxError: bad (ex3_2_wrapper_2d.py, line 4)"
    assert cell_message(said, "3.2", "c", places).endswith("bad (cell In [9], line 2)")
    other = "your code raised E: x (in helpers.py, line 5, in f: g())"  # not a notebook's file
    assert cell_message(other, "3.2", "c", places) == other


def test_a_missing_exercise_is_said_in_the_notebooks_terms_and_a_folders_keeps_its_file(
    tmp_path,
):
    from grader.intake.notebook import cells_submission, history_cells
    from grader.result import report_text

    wanted = ["3.1", "4.1", "4.2"]
    said = {
        "3.1": "no cell defines transfer_weights",
        "4.1": "no cell defines feedforward_params or attention_params",
        "4.2": "no cell defines GPT2_CONFIGS, total_params or model_size_mb",
    }
    only_3_3 = solution_source("3.3")  # none of the three: no worker starts, nothing runs
    notebook = notebook_submission(
        write_notebook(tmp_path / "n.ipynb", [("markdown", "# 3.3"), ("code", only_3_3)])
    )
    kernel = cells_submission(history_cells(["", "import torch", only_3_3]), "k", "k", ran=True)
    nothing = notebook_submission(write_notebook(tmp_path / "e.ipynb", [("markdown", "hi")]))
    folder = make_submission(tmp_path / "f", {e.id: None for e in EXERCISES if e.id != "3.3"})
    results = {}
    for key, sub, where in [
        ("notebook", notebook, "the notebook"),
        ("kernel", kernel, "the cells run so far"),
        ("nothing", nothing, "the notebook"),  # no exercise at all: no places either
    ]:
        try:
            results[key] = grade(sub, wanted, max_examples=TEST_MAX_EXAMPLES)
        finally:
            sub.cleanup()
        for ex in results[key].exercises:
            assert ex.status == "missing" and ex.checks, ex
            for check in ex.checks:
                assert check.message == f"not found in {where}: {said[ex.id]}", check.message
        text = report_text.render(results[key], width=200)
        assert "exercises/" not in text and ".py" not in text, text
        assert f"not found in {where}: no cell defines transfer_weights" in text
        assert text.count("no cell defines feedforward_params") == 1  # said once, as before

    for ex in grade_folder(folder, wanted).exercises:  # a folder: the file, as before
        assert ex.status == "missing"
        for check in ex.checks:
            filename = next(e.filename for e in EXERCISES if e.id == ex.id)
            assert check.message == f"not submitted: exercises/{filename} was not found"
