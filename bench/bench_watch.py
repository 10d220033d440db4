"""Benchmark: ``grade --watch``, from a file's save to the new report on screen.

One ``grade --watch`` runs on a copy of the solution (and one on the same answers as a tagged
notebook). Each round saves each exercise file in turn with a new last line, and times from the
moment the file is written and closed to the moment the last line of the new report ("Graded
again: ...") arrives on the watcher's stdout. Before each save, a bare
``python -c "import torch"`` is timed in the same run, and the save's time is divided by it:
ratios hold when the machine's speed drifts. Goal: <= 1.3x. Only this repository and the
standard library are used.

    python bench/bench_watch.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import ROOT, torch_seconds  # noqa: E402

from grader.shared.registry import EXERCISES as REGISTRY  # noqa: E402

SOLUTION = ROOT / "tests" / "submissions" / "solution" / "exercises"
EXERCISES = {e.id: e.filename for e in REGISTRY}
GOAL = 1.3
WAIT_S = 300.0


class Watcher:
    """``grade PATH --watch`` with each stdout line stamped as it arrives."""

    def __init__(self, python: str, path: Path):
        self.proc = subprocess.Popen(
            [python, "-m", "grader.commands.cli", str(path), "--watch"],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=ROOT,
        )
        self.lines: queue.Queue[tuple[float, str]] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self.lines.put((time.perf_counter(), line))
        self.lines.put((time.perf_counter(), ""))

    def report_end(self, marker: str) -> tuple[float, str]:
        """When the line holding ``marker`` (the last of a report) arrived, and that line."""
        while True:
            at, line = self.lines.get(timeout=WAIT_S)
            if not line:
                raise SystemExit("grade --watch ended")
            if marker in line:
                return at, line

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGINT)  # Ctrl-C
        self.proc.wait(timeout=60)


def save(path: Path, text: str) -> float:
    """Write ``text`` to ``path`` as an editor saves it; the moment it is saved."""
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return time.perf_counter()


def notebook(cells: dict[str, str]) -> str:
    """A notebook with one tagged cell per exercise (nbformat 4, written by hand)."""
    doc = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3"}},
        "cells": [
            {
                "cell_type": "code",
                "id": f"cell-{n}",
                "metadata": {"tags": [f"exercise-{ex_id}"]},
                "execution_count": None,
                "outputs": [],
                "source": code,
            }
            for n, (ex_id, code) in enumerate(cells.items())
        ],
    }
    return json.dumps(doc, indent=1)


def measure(
    python: str, path: Path, saves: list[tuple[str, Path, str]], runs: int
) -> dict[str, list[tuple[float, float]]]:
    """For each (label, file, text) save: (seconds from save to report, ratio of that to the
    ``import torch`` timed just before), one pair per run."""
    figures: dict[str, list[tuple[float, float]]] = {label: [] for label, _, _ in saves}
    watcher = Watcher(python, path)
    try:
        watcher.report_end("Watching ")  # the first grade (cold) is not timed
        for n in range(runs):
            for label, file, text in saves:
                base = torch_seconds(python)
                saved = save(file, text.replace("SAVE_MARK", f"{n}-{label}"))
                shown, line = watcher.report_end("Graded again")
                if label.split()[-1] not in line:
                    raise SystemExit(f"expected {label} graded again, got: {line.strip()}")
                figures[label].append((shown - saved, (shown - saved) / base))
    finally:
        watcher.stop()
    return figures


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    python = sys.executable
    torch_seconds(python)  # warm the page cache
    figures: dict[str, list[tuple[float, float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "submission"
        shutil.copytree(SOLUTION, folder / "exercises")
        folder_saves = [
            (
                f"folder, save {ex_id}",
                folder / "exercises" / name,
                (SOLUTION / name).read_text() + "\n# SAVE_MARK\n",
            )
            for ex_id, name in EXERCISES.items()
        ]
        figures.update(measure(python, folder, folder_saves, args.runs))
        code = {ex_id: (SOLUTION / name).read_text() for ex_id, name in EXERCISES.items()}
        work = Path(tmp) / "work.ipynb"
        work.write_text(notebook(code))
        changed = dict(code)
        # An edit the extraction keeps (it leaves out code the answer does not use).
        changed["4.1"] = code["4.1"].replace(
            "def attention_params(cfg):\n", "def attention_params(cfg):\n    'SAVE_MARK'\n"
        )
        nb_saves = [("notebook, edit 4.1", work, notebook(changed))]
        figures.update(measure(python, work, nb_saves, args.runs))
    base = statistics.median(w / r for pairs in figures.values() for w, r in pairs)
    print(f"runs: {args.runs} saves of each, each after an import torch; ratio per pair")
    print(f"machine: {os.cpu_count()} cores; python {sys.version.split()[0]}")
    print(f"{'import torch':<26} {base:6.2f} s")
    every = []
    for label, pairs in figures.items():
        ratios = [r for _, r in pairs]
        every += ratios
        print(
            f"{label:<26} {statistics.median(w for w, _ in pairs):6.2f} s  "
            f"{statistics.median(ratios):5.2f}x [{min(ratios):.2f}-{max(ratios):.2f}]"
            f"  goal <= {GOAL}x"
        )
    worst = max(statistics.median(r for _, r in pairs) for pairs in figures.values())
    print(f"all saves: median {statistics.median(every):.2f}x, worst row {worst:.2f}x")


if __name__ == "__main__":
    main()
