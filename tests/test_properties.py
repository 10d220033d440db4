"""The check harness: derandomized from the grading seed, a different seed draws other
examples, and a failure carries the shrunk counterexample, a hint chosen by the kind of failure
(none rather than a misleading one) and the snippet."""

import dataclasses

import pytest
from hypothesis import strategies as st

from grader.judge import hints
from grader.judge.launch.handle import StudentError
from grader.judge.properties import Check, CheckFailed, explain_student_error, is_stub, run_check
from llm_pack.checks.hints import KNOWN as COUNT_HINTS


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


OWN = "the check's own hint"
PARAMETER_ERROR = (
    "cannot assign 'torch.FloatTensor' as parameter 'W_query' (torch.nn.Parameter or None expected)"
)


@pytest.mark.parametrize(
    ("kind", "message", "own_kinds", "says"),
    [
        (hints.WRONG, "", hints.OWN_KINDS, OWN),
        (hints.VALUES, "", hints.OWN_KINDS, OWN),
        (hints.count(), "", hints.OWN_KINDS, OWN),
        (hints.count("inexact"), "", hints.OWN_KINDS, OWN),  # a family the check names
        (hints.count("mask"), "", hints.OWN_KINDS, "register_buffer"),  # known: not precision
        (hints.count("tied-head"), "", hints.OWN_KINDS, "does not tie"),
        ("raised:TypeError", PARAMETER_ERROR, hints.OWN_KINDS, "nn.Parameter(tensor)"),
        ("raised:TypeError", "unsupported operand", hints.OWN_KINDS, ""),  # say nothing
        ("raised:RuntimeError", "size mismatch", hints.OWN_KINDS, ""),
        ("raised:RuntimeError", "size mismatch", (*hints.OWN_KINDS, "raised:RuntimeError"), OWN),
        (hints.returned("NoneType"), "", hints.OWN_KINDS, "return statement"),
        (hints.returned("int"), "", hints.OWN_KINDS, ""),
        (
            hints.returned("list"),
            "x[0] should be a tensor, but it is list",
            hints.OWN_KINDS,
            "torch.stack",
        ),
        (
            hints.returned("tuple"),
            "f(x) should be a tensor, but it is tuple",
            hints.OWN_KINDS,
            "torch.tensor",
        ),
        (hints.returned("list"), "f(x) should be a dict, but it is list", hints.OWN_KINDS, ""),
        (
            hints.returned("Tensor"),
            "f(x) should be a number, but it is Tensor",
            hints.OWN_KINDS,
            ".item()",
        ),
        (hints.NOT_DONE, "", (hints.NOT_DONE,), ""),  # never a hint for a stub
    ],
)
def test_the_hint_follows_the_kind_of_failure(kind, message, own_kinds, says):
    chosen = hints.choose(kind, message, OWN, own_kinds, COUNT_HINTS)
    assert (says in chosen) if says else chosen == ""


def test_a_failure_gets_the_hint_of_its_kind_or_none():
    def failing(kind):
        def run(worker, n):
            raise CheckFailed("off by 9", kind)

        return dataclasses.replace(recording_check([]), run=run, hint=OWN, known=COUNT_HINTS)

    assert run_check(failing(hints.WRONG), None, "3.1", 3, 5).message == f"off by 9\nHint: {OWN}"
    mask = run_check(failing(hints.count("mask")), None, "4.1", 3, 5).message
    assert "register_buffer" in mask and OWN not in mask
    unknown = dataclasses.replace(failing(hints.count("mask")), known=())  # no pack's hint:
    assert run_check(unknown, None, "4.1", 3, 5).message == f"off by 9\nHint: {OWN}"  # its own

    def raising(worker, n):
        raise StudentError({"type": "ZeroDivisionError", "message": "division by zero"})

    crashed = dataclasses.replace(recording_check([]), run=raising, hint=OWN)
    assert "Hint" not in run_check(crashed, None, "3.1", 3, 5).message


STUB_RAISE = {
    "type": "NotImplementedError",
    "message": "Exercise 4.2 is not done yet: write model_size_mb() in exercises/x.py.",
    "frames": [
        {
            "file": "x.py",
            "line": 9,
            "function": "model_size_mb",
            "code": "raise NotImplementedError(",
        }
    ],
}
TORCH_RAISE = {
    "type": "NotImplementedError",
    "message": "Could not run 'aten::nonzero' with arguments from the 'Meta' backend.",
    "frames": [{"file": "x.py", "line": 4, "function": "count", "code": "idx = mask.nonzero()"}],
}


def test_only_the_students_own_raise_is_not_done_yet():
    assert is_stub(STUB_RAISE) and not is_stub(TORCH_RAISE)
    said = explain_student_error(STUB_RAISE)
    assert said == "not done yet: write model_size_mb() in exercises/x.py."
    assert explain_student_error(TORCH_RAISE).startswith(
        "your code raised NotImplementedError: Could not run 'aten::nonzero'"
    )

    def run(info):
        def raising(worker, n):
            raise StudentError(info)

        return run_check(dataclasses.replace(recording_check([]), run=raising), None, "4.2", 3, 5)

    assert run(STUB_RAISE).message == said  # no hint for a stub
    assert run(TORCH_RAISE).message.startswith("your code raised NotImplementedError")
