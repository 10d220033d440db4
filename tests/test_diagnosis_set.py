"""The labeled set of real students' mistakes (``tests/diagnosis``) and its benchmark
(``bench/diagnosis.py``): every case says where its mistake was seen and which known cause it
has, with words that name it; graded, every case loses points and none gets ``error``.

The set has two halves (issue 56). On the working half the goals of issue 41 are asserted. The
held-out half (``tests/diagnosis/heldout``) is checked for its form and its verdicts only: the
share of first messages that name its causes is printed, not asserted, until the diagnosis
catches up; whoever changes the diagnosis does not open it (``tests/diagnosis/README.md``)."""

import importlib.util
import sys

import pytest
from support import ROOT

from grader.shared.registry import EXERCISES


def _bench():
    name = "bench_diagnosis"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, ROOT / "bench" / "diagnosis.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


BENCH = _bench()
CASES = BENCH.labeled_cases()
HELDOUT = BENCH.labeled_cases(BENCH.HELDOUT_DIR)
BOTH = CASES + HELDOUT


def test_the_set_is_large_and_varied():
    assert len(CASES) >= 30
    assert len({cause for c in CASES for cause in c.labels.causes}) >= 5
    assert {c.case.exercise_id for c in CASES} == {e.id for e in EXERCISES}
    assert all(not c.case.correct for c in CASES), "the labeled set holds wrong answers only"


def test_the_held_out_half_is_large_varied_and_apart():
    assert len(HELDOUT) >= 30
    assert len({cause for c in HELDOUT for cause in c.labels.causes}) >= 5
    assert {c.case.exercise_id for c in HELDOUT} == {e.id for e in EXERCISES}
    assert all(not c.case.correct for c in HELDOUT), "the held-out half holds wrong answers only"
    working = {c.case.path.read_text(encoding="utf-8") for c in CASES}
    copies = [c.id for c in HELDOUT if c.case.path.read_text(encoding="utf-8") in working]
    assert copies == [], "a held-out case repeats a working one"
    assert BENCH.HELDOUT_DIR.parent == BENCH.CASES_DIR
    assert all(BENCH.HELDOUT_DIR in c.case.path.parents for c in HELDOUT)
    assert not any(BENCH.HELDOUT_DIR in c.case.path.parents for c in CASES)


@pytest.mark.parametrize(
    "case", BOTH, ids=[c.id for c in CASES] + [f"heldout:{c.id}" for c in HELDOUT]
)
def test_headers_parse(case):
    labels = case.labels
    assert labels.seen_in, "a case says where its mistake was seen (# seen-in: ...)"
    assert labels.causes, "a case names its root cause (# cause: ...)"
    assert set(labels.causes) <= BENCH.CAUSES, f"unknown cause ids: {labels.causes}"
    assert labels.words and all(labels.words), "a case says which words name its cause"
    assert case.case.expect_failing, "a case keeps the verdict it gets (# expect-failing: ...)"


def test_reading_a_message():
    labels = BENCH.read_labels("# cause: transpose\n# cause-words: W_key, never\n# cause-words: T")
    assert labels.causes == ("transpose",)
    assert BENCH.names_cause(labels, "w_key was never copied")
    assert not BENCH.names_cause(labels, "W_key differs")
    assert BENCH.absent_causes(labels, "PyTorch stores its weight with shape (d_out, d_in)") == []
    assert BENCH.absent_causes(labels, "masks drawn in another order") == ["dropout-order"]


def test_the_report_gives_figures_per_kind_and_keeps_cases_back_on_request():
    def outcome(id, cause, named, status="failed"):
        return BENCH.CaseOutcome(id, (cause,), "seen", status, "0/10", named, f"first of {id}")

    measured = BENCH.Measurement(
        [
            outcome("4.1:wrong_a", "qkv-bias", True),
            outcome("4.1:wrong_b", "qkv-bias", False),
            outcome("4.3:wrong_c", "stateful", False, "error"),
        ]
    )
    kinds = BENCH.by_kind(measured)
    assert {kind: len(part.outcomes) for kind, part in kinds.items()} == {
        "qkv-bias": 2,
        "stateful": 1,
    }
    assert [len(part.errors) for part in kinds.values()] == [0, 1]
    full = BENCH.report_text(measured, BENCH.HELDOUT_DIR, "heldout")
    figures = BENCH.report_text(measured, BENCH.HELDOUT_DIR, "heldout", details=False)
    assert "heldout half: 3 cases" in figures and "1/3 = 33%" in figures
    assert "qkv-bias" in figures and "1/2 named" in figures and "0/1 named" in figures
    assert "wrong_b" in full and "first of 4.1:wrong_b" in full
    assert "wrong_" not in figures and "first of" not in figures


@pytest.mark.slow
def test_every_case_loses_points_and_its_first_message_names_its_cause():
    """The goals of issue 41 on the labeled set: every real mistake loses points and none is
    an error; at least 90% of first messages name the labeled cause; no hint names a cause the
    answer does not have; no Expected/Got pair reads the same."""
    results = BENCH.grade_all(CASES)
    measured = BENCH.measure(CASES, results)
    report = BENCH.report_text(measured)
    print("\n" + report)
    assert [o.id for o in measured.outcomes if not o.lost_points] == []
    assert [o.id for o in measured.errors] == []
    assert {o.id: o.header_problems for o in measured.outcomes if o.header_problems} == {}
    assert measured.share >= BENCH.GOAL_SHARE, report
    assert measured.absent_hints == 0, report
    assert measured.identical == 0, report


@pytest.mark.slow
def test_every_held_out_case_gets_the_verdict_its_label_says():
    """The held-out half: every case, a mistake, loses points, is not passed and fails the
    checks its header names. The four figures (first message names the cause, absent-cause
    hints, identical pairs, ``error`` verdicts) are printed by ``bench/diagnosis.py --half
    heldout``, not asserted here, until the diagnosis catches up (issue 56)."""
    results = BENCH.grade_all(HELDOUT)
    measured = BENCH.measure(HELDOUT, results)
    print("\n" + BENCH.report_text(measured, BENCH.HELDOUT_DIR, "heldout"))
    assert [o.id for o in measured.outcomes if not o.lost_points] == []
    assert {o.id: o.status for o in measured.outcomes if o.status == "passed"} == {}
    assert {o.id: o.header_problems for o in measured.outcomes if o.header_problems} == {}
