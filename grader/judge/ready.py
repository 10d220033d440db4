"""Getting a process ready to judge: torch, the engine (hypothesis, the harness) and the checks
of the exercises it will grade, imported once with the garbage collector off and then frozen
(``grader.shared.heavyimports``), and torch held to one thread.

``grade``, the notebook's judge process and each judge process of ``grade batch`` start this
way. One thread: the judge's tensors are small, and the cores are its workers' (they come from
the fork server and keep torch's default thread count)."""

from __future__ import annotations

from grader.shared.heavyimports import heavy_imports
from grader.shared.registry import select


def ready_to_judge(exercise_ids: list[str] | None = None) -> None:
    """Import what judging ``exercise_ids`` (default: all six) needs; one torch thread."""
    with heavy_imports():
        import torch

        import grader.judge.engine  # noqa: F401  (hypothesis and the harness)
        from grader.judge.scoring import checks_for

        for exercise in select(exercise_ids):
            checks_for(exercise)
    torch.set_num_threads(1)
