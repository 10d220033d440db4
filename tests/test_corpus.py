"""Every correct answer in the corpus gets full marks; every wrong one loses points on its
exercise, in the checks its header names, with the hints and messages it names (and not the
hints it rules out: a hint chosen by the kind of failure, never a misleading one). The rules
are ``grader.authoring.corpus.problems``, the ones ``grade check-pack`` applies."""

import pytest
from support import corpus_cases

from grader.authoring.corpus import problems

CASES = corpus_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_corpus_case(case, graded):
    # Graded once per test process (conftest's ``graded``), in a clone holding the solution
    # but for this case's file; tests/test_checks_ch*.py look closer at the same grading.
    _, ex = graded(case.exercise_id, case.path.stem)
    found = problems(case, ex)
    assert not found, (
        "\n".join(found) + "\n" + "\n".join(c.message for c in ex.checks if not c.passed)
    )


def test_the_rules_fail_what_they_must():
    """``problems`` itself: a wrong answer's header that its result does not bear out."""
    from grader.authoring.corpus import CorpusCase
    from grader.result.schema import CheckResult, ExerciseResult

    def result(score, message="values differ\nHint: divide the logits"):
        check = CheckResult("sampled tokens follow softmax", score, 10.0, score == 10.0, message)
        status = "passed" if score == 10.0 else "failed"
        return ExerciseResult("5.1", "t", score, 10.0, status, [check])

    wrong = CorpusCase("5.1", CASES[0].path, False, ("softmax",), ("divide",), (), ("differ",))
    assert problems(wrong, result(0.0)) == []
    assert problems(wrong, result(10.0)) == ["a wrong answer got full marks (10/10)"]
    told = CorpusCase("5.1", CASES[0].path, False, (), (), ("divide",), ("imports the grader's",))
    assert problems(told, result(0.0)) == [
        "expect-message: \"imports the grader's\" is in no failing check's message",
        "expect-no-hint: 'divide' is in the hint of sampled tokens follow softmax",
    ]
