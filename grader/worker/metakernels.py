"""Shape-only kernels for three ops on PyTorch's ``meta`` device, installed in every worker.

Exercises 4.1 and 4.2 run student code under ``torch.device("meta")``. There, PyTorch computes
``triu`` (every causal mask), ``normal_`` (every embedding's initialisation) and ``uniform_``
(every ``nn.Linear``'s) through its Python reference implementations, and ``normal_``'s first
call imports ``torch._dynamo`` and sympy: about two seconds of imports in each worker (or in the
fork server's start-up) and up to a few milliseconds a call. On ``meta`` these ops have nothing
to compute (a tensor there has a shape and no values), so kernels that return a tensor of the
right shape serve exactly.
"""

from __future__ import annotations

import warnings

_library = None


def _triu(self, diagonal: int = 0):
    import torch

    return torch.empty(self.shape, dtype=self.dtype, device=self.device)


def _normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None):
    return self


def _uniform_(self, from_: float = 0.0, to: float = 1.0, *, generator=None):
    return self


def install() -> None:
    """Register the kernels (once per process; forked workers inherit them)."""
    global _library
    if _library is not None:
        return
    import torch

    with warnings.catch_warnings():  # "overriding a previously registered kernel" is the point
        warnings.simplefilter("ignore")
        library = torch.library.Library("aten", "IMPL")
        library.impl("triu", _triu, "Meta")
        library.impl("normal_", _normal_, "Meta")
        library.impl("uniform_", _uniform_, "Meta")
    _library = library
