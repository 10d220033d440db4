"""Getting a process ready to judge: torch, the engine (hypothesis, the harness) and the checks
of the exercises it will grade, imported once with the garbage collector off and then frozen
(``grader.shared.heavyimports``), and one thread.

``grade``, the notebook's judge process and each judge process of ``grade batch`` start this
way. One thread: the judge's tensors are small, and the cores are its workers' (they come from
the fork server and keep torch's default thread count). And no thread pool: a judge forks
(``grader.judge.parallel``, ``grader.batch.judges``), and a fork beside another thread could leave
a lock held forever in the child. Torch is held to one thread before it runs any operation, so
its OpenMP pool never starts; numpy's OpenBLAS (which torch imports) is told to use one thread
before it loads, so it starts no pool either (the judge never calls it: numpy only shows a
tensor's bytes). Workers do not inherit either setting: their environment is an allow-list
(``grader.protocol.boot.worker_environment``)."""

from __future__ import annotations

import os
import sys

from grader.shared.heavyimports import heavy_imports
from grader.shared.registry import select

# Read by OpenBLAS when it loads; it would otherwise start a thread per core but one.
ONE_BLAS_THREAD = ("OPENBLAS_NUM_THREADS", "1")


def ready_to_judge(exercise_ids: list[str] | None = None) -> None:
    """Import what judging ``exercise_ids`` (default: every exercise) needs; one thread."""
    if "numpy" not in sys.modules:  # once loaded, OpenBLAS has read its setting
        os.environ.setdefault(*ONE_BLAS_THREAD)
    with heavy_imports():
        import torch

        torch.set_num_threads(1)  # before any operation (the imports below run a few)

        import grader.judge.engine  # noqa: F401  (hypothesis and the harness)
        from grader.judge.scoring import checks_for

        for exercise in select(exercise_ids):
            checks_for(exercise)
