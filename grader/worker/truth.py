"""What a student's module really holds, read so that student code cannot redirect the read.

A probe that asks a student's object about itself (``m.state_dict()``, ``p.requires_grad``,
``getattr(m, name)``, ``isinstance(w, nn.Parameter)``) gets what the object, its class or
torch's classes say, and student code can change all of these: assign ``sa_v2.state_dict``, a
property ``nn.Parameter.requires_grad``, a ``__torch_function__`` or a torch function or
dispatch mode left active. The reads here go below them (docs/sandbox.md, "Checks read the
truth"):

- a module's own attributes come from its instance ``__dict__``, read with the getter
  ``nn.Module`` has for it (not ``getattr``, not ``object.__getattribute__``, which a class
  property of the same name would answer first); its parameters, buffers and submodules from
  the dicts ``nn.Module`` keeps them in, read with ``dict``'s own methods;
- a tensor's values and ``requires_grad`` come from ``torch._C.TensorBase``'s C methods and
  getters (a type student code cannot change), with torch functions and Python dispatch
  turned off, so no subclass or mode sees the read;
- whether a value is an ``nn.Parameter`` is read from its class's MRO.

Everything is captured when this module is imported (by the fork server, before any student
file runs) and bound in each function's defaults, so rebinding a global here, a builtin or an
attribute of torch later changes nothing these functions do; assigning their defaults or code
is seen by the tripwire (``grader.worker.tripwire``), as for every grader function.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import nn

_T = torch._C.TensorBase
_NO_FUNCTION = torch._C.DisableTorchFunction
_NO_DISPATCH = torch._C._DisableTorchDispatch
_INSTANCE_DICT = vars(nn.Module)["__dict__"].__get__
_MRO = vars(type)["__mro__"].__get__
_REQUIRES_GRAD = vars(_T)["requires_grad"].__get__  # the C getter, not a class's property
MAX_DEPTH = 32  # submodules nested deeper than this are not read (no answer nests so deep)
MAX_MODULES = 20_000  # nor more modules than this (GPT-2 XL has about 800): a module that
# holds itself twice would otherwise double the walk at every level


def is_a(obj: Any, cls: type, _type=type, _mro=_MRO) -> bool:
    """Whether ``obj``'s class is ``cls`` or derives from it, read from its MRO (``isinstance``
    asks the object's ``__class__`` and the class's metaclass, which student code can set)."""
    return cls in _mro(_type(obj))


def is_tensor(obj: Any, _is_a=is_a, _tensor=_T) -> bool:
    return _is_a(obj, _tensor)


def is_parameter(obj: Any, _is_a=is_a, _param=nn.Parameter) -> bool:
    return _is_a(obj, _param)


def is_module(obj: Any, _is_a=is_a, _module=nn.Module) -> bool:
    return _is_a(obj, _module)


class untouched:  # noqa: N801 - used as a context manager, like torch's own
    """Within it, no torch function (``__torch_function__``, a mode) and no Python dispatch
    (a ``TorchDispatchMode``) sees what torch does: reads and copies of a student's tensors
    made here give their values, whatever student code left active."""

    def __init__(self, _no_function=_NO_FUNCTION, _no_dispatch=_NO_DISPATCH) -> None:
        self._held = (_no_function(), _no_dispatch())

    def __enter__(self) -> None:
        for context in self._held:
            context.__enter__()

    def __exit__(self, *exc: object) -> None:
        for context in reversed(self._held):
            context.__exit__(None, None, None)


def detached(t: Any, _detach=_T.detach, _untouched=untouched) -> torch.Tensor:
    """A plain ``torch.Tensor`` over tensor ``t``'s values (no copy: ``plain`` makes the one
    copy a reply needs), made by torch's C method."""
    with _untouched():
        return _detach(t)


def requires_grad(t: Any, _get=_REQUIRES_GRAD, _untouched=untouched) -> bool:
    """Whether tensor ``t`` really requires gradients (not what its class's property says)."""
    with _untouched():
        return bool(_get(t))


def own(m: Any, name: str, _dict=_INSTANCE_DICT, _get=dict.get) -> Any:
    """The value module ``m`` holds under ``name`` in its own ``__dict__`` (None if none)."""
    return _get(_dict(m), name)


def own_names(m: Any, _dict=_INSTANCE_DICT, _type=type) -> list[str]:
    """The names in module ``m``'s own ``__dict__``."""
    return [k for k in _dict(m) if _type(k) is str]


def registry(
    m: Any, kind: str, _own=own, _type=type, _mro=_MRO, _dict_type=dict, _items=dict.items
) -> list[tuple[str, Any]]:
    """``(name, value)`` of what ``m`` registered as ``kind`` (``"_parameters"``, ``"_buffers"``,
    ``"_modules"``), read from the dict ``nn.Module`` keeps them in."""
    held = _own(m, kind)
    if held is None or _dict_type not in _mro(_type(held)):
        return []
    return [(k, v) for k, v in _items(held) if _type(k) is str]


def value(m: Any, name: str, _registry=registry, _own=own) -> Any:
    """What ``m.name`` gives for a module's parameter, buffer, submodule or plain attribute,
    found where ``nn.Module`` finds it (its registries first, then its ``__dict__``)."""
    for kind in ("_parameters", "_buffers", "_modules"):
        for key, held in _registry(m, kind):
            if key == name:
                return held
    return _own(m, name)


def modules(
    m: Any, _registry=registry, _is_module=is_module, _max=MAX_DEPTH, _most=MAX_MODULES
) -> list[tuple[str, Any]]:
    """``(prefix, module)`` of ``m`` and every submodule, in ``named_modules()``'s order
    (``""`` for ``m``, ``"blocks.0."`` for a part), as ``state_dict()`` walks them."""
    out: list[tuple[str, Any]] = []
    stack = [(m, "", 0)]
    while stack and len(out) < _most:
        module, prefix, depth = stack.pop()
        out.append((prefix, module))
        if depth < _max:
            subs = [(n, sub) for n, sub in _registry(module, "_modules") if _is_module(sub)]
            stack += [(sub, f"{prefix}{n}.", depth + 1) for n, sub in reversed(subs)]
    return out


def tensors(
    m: Any, _modules=modules, _registry=registry, _own=own, _is_tensor=is_tensor
) -> dict[str, Any]:
    """The tensors ``m.state_dict()`` holds for a module that does not override it (its own and
    its submodules' parameters and persistent buffers, under the same names): the tensors
    themselves, not copies."""
    out: dict[str, Any] = {}
    for prefix, module in _modules(m):
        skip = _own(module, "_non_persistent_buffers_set") or ()
        for kind in ("_parameters", "_buffers"):
            for name, t in _registry(module, kind):
                if _is_tensor(t) and not (kind == "_buffers" and name in skip):
                    out[prefix + name] = t
    return out


def readable(t: Any, _type=type, _plain=(torch.Tensor, nn.Parameter), _detached=detached) -> Any:
    """``t``'s values (``detached``) when ``t`` is a plain tensor or parameter; else ``t``
    itself, for ``plain`` to refuse in the student's words (a subclass, say)."""
    return _detached(t) if _type(t) in _plain else t


def state(m: Any, _tensors=tensors, _readable=readable) -> dict[str, Any]:
    """``tensors(m)`` as ``readable`` values: what ``m.state_dict()`` would give."""
    return {name: _readable(t) for name, t in _tensors(m).items()}


def load(
    m: Any,
    values: dict,
    _tensors=tensors,
    _detach=_T.detach,
    _copy=_T.copy_,
    _untouched=untouched,
) -> None:
    """Copy ``values`` (name -> tensor, as ``tensors`` names them) into ``m``'s own parameters
    and buffers, with torch's C method (``m.load_state_dict`` can be replaced)."""
    held = _tensors(m)
    with _untouched():
        for name, v in values.items():
            if name in held:
                _copy(_detach(held[name]), v)
