"""A module's forward pass, submodule by submodule: what each part received and returned.

Worker side. ``trace_module`` runs a student's module on the judge's input in eval mode (or in
train mode, when the judge's dropout rates are 0 or 1 and a run is deterministic), under
``torch.no_grad``, with a hook before and after every submodule's forward (the module itself
included, under the name ``""``), and returns one entry per call, as plain data for the wire:

    {"name": "blocks.0.mlp.1",             # qualified name, as named_modules() gives it
     "class": "Activation",                # the class's name
     "args": 1,                            # positional and keyword arguments it was called with
     "input": tensor | None,               # its first tensor argument, as it was *before* the call
     "input_shape": [1, 3, 32] | None,
     "output": tensor | None,              # its output (the first tensor of a tuple or list)
     "output_shape": [1, 3, 32] | None}

Entries are in the order the calls **finish**: a module's parts come before the module itself,
so the first entry whose output differs from the reference's for the same input is the
innermost such part. A module called twice has two entries. Values are copies (an in-place
change later in the forward pass does not alter them); a tensor of more than
``max_elements`` values, or past the trace's ``budget``, keeps its shape and no values. The
judge compares (``grader.judge.localize``); nothing here judges.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

from grader.protocol import wire
from grader.shared.tensors import first_tensor
from grader.shared.torchseed import seeded

MAX_CALLS = 400
MAX_NAME = 500  # a submodule with a longer qualified name is not traced (the judge skips it)


def _sendable(t: Any) -> bool:
    return (
        type(t) in (torch.Tensor, nn.Parameter)
        and t.layout is torch.strided
        and t.device.type == "cpu"
        and t.dtype in wire.dtypes().values()
    )


class _Recorder:
    """The hooks' shared state: the calls not finished yet (a stack) and the finished ones."""

    def __init__(self, max_elements: int, budget: int):
        self.max_elements, self.budget = max_elements, budget
        self.pending: list[dict] = []
        self.calls: list[dict] = []

    def keep(self, t: Any) -> tuple[Any, list[int] | None]:
        """A copy of tensor ``t`` (or None when it is too big or not sendable) and its shape."""
        if not isinstance(t, torch.Tensor):
            return None, None
        try:
            shape = [int(n) for n in t.shape]
        except Exception:
            return None, None
        if not _sendable(t) or t.numel() > self.max_elements or t.numel() > self.budget:
            return None, shape
        self.budget -= t.numel()
        return t.detach().clone().contiguous(), shape

    def before(self, name: str, module: nn.Module, args: tuple, kwargs: dict) -> None:
        first = first_tensor(list(args) + list(kwargs.values()))
        value, shape = self.keep(first)
        self.pending.append(
            {
                "name": name,
                "class": type(module).__name__[:100],
                "args": len(args) + len(kwargs),
                "input": value,
                "input_shape": shape,
            }
        )

    def after(self, name: str, output: Any) -> None:
        # Calls nest, so the innermost pending call of this name is the one that finished.
        for i in range(len(self.pending) - 1, -1, -1):
            if self.pending[i]["name"] == name:
                entry = self.pending.pop(i)
                break
        else:
            return
        if len(self.calls) >= MAX_CALLS:
            return
        value, shape = self.keep(first_tensor(output))
        self.calls.append({**entry, "output": value, "output_shape": shape})


def trace_module(
    model: nn.Module,
    x: torch.Tensor,
    max_elements: int = 8192,
    budget: int = 1_000_000,
    train: bool = False,
) -> list[dict]:
    """Run ``model(x)`` in eval mode (``train``: in train mode after ``torch.manual_seed(0)``,
    for a judge whose dropout rates are 0 or 1; a dropout of another rate of the student's then
    draws the same masks on every run) without gradients, recording every
    submodule's call (see the module's docstring); the model is left in eval mode and without
    the trace's hooks."""
    recorder = _Recorder(max_elements, budget)
    handles = []
    try:
        for name, sub in model.named_modules():
            if len(name) > MAX_NAME:
                continue

            def pre(mod, args, kwargs, name=name):
                recorder.before(name, mod, args, kwargs)

            def post(mod, args, kwargs, output, name=name):
                recorder.after(name, output)

            handles.append(sub.register_forward_pre_hook(pre, with_kwargs=True))
            handles.append(sub.register_forward_hook(post, with_kwargs=True))
        model.train(train)
        state = torch.get_rng_state()  # the worker's later draws are as they were without it
        try:
            with seeded(0 if train else None), torch.no_grad():
                model(x)
        finally:
            torch.set_rng_state(state)
    finally:
        for handle in handles:
            handle.remove()
        model.eval()
    return recorder.calls


def trace_kept(
    module: Any, state: dict, handle: int, x: torch.Tensor, train: bool = False
) -> list[dict]:
    """A probe: the trace of the module the worker kept under ``handle`` (a build probe's
    ``_keep``), run on the judge's ``x`` (in train mode when the judge says ``train``)."""
    return trace_module(state[handle], x, train=train is True)
