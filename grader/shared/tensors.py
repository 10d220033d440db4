"""What both sides read of a module's call: its first tensor (a module may take or return a
tuple or list; the worker's trace records, and the judge replays and compares, its first
tensor)."""

from __future__ import annotations

from typing import Any

import torch


def first_tensor(value: Any) -> torch.Tensor | None:
    """``value`` when it is a tensor, else the first tensor of a tuple or list, else None."""
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, list | tuple):
        return next((item for item in value if isinstance(item, torch.Tensor)), None)
    return None
