"""Expected values remembered across grades in one judge process (grader/judge/memo.py)."""

from __future__ import annotations

import json

from support import CORPUS, SOLUTION, grade_folder, make_submission

from grader.judge import memo


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


def graded_43(path) -> dict:
    result = json.loads(grade_folder(path, ["4.3"], max_examples=4, shown_as="sub").to_json())
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
    cold = graded_43(wrong)
    memo.forget_all()
    warm = [graded_43(path) for path in (SOLUTION, wrong, SOLUTION)]
    assert warm[1] == cold and cold["score"] < cold["max_score"]
    assert warm[0] == warm[2] and warm[0]["score"] == warm[0]["max_score"]
