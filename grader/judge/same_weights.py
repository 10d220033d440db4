"""Reference modules rebuilt from a student's weights, reused when the weights are equal.

A module exercise whose worker builds the student's module after ``torch.manual_seed`` and
describes it has the judge rebuild the reference's class from that description. Every answer
that builds the reference's module draws the same weights for the same example, so within one
judge process (a batch's judge, the notebook's, ``--watch``) the same rebuild and the same
reference outputs would be computed again for each submission (DESIGN §5.6). ``reused``
returns the module rebuilt before from an equal description, and ``expected`` the output that
module gave before for the same input.

Equal means equal: the same keys, dtypes and shapes, and every element the same
(``torch.equal``, never a hash), with the same dropout rates and attributes. Only a rebuild that
succeeded is kept. The modules kept are shared, read only, by the threads of a judge too:
callers set their mode under the generator's lock before each use and never change their
weights.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from grader.judge.memo import on_forget
from grader.protocol.described import ModuleDescription

ENTRIES = 32
MAX_BYTES = 64 * 2**20  # GPT-2 small's attention, weights and mask, is 13.6 MB

# Each kept rebuild, oldest first: (signature, state, module, bytes of the state's tensors).
_kept: OrderedDict[int, tuple[tuple, dict, nn.Module, int]] = OrderedDict()
_ids = itertools.count()
_outputs: weakref.WeakKeyDictionary[nn.Module, dict] = weakref.WeakKeyDictionary()
_lock = threading.Lock()  # the threads of one judge share what is kept; rebuilds run outside


def _forget() -> None:
    _kept.clear()
    _outputs.clear()


on_forget(_forget)


def _signature(kind: str, description: ModuleDescription) -> tuple:
    """What must match before the elements are compared: the rebuild, the keys with each
    tensor's dtype and shape, the dropout rates and the attributes."""
    state = description.get("state", {})
    entries = tuple(
        (k, str(v.dtype), tuple(v.shape)) if isinstance(v, torch.Tensor) else (k, repr(v))
        for k, v in state.items()
    )
    rates = tuple(sorted(description.get("dropouts", {}).items()))
    attrs = tuple(sorted(description.get("attrs", {}).items()))
    return kind, entries, rates, attrs


def _equal(a: dict, b: dict) -> bool:
    return all(
        torch.equal(v, b[k]) if isinstance(v, torch.Tensor) else v == b[k] for k, v in a.items()
    )


def _size(state: dict) -> int:
    return sum(v.nbytes for v in state.values() if isinstance(v, torch.Tensor))


def reused(
    kind: str, description: ModuleDescription, rebuild: Callable[[], nn.Module]
) -> nn.Module:
    """The module ``rebuild()`` made before from a description equal to ``description`` (the
    same ``kind`` of rebuild), or the one it makes now."""
    signature = _signature(kind, description)
    state = description.get("state", {})
    with _lock:
        for entry, (kept_signature, kept_state, module, _) in _kept.items():
            if kept_signature == signature and _equal(state, kept_state):
                _kept.move_to_end(entry)
                return module
    module = rebuild()
    size = _size(state)
    if size <= MAX_BYTES:
        with _lock:
            _kept[next(_ids)] = (signature, state, module, size)
            while len(_kept) > ENTRIES or sum(e[3] for e in _kept.values()) > MAX_BYTES:
                _kept.popitem(last=False)
    return module


def expected(module: nn.Module, key: Any, compute: Callable[[], torch.Tensor]) -> torch.Tensor:
    """``compute()``, the output of ``module`` for the input and mode ``key`` names, computed
    once per module (kept as long as the module is)."""
    with _lock:
        outputs = _outputs.setdefault(module, {})
        if key in outputs:
            return outputs[key]
    value = compute()
    with _lock:
        return outputs.setdefault(key, value)
