"""Seeding torch the way the judge and the worker both do, before every example.

Both sides compute on the CPU only, so seeding torch's CPU generator is all that
``torch.manual_seed`` does that matters here, and the reproduce snippets' ``torch.manual_seed``
gives a student the same numbers. ``torch.manual_seed`` itself also queues lazy CUDA, XPU and
MTIA seeds, each with a formatted stack trace: about 0.15 ms a call, a tenth of a second over
one grade on the judge's side and as much again in the workers (measured with cProfile).

The CPU generator is one per process. A judge may grade from several threads at once (a
library caller's thread pool, several grades sharing one fork server), and a thread seeding it
between another thread's seeding and drawing gives that thread other weights, another input or
other dropout masks, so a wrong expected value and a right answer marked flaky. ``seeded``
therefore holds a process-wide lock from the seeding to the last draw that depends on it, and
judge code draws from the generator only inside ``seeded``: even a module built only to be
loaded with other weights draws, and would move another thread's stream. Inputs are best drawn
from a ``torch.Generator`` of their own, which no other thread touches.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import torch

_GENERATOR = threading.RLock()  # re-entrant: a seeded block may call code that seeds again


@contextmanager
def seeded(seed: int | None) -> Iterator[None]:
    """Run the block with torch's CPU generator seeded with ``seed`` (what
    ``torch.manual_seed(seed)`` does for the CPU) and no other thread drawing from it; with
    ``seed`` None, held but not seeded (the block's draws are thrown away, or left unseeded)."""
    with _GENERATOR:
        if seed is not None:
            torch.default_generator.manual_seed(int(seed))
        yield
