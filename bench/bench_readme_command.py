"""Benchmark: the README's test command from a clean clone, as CI runs it (``.ci/run``).

Each run clones the repository's committed ``HEAD`` into a new folder (nothing installed, no
bytecode, no venv) and runs ``.ci/run`` there: a fresh venv, the README's ``pip install`` and
``python -m pytest -q``, mypy, the compatibility corners, the Windows check. It prints the whole
run's wall time, the part the Windows check took (its last line says; its Wine environment is
cached, about 5-8 minutes more from nothing), and the time pytest reported for the tests with
its ratio to ``import torch`` timed right before and after in this venv. The goals (issue 58):
``.ci/run`` less the Windows check under 15 min at the median of the runs, the tests at most
400x ``import torch``. Uncommitted changes are not in the clone: commit first.

    python bench/bench_readme_command.py [--runs 3] [--keep]
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

GOAL_S = 900.0  # .ci/run less the Windows check
GOAL_RATIO = 400  # the tests, to import torch
WINDOWS_LINE = re.compile(r"^windows: \d+ of \d+ scenarios .* in (\d+) s", re.M)


def minutes(seconds: float) -> str:
    return f"{int(seconds // 60)} min {seconds % 60:04.1f} s"


def one_run(folder: Path) -> tuple[float, float | None, float, str]:
    """Clone ``HEAD`` into ``folder`` and run ``.ci/run`` there: (wall s, tests s, the Windows
    check's s, outcome)."""
    subprocess.run(["git", "clone", "-q", str(ROOT), str(folder)], check=True)
    began = time.perf_counter()
    proc = subprocess.run(
        ["bash", ".ci/run"], cwd=folder, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - began
    log = Path(tempfile.gettempdir()) / f"{folder.parent.name}.log"  # kept: the clone is not
    log.write_text(proc.stdout + "\n--- stderr ---\n" + proc.stderr, encoding="utf-8")
    tail = proc.stdout.strip().splitlines()[-1:] or ["(no output)"]
    tail = [f"{tail[0]} (its output: {log})"] if proc.returncode else tail
    found = re.search(r"^\d+ passed.* in ([0-9.]+)s", proc.stdout, re.M)  # pytest's summary
    windows = WINDOWS_LINE.search(proc.stdout)
    tests = float(found[1]) if found else None
    return wall, tests, float(windows[1]) if windows else 0.0, f"exit {proc.returncode}: {tail[0]}"


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
            wall, tests, windows, outcome = one_run(folder)
        finally:
            if not args.keep:
                shutil.rmtree(folder.parent, ignore_errors=True)
        torch_s = (before + torch_seconds(python)) / 2
        walls.append(wall - windows)
        ratios.append((tests or float("nan")) / torch_s)
        split = (
            f"tests {minutes(tests)} = {tests / torch_s:.0f}x import torch" if tests else "no tests"
        )
        kept = f"; kept in {folder}" if args.keep else ""
        print(
            f"run {i + 1}: import torch {torch_s:.2f} s; .ci/run {minutes(wall)}, of which the "
            f"Windows check {minutes(windows)} ({split}); {outcome}{kept}"
        )
    goal = (
        f"goals: .ci/run less the Windows check under {minutes(GOAL_S)}, "
        f"tests <= {GOAL_RATIO}x import torch"
    )
    if args.runs > 1:
        median, ratio = minutes(statistics.median(walls)), statistics.median(ratios)
        print(
            f"median of {args.runs}: .ci/run less the Windows check {median} "
            f"(tests {ratio:.0f}x import torch); {goal}"
        )
    else:
        print(goal)


if __name__ == "__main__":
    main()
