"""The inner loop (``bench/changed_tests.py``) chooses the tests of a change: a check's
exercise gets its whole corpus and the test files that import the check; the grader gets the
test files that import the changed module or are named after its folder, and a sample of the
corpus (each exercise's first wrong answer); the pack's hints every case that names a hint."""

from __future__ import annotations

import importlib.util

import pytest
from support import ROOT, corpus_cases


@pytest.fixture(scope="module")
def changed():
    spec = importlib.util.spec_from_file_location(
        "changed_tests", ROOT / "bench" / "changed_tests.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


CASES = corpus_cases()


def ids(exercise: str) -> list[str]:
    return [c.id for c in CASES if c.exercise_id == exercise]


def test_a_check_runs_its_exercise_s_whole_corpus_and_the_tests_that_import_it(changed):
    tests, cases = changed.select(["llm_pack/checks/ex4_3.py"], full_corpus=False)
    assert cases == ids("4.3")
    assert "tests/test_checks_ch4.py" in tests and "tests/test_intake_names.py" not in tests


def test_a_helper_of_some_checks_runs_the_corpus_of_the_exercises_using_it(changed):
    _, cases = changed.select(["llm_pack/checks/ex4_3_logits.py"], full_corpus=False)
    assert set(ids("4.3")) <= set(cases) and not set(ids("3.1")) & set(cases)


def test_a_corpus_file_runs_its_exercise_s_corpus(changed):
    tests, cases = changed.select(["tests/corpus/ex3_1/wrong_new.py"], full_corpus=False)
    assert (tests, cases) == ([], ids("3.1"))


def test_the_grader_runs_its_tests_and_one_wrong_answer_of_each_exercise(changed):
    tests, cases = changed.select(["grader/intake/files.py"], full_corpus=False)
    assert {"tests/test_intake_fuzz.py", "tests/test_intake_refusals.py"} <= set(tests)
    first_wrong = {
        e: next(c.id for c in CASES if c.exercise_id == e and not c.correct)
        for e in ("3.1", "3.2", "3.3", "4.1", "4.2", "4.3")
    }
    assert cases == list(first_wrong.values())
    _, everything = changed.select(["grader/intake/files.py"], full_corpus=True)
    assert everything == [c.id for c in CASES]


def test_the_pack_s_hints_run_every_case_that_names_a_hint(changed):
    _, cases = changed.select(["llm_pack/checks/hints.py"], full_corpus=False)
    named = [c.id for c in CASES if c.expect_hint or c.expect_no_hint]
    assert named and set(named) <= set(cases)


def test_a_changed_test_file_runs_and_a_document_runs_nothing(changed):
    assert changed.select(["tests/test_wire.py"], full_corpus=False) == (["tests/test_wire.py"], [])
    assert changed.select(["docs/batch.md"], full_corpus=False) == ([], [])
