"""Benchmark: cold ``grade`` of the instructor solution against a bare ``import torch``.

Prints, as medians over interleaved runs: the wall time of ``python -c "import torch"``, of a
cold ``grade`` of all six exercises (a new process each time, as a student runs it), their
ratio (target: at most 2x), and each exercise's own time inside one warm judge process.

    python bench/bench_grade.py [--runs N] [--submission PATH]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def wall(cmd: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def per_exercise(submission: Path) -> list[tuple[str, float, float]]:
    from grader.judge import grade
    from grader.registry import EXERCISES
    from grader.submission import load_submission

    sub = load_submission(submission)
    grade(sub, ["3.1"])  # warm the judge (imports, fork server)
    rows = []
    for ex in EXERCISES:
        start = time.perf_counter()
        result = grade(sub, [ex.id])
        rows.append((ex.id, time.perf_counter() - start, result.score))
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--submission", type=Path, default=ROOT / "tests/submissions/solution")
    args = p.parse_args()

    torch_cmd = [sys.executable, "-c", "import torch"]
    grade_cmd = [sys.executable, "-m", "grader.cli", str(args.submission), "--format", "json"]
    wall(torch_cmd), wall(grade_cmd)  # warm the page cache
    torch_times, grade_times = [], []
    for _ in range(args.runs):
        torch_times.append(wall(torch_cmd))
        grade_times.append(wall(grade_cmd))
    t, g = statistics.median(torch_times), statistics.median(grade_times)
    print(f"runs: {args.runs} (medians; min-max in brackets)")
    print(f"import torch      {t:6.2f} s  [{min(torch_times):.2f}-{max(torch_times):.2f}]")
    print(f"cold grade (6 ex) {g:6.2f} s  [{min(grade_times):.2f}-{max(grade_times):.2f}]")
    print(f"ratio             {g / t:6.2f} x  (target <= 2.0)")
    print("\nper exercise, inside one warm judge:")
    for ex_id, seconds, score in per_exercise(args.submission):
        print(f"  {ex_id}  {seconds:6.3f} s  score {score:g}")


if __name__ == "__main__":
    main()
