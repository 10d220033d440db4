"""Benchmark: the README's test command from a clean clone, as CI runs it (``.ci/run``).

Each run clones the repository's committed ``HEAD`` into a new folder (nothing installed, no
bytecode, no venv) and runs ``.ci/run`` there: a fresh venv, the README's ``pip install`` and
``python -m pytest -q``, mypy, the compatibility corners. It prints the whole run's wall time
(goal: under 15 min on the 2-core machine, the compatibility venvs cached), the time pytest
reported for the tests and its ratio to ``import torch`` timed right before and after in this
venv (goal: at most 120x). Uncommitted changes are not in the clone: commit first.

    python bench/bench_readme_command.py [--runs 1] [--keep]
"""

from __future__ import annotations

import argparse
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import ROOT, torch_seconds  # noqa: E402

GOAL_S = 900.0  # the whole .ci/run
GOAL_RATIO = 120  # the tests, to import torch


def minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {seconds % 60:04.1f} s"


def one_run(folder: Path) -> tuple[float, float | None, str]:
    """Clone ``HEAD`` into ``folder`` and run ``.ci/run`` there: (wall s, tests s, outcome)."""
    subprocess.run(["git", "clone", "-q", str(ROOT), str(folder)], check=True)
    began = time.perf_counter()
    proc = subprocess.run(
        ["bash", ".ci/run"], cwd=folder, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - began
    tail = proc.stdout.strip().splitlines()[-1:] or ["(no output)"]
    found = re.search(r"^\d+ passed.* in ([0-9.]+)s", proc.stdout, re.M)  # pytest's summary
    return wall, float(found[1]) if found else None, f"exit {proc.returncode}: {tail[0]}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=1)
    p.add_argument("--keep", action="store_true", help="keep the clones (their paths are printed)")
    args = p.parse_args()
    python = sys.executable
    torch_seconds(python)  # warm the page cache
    walls, ratios = [], []
    for i in range(args.runs):
        before = torch_seconds(python)
        folder = Path(tempfile.mkdtemp(prefix="bench-readme-")) / "clone"
        try:
            wall, tests, outcome = one_run(folder)
        finally:
            if not args.keep:
                shutil.rmtree(folder.parent, ignore_errors=True)
        torch_s = (before + torch_seconds(python)) / 2
        walls.append(wall)
        ratios.append((tests or float("nan")) / torch_s)
        split = (
            f"tests {minutes(tests)} = {tests / torch_s:.0f}x import torch" if tests else "no tests"
        )
        print(
            f"run {i + 1}: import torch {torch_s:.2f} s; .ci/run {minutes(wall)} ({split}); "
            f"{outcome}{f'; kept in {folder}' if args.keep else ''}"
        )
    goal = f"goals: .ci/run under {minutes(GOAL_S)}, tests <= {GOAL_RATIO}x import torch"
    if args.runs > 1:
        median, ratio = minutes(statistics.median(walls)), statistics.median(ratios)
        print(f"median of {args.runs}: {median} (tests {ratio:.0f}x import torch); {goal}")
    else:
        print(goal)


if __name__ == "__main__":
    main()
