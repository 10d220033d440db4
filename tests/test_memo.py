"""Expected values remembered across grades in one judge process (grader/judge/memo.py)."""

from __future__ import annotations

import json

import pytest
import torch
from support import CORPUS, SOLUTION, grade_folder, make_submission

from grader.judge import memo
from grader.pack.judge import same_weights
from grader.worker.probes import describe_module
from llm_pack.probes import ATTRS
from reference import MultiHeadAttention


def test_each_distinct_call_is_computed_once_and_equal_examples_share_it(monkeypatch):
    monkeypatch.setattr(memo, "ENTRIES", 2)
    calls = []

    @memo.remembered
    def oracle(ex: dict, train: bool) -> list:
        calls.append((ex["seed"], train))
        return [ex["seed"], train]

    first = oracle({"seed": 1, "cfg": {"a": 1, "b": 2}}, True)
    assert oracle({"cfg": {"b": 2, "a": 1}, "seed": 1}, True) is first  # key order is no matter
    assert oracle({"seed": 1, "cfg": {"a": 1, "b": 2}}, False) == [1, False]
    assert calls == [(1, True), (1, False)]
    oracle({"seed": 2, "cfg": {}}, True)  # a third entry pushes out the least recently used
    oracle({"seed": 1, "cfg": {"a": 1, "b": 2}}, True)
    assert calls == [(1, True), (1, False), (2, True), (1, True)]
    memo.forget_all()
    oracle({"seed": 2, "cfg": {}}, True)
    assert calls[-1] == (2, True)


def graded(path, exercise: str = "4.3") -> dict:
    result = json.loads(grade_folder(path, [exercise], max_examples=4, shown_as="sub").to_json())
    result.pop("duration_s")
    return result


def test_a_warm_judge_grades_exactly_as_a_cold_one(tmp_path):
    """Answers graded after others (the judge's remembered oracles, inputs and logits warm) get
    the result they get in a fresh judge: a grade that changed a remembered value in place (an
    input clamped, an oracle's rates set to explain a failure) would show here."""
    wrong = make_submission(
        tmp_path / "wrong", {"4.3": CORPUS / "ex4_3" / "wrong_attn_rate_at_shortcut.py"}
    )
    memo.forget_all()
    cold = graded(wrong)
    memo.forget_all()
    warm = [graded(path) for path in (SOLUTION, wrong, SOLUTION)]
    assert warm[1] == cold and cold["score"] < cold["max_score"]
    assert warm[0] == warm[2] and warm[0]["score"] == warm[0]["max_score"]


@pytest.mark.parametrize(
    ("exercise", "wrong_answer"),
    [
        ("3.1", "ex3_1/wrong_no_transpose.py"),
        ("3.2", "ex3_2/wrong_subclass_without_mask.py"),
        ("3.3", "ex3_3/wrong_copy_without_masking.py"),
    ],
)
def test_reused_rebuilds_and_outputs_grade_as_a_cold_judge(tmp_path, exercise, wrong_answer):
    """3.1's oracles and 3.2's and 3.3's rebuilt reference modules (and their outputs) are kept
    across grades: a wrong answer graded between two right ones (whose weights it shares) gets
    what it gets in a fresh judge, and the right ones stay right."""
    wrong = make_submission(tmp_path / "wrong", {exercise: CORPUS / wrong_answer})
    memo.forget_all()
    cold = graded(wrong, exercise)
    memo.forget_all()
    warm = [graded(path, exercise) for path in (SOLUTION, wrong, SOLUTION)]
    assert warm[1] == cold and cold["score"] < cold["max_score"]
    assert warm[0] == warm[2] and warm[0]["score"] == warm[0]["max_score"]


def mha_description(seed: int = 1) -> dict:
    torch.manual_seed(seed)
    return describe_module(MultiHeadAttention(4, 4, 3, 0.0, 2), attrs=ATTRS)


def test_a_rebuild_is_reused_only_for_equal_weights_rates_and_attributes():
    memo.forget_all()
    made = []

    def rebuild():
        made.append(1)
        return torch.nn.Linear(1, 1)

    first = same_weights.reused("mha", mha_description(), rebuild)
    assert same_weights.reused("mha", mha_description(), rebuild) is first  # equal, not same
    assert same_weights.reused("wrapper", mha_description(), rebuild) is not first
    changed = mha_description()
    changed["state"]["W_key.weight"][0, 0] += 1e-6  # one element
    assert same_weights.reused("mha", changed, rebuild) is not first
    rates = mha_description()
    rates["dropouts"] = {"dropout": 0.5}
    assert same_weights.reused("mha", rates, rebuild) is not first
    heads = mha_description()
    heads["attrs"]["num_heads"] = 4
    assert same_weights.reused("mha", heads, rebuild) is not first
    assert len(made) == 5
    memo.forget_all()
    assert same_weights.reused("mha", mha_description(), rebuild) is not first


def test_reused_rebuilds_are_bounded_in_number_and_bytes(monkeypatch):
    memo.forget_all()
    monkeypatch.setattr(same_weights, "ENTRIES", 2)
    kept = [same_weights.reused("mha", mha_description(s), torch.nn.Identity) for s in (1, 2, 3)]
    assert same_weights.reused("mha", mha_description(1), torch.nn.Identity) is not kept[0]
    assert same_weights.reused("mha", mha_description(3), torch.nn.Identity) is kept[2]
    memo.forget_all()
    monkeypatch.setattr(same_weights, "MAX_BYTES", 100)  # less than one module's weights
    first = same_weights.reused("mha", mha_description(), torch.nn.Identity)
    assert same_weights.reused("mha", mha_description(), torch.nn.Identity) is not first


def test_an_expected_output_is_computed_once_per_module_and_input():
    memo.forget_all()
    module, other = torch.nn.Identity(), torch.nn.Identity()
    calls = []

    def compute(value):
        calls.append(value)
        return torch.tensor(value)

    assert same_weights.expected(module, ("x", 1), lambda: compute(1)).item() == 1
    assert same_weights.expected(module, ("x", 1), lambda: compute(2)).item() == 1
    assert same_weights.expected(module, ("x", 2), lambda: compute(3)).item() == 3
    assert same_weights.expected(other, ("x", 1), lambda: compute(4)).item() == 4
    assert calls == [1, 3, 4]
