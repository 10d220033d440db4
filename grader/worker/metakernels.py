"""Shape-only kernels for three ops on PyTorch's ``meta`` device, installed in every worker.

A pack's probes may run student code under ``torch.device("meta")`` (to count a large model's
parameters without its memory). There, PyTorch computes ``triu`` (every causal mask),
``normal_`` (every embedding's initialisation) and ``uniform_`` (every ``nn.Linear``'s) through
its Python reference implementations, and ``normal_``'s first call imports ``torch._dynamo``
and sympy: about two seconds of imports in each worker (or in the fork server's start-up) and
up to a few milliseconds a call. On ``meta`` these ops have nothing
to compute (a tensor there has a shape and no values), so kernels that return a tensor of the
right shape serve exactly.

Registering them overrides kernels that torch itself registered from Python. Torch 2.13 and
later allow that by default (``Library.impl(..., allow_override=True)``); earlier releases
refuse it from the Python side only, through the module-level set ``torch.library._impls``, so
the key is taken out of that set first. Whatever the release, ``install`` then proves with a
probe on a meta tensor that the three kernels are the ones that run. If anything fails, the
worker keeps torch's own kernels (the same shapes, only slower) and ``install`` says why, once:
the grade is never lost to it.
"""

from __future__ import annotations

import inspect
import os
import warnings

OFF_VARIABLE = "GRADER_META_KERNELS"  # "off": keep torch's own kernels (the slower path)

_installed: tuple[str | None] | None = None  # (None,) when in use, (reason,) when not
_library = None
_ran: set[str] = set()  # which of our kernels ran (the probe reads it)


def _triu(self, diagonal: int = 0):
    import torch

    _ran.add("triu")
    return torch.empty(self.shape, dtype=self.dtype, device=self.device)


def _normal_(self, mean: float = 0.0, std: float = 1.0, *, generator=None):
    _ran.add("normal_")
    return self


def _uniform_(self, from_: float = 0.0, to: float = 1.0, *, generator=None):
    _ran.add("uniform_")
    return self


KERNELS = {"triu": _triu, "normal_": _normal_, "uniform_": _uniform_}


def _register(torch, library, name: str, kernel) -> None:
    if "allow_override" in inspect.signature(library.impl).parameters:
        library.impl(name, kernel, "Meta", allow_override=True)
        return
    # Before torch 2.13: the Python side refuses a second kernel for a key it has seen; the
    # dispatcher itself replaces the kernel (with a warning).
    registered = getattr(torch.library, "_impls", None)
    if isinstance(registered, set):
        registered.discard(f"aten/{name}/Meta")
    library.impl(name, kernel, "Meta")


def _probe(torch) -> str | None:
    _ran.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tensor = torch.empty(2, 3, device="meta")
        masked = tensor.triu(1)
        tensor.normal_()
        tensor.uniform_()
    missing = sorted(set(KERNELS) - _ran)
    _ran.clear()
    if missing:
        return "torch still runs its own kernels for " + ", ".join(missing)
    if masked.shape != tensor.shape or masked.device.type != "meta":
        return "the triu kernel returned a tensor of the wrong shape"
    return None


def install() -> str | None:
    """Register the kernels (once per process; forked workers inherit them). Returns None when
    they are in use, or a short reason why the worker keeps torch's own (slower) kernels."""
    global _installed, _library
    if _installed is not None:
        return _installed[0]
    import torch

    reason = None
    if os.environ.get(OFF_VARIABLE, "").strip().lower() == "off":
        reason = f"turned off by {OFF_VARIABLE}=off"
    else:
        try:
            with warnings.catch_warnings():  # "overriding a previously registered kernel"
                warnings.simplefilter("ignore")
                library = torch.library.Library("aten", "IMPL")
                for name, kernel in KERNELS.items():
                    _register(torch, library, name, kernel)
            _library = library
            reason = _probe(torch)
        except Exception as exc:  # noqa: BLE001 - any torch release's refusal: the slow path
            reason = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        if reason is not None and _library is not None:
            _uninstall()
    _installed = (reason,)
    return reason


def _uninstall() -> None:
    """Drop our registrations (torch's own kernels serve again)."""
    global _library
    library, _library = _library, None
    if library is None:
        return
    try:
        library._destroy()
    except Exception:  # noqa: BLE001 - nothing more to do: the probe says which kernels run
        pass
