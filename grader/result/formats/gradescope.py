"""Gradescope's ``results.json`` (https://gradescope-autograders.readthedocs.io/en/latest/specs/):
one test per check with its points, the student-facing text in each test's ``output`` (what
run_autograder prints reaches instructors only), the overview in the top-level ``output``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TextIO

from grader.result.common import check_text, points, shared_problem
from grader.result.schema import COURSE_SEED_TEXT, GradeResult

OUTPUT_FORMAT = "text"  # shown verbatim, whitespace kept: the snippets stay runnable


def results(result: GradeResult) -> dict:
    """The results.json document of ``result``."""
    from grader.result import report_text

    tests = []
    for ex in result.exercises:
        problem = shared_problem(ex)
        for i, check in enumerate(ex.checks, 1):
            if check.passed:
                output = "Passed."
            elif problem is not None:
                output = check_text(check, reproduce=False)
            else:
                output = check_text(check)
            tests.append(
                {
                    "name": f"{ex.id} {check.name}",
                    "number": f"{ex.id}.{i}",
                    "score": check.points,
                    "max_score": check.max_points,
                    "status": "passed" if check.passed else "failed",
                    "output": output,
                    "output_format": OUTPUT_FORMAT,
                    "tags": [f"exercise {ex.id}", ex.status],
                    "visibility": "visible",
                }
            )
    return {
        "score": result.score,
        "execution_time": round(result.duration_s),
        "output": report_text.overview(result),
        "output_format": OUTPUT_FORMAT,
        "tests": tests,
        "extra_data": {
            "submission": result.submission,
            "max_score": points(result.max_score),
            "grader_version": result.grader_version,
            "torch_version": result.torch_version,
            "seed": COURSE_SEED_TEXT if result.seed_hidden else result.seed,
        },
    }


def emit(result: GradeResult, stream: TextIO, root: Path | None = None) -> None:
    """Write results.json to ``stream`` (``root``, the submission, is not needed here)."""
    try:  # characters as they are where the stream takes them, else escaped (still JSON)
        "\u2026\U0001f600".encode(getattr(stream, "encoding", None) or "utf-8")
        ascii_only = False
    except (UnicodeEncodeError, LookupError):
        ascii_only = True
    doc = json.dumps(results(result), indent=2, ensure_ascii=ascii_only, allow_nan=False)
    stream.write(doc + "\n")
