"""What the benchmarks share: timing a whole command, and the peak memory of its process tree.

Times are wall-clock seconds of a whole process (as a user waits for it); CPU time is the user
and system time of the process and of every descendant that was reaped. Memory is the largest
sum, over one sample, of the proportional set size (PSS: shared pages split among the processes
that share them) of the command and every process below it, read from /proc every 20 ms; it is
``None`` where /proc has no ``smaps_rollup``. Only the standard library is used.
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass
class Run:
    wall_s: float
    peak_pss_mib: float | None
    returncode: int
    cpu_s: float = 0.0  # user + system time of the process and every descendant it waited for


def _children() -> dict[int, list[int]]:
    tree: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(b")") + 2 :].split()[1])
        tree.setdefault(ppid, []).append(int(entry.name))
    return tree


def tree_pids(root: int) -> list[int]:
    """``root`` and all its descendants."""
    tree, found, todo = _children(), [], [root]
    while todo:
        pid = todo.pop()
        found.append(pid)
        todo.extend(tree.get(pid, ()))
    return found


def tree_pss_kib(root: int) -> int | None:
    """The summed PSS of ``root`` and all its descendants, in KiB."""
    total, seen = 0, False
    for pid in tree_pids(root):
        try:
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                        seen = True
                        break
        except OSError:
            continue
    return total if seen else None


def run(cmd: Sequence[str], memory: bool = False, env: dict | None = None, **kw) -> Run:
    """Run ``cmd`` to its end, output discarded; sample its tree's PSS when ``memory``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(
        list(cmd),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=kw.pop("cwd", ROOT),
        env={**os.environ, **(env or {})},
        **kw,
    )
    peak: list[int | None] = [None]
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            kib = tree_pss_kib(proc.pid)
            if kib is not None and (peak[0] is None or kib > peak[0]):
                peak[0] = kib
            done.wait(0.02)

    sampler = threading.Thread(target=sample, daemon=True) if memory else None
    if sampler:
        sampler.start()
    code = proc.wait()
    wall = time.perf_counter() - start
    done.set()
    if sampler:
        sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Run(wall, None if peak[0] is None else peak[0] / 1024, code, cpu)


@dataclass
class Series:
    """Interleaved runs of one command next to the baseline's; ratios are taken pair by pair."""

    name: str
    walls: list[float] = field(default_factory=list)
    ratios: list[float] = field(default_factory=list)
    pss: list[float] = field(default_factory=list)

    def add(self, result: Run, baseline_s: float) -> None:
        self.walls.append(result.wall_s)
        self.ratios.append(result.wall_s / baseline_s)
        if result.peak_pss_mib is not None:
            self.pss.append(result.peak_pss_mib)

    def row(self, goal: str = "") -> str:
        w, r = statistics.median(self.walls), statistics.median(self.ratios)
        mem = f"{max(self.pss):7.0f} MiB" if self.pss else "        -  "
        spread = f"[{min(self.ratios):.2f}-{max(self.ratios):.2f}]"
        return f"{self.name:<34} {w:6.2f} s  {r:5.2f}x {spread:<13} {mem}  {goal}"


def torch_import(python: str) -> list[str]:
    return [python, "-c", "import torch"]


def torch_seconds(python: str) -> float:
    """Seconds a fresh ``python`` takes to ``import torch``: every benchmark's baseline. One
    that cannot import it stops the benchmark (a ratio to a failed import would be nonsense)."""
    result = run(torch_import(python))
    if result.returncode != 0:
        raise SystemExit(f"{python} cannot import torch: run the benchmark with the venv's python")
    return result.wall_s
