"""Worker-side probes: the only things a worker does with student code, one set per exercise.

Each probe calls into the student's module with inputs the judge built, and returns plain data
and tensors (see ``plain``). Probes never judge anything: every comparison is the judge's.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from grader.protocol import layers, wire
from grader.protocol.described import ModuleDescription
from grader.shared.torchseed import seeded
from grader.worker import truth
from grader.worker.trace import trace_kept as trace_kept
from grader.worker.trace import trace_module as trace_module

Probe = Callable[..., Any]


class NotPlainData(TypeError):
    """The student returned something other than plain data where plain data is expected; the
    message says, in the student's words, what came back and what is expected."""


PLAIN = "plain data (dicts, lists, tuples, strings, numbers, tensors)"


def _shape(t: torch.Tensor) -> str:
    try:
        return f"shape {tuple(t.shape)}"
    except Exception:
        return "shape unknown"


def _a(name: str) -> str:
    return ("an " if name[:1].lower() in "aeiou" else "a ") + name


def what_tensor_is_wrong(t: torch.Tensor) -> str | None:
    """Why tensor ``t`` cannot go back to the judge as it is, or None if it can."""
    kind = type(t)
    if kind is not torch.Tensor and kind is not nn.Parameter:
        return (
            f"{_a(kind.__name__)}, a subclass of torch.Tensor ({_shape(t)}): return a plain "
            "tensor (torch.Tensor)"
        )
    if t.layout is not torch.strided:
        return f"a {t.layout} tensor ({_shape(t)}): return a dense tensor (.to_dense())"
    if t.device.type == "meta":
        return f"a tensor on the meta device ({_shape(t)}), which holds no values"
    if t.dtype not in wire.dtypes().values():
        return f"a tensor of dtype {t.dtype} ({_shape(t)}): return float32 or another usual dtype"
    return None


def _refuse(where: str, what: str) -> NotPlainData:
    joiner = " " if where.endswith(" returned") else " is "
    return NotPlainData(where + joiner + what)


def _size(obj: Any) -> str:
    try:
        return f" of length {len(obj)}"
    except Exception:
        return ""


def plain(obj: Any, where: str = "the value", depth: int = 0) -> Any:
    """A copy of ``obj`` made only of dicts, lists, str, numbers, bools, None and CPU tensors.

    ``where`` names the value in the student's words ("your forward returned", a name the
    exercise asks for); anything else raises ``NotPlainData`` saying what came back and what is
    expected."""
    if depth > 20:
        raise _refuse(where, "nested too deeply: return " + PLAIN)
    if type(obj) is int:
        return _checkable(obj, where)
    if obj is None or type(obj) in (bool, float, str):
        return obj
    if isinstance(obj, torch.Tensor):
        wrong = what_tensor_is_wrong(obj)
        if wrong is not None:
            raise _refuse(where, wrong)
        return obj.detach().to("cpu").clone().contiguous()
    inner = where.removesuffix(" returned") + "'s output" if where.endswith(" returned") else where
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if type(k) is not str:
                raise _refuse(where, f"a dict with a key of type {type(k).__name__}, not str")
            out[k] = plain(v, f"{inner}[{k!r}]", depth + 1)
        return out
    if isinstance(obj, list | tuple):
        return [plain(v, f"{inner}[{i}]", depth + 1) for i, v in enumerate(obj)]
    if isinstance(obj, bool):
        return bool(obj)
    if isinstance(obj, float):
        return float(obj)
    if hasattr(type(obj), "__index__"):  # numpy and other integer types
        return _checkable(int(operator.index(obj)), where)
    raise _refuse(where, f"{_a(type(obj).__name__)}{_size(obj)}, not {PLAIN}")


def _checkable(n: int, where: str) -> int:
    """``n``, unless it is too large an int to check (``NotPlainData`` then says so)."""
    too_large = wire.int_too_large(n)
    if too_large is not None:
        raise _refuse(where, too_large)
    return n


def number(obj: Any, what: str) -> int | float | dict:
    """An int or float from a student's answer, or a description of what came instead."""
    if isinstance(obj, torch.Tensor) and obj.numel() == 1 and obj.device.type != "meta":
        obj = obj.item()
    if isinstance(obj, bool) or obj is None:
        return {"not_a_number": type(obj).__name__, "repr": repr(obj)[:100]}
    if isinstance(obj, int | float):
        return float(obj) if isinstance(obj, float) else _checkable(int(obj), f"{what} returned")
    if hasattr(type(obj), "__index__"):
        return _checkable(int(operator.index(obj)), f"{what} returned")
    if hasattr(type(obj), "__float__"):
        return float(obj)
    return {"not_a_number": type(obj).__name__, "repr": repr(obj)[:100]}


def shape_of(value: Any, where: str) -> list[int] | None:
    """The shape of a state entry (None for an entry that is not a tensor), refused exactly as
    ``plain`` would refuse the entry itself."""
    if isinstance(value, torch.Tensor):
        wrong = what_tensor_is_wrong(value)
        if wrong is not None:
            raise _refuse(where, wrong)
        return list(value.shape)
    plain(value, where)
    return None


def describe_module(m: Any, values: bool = True, attrs: tuple[str, ...] = ()) -> ModuleDescription:
    """What the judge needs to rebuild a clean reference module from a student's module; with
    ``values`` false, the state's shapes ("shapes") instead of the state itself ("state"), for
    a judge that only checks the keys and shapes and runs the module where it is; ``attrs``:
    the module's attributes (numbers and bools only) that the pack's judge reads. Everything
    is read with ``grader.worker.truth``: what the module holds, not what its methods,
    properties or classes say (``state_dict``, ``named_parameters`` and ``requires_grad`` can be
    replaced by student code)."""
    if not truth.is_module(m):
        return {"is_module": False, "class": type(m).__name__}
    with truth.untouched():  # no mode or __torch_function__ the student left sees the reads
        return _described(m, values, attrs)


def _described(m: nn.Module, values: bool, attrs: tuple[str, ...]) -> ModuleDescription:
    """``describe_module``'s reads, for a module."""
    where = "your module's state_dict()[{!r}]"
    entries = [(k, truth.readable(v)) for k, v in truth.tensors(m).items()]
    described: ModuleDescription = {
        "is_module": True,
        "class": type(m).__name__,
        "class_module": type(m).__module__,
        "training": bool(truth.own(m, "training")),
    }
    if values:
        described["state"] = {k: plain(v, where.format(k)) for k, v in entries}
    else:
        described["shapes"] = {k: shape_of(v, where.format(k)) for k, v in entries}
    modules = truth.modules(m)
    described["parameters"] = {
        f"{prefix}{name}": truth.requires_grad(p)
        for prefix, sub in modules
        for name, p in truth.registry(sub, "_parameters")
        if truth.is_tensor(p)
    }
    described["buffers"] = [
        f"{prefix}{name}"
        for prefix, sub in modules
        for name, b in truth.registry(sub, "_buffers")
        if truth.is_tensor(b)
    ]
    described["dropouts"] = {
        prefix[:-1]: float(truth.own(sub, "p"))
        for prefix, sub in modules
        if truth.is_a(sub, nn.Dropout) and type(truth.own(sub, "p")) in (int, float)
    }
    described["attrs"] = {
        name: value for name in attrs if type(value := truth.value(m, name)) in (int, float, bool)
    }
    return described


def _keep(state: dict, obj: Any) -> int:
    """Keep ``obj`` (a module the student built) in the worker's ``state`` for later probes;
    the handle, a plain int, goes back to the judge."""
    handle = len(state)
    state[handle] = obj
    return handle


def _forward(module, state, handle: int, x: torch.Tensor, train: bool = False, seed: int = 0):
    """A probe: the kept module ``handle`` on ``x``, in train mode or eval mode, after
    ``torch.manual_seed(seed)``, without gradients; its output as plain data."""
    m = state[handle]
    m.train(train)
    with seeded(seed), torch.no_grad():
        return plain(m(x), "your forward returned")


def _load(module, state, handle: int, weights: dict):
    """Load judge-made weights into a kept module; report the keys it refused."""
    m = state[handle]
    result = m.load_state_dict(weights, strict=False)
    return {"missing": list(result.missing_keys), "unexpected": list(result.unexpected_keys)}


def _on_meta(fn_name: str) -> Probe:
    """A probe calling the student's ``fn_name(cfg)`` under the ``meta`` device (a model it
    builds allocates no memory); what it returned, as a number (``number``)."""

    def probe(module, state, cfg: dict):
        with torch.device("meta"):
            return number(getattr(module, fn_name)(dict(cfg)), fn_name)

    return probe


def answer_probes(
    function: str, build: dict[str, Callable[[Any], Any]] | None = None
) -> dict[str, Probe]:
    """The probe table of an exercise whose answer is the function ``function``: its one probe,
    ``"call"``, calls ``function`` with the judge's ``args`` (``[name, value]`` pairs, passed
    in order; the names in ``keywords`` by keyword), each value first rebuilt by ``build[name]``
    when it has a builder (a model the judge sent as plain data), after
    ``torch.manual_seed(seed)`` when the judge gives a seed; what it returned, as plain data.
    Judge side: ``grader.judge.declared.same_as_reference``."""
    builders = dict(build or {})

    def call(
        module, state, args: list, keywords: list | None = None, seed: int | None = None
    ) -> Any:
        named = set(keywords or ())
        values = [(n, builders[n](v) if n in builders else layers.built(v)) for n, v in args]
        positional = [v for n, v in values if n not in named]
        with seeded(seed):
            out = getattr(module, function)(*positional, **{n: v for n, v in values if n in named})
        return plain(out, f"{function} returned")

    return {"call": call}
