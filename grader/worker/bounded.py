"""A module handed back within a bound on its size, for any pack's module exercise.

An honest wrong answer can be far bigger than any right one (a whole model in place of one of
its layers), its state more than a reply may carry. ``kept_within`` keeps a module and
describes it with its state (``describe_module``) only when its state is at most the judge's
bound; a module over it is not kept, and only its ``structure`` goes back (its parameter count,
largest parameters and first parts), which the judge turns into a failing check's message
(``grader.pack.judge.too_big``).
"""

from __future__ import annotations

import itertools
from typing import Any

import torch
from torch import nn

from grader.protocol.described import ModuleDescription, TooBig
from grader.worker.probes import _keep, describe_module, plain


def state_bytes(m: nn.Module) -> int:
    """The bytes of ``m``'s state_dict() tensors: what describing it with values would send."""
    return sum(
        v.numel() * v.element_size() for v in m.state_dict().values() if isinstance(v, torch.Tensor)
    )


def structure(m: nn.Module, size: int) -> TooBig:
    """A few numbers that say what a module is, however big: its state's ``size`` in bytes, its
    parameter count, its three largest parameters (name and shape) and its first parts (name
    and class)."""
    params = list(m.named_parameters())
    largest = sorted(params, key=lambda item: item[1].numel(), reverse=True)[:3]
    parts = [
        [name, type(child).__name__] for name, child in itertools.islice(m.named_children(), 8)
    ]
    said: TooBig = plain(
        {
            "state_bytes": size,
            "parameters": sum(p.numel() for _, p in params),
            "largest": [[name, list(p.shape)] for name, p in largest],
            "parts": parts,
        },
        "your module's structure",
    )
    return said


def kept_within(
    state: dict, m: Any, max_state_bytes: int | None, attrs: tuple[str, ...] = ()
) -> dict[str, int | None | ModuleDescription]:
    """The reply to a build: the module kept for later calls (its handle) and its description
    with its state; a module whose state is over ``max_state_bytes`` (the judge's bound) is not
    kept, and its description holds only its class and ``too_big``: its ``structure``."""
    if max_state_bytes is not None and isinstance(m, nn.Module):
        size = state_bytes(m)
        if size > max_state_bytes:
            refused: ModuleDescription = {
                "is_module": True,
                "class": type(m).__name__,
                "too_big": structure(m, size),
            }
            return {"handle": None, "module": refused}
    return {"handle": _keep(state, m), "module": describe_module(m, attrs=attrs)}
