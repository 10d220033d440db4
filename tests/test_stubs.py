"""The student stubs: each raises a NotImplementedError that says what to do, and grading
them gives 0 points with status "failed" (not done yet), never "error"."""

import importlib
import subprocess
import sys

import pytest
from support import ROOT, grade_folder

from grader.shared.registry import EXERCISES


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


def test_grading_the_stubs_gives_zero_not_done_yet():
    result = grade_folder(ROOT, max_examples=2)
    assert result.score == 0
    assert result.max_score == 60
    for ex in result.exercises:
        assert ex.status == "failed", (ex.id, ex.status, [c.message for c in ex.checks])
        assert any("not done yet" in c.message for c in ex.checks), ex.id
