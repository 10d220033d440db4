"""same_as_reference's comparison: (got, expected, what), or with the example too when it has a
parameter named ``example`` (a comparison that accepts any of several right answers)."""

import types

import pytest
import torch
from hypothesis import strategies as st

from grader.pack.judge import CheckFailed, same_as_reference
from grader.pack.worker import answer_probes


class InProcess:
    """The worker protocol, run in this process (as the docs' example does)."""

    def __init__(self, probes, module):
        self.probes, self.module, self.state = probes, module, {}

    def call(self, action, timeout=None, **args):
        return self.probes[action](self.module, self.state, **args)

    def call_while(self, action, meanwhile, timeout=None, **args):
        return self.call(action, **args), meanwhile() if meanwhile else None


def index_of_max(compare):
    return same_as_reference(
        name="index_of_max(xs) is an index of the largest value",
        answer="ex9_3_argmax:index_of_max",
        strategy=st.fixed_dictionaries({"xs": st.lists(st.integers(0, 3), min_size=1)}),
        arguments=lambda ex: {"xs": ex["xs"]},
        reference=lambda ex: ex["xs"].index(max(ex["xs"])),
        points=1,
        hint="any index of the largest value",
        compare=compare,
    )


def run(check, answer, ex: dict) -> None:
    module = types.SimpleNamespace(index_of_max=answer)
    check.run(InProcess(answer_probes("index_of_max"), module), ex)


def last_max(xs):
    return len(xs) - 1 - xs[::-1].index(max(xs))


def test_a_compare_with_an_example_parameter_gets_the_example():
    seen = []

    def any_max(got, expected, what, example):
        seen.append(example)
        if example["xs"][got] != max(example["xs"]):
            raise CheckFailed(f"{what} is {got}, not an index of the largest value")

    check = index_of_max(any_max)
    run(check, last_max, {"xs": [3, 1, 3]})  # another right answer: index 2, not 0
    assert seen == [{"xs": [3, 1, 3]}]
    with pytest.raises(CheckFailed, match=r"index_of_max\(xs\) is 1, not an index"):
        run(check, lambda xs: 1, {"xs": [3, 1, 3]})


def test_a_compare_of_three_parameters_is_called_as_before():
    def same(got, expected, what):
        if got != expected:
            raise CheckFailed(f"{what} is {got}, expected {expected}")

    check = index_of_max(same)
    run(check, lambda xs: xs.index(max(xs)), {"xs": [3, 1, 3]})
    with pytest.raises(CheckFailed, match=r"index_of_max\(xs\) is 2, expected 0"):
        run(check, last_max, {"xs": [3, 1, 3]})


def windows(ids, size, step):  # a function whose arguments' order matters
    return [ids[i : i + size] for i in range(0, len(ids) - size + 1, step)]


def test_named_arguments_are_passed_in_the_order_written_whatever_the_drawn_order():
    """A drawn dict's keys do not come in the order its strategy declares them
    (``st.fixed_dictionaries`` varies it): passing the example on as it comes would call
    ``windows(step, ids, size)`` for some draws; names given in order never do."""
    strategy = st.fixed_dictionaries(
        {
            "ids": st.lists(st.integers(0, 9), max_size=6),
            "size": st.integers(1, 3),
            "step": st.integers(1, 3),
        }
    )
    check = same_as_reference(
        name="windows(ids, size, step)",
        answer="ex9_4_windows:windows",
        strategy=strategy,
        arguments=("ids", "size", "step"),
        reference=lambda ex: windows(ex["ids"], ex["size"], ex["step"]),
        points=1,
        hint="every step-th start",
    )
    module = types.SimpleNamespace(windows=windows)
    shuffled = {"step": 2, "ids": [1, 2, 3, 4, 5], "size": 2}  # the order a draw may have
    check.run(InProcess(answer_probes("windows"), module), shuffled)
    assert "windows(ids, size, step)" in check.reproduce(shuffled)
    with pytest.raises(ValueError, match="the names of its items in the order"):
        same_as_reference(**{**BASE, "arguments": "ids"})


BASE = {
    "arguments": ("x",),
    "name": "n",
    "answer": "m:f",
    "strategy": st.just({}),
    "reference": lambda ex: 0,
    "points": 1,
    "hint": "h",
}


def test_a_dict_of_strategies_is_the_answers_arguments_and_the_reference_is_called_alike():
    """``strategy={name: strategy}`` as ``@given(**strategies)``: the answer and the reference
    both get the drawn arguments in the dict's order, whatever order a draw's keys have."""
    seen = []

    def book(ids, size, step):
        seen.append((list(ids), size, step))
        ids.clear()  # a reference that changes its arguments changes nothing the answer gets
        return windows([*seen[-1][0]], size, step)

    check = same_as_reference(
        name="windows(ids, size, step)",
        answer="ex9_4_windows:windows",
        strategy={
            "ids": st.lists(st.integers(0, 9)),
            "size": st.integers(1, 3),
            "step": st.integers(1, 3),
        },
        reference=book,
        points=1,
        hint="every step-th start",
        counterexample=lambda ex: {"ids": ex["ids"]},
    )
    assert check.counterexample({"ids": [1], "size": 1, "step": 1}) == {"ids": [1]}
    drawn = {"step": 2, "size": 2, "ids": [1, 2, 3, 4, 5]}
    check.run(InProcess(answer_probes("windows"), types.SimpleNamespace(windows=windows)), drawn)
    assert seen == [([1, 2, 3, 4, 5], 2, 2)] and drawn["ids"] == [1, 2, 3, 4, 5]
    wrong = types.SimpleNamespace(windows=lambda ids, size, step: windows(ids, size, 1))
    with pytest.raises(CheckFailed):
        check.run(InProcess(answer_probes("windows"), wrong), drawn)
    with pytest.raises(ValueError, match="give strategy as a dict"):
        same_as_reference(**{**BASE, "arguments": None})


def test_returns_requires_the_type_before_the_values_are_compared():
    """``returns=float``: a one-element tensor or an int of the right value does not do (``close``
    alone would compare them as numbers); a bool is no float either."""
    check = same_as_reference(
        name="share(xs) is the share of true values, a float",
        answer="ex9_5_share:share",
        strategy={"xs": st.lists(st.booleans(), min_size=1)},
        reference=lambda xs: sum(xs) / len(xs),
        points=1,
        hint="divide the count by the length",
        returns=float,
    )

    def graded(share):
        worker = InProcess(answer_probes("share"), types.SimpleNamespace(share=share))
        check.run(worker, {"xs": [True, False]})

    graded(lambda xs: sum(xs) / len(xs))
    for wrong, kind in [
        (lambda xs: torch.tensor(sum(xs) / len(xs)), "Tensor"),
        (lambda xs: 0 if sum(xs) < len(xs) else 1, "int"),
        (lambda xs: True, "bool"),
    ]:
        with pytest.raises(CheckFailed, match=f"should be a float, but it is {kind}") as caught:
            graded(wrong)
        assert caught.value.kind == f"type:{kind}"


def test_a_check_without_answer_is_for_the_exercises_one_name():
    check = same_as_reference(
        name="mean_of(x) is the mean",
        strategy={"x": st.lists(st.floats(-9, 9), min_size=1)},
        reference=lambda x: sum(x) / len(x),
        points=1,
        hint="divide by how many there are",
    )
    bound = check.bind("ex9_2_mean", ("mean_of",))
    assert bound.bind is None and bound.name == check.name
    assert "from exercises.ex9_2_mean import mean_of" in bound.reproduce({"x": [1.0]})
    with pytest.raises(ValueError, match=r"names 2 answers \(a, b\): say which"):
        check.bind("ex9_2_mean", ("a", "b"))


def test_a_tuple_example_of_a_dict_of_strategies_is_the_arguments_in_order():
    check = same_as_reference(
        name="windows",
        answer="ex2_1_windows:windows",
        strategy={"ids": st.lists(st.integers()), "size": st.integers(1, 4)},
        reference=lambda ids, size: ids[:size],
        hint="the first size ids",
        examples=(([1, 2, 3], 2), {"ids": [4], "size": 1}),
    )
    assert check.examples == ({"ids": [1, 2, 3], "size": 2}, {"ids": [4], "size": 1})
    assert check.points == 1.0
    with pytest.raises(ValueError, match=r"gives 1 arguments, the strategy names 2"):
        same_as_reference(
            name="w",
            answer="m:w",
            strategy={"ids": st.lists(st.integers()), "size": st.integers(1, 4)},
            reference=lambda ids, size: ids,
            hint="h",
            examples=(([1],),),
        )
