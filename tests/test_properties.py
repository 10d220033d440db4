"""The check harness: derandomized from the grading seed, a different seed draws other
examples, and a failure carries the shrunk counterexample, a hint and the snippet."""

from hypothesis import strategies as st

from grader.judge.properties import Check, CheckFailed, run_check


def recording_check(seen: list, fail_when=lambda n: False) -> Check:
    def run(worker, n):
        seen.append(n)
        if fail_when(n):
            raise CheckFailed(f"{n} is too big")

    return Check(
        name="records",
        points=2,
        strategy=st.integers(0, 10_000),
        run=run,
        hint="keep it small",
        reproduce=lambda n: f"print({n})",
        max_examples=15,
    )


def draws(seed: int) -> list:
    seen: list = []
    result = run_check(recording_check(seen), None, "3.1", seed, None)
    assert result.passed and result.points == 2
    return seen


def test_same_seed_same_examples_other_seed_other_examples():
    assert draws(1) == draws(1)
    assert draws(1) != draws(2)


def test_failure_reports_the_shrunk_example_hint_and_snippet():
    seen: list = []
    result = run_check(recording_check(seen, lambda n: n >= 100), None, "3.1", 3, 200)
    assert not result.passed and result.points == 0 and result.max_points == 2
    assert result.counterexample == 100  # shrunk to the boundary
    assert result.message.startswith("100 is too big")
    assert "Hint: keep it small" in result.message
    assert result.reproduce == "print(100)"
