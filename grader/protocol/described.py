"""What a worker says of a module it built (``grader.worker.probes.describe_module``,
``grader.worker.bounded.kept_within``) and the judge reads to rebuild, load or refuse it: one
type for both sides. A worker's frame is hostile (DESIGN §5.10): these say what a well-formed
description holds, and the judge still checks each field before it uses it (every key may be
missing, which ``total=False`` says)."""

from __future__ import annotations

from typing import Any, TypedDict

import torch


class TooBig(TypedDict, total=False):
    """A module over the judge's bound on its state, said in a few numbers."""

    state_bytes: int  # of its state_dict()'s tensors
    parameters: int  # how many values its parameters hold
    largest: list[list[Any]]  # its three largest parameters: [name, shape]
    parts: list[list[str]]  # its first parts: [name, class]


# A module as a worker describes it (``is_module`` false: anything else, named by ``class``).
# The functional form, as ``class`` is a keyword.
ModuleDescription = TypedDict(
    "ModuleDescription",
    {
        "is_module": bool,
        "class": str,  # its class's name
        "class_module": str,
        "training": bool,
        "state": dict[str, torch.Tensor],  # with values: state_dict(), as plain tensors
        "shapes": dict[str, list[int] | None],  # without values: each entry's shape (None:
        # an entry that is not a tensor)
        "parameters": dict[str, bool],  # every parameter, in the order created: requires_grad
        "buffers": list[str],
        "dropouts": dict[str, float],  # each nn.Dropout's rate, by its name
        "attrs": dict[str, int | float | bool],  # the attributes the pack asked for
        "too_big": TooBig,  # instead of the rest: a module over the bound (``kept_within``)
    },
    total=False,
)
