"""Grading notebooks: tagged and untagged (seed-style) notebooks are turned into exercise files
by static analysis, without running them; corrupt files are one clear error."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from nbsupport import seed_style_notebook, solution_notebook, solution_source, write_notebook
from support import ROOT, TEST_MAX_EXAMPLES

from grader.intake.cells import CONTRACT, strip_magics
from grader.intake.load import load_submission
from grader.intake.notebook import notebook_submission
from grader.intake.submission import SubmissionError
from grader.judge.engine import grade
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
    proc = subprocess.run(
        [sys.executable, "-m", "grader.commands.cli", str(path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
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


def test_a_seed_style_notebook_with_its_own_class_copies_gets_full_marks(tmp_path):
    full_marks(seed_style_notebook(tmp_path / "seed.ipynb"))


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
