"""Mistakes outside an exercise's logic get a message in the student's terms, not an internal
error: an exercise file that is a symbolic link, a function that returns a huge int."""

from __future__ import annotations

import pytest
from support import SOLUTION, grade_folder, make_submission

from grader.shared.registry import BY_ID

FILE_4_2 = SOLUTION / "exercises" / BY_ID["4.2"].filename


def test_a_symbolic_link_for_an_exercise_file_says_so(tmp_path):
    sub = make_submission(tmp_path / "sub")
    real = tmp_path / "elsewhere.py"
    link = sub / "exercises" / BY_ID["3.1"].filename
    real.write_bytes(link.read_bytes())
    link.unlink()
    link.symlink_to(real)
    result = grade_folder(sub, ["3.1", "4.1"])
    linked, other = result.exercises
    assert linked.status == "error" and linked.score == 0
    assert linked.checks[0].message == (
        "not graded: exercises/ex3_1_weight_transfer.py is a symbolic link: submit the file itself"
    )
    assert other.status == "passed"  # one link costs its own exercise only


@pytest.mark.parametrize(
    "old, new, message",
    [
        (
            "return sum(p.numel() for p in GPTModel(cfg).parameters())",
            "return 10**400",
            "total_params returned an int with 401 digits; an int that large cannot be checked",
        ),
        (
            '"xl": (1600, 48, 25)',
            '"xl": (10**400, 48, 25)',
            "GPT2_CONFIGS['xl']['emb_dim'] is an int with 401 digits; an int that large cannot be",
        ),
    ],
)
def test_a_huge_int_is_named_not_an_internal_error(tmp_path, old, new, message):
    code = FILE_4_2.read_text()
    assert old in code
    answer = tmp_path / "answer.py"
    answer.write_text(code.replace(old, new))
    result = grade_folder(make_submission(tmp_path / "sub", {"4.2": answer}), ["4.2"])
    messages = " ".join(c.message for c in result.exercises[0].checks if not c.passed)
    assert message in " ".join(messages.split())
    assert "unpickl" not in messages and "set_int_max_str_digits" not in messages
