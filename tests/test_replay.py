"""Examples replayed across grades in one judge process (grader/judge/replay.py): a warm judge
gives every answer exactly the result a plain hypothesis run gives it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from support import CORPUS, SOLUTION, grade_folder, judged_alone, make_submission

from grader.judge import memo, replay

# Wrong on its fourth and sixth calls only: student code that keeps state between calls. An
# example answered once and asked again would move the count on and change the result.
STATEFUL = (CORPUS / "ex3_1" / "wrong_inconsistent_fourth_call.py").read_text()
STATEFUL = STATEFUL.replace("calls[0] != 4", "calls[0] not in (4, 6)")
assert STATEFUL.count("not in (4, 6)") == 1

ANSWERS = {
    "3.1": [CORPUS / "ex3_1" / "wrong_forgets_value.py", STATEFUL],
    "3.2": sorted((CORPUS / "ex3_2").glob("wrong_*.py"))[:2],
    "4.1": sorted((CORPUS / "ex4_1").glob("wrong_*.py"))[:2],
    "4.3": sorted((CORPUS / "ex4_3").glob("wrong_*.py"))[:2],
}


def answers(tmp_path: Path) -> list[tuple[str, Path]]:
    out = []
    for ex_id, files in ANSWERS.items():
        for i, f in enumerate(files):
            if isinstance(f, str):  # an answer's source text, not a file
                text, f = f, tmp_path / f"answer-{ex_id}-{i}.py"
                f.write_text(text)
            out.append((ex_id, make_submission(tmp_path / f"{ex_id}-{i}", {ex_id: f})))
    return out


def graded(path: Path, ex_id: str, **kwargs) -> dict:
    result = grade_folder(path, [ex_id], max_examples=6, shown_as="sub", **kwargs)
    result = json.loads(result.to_json())
    result.pop("duration_s")
    return result


@pytest.fixture
def fresh_judge():
    memo.forget_all()
    yield
    replay.enabled = True
    memo.forget_all()


def test_replayed_grades_equal_plain_hypothesis_runs(tmp_path, fresh_judge, monkeypatch):
    subs = answers(tmp_path)
    replay.enabled = False
    plain = [graded(path, ex_id) for ex_id, path in subs]
    assert all(r["score"] < r["max_score"] for r in plain)  # every answer fails some check

    replay.enabled = True
    memo.forget_all()
    for ex_id in ANSWERS:
        assert graded(SOLUTION, ex_id)["score"] > 0  # records the checks' examples
    diverged = []
    answering = replay.answering
    monkeypatch.setattr(
        replay, "answering", lambda b, e, d, s: diverged.append(d.index) or answering(b, e, d, s)
    )
    warm = [graded(path, ex_id) for ex_id, path in subs]
    assert warm == plain
    assert any(i > 0 for i in diverged)  # failures past the first replayed example


def test_a_passing_check_is_replayed_without_hypothesis(tmp_path, fresh_judge, monkeypatch):
    import grader.judge.properties as properties
    from llm_pack.checks.ex3_1 import CHECKS

    weights = {"3.1": {CHECKS[0].name: 5.0}}  # the course's weights: the checks are copies
    first = graded(SOLUTION, "3.1", check_points=weights)
    monkeypatch.setattr(properties, "given", None)  # hypothesis cannot be used any more
    assert graded(SOLUTION, "3.1", check_points=weights) == first
    assert graded(SOLUTION, "3.1")["score"] == first["score"] == first["max_score"]


def _global_generators() -> tuple:
    import random

    import numpy as np

    state = np.random.get_state()
    return random.getstate(), state[0], state[1].tobytes(), state[2:]


def test_replayed_checks_never_touch_the_global_generators(tmp_path, fresh_judge, monkeypatch):
    """A replay skips hypothesis's seeding of ``random`` and numpy's generator around each
    example: sound only while no check (of any exercise, passing or failing) draws from them
    or seeds them."""
    import random

    import numpy as np

    import grader.judge.properties as properties

    exercises = ["3.1", "3.2", "3.3", "4.1", "4.2", "4.3"]
    for ex_id in exercises:
        graded(SOLUTION, ex_id)  # records every check's examples
    wrong = answers(tmp_path)
    random.seed(20261124)
    np.random.seed(20261124)
    before = _global_generators()
    with monkeypatch.context() as m:
        m.setattr(properties, "given", None)  # every check of the solution is a replay
        for ex_id in exercises:
            assert graded(SOLUTION, ex_id)["score"] == 10
    for ex_id, path in wrong:  # replays that fail, then hypothesis shrinks
        assert graded(path, ex_id)["score"] < 10
    assert _global_generators() == before


def test_a_replayed_example_is_a_copy_the_check_may_change():
    example = {"cfg": {"emb_dim": 8, "rates": [0.1, 0.2]}, "shape": (1, 2), "seed": 3}
    copied = replay.fresh_copy(example)
    assert copied == example
    copied["cfg"]["rates"].append(0.3)
    copied["cfg"]["emb_dim"] = 4
    assert example == {"cfg": {"emb_dim": 8, "rates": [0.1, 0.2]}, "shape": (1, 2), "seed": 3}
    from collections import OrderedDict

    ordered = replay.fresh_copy(OrderedDict(a=[1]))
    assert type(ordered) is OrderedDict and ordered == {"a": [1]}


def test_forked_judge_processes_hand_their_recordings_to_the_parent():
    """``grade`` spreads exercises over forked judge processes: what they record is kept by
    the process that forked them, for its next grade (a notebook's next ``check_all()``). In
    a fresh judge: a test process never forks judge processes (``judged_alone``)."""
    from grader.judge import parallel

    if not parallel.supported():
        pytest.skip("no fork here")
    first, again, forked = judged_alone(
        "import grader.judge.properties as properties\n"
        "first = grade_folder(SOLUTION, None, max_examples=4, processes=2)\n"
        "properties.given = None  # hypothesis cannot be used any more\n"
        "again = grade_folder(SOLUTION, None, max_examples=4, processes=1)\n"
        "print(json.dumps([[first.score, first.max_score], [again.score], len(forks)]))\n"
    )
    assert forked == 1
    assert again[0] == first[0] == first[1]


def test_only_runs_json_gives_back_exactly_are_exported(fresh_judge):
    from llm_pack.checks.ex3_1 import CHECKS

    replay.since_fork()
    replay.record(CHECKS[0], ("a",), [{"n": 1}])
    replay.record(CHECKS[0], ("b",), [{"shape": (1, 2)}])  # a tuple would come back a list
    assert replay.exported() == [{"key": ["a"], "examples": [{"n": 1}]}]


def test_only_plain_examples_of_the_same_check_are_recorded(fresh_judge):
    from llm_pack.checks.ex3_1 import CHECKS

    check = CHECKS[0]
    twin = dataclasses.replace(check, run=lambda worker, ex: None)  # another check, same name
    key = ("name", "3.1", 0, 8)
    replay.record(check, key, [{"n": 1, "rates": [0.1, 0.2]}, None])
    assert replay.recorded(check, key) == [{"n": 1, "rates": [0.1, 0.2]}, None]
    assert replay.recorded(twin, key) is None
    replay.record(check, ("other",), [{"x": object()}])
    assert replay.recorded(check, ("other",)) is None
    memo.forget_all()
    assert replay.recorded(check, key) is None


def test_answering_gives_back_the_outcomes_then_runs_the_body():
    calls = []
    failure = ValueError("third")
    test = replay.answering(
        calls.append, [{"i": 0}, {"i": 1}, {"i": 2}], replay.Diverged(2, failure), lambda ex: None
    )
    test({"i": 0})
    test({"i": 1})
    with pytest.raises(ValueError) as raised:
        test({"i": 2})
    assert raised.value is failure and calls == []
    test({"i": 7})  # shrinking: the body runs
    assert calls == [{"i": 7}]


def test_an_unexpected_example_ends_the_answering():
    calls = []
    test = replay.answering(
        calls.append, [{"i": 0}, {"i": 1}], replay.Diverged(1, ValueError()), lambda ex: None
    )
    test({"i": 5})
    test({"i": 1})
    assert calls == [{"i": 5}, {"i": 1}]
