"""A PyTorch layer given to the student's code as an argument (``LinearWithLoRA(linear, rank,
alpha)`` wraps an ``nn.Linear``), sent to the worker as plain data and built there again: the
judge writes a few built-in ``torch.nn`` layers as their constructor's arguments
(``described``), the worker builds a fresh one from them (``built``), and the snippet writes the
same call (``source``). The layer's weights are not sent: the judge loads its own into the
student's module afterwards, as for every module check.

Only the layers named here travel so; anything else is refused with what to do instead (a
``build=`` function of the pack's probes).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch import nn

KEY = "torch.nn layer"  # the key of a described layer: a dict no argument of plain data holds


def _linear(layer: nn.Linear) -> tuple[list[Any], dict[str, Any]]:
    return [layer.in_features, layer.out_features], {"bias": layer.bias is not None}


def _embedding(layer: nn.Embedding) -> tuple[list[Any], dict[str, Any]]:
    return [layer.num_embeddings, layer.embedding_dim], {}


# Each layer's class name -> its constructor's arguments read back from a built one.
_ARGUMENTS: dict[str, Callable[[Any], tuple[list[Any], dict[str, Any]]]] = {
    "Linear": _linear,
    "Embedding": _embedding,
}


def _known(value: nn.Module) -> str | None:
    """The class name of ``value`` when it is one of the layers named here (the class of
    ``torch.nn`` itself, not a subclass); else None."""
    kind = type(value).__name__
    return kind if kind in _ARGUMENTS and type(value) is getattr(nn, kind, None) else None


def described(value: Any, name: str) -> Any:
    """``value`` as it goes to the worker: a built-in layer named here as its class and
    constructor's arguments, anything else as it is. ``TypeError`` for another module, naming
    the argument ``name``."""
    if not isinstance(value, nn.Module):
        return value
    kind = type(value).__name__
    if _known(value) is None:
        raise TypeError(
            f"the argument {name} is a {kind}: only a {' or '.join(_ARGUMENTS)} of torch.nn goes "
            "to the worker as it is; send another as plain data and rebuild it with "
            "module_probes(..., build={name: function}) in the pack's probes"
        )
    args, kwargs = _ARGUMENTS[kind](value)
    return {KEY: kind, "args": args, "kwargs": kwargs}


def is_described(value: Any) -> bool:
    return isinstance(value, dict) and value.get(KEY) in _ARGUMENTS


def built(value: Any) -> Any:
    """A layer the judge ``described``, built anew (its weights drawn as the layer draws them;
    the judge loads its own later); anything else as it is."""
    if not is_described(value):
        return value
    args, kwargs = value.get("args") or [], value.get("kwargs") or {}
    layer: nn.Module = getattr(nn, value[KEY])(*args, **kwargs)
    return layer


def source(value: nn.Module) -> str | None:
    """Python that builds ``value`` (a layer named here) the same way, or None."""
    kind = _known(value)
    if kind is None:
        return None
    args, kwargs = _ARGUMENTS[kind](value)
    parts = [repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"torch.nn.{kind}({', '.join(parts)})"


__all__ = ["KEY", "built", "described", "is_described", "source"]
