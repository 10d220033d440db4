"""The student stubs: each raises a NotImplementedError that says what to do, and grading
them gives 0 points with status "failed" (not done yet), never "error"; every report says
"not done yet" once per exercise, in one line, with or without -v; an answer half written is
not done only where it is unwritten, and a wrong answer is never "not done"."""

import importlib
import re
import subprocess
import sys

import pytest
from support import CORPUS, ROOT, SOLUTION, grade_folder, make_submission

from grader.result import report_text
from grader.result.common import is_not_done
from grader.result.report_html import render_html
from grader.shared.registry import EXERCISES

NOT_DONE = "not done yet"


def test_transfer_weights_stub_message():
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "from exercises.ex3_1_weight_transfer import transfer_weights; "
            "transfer_weights(None, None)",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert proc.returncode != 0
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("NotImplementedError: Exercise 3.1 is not done yet")
    assert "exercises/ex3_1_weight_transfer.py" in last


CALLS = {
    "3.1": lambda m: m.transfer_weights(None, None),
    "3.2": lambda m: m.make_2d_wrapper(3, 6),
    "3.3": lambda m: m.gpt2_small_attention(),
    "4.1": lambda m: m.feedforward_params({}),
    "4.2": lambda m: m.total_params({}),
    "4.3": lambda m: m.GPTModel({}),
}


@pytest.mark.parametrize("exercise", EXERCISES, ids=[e.id for e in EXERCISES])
def test_each_stub_names_its_exercise_and_file(exercise):
    module = importlib.import_module(f"exercises.{exercise.filename[:-3]}")
    assert f"Exercise {exercise.id}" in module.__doc__
    with pytest.raises(NotImplementedError) as info:
        CALLS[exercise.id](module)
    assert f"Exercise {exercise.id} is not done yet" in str(info.value)
    assert f"exercises/{exercise.filename}" in str(info.value)


@pytest.fixture(scope="module")
def stubs():
    return grade_folder(ROOT, max_examples=2)


def test_grading_the_stubs_gives_zero_not_done_yet(stubs):
    result = stubs
    assert result.score == 0
    assert result.max_score == 60
    for ex in result.exercises:
        assert ex.status == "failed", (ex.id, ex.status, [c.message for c in ex.checks])
        assert all(is_not_done(c) for c in ex.checks), (ex.id, [c.message for c in ex.checks])
        assert not any("not done yet: Exercise" in c.message for c in ex.checks)
        assert not any("Hint:" in c.message for c in ex.checks)  # nothing to explain yet


@pytest.mark.parametrize("verbose", [False, True])
def test_the_stubs_text_report_says_not_done_yet_once_per_exercise(stubs, verbose):
    lines = report_text.render(stubs, verbose=verbose).splitlines()
    said = [i for i, line in enumerate(lines) if NOT_DONE in line]
    assert len(said) == len(EXERCISES)
    for i, ex in zip(said, EXERCISES, strict=True):  # said once, right under the exercise's rule
        assert lines[i - 1].startswith(f"── {ex.id} ") and lines[i].startswith(f"  {NOT_DONE}: ")
        assert len(lines[i]) <= report_text.MAX_WIDTH
    assert len(lines) <= 30  # was 95 lines, and 839 with -v (a long message wraps: issue 34)
    assert not any(line.startswith("More:") for line in lines)  # -v would show nothing more


def test_the_stubs_html_report_says_not_done_yet_once_per_exercise(stubs):
    page = render_html(stubs)
    text = re.sub(r"<style>.*?</style>|<script>.*?</script>", "", page, flags=re.S)
    assert text.count(NOT_DONE) == len(EXERCISES)
    assert '<article class="check"' not in text  # no check is explained as a failure


PARTIAL_4_2 = (
    (SOLUTION / "exercises" / "ex4_2_scaled_configs.py")
    .read_text()
    .split("\n\ndef total_params")[0]
    + """

def total_params(cfg):
    raise NotImplementedError("Exercise 4.2 is not done yet: write total_params().")


def model_size_mb(cfg):
    raise NotImplementedError("Exercise 4.2 is not done yet: write model_size_mb().")
"""
)


def test_half_written_and_wrong_answers_are_told_apart(tmp_path):
    answer = tmp_path / "partial.py"
    answer.write_text(PARTIAL_4_2)
    result = grade_folder(make_submission(tmp_path / "a", {"4.2": answer}), ["4.2"], 2)
    configs, base, *functions = result.exercises[0].checks
    assert configs.passed and base.passed  # the configs are written: graded as such
    assert all(is_not_done(c) for c in functions)
    assert functions[0].message == "not done yet: write total_params()."
    said = [line for line in report_text.render(result).splitlines() if NOT_DONE in line]
    assert said == ["  not done yet: write total_params()."]  # the most common of two
    for case in ("wrong_swapped_layers_heads", "wrong_tied_output_head"):
        wrong = make_submission(tmp_path / case, {"4.2": CORPUS / "ex4_2" / f"{case}.py"})
        (ex,) = grade_folder(wrong, ["4.2"]).exercises
        assert ex.score < ex.max_score and not any(is_not_done(c) for c in ex.checks), case
