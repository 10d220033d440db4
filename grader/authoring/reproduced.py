"""What ``grade check-pack`` asks of a graded wrong answer beyond its verdict: that every
failing check's reproduce snippet runs as a student pastes it, and that the mistake is not
caught only by a difference that reads like float noise.

A snippet is pasted into a fresh Python, the grader's own interpreter (``sys.executable``,
named in the problem it reports, not whichever ``python`` is first on ``PATH``;
``grader.authoring.pastes``) where ``grade`` ran, without ``GRADER_PACK``, with a time limit.
It must parse, and run to the failure it shows:
it ends normally (it printed the mismatch), or raises ``AssertionError`` or the exception the
check's message names ("your code raised TypeError: ..."). Anything else (``ImportError``,
``NameError``, a ``LookupError`` of an exercise it cannot find) is the snippet's own fault.

A wrong answer whose every failing check fails by a largest difference within ``NEAR`` times
the comparison's tolerance (``grader.judge.properties``: ``ATOL + RTOL * |expected|``) gets a
warning: another machine's float noise could let it pass.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from pathlib import Path

from grader.result.schema import NOT_DONE, ExerciseResult
from grader.shared.safetext import one_line

SNIPPET_TIMEOUT_S = 60.0
NEAR = 100  # a difference within this many tolerances reads like float noise
SHOWN = ("AssertionError",)  # what a snippet may raise to show a failure, besides the check's
LARGEST = re.compile(
    r"largest difference (?P<size>[-+0-9.eE]+)(?: at [^:]*)?: expected (?P<expected>[-+0-9.eE]+)"
)

Paste = Callable[..., object]  # PasteBox.run: (snippet, cwd, timeout) -> CompletedProcess


def raised(stderr: str) -> tuple[str, str] | None:
    """``(exception line, place)`` of the exception a ``python -c`` run ended with: the line
    after its last traceback (``NameError: name 'x' is not defined``) and the snippet's line
    it stopped at (``line 3 of the snippet``, or ``""``)."""
    lines = stderr.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith("Traceback (most recent")]
    if not starts:
        return None
    rest = lines[starts[-1] + 1 :]
    said = next((line for line in rest if line and not line[0].isspace()), None)
    if said is None:
        return None
    places = re.findall(r'File "<string>", line (\d+)', "\n".join(rest))
    return said, f"line {places[-1]} of the snippet" if places else ""


def snippet_problem(
    snippet: str, message: str, cwd: Path, paste: Paste, timeout: float = SNIPPET_TIMEOUT_S
) -> str | None:
    """Why ``snippet``, the reproduce snippet of a check that failed with ``message``, does
    not show that failure when pasted in ``cwd``; None when it does."""
    try:
        compile(snippet, "<snippet>", "exec")
    except SyntaxError as exc:
        return f"its snippet does not parse: {exc.msg} (line {exc.lineno} of the snippet)"
    proc = paste(snippet, cwd, timeout)
    code = getattr(proc, "returncode", 1)
    if code == 0:
        return None
    if code == -9:
        return f"its snippet did not finish within {timeout:g} s"
    found = raised(getattr(proc, "stderr", ""))
    if found is None:
        return f"its snippet exited with status {code} and no traceback"
    line, place = found
    kind = line.split(":", 1)[0].rsplit(".", 1)[-1].strip()
    if kind in SHOWN or re.search(rf"\b{re.escape(kind)}\b", message):
        return None
    if kind == "NotImplementedError" and message.startswith(NOT_DONE):
        return None
    where = f" at {place}" if place else ""
    return (
        f"its snippet stops{where} with {one_line(line, 160)}, not the failure it shows "
        f"(run with the grader's own Python, {sys.executable} -c '...', where grade ran: it "
        "must end by printing the mismatch or raise AssertionError or the exception the check "
        "reports)"
    )


def snippet_problems(
    exercise: ExerciseResult, cwd: Path, paste: Paste, timeout: float = SNIPPET_TIMEOUT_S
) -> list[str]:
    """``check name: problem`` for every failing check of ``exercise`` (a wrong answer's
    result) whose snippet does not show its failure. An exercise that ran out of time is
    left out: its snippet would only hang too."""
    if exercise.status == "timeout":
        return []
    found, seen = [], set()
    for check in exercise.checks:
        if check.passed or not check.reproduce or check.reproduce in seen:
            continue
        seen.add(check.reproduce)
        problem = snippet_problem(check.reproduce, check.message, cwd, paste, timeout)
        if problem:
            found.append(f"{check.name}: {problem}")
    return found


def near_noise(exercise: ExerciseResult) -> str | None:
    """A warning when every failing check of ``exercise`` (a wrong answer's result) fails only
    by a largest difference within ``NEAR`` times the tolerance; None otherwise."""
    from grader.judge.properties import ATOL, RTOL

    sizes = []
    for check in exercise.checks:
        if check.passed:
            continue
        match = LARGEST.search(check.message)
        if match is None:
            return None
        try:
            size, expected = float(match["size"]), float(match["expected"])
        except ValueError:
            return None
        tolerance = ATOL + RTOL * abs(expected)
        if size > NEAR * tolerance:
            return None
        sizes.append((size, tolerance))
    if not sizes:
        return None
    size, tolerance = max(sizes)
    return (
        f"caught only by a largest difference of {size:.4g}, within {NEAR}x the tolerance "
        f"({tolerance:.2g} there): float noise on another machine could let it pass; make "
        "the mistake show more (larger inputs, more steps)"
    )
