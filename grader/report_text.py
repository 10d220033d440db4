"""The terminal report: a line per exercise, then each failed check with its evidence."""

from __future__ import annotations

import os
import sys
from typing import TextIO

from grader.result import GradeResult

STATUS_COLOUR = {
    "passed": "32",
    "failed": "31",
    "error": "35",
    "timeout": "33",
    "missing": "90",
}


def use_colour(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def render(result: GradeResult, colour: bool = False, verbose: bool = False) -> str:
    def paint(text: str, code: str) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if colour else text

    lines = [f"Grading {result.submission}  (seed {result.seed})", ""]
    width = max(len(e.title) for e in result.exercises) if result.exercises else 0
    for ex in result.exercises:
        status = paint(f"{ex.status:<8}", STATUS_COLOUR[ex.status])
        lines.append(
            f"  {ex.id}  {ex.title:<{width}}  {ex.score:5.1f}/{ex.max_score:<4g}  {status}"
        )
    lines.append("")
    for ex in result.exercises:
        failed = [c for c in ex.checks if not c.passed]
        if not failed or ex.status == "missing":
            continue
        lines.append(paint(f"{ex.id} {ex.title}", "1"))
        shown_detail = False
        for c in failed:
            lines.append(f"  x {c.name}  ({c.points:g}/{c.max_points:g})")
            message, _, hint = c.message.partition("\nHint: ")
            if c.message.startswith("not run:") and not verbose:
                continue
            for line in message.splitlines():
                lines.append(f"      {line}")
            # The first failure of each exercise in full; the rest briefly unless -v.
            if verbose or not shown_detail:
                if c.counterexample is not None:
                    lines.append(f"      Counterexample: {c.counterexample}")
                if hint:
                    lines.append(paint(f"      Hint: {hint}", "36"))
                if c.reproduce:
                    lines.append("      Reproduce (paste into Python in your clone):")
                    lines += [f"        {line}" for line in c.reproduce.rstrip().splitlines()]
                shown_detail = True
        lines.append("")
    total = f"Score: {result.score:g}/{result.max_score:g}"
    passed = sum(ex.status == "passed" for ex in result.exercises)
    lines.append(
        paint(total, "1")
        + f"  ({passed} of {len(result.exercises)} exercises passed, {result.duration_s:.1f} s)"
    )
    if not verbose and any(
        not c.passed for ex in result.exercises for c in ex.checks[1:]
    ):
        lines.append("Run with -v for every failure's counterexample and snippet.")
    return "\n".join(lines) + "\n"


def write(result: GradeResult, stream: TextIO = sys.stdout, verbose: bool = False) -> None:
    stream.write(render(result, colour=use_colour(stream), verbose=verbose))
