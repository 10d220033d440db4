"""The mutation testing of the checks (``bench/mutate.py``) keeps working: its mutants are valid
one-change modules, and the grader kills a fixed handful of 3.2's, the changed default dropout
among them (a hole before the default-dropout check existed)."""

from __future__ import annotations

import ast
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support import ROOT, TEST_MAX_EXAMPLES

from grader.shared.registry import BY_ID, EXERCISES

sys.path.insert(0, str(ROOT / "bench"))

import mutate  # noqa: E402
from mutants import Mutant, mutants  # noqa: E402

# The 3.2 mutants graded here, by description: every changed default, a swapped argument and a
# dropped return value.
GRADED_3_2 = (
    "the default of dropout removed",
    "0.0 -> 1.0",
    "0.0 -> -1.0",
    "0.0 -> 0.1",
    "arguments 3 and 4 swapped",
    "return None instead of",
)


def solution_mutants() -> st.SearchStrategy[Mutant]:
    """Any mutant of any of the six solutions."""
    every = [m for e in EXERCISES for m in mutate.exercise_mutants(e.id)]
    return st.sampled_from(every)


def small_functions() -> st.SearchStrategy[str]:
    """A small module: one function with a default, arithmetic, a comparison and a call."""
    names = st.sampled_from(["a", "b", "rate"])
    numbers = st.integers(min_value=0, max_value=9)
    return st.builds(
        lambda x, n, m, op: (
            f'"""Doc."""\nimport math\n\n\ndef f({x}, y={n}):\n'
            f'    """Doc."""\n    if {x} {op} y:\n        return math.pow({x} * {m}, y)\n'
            f"    return y.T\n"
        ),
        names,
        numbers,
        numbers,
        st.sampled_from(["<", "==", ">="]),
    )


@pytest.fixture(scope="module")
def graded_3_2() -> list[mutate.Verdict]:
    """The chosen 3.2 mutants, graded in this process as ``bench/mutate.py -e 3.2`` grades."""
    chosen = [
        (i, m)
        for i, m in enumerate(mutate.exercise_mutants("3.2"))
        if m.description.startswith(GRADED_3_2)
    ]
    jobs = [("3.2", BY_ID["3.2"].filename, i, m, None, TEST_MAX_EXAMPLES) for i, m in chosen]
    return mutate.run(jobs)


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(solution_mutants())
def test_a_mutant_is_a_valid_module_with_one_change(mutant):
    assert mutant.source != mutant.original
    compile(mutant.source, "<mutant>", "exec")
    assert mutant.diff().count("@@ ") == 1, mutant.diff()  # one change: one hunk


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(small_functions())
def test_docstrings_and_imports_are_never_mutated(source):
    for mutant in mutants(source):
        tree = ast.parse(mutant.source)
        assert ast.get_docstring(tree) == "Doc."
        assert isinstance(tree.body[1], ast.Import)
        functions = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        assert not functions or ast.get_docstring(functions[0]) == "Doc."


def test_the_operators_the_mutator_promises_are_found():
    kinds = {m.kind for e in EXERCISES for m in mutate.exercise_mutants(e.id)}
    assert kinds >= {"operator", "compare", "constant", "default", "transpose", "swap"}
    assert kinds >= {"keyword", "return", "statement"}
    found = {m.description for m in mutate.exercise_mutants("3.2")}
    assert all(any(d.startswith(prefix) for d in found) for prefix in GRADED_3_2)


def test_the_unmutated_solution_passes_as_the_mutants_are_graded():
    original = mutate.exercise_mutants("3.2")[0].original
    assert mutate.grade_source("3.2", original, max_examples=TEST_MAX_EXAMPLES) == ("passed", ())


def test_the_chosen_3_2_mutants_are_killed(graded_3_2):
    assert len(graded_3_2) == len(GRADED_3_2)
    survivors = [f"{v.description}\n{v.diff}" for v in graded_3_2 if not v.killed]
    assert not survivors, "\n".join(survivors)


def test_a_changed_default_dropout_is_killed_by_the_default_check(graded_3_2):
    defaults = [v for v in graded_3_2 if v.kind == "default"]
    assert len(defaults) == 4
    for verdict in defaults:
        assert any("called without dropout" in name for name in verdict.failing), verdict


def test_the_score_table_counts_killed_and_survived(graded_3_2):
    survivor = mutate.Verdict(
        "3.1", "x.py", 0, "constant", "1 -> 2", 3, False, "passed", (), 0.1, "d"
    )
    table = mutate.score_table([*graded_3_2, survivor], ["3.1", "3.2"])
    assert "| 3.1 | 1 | 0 | 1 | 0.0 % |" in table
    assert f"| 3.2 | {len(GRADED_3_2)} | {len(GRADED_3_2)} | 0 | 100.0 % |" in table
    assert "| total |" in table
    assert "x.py #0 line 3 [constant] 1 -> 2" in mutate.survivors_text([survivor])
