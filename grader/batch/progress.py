"""Progress of a batch: a tqdm bar (done/total, failures, ETA) on a terminal, else one plain
line per submission (for logs, CI and Slurm output files)."""

from __future__ import annotations

import shutil
import sys
from typing import TextIO

from grader.shared.csvtext import number


class Progress:
    def __init__(self, total: int, already: int = 0, stream: TextIO | None = None):
        self.stream = stream or sys.stdout
        self.total = total
        self.count = already
        self.failed = 0
        self.errors = 0
        self.bar = None
        if self.stream.isatty():
            from tqdm import tqdm

            class Bar(tqdm):
                # No monitor thread: the judges are forked from this process, which must then
                # run no other thread (grader.batch.judges); each submission updates the bar.
                monitor_interval = 0

            sized = shutil.get_terminal_size((0, 0)).columns > 0  # a pty may report 0x0
            self.bar = Bar(
                total=total,
                initial=already,
                unit="sub",
                file=self.stream,
                dynamic_ncols=sized,
                ncols=None if sized else 80,
                desc="grading",
                bar_format="{desc} {bar} {n_fmt}/{total_fmt} "
                "[{elapsed}<{remaining}, {rate_fmt}]{postfix}",
            )

    def update(self, name: str, status: str, score: float, max_score: float, reason: str) -> None:
        self.count += 1
        self.failed += status == "failed"
        self.errors += status == "error"
        if self.bar is not None:
            self.bar.set_postfix_str(f"failed {self.failed}, errors {self.errors}", refresh=False)
            self.bar.update(1)
            return
        width = len(str(self.total))
        line = (
            f"[{self.count:>{width}}/{self.total}] {name}: {number(score)}/{number(max_score)} "
            f"{status}"
        )
        if reason:
            line += f" ({reason})"
        print(line, file=self.stream, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
