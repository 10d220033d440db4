"""Every correct answer in the corpus gets full marks; every wrong one loses points on its
exercise, in the checks its header names."""

import pytest
from support import corpus_cases, grade_folder, make_submission

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
