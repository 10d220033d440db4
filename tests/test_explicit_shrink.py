"""Explicit examples that fail are shrunk (issue 42): a check's ``examples`` (a book-sized
case tried first) are never shrunk by hypothesis, so a failure found there is searched again
among the drawn examples, and the smaller one is reported; when no drawn example fails, the
explicit one is, as before."""

from hypothesis import strategies as st

from grader.judge.properties import Check, CheckFailed, run_check

BOOK_LIKE = {"d_in": 768, "d_out": 64}


def check(fails, examples=(BOOK_LIKE,)) -> Check:
    def run(worker, ex):
        if fails(ex):
            raise CheckFailed(f"wrong for d_in={ex['d_in']}, d_out={ex['d_out']}")

    return Check(
        name="shapes",
        points=1,
        strategy=st.fixed_dictionaries({"d_in": st.integers(1, 999), "d_out": st.integers(1, 99)}),
        run=run,
        hint="h",
        reproduce=lambda ex: f"f({ex['d_in']}, {ex['d_out']})",
        examples=examples,
    )


def test_a_failing_explicit_example_is_shrunk_to_a_small_one():
    result = run_check(check(lambda ex: ex["d_out"] > 1), None, "x", 1, None)
    assert not result.passed
    assert result.counterexample == {"d_in": 1, "d_out": 2}
    assert result.message.startswith("wrong for d_in=1, d_out=2")
    assert result.reproduce == "f(1, 2)"


def test_an_explicit_example_only_it_catches_is_reported_as_it_is():
    result = run_check(check(lambda ex: ex == BOOK_LIKE), None, "x", 1, None)
    assert not result.passed and result.counterexample == BOOK_LIKE
    assert result.reproduce == "f(768, 64)"


def test_a_drawn_failure_is_shrunk_as_before():
    result = run_check(check(lambda ex: ex["d_in"] > 5, examples=()), None, "x", 1, None)
    assert result.counterexample == {"d_in": 6, "d_out": 1}
