"""Results the report and format tests render: real ones (the solution and a mutant graded on
exercise 3.1, graded once per test session) and hand-made ones for the edge cases (every
status, hostile text, a huge message, characters XML cannot hold)."""

from __future__ import annotations

import functools
import shutil
import tempfile
from pathlib import Path

from support import CORPUS, SOLUTION, grade_folder, make_submission

from grader.result.schema import CheckResult, ExerciseResult, GradeResult

MUTANT = CORPUS / "ex3_1" / "wrong_reshape_not_transpose.py"
REAL_MAX_EXAMPLES = 4

# A student's exception message with everything a renderer must escape.
HOSTILE = (
    "<script>alert('x')</script> \"quoted\" & 'single' 100% done: a, b, c\n"
    "::error file=x.py::pwned\r\nthird line with `backticks` | pipe | $math$ *stars*"
)
CONTROL = "bell\x07 escape\x1b[31m nul\x00 end"
HUGE = "overflow " * 25_000  # 225,000 characters


@functools.cache
def real_results() -> dict[str, GradeResult]:
    """The solution and the reshape-not-transpose mutant, graded on 3.1 (once per session)."""
    scratch = Path(tempfile.mkdtemp(prefix="report-cases-"))
    try:
        mutant = make_submission(scratch / "mutant", {"3.1": MUTANT})
        return {
            "passing": grade_folder(SOLUTION, ["3.1"], max_examples=REAL_MAX_EXAMPLES),
            "failing": grade_folder(mutant, ["3.1"], max_examples=REAL_MAX_EXAMPLES),
        }
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _exercise(ex_id: str, title: str, status: str, checks: list[CheckResult]) -> ExerciseResult:
    return ExerciseResult(
        ex_id,
        title,
        sum(c.points for c in checks),
        sum(c.max_points for c in checks),
        status,
        checks,
    )


def edge_result() -> GradeResult:
    """One exercise in each status, with hostile, huge and control-character messages."""
    hostile = CheckResult(
        "outputs match, for any d_in: and d_out",
        0.0,
        5.0,
        False,
        f"your code raised ValueError: {HOSTILE} (in ex3_1_weight_transfer.py, line 7, in "
        "transfer_weights: sa_v1.W_query = bad)\nExpected: tensor([[1.0, 2.0],\n"
        "        [3.0, 4.0]])\nGot:      tensor([[0.0, 0.0],\n        [0.0, 0.0]])\n"
        "Hint: copy the weights <b>transposed</b>",
        {
            "cfg": {"emb_dim": 4, "qkv_bias": False, "note": HOSTILE},
            "x": "tensor([[0.5, 0.25]])",
            "shape": [2, 3],
            "seed": 0,
        },
        "import torch\nprint('```')  # a fence inside the snippet\n",
    )
    control = CheckResult("control characters", 0.0, 2.0, False, CONTROL, None, None)
    passed = CheckResult("sa_v2 is left unchanged", 3.0, 3.0, True, "passed")
    import_error = (
        "importing your file failed: your code raised NameError: name 'torhc' is not defined "
        "(in ex3_2_wrapper_2d.py, line 3, in <module>: import torhc)"
    )
    timeout_lost = "The call took longer than 10 s (time limit)"
    huge = CheckResult("total_params counts", 0.0, 4.0, False, HUGE + "\nHint: count", 7, None)
    exercises = [
        _exercise("3.1", "Weight transfer", "failed", [hostile, passed, control]),
        _exercise(
            "3.2",
            "Wrapper",
            "error",
            [
                CheckResult("context vectors are 2-D", 0.0, 6.0, False, import_error),
                CheckResult("arguments are honoured", 0.0, 4.0, False, import_error),
            ],
        ),
        _exercise(
            "3.3",
            "GPT-2 attention",
            "timeout",
            [
                CheckResult("works on any input", 0.0, 5.0, False, timeout_lost),
                CheckResult(
                    "is causal",
                    0.0,
                    5.0,
                    False,
                    "not run: the call took longer than 10 s (time limit)",
                ),
            ],
        ),
        _exercise(
            "4.1",
            "Parameter counts",
            "missing",
            [
                CheckResult(
                    "feedforward_params counts",
                    0.0,
                    5.0,
                    False,
                    "not submitted: exercises/ex4_1_parameter_counts.py was not found",
                ),
                CheckResult(
                    "attention_params counts",
                    0.0,
                    5.0,
                    False,
                    "not submitted: exercises/ex4_1_parameter_counts.py was not found",
                ),
            ],
        ),
        _exercise(
            "4.2",
            "Scaled configs",
            "failed",
            [
                huge,
                CheckResult("model_size_mb", 4.0, 4.0, True, "passed"),
                CheckResult("GPT2_CONFIGS", 0.0, 2.0, False, "GPT2_CONFIGS is missing 'xl'"),
            ],
        ),
        _exercise(
            "4.3",
            "Split dropout",
            "passed",
            [
                CheckResult("same state_dict keys", 10.0, 10.0, True, "passed"),
            ],
        ),
    ]
    return GradeResult(
        submission='student "<b>o\'brien</b>", 100%',
        score=sum(e.score for e in exercises),
        max_score=sum(e.max_score for e in exercises),
        grader_version="0.1.0",
        torch_version="2.13.0+cpu",
        seed=20241,
        duration_s=12.5,
        exercises=exercises,
    )


def all_results() -> dict[str, GradeResult]:
    return {**real_results(), "edge": edge_result()}


def solution_tree(dest: Path) -> Path:
    """A submission folder holding the solution's files (for file and line lookups)."""
    return make_submission(dest)
