"""Benchmark: ``grader.check`` in a real Jupyter kernel, as ratios to ``import torch``.

Each figure is the wall time of one cell as a front end sees it (from the execute request to
the kernel's reply, through jupyter_client), divided by a bare ``python -c "import torch"``
timed right before it in the same run. The kernels run this repository's grader
(``PYTHONPATH``) with the instructor solution's cells already run, as a student's would.

- *first call, cold*: a new kernel, the answers run, then one cell
  ``import grader; grader.check("3.1")``: the judge process starts in that cell.
- *first call after a setup cell*: a new kernel whose first cell is ``import grader`` (as in
  the notebook ``grade notebook`` writes; it starts no process: the bench counts the kernel's
  child processes right after it), then the answers, then ``grader.check("3.1")``, which
  starts the judge process.
- *later calls*: the same kernel. Each exercise after its answer cell was edited and run
  again (graded again); ``check("3.1")`` with nothing changed and ``check_all()`` right after
  the six checks (results of unchanged code are kept by the judge process); ``check_all()``
  after all six answers were edited.

Last, the processes ``import grader`` started in the kernel (the goal is none), and the
memory the judge process costs (summed PSS of it, its fork server and the workers).

    python bench/bench_notebook_check.py [--runs 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from measure import ROOT, torch_seconds, tree_pss_kib  # noqa: E402

sys.path.insert(0, str(ROOT))
from grader.shared.registry import EXERCISES as ALL

SOLUTION = ROOT / "tests" / "submissions" / "solution" / "exercises"
TIMEOUT_S = 600

# A cell that prints how many processes the kernel has started that still run.
CHILDREN = """\
import glob as _glob, os as _os
_tasks = _glob.glob(f"/proc/{_os.getpid()}/task/*/children")
print(sum(len(open(_t).read().split()) for _t in _tasks))
"""


def answers() -> list[str]:
    """The instructor solution, one cell per exercise, in course order."""
    return [(SOLUTION / ex.filename).read_text(encoding="utf-8") for ex in ALL]


def edited(cell: str, name: str, edit: int) -> str:
    """``cell`` with an edit the grader sees (the judge process keeps the result of code that
    did not change since its last check, so only an edited answer is graded again)."""
    return f"{cell}\n{name} = {name}  # edit {edit}\n"


@contextmanager
def kernel():
    """A fresh python3 kernel running this repository's grader."""
    from jupyter_client.manager import KernelManager

    km = KernelManager(kernel_name="python3")
    km.start_kernel(
        env={**os.environ, "PYTHONPATH": str(ROOT)}, cwd=str(ROOT), stderr=subprocess.DEVNULL
    )
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=TIMEOUT_S)
        yield kc
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def execute(kc, code: str) -> tuple[float, list[dict]]:
    """Run ``code`` as a cell: its wall time, and its outputs (an error is fatal here)."""
    outputs: list[dict] = []

    def keep(msg: dict) -> None:
        if msg["msg_type"] in ("execute_result", "display_data", "stream", "error"):
            outputs.append(msg["content"])

    began = time.perf_counter()
    reply = kc.execute_interactive(code, timeout=TIMEOUT_S, output_hook=keep)
    wall = time.perf_counter() - began
    if reply["content"]["status"] != "ok":
        raise SystemExit(f"cell failed: {code!r}: {reply['content'].get('evalue')}")
    return wall, outputs


def timed_check(kc, code: str) -> float:
    """The wall time of a cell that must show a check result as HTML."""
    wall, outputs = execute(kc, code)
    if not any("text/html" in o.get("data", {}) for o in outputs):
        raise SystemExit(f"no HTML result from {code!r}: {outputs}")
    return wall


def baseline(python: str) -> float:
    return torch_seconds(python)


def one_run(
    python: str,
    figures: dict[str, list[tuple[float, float]]],
    memory: list[float],
    started: list[int],
) -> None:
    cells = answers()

    def note(name: str, wall: float, base: float) -> None:
        figures.setdefault(name, []).append((wall, wall / base))

    base = baseline(python)
    with kernel() as kc:
        for cell in cells:
            execute(kc, cell)
        note("first call, cold", timed_check(kc, 'import grader\ngrader.check("3.1")'), base)

    base = baseline(python)
    with kernel() as kc:
        execute(kc, "import grader")
        _, outputs = execute(kc, CHILDREN)
        started.append(int(outputs[0]["text"]))
        for cell in cells:
            execute(kc, cell)
        note("first call after a setup cell", timed_check(kc, 'grader.check("3.1")'), base)
        base = baseline(python)
        for edit, ex in enumerate(ALL, start=1):  # every answer edited, run, then checked
            execute(kc, edited(cells[edit - 1], ex.names[-1], edit))
            check = f'grader.check("{ex.id}")'
            note(f"later: check({ex.id!r}), answer edited", timed_check(kc, check), base)
        note("later: check('3.1') again, unchanged", timed_check(kc, 'grader.check("3.1")'), base)
        note("later: check_all() after the six", timed_check(kc, "grader.check_all()"), base)
        for edit, ex in enumerate(ALL, start=len(ALL) + 1):
            execute(kc, edited(cells[edit - len(ALL) - 1], ex.names[-1], edit))
        note("later: check_all(), all six edited", timed_check(kc, "grader.check_all()"), base)
        _, outputs = execute(kc, "print(grader.live.nbcheck.JUDGE._proc.pid)")
        kib = tree_pss_kib(int(outputs[0]["text"]))
        if kib is not None:
            memory.append(kib / 1024)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runs", type=int, default=3)
    args = p.parse_args()
    python = sys.executable
    figures: dict[str, list[tuple[float, float]]] = {}
    bases: list[float] = []
    memory: list[float] = []
    started: list[int] = []
    for _ in range(args.runs):
        bases.append(baseline(python))
        one_run(python, figures, memory, started)
    print(f"import torch: {statistics.median(bases):.2f} s (median of {len(bases)})")
    print(f"{'what':<38} {'wall':>7}  {'ratio':>6} {'[min-max]':<13} goal")
    for name, pairs in figures.items():
        walls = [w for w, _ in pairs]
        ratios = [r for _, r in pairs]
        goal = "<= 1.5x" if name.startswith("first") else "<= 0.5x"
        spread = f"[{min(ratios):.2f}-{max(ratios):.2f}]"
        print(
            f"{name:<38} {statistics.median(walls):5.2f} s  {statistics.median(ratios):5.2f}x "
            f"{spread:<13} {goal}"
        )
    print(f"processes started by `import grader` in a kernel: {max(started)} (goal: 0)")
    if memory:
        print(f"judge process, its fork server and workers (summed PSS): {max(memory):.0f} MiB")


if __name__ == "__main__":
    main()
