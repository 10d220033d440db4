"""Every correct answer in the corpus gets full marks; every wrong one loses points on its
exercise, in the checks its header names, with the hints it names (and not the ones it rules
out: a hint chosen by the kind of failure, never a misleading one)."""

import pytest
from support import corpus_cases, grade_folder, make_submission

from grader.result.common import parse_message

CASES = corpus_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_corpus_case(case, tmp_path):
    folder = make_submission(tmp_path / "sub", {case.exercise_id: case.path})
    result = grade_folder(folder, [case.exercise_id])
    (ex,) = result.exercises
    failing = [c.name for c in ex.checks if not c.passed]
    if case.correct:
        assert ex.score == ex.max_score, f"a correct answer lost points: {failing}\n" + "\n".join(
            c.message for c in ex.checks if not c.passed
        )
        assert ex.status == "passed"
    else:
        assert ex.score < ex.max_score, "a wrong answer got full marks"
        assert ex.status in ("failed", "error", "timeout")
        for expected in case.expect_failing:
            assert any(expected in name for name in failing), (
                f"expected a failing check matching {expected!r}; failing: {failing}"
            )
        hints = {c.name: parse_message(c.message).hint for c in ex.checks if not c.passed}
        for wanted in case.expect_hint:
            assert all(wanted in hint for hint in hints.values()), (wanted, hints)
        for unwanted in case.expect_no_hint:
            assert not any(unwanted in hint for hint in hints.values()), (unwanted, hints)
