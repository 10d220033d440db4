"""Seeding torch the way the judge and the worker both do, before every example.

Both sides compute on the CPU only, so seeding torch's CPU generator is all that
``torch.manual_seed`` does that matters here, and the reproduce snippets' ``torch.manual_seed``
gives a student the same numbers. ``torch.manual_seed`` itself also queues lazy CUDA, XPU and
MTIA seeds, each with a formatted stack trace: about 0.15 ms a call, a tenth of a second over
one grade on the judge's side and as much again in the workers (measured with cProfile).
"""

from __future__ import annotations

import torch


def seed_torch(seed: int) -> None:
    """Seed torch's CPU generator (what ``torch.manual_seed(seed)`` does for the CPU)."""
    torch.default_generator.manual_seed(int(seed))
