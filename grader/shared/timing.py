"""Where one grade's time goes, for ``bench/``: the judge's phases and each exercise's split
between judge compute, worker compute and waiting; and how long the process has run
(``since_start``: the time ``grade`` reports).

Off (and free) unless the environment variable ``GRADER_TIMINGS`` is set; ``grade`` then
writes the figures as JSON when it ends: to the file it names, or to stderr when it reads as a
switch (``1``, ``true``, ``yes``, ``on``, ``-``), not to a file named ``1``. Exercises graded in
forked judge processes send their figures back with their results (``snapshot`` / ``merge``).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

ENV = "GRADER_TIMINGS"
SWITCH = ("1", "true", "yes", "on", "-")  # values that turn it on rather than name a file
STARTED = time.perf_counter()  # when the grader was first imported (the process's start, near)
enabled = bool(os.environ.get(ENV))

_phases: dict[str, float] = defaultdict(float)
_exercises: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
_current: list[str] = [""]


def since_start() -> float:
    """Seconds since this process started: from the kernel's record of its start on Linux
    (the interpreter's own start-up included), else since the grader was first imported."""
    imported = time.perf_counter() - STARTED
    try:
        with open("/proc/self/stat", encoding="ascii") as f:
            fields = f.read().rsplit(")", 1)[1].split()  # after "pid (command name)"
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22: starttime, in ticks
        elapsed = time.clock_gettime(time.CLOCK_BOOTTIME) - started
    except (OSError, ValueError, IndexError, AttributeError):
        return imported
    return elapsed if elapsed >= imported else imported


def mark(phase: str) -> None:
    """Record that ``phase`` ended now (seconds since the grader was imported)."""
    if enabled:
        _phases[phase] = round(time.perf_counter() - STARTED, 4)


def add(name: str, seconds: float) -> None:
    """Add ``seconds`` to ``name`` for the exercise being graded in this process."""
    if enabled and _current[0]:
        _exercises[_current[0]][name] += seconds


@contextmanager
def exercise(exercise_id: str) -> Iterator[None]:
    """Attribute what happens inside to ``exercise_id``; records its wall time as ``total``."""
    if not enabled:
        yield
        return
    _current[0] = exercise_id
    began = time.perf_counter()
    try:
        yield
    finally:
        _exercises[exercise_id]["total"] += time.perf_counter() - began
        _current[0] = ""


def snapshot() -> dict:
    return {k: dict(v) for k, v in _exercises.items()}


def merge(figures: dict) -> None:
    for ex_id, values in figures.items():
        for name, seconds in values.items():
            _exercises[ex_id][name] += seconds


def write() -> None:
    """Write the figures where ``GRADER_TIMINGS`` says (module docstring), when it is set."""
    if not enabled:
        return
    exercises = {}
    for ex_id, v in sorted(_exercises.items()):
        in_calls = v.get("in_calls", 0.0)
        worker = v.get("worker_compute", 0.0)
        exercises[ex_id] = {
            "total": round(v.get("total", 0.0), 4),
            "student_import": round(v.get("student_import", 0.0), 4),
            "judge_compute": round(
                v.get("total", 0.0) - in_calls - v.get("student_import", 0.0), 4
            ),
            "worker_compute": round(worker, 4),
            "waiting": round(in_calls - worker, 4),
            "calls": int(v.get("calls", 0)),
        }
    figures = {"phases": dict(_phases), "exercises": exercises}
    target = os.environ[ENV]
    if target.strip().lower() in SWITCH:
        print(json.dumps(figures, indent=1), file=sys.stderr)
        return
    with open(target, "w", encoding="utf-8") as f:
        json.dump(figures, f, indent=1)
