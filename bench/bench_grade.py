"""Benchmark: a cold ``grade`` as a student runs it, as ratios to ``import torch``.

Each command runs as a new process (cold: a fresh interpreter, a fresh fork server), right
after a bare ``python -c "import torch"`` in the same venv, and its time is divided by that
one: ratios hold when the machine's speed drifts. Rows: the solution, all six exercises; each
exercise alone (``-e``); the untouched stubs; two usage errors (absolute time, goal < 0.3 s).
Then the peak memory of one cold grade (summed PSS over its process tree) and a breakdown of
one cold grade (from ``GRADER_TIMINGS``): imports, worker start, and per exercise the judge's
compute, the worker's compute and the waiting between them.

    python bench/bench_grade.py [--runs 3] [--submission PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import ROOT, Series, run, torch_seconds  # noqa: E402

EXERCISES = ("3.1", "3.2", "3.3", "4.1", "4.2", "4.3")


def commands(python: str, submission: Path) -> list[tuple[str, list[str], str]]:
    grade = [python, "-m", "grader.commands.cli"]
    rows = [("grade, all six (solution)", [*grade, str(submission)], "<= 2.0x")]
    rows += [(f"grade -e {e}", [*grade, str(submission), "-e", e], "<= 1.3x") for e in EXERCISES]
    rows.append(("grade, untouched stubs", [*grade, str(ROOT)], "<= 1.5x"))
    rows.append(("usage: grade /nonexistent", [*grade, "/nonexistent"], "< 0.3 s"))
    rows.append(("usage: grade SUB -e 9.9", [*grade, str(submission), "-e", "9.9"], "< 0.3 s"))
    return rows


def breakdown(python: str, submission: Path, env: dict | None = None) -> dict:
    """The ``GRADER_TIMINGS`` figures of one cold ``grade`` of ``submission``."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "timings.json"
        run(
            [python, "-m", "grader.commands.cli", str(submission)],
            env={**(env or {}), "GRADER_TIMINGS": str(path)},
        )
        return json.loads(path.read_text())


def print_breakdown(figures: dict) -> None:
    phases = figures["phases"]
    imports = phases.get("imports", 0.0)
    started = phases.get("workers_started", imports)
    graded = phases.get("graded", started)
    print("\nbreakdown of one cold grade (seconds since the grader's first import):")
    print(f"  imports (torch, hypothesis, checks)  {imports:6.3f}")
    print(f"  fork server ready, workers started   {started - imports:6.3f}")
    print(f"  grading, all exercises (wall)        {graded - started:6.3f}")
    print(f"  report                               {phases.get('reported', graded) - graded:6.3f}")
    print("  per exercise: total = student import + judge compute + worker compute + waiting")
    for ex_id, v in figures["exercises"].items():
        print(
            f"    {ex_id}  {v['total']:6.3f} = {v['student_import']:.3f} + "
            f"{v['judge_compute']:.3f} + {v['worker_compute']:.3f} + {v['waiting']:.3f}"
            f"   ({v['calls']} calls)"
        )


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--submission", type=Path, default=ROOT / "tests/submissions/solution")
    args = p.parse_args()
    python = sys.executable
    rows = commands(python, args.submission)
    series = {name: Series(name) for name, _, _ in rows}
    baseline = Series("python -c 'import torch'")
    torch_seconds(python)  # warm the page cache
    run(rows[0][1])
    for _ in range(args.runs):
        for name, cmd, _ in rows:
            base = torch_seconds(python)
            baseline.walls.append(base)
            series[name].add(run(cmd), base)
    memory = run(rows[0][1], memory=True)
    print(f"runs: {args.runs} of each, interleaved with import torch; medians, ratio per pair")
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}")
    print(f"{'import torch':<34} {statistics.median(baseline.walls):6.2f} s")
    for name, _, goal in rows:
        print(series[name].row(goal))
    if memory.peak_pss_mib is not None:
        print(
            f"peak memory of one cold grade (PSS, process tree): {memory.peak_pss_mib:.0f} MiB"
            "  (goal < 1536 MiB)"
        )
    print_breakdown(breakdown(python, args.submission))


if __name__ == "__main__":
    main()
