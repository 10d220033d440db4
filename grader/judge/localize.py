"""Fault localization for module exercises: the first part of a student's module whose output
differs from the reference's for the same input it received.

The worker records a trace of the student's module (``grader.worker.trace``: one entry per
submodule call, in the order the calls finish, each with its first tensor input and its
output). Here, with the reference module holding the same weights, each traced call whose
submodule has a counterpart in the reference (same qualified name, or a name mapped by
``module_renames``) is replayed: the reference's part runs on the *student's* recorded input
and its output is compared with the student's recorded output. Because a part is fed what the
student's part received, a mistake upstream does not make the parts after it differ: the first
differing call is where the answer departs from the reference. Calls finish inner parts first,
so it is the innermost such part.

``first_difference`` returns a ``Difference`` (or None when every part agrees, or nothing could
be compared); its ``sentence()`` is the line a report shows, e.g. "the first difference is
inside blocks[0].mlp[1] (Activation): it gives 0.84101 for 1.0, the reference's gives
0.84134". The trace comes from a worker, so every entry is checked before it is used, and a
malformed one is skipped.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from grader.judge.renames import plain_shape
from grader.judge.wiring import describe
from grader.shared.tensors import first_tensor

RTOL, ATOL = 1e-4, 1e-5
MAX_ENTRIES = 1000  # calls read from a trace (the worker sends at most 400)
MAX_ELEMENTS = 1 << 16  # values in one recorded tensor (the worker keeps at most 8192)
SIZE_SLACK = 2  # a replayed input may hold this many times what the reference's part received
_INDEX = re.compile(r"\.(\d+)(?=\.|$)")
_NAME = re.compile(r"[\w.]{0,500}")  # a module name the report may show as it is


def display_name(name: str) -> str:
    """A qualified module name as Python spells the attribute path: ``blocks.0.mlp`` ->
    ``blocks[0].mlp``."""
    return _INDEX.sub(r"[\1]", name)


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _number(value: float, other: float) -> str:
    """``value`` with the fewest significant digits (4 to 9) that tell it from ``other``."""
    for digits in range(4, 10):
        text = f"{value:.{digits}g}"
        if text != f"{other:.{digits}g}":
            return text
    return f"{value:.9g}"


@dataclass(frozen=True)
class Difference:
    """Where the student's module first departs from the reference.

    ``name``: the student's qualified name of the part (``""``: the module itself); ``cls``:
    its class; ``call``: which call of it (1 for the first); ``own_forward``: the part has parts
    of its own that all agreed, so the difference is in how it combines them; either
    ``got_shape``/``expected_shape`` (the shapes differ) or the element with the largest
    difference: its ``index``, the ``input_value`` at that index (when input and output have one
    shape), ``got`` and ``expected``.
    """

    name: str
    cls: str
    call: int
    own_forward: bool
    got_shape: tuple[int, ...] | None = None
    expected_shape: tuple[int, ...] | None = None
    index: tuple[int, ...] | None = None
    input_value: float | None = None
    got: float | None = None
    expected: float | None = None
    # What the student's part received and returned, and the reference's name of the part: for
    # a pack to replay variants of the part's forward (not shown, not compared).
    given: torch.Tensor | None = field(default=None, repr=False, compare=False)
    gave: torch.Tensor | None = field(default=None, repr=False, compare=False)
    reference: str = ""
    # When ``own_forward``: what its forward passes to its parts or returns that the
    # reference's does not (``grader.judge.wiring``); "" when the evidence names nothing.
    wiring: str = ""

    def where(self) -> str:
        which = f", its {_ordinal(self.call)} call" if self.call > 1 else ""
        if not self.name:
            return f"your {self.cls} itself{which}"
        return f"{display_name(self.name)} ({self.cls}{which})"

    def sentence(self) -> str:
        """One line for the report."""
        head = f"the first difference is inside {self.where()}: "
        if self.got_shape is not None:
            body = (
                f"it returns shape {self.got_shape}, the reference's returns "
                f"{self.expected_shape} for the same input"
            )
        else:
            assert self.got is not None and self.expected is not None  # shapes agreed: values
            got, expected = float(self.got), float(self.expected)
            # The input at the same place says what a part applied element by element (an
            # activation, a norm) was given; a module of parts mixes places, so it is left out.
            leaf = self.input_value is not None and not self.own_forward
            given = f" for {self.input_value:.4g}" if leaf else ""
            at = "" if self.index is None else f" (element {list(self.index)})"
            body = (
                f"it gives {_number(got, expected)}{given}{at}, the reference's gives "
                f"{_number(expected, got)}"
            )
        if self.own_forward and self.wiring:
            body += (
                "; each of its parts gives the reference's output for what it receives, but in "
                f"its forward {self.wiring}"
            )
        elif self.own_forward:
            body += (
                "; each of its parts gives the reference's output for what it receives, so the "
                "difference is in its own forward (what it passes to them or how it combines "
                "their outputs)"
            )
        return head + body


def _reference_name(name: str, renames: dict[str, str]) -> str:
    """The reference's name for the student's ``name``: its longest renamed prefix replaced."""
    parts = name.split(".") if name else []
    for cut in range(len(parts), 0, -1):
        prefix = ".".join(parts[:cut])
        if prefix in renames:
            return ".".join([renames[prefix], *parts[cut:]])
    return name


def _entry(raw: Any) -> dict | None:
    """A trace entry, if it is one: a dict with a str name and class, an int count of
    arguments, tensors or None for the input and output, and shapes."""
    if not isinstance(raw, dict):
        return None
    name, cls, args = raw.get("name"), raw.get("class"), raw.get("args")
    inp, out = raw.get("input"), raw.get("output")
    if not (isinstance(name, str) and _NAME.fullmatch(name) and isinstance(cls, str)):
        return None
    tensors = [v for v in (inp, out) if v is not None]
    if type(args) is not int or not all(isinstance(v, torch.Tensor) for v in tensors):
        return None
    if any(
        type(v) is not torch.Tensor or v.layout is not torch.strided or v.is_complex()
        for v in tensors
    ):
        return None  # no reference part computes these: not comparable
    if any(v.numel() > MAX_ELEMENTS or v.dim() > 8 for v in tensors):
        return None
    return {
        "name": name,
        "class": re.sub(r"[^\w.]", "?", cls[:100]),  # the student's text, shown in the report
        "args": args,
        "input": inp,
        "output": out,
        "output_shape": plain_shape(raw.get("output_shape")),
    }


def _replay(part: nn.Module, inp: torch.Tensor) -> torch.Tensor | None:
    """The reference part's output for the student's recorded input (None when it cannot take
    it: the student's part was called with something the reference's never is)."""
    if inp.is_floating_point() and inp.dtype != torch.float32:
        inp = inp.float()
    try:
        with torch.no_grad():
            out = part(inp)
    except Exception:
        return None
    return first_tensor(out)


def _compare(entry: dict, expected: torch.Tensor, rtol: float, atol: float) -> dict | None:
    """What differs between the student's recorded output and ``expected`` (None: nothing)."""
    got = entry["output"]
    got_shape = tuple(got.shape) if got is not None else entry["output_shape"]
    if got_shape is not None and got_shape != tuple(expected.shape):
        return {"got_shape": got_shape, "expected_shape": tuple(expected.shape)}
    if got is None or not (got.is_floating_point() or expected.is_floating_point()):
        if got is not None and not torch.equal(got, expected.to(got.dtype)):
            return _largest(entry, got.double(), expected.double())
        return None
    got, want = got.double(), expected.double()
    if torch.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True):
        return None
    return _largest(entry, got, want)


def _largest(entry: dict, got: torch.Tensor, want: torch.Tensor) -> dict:
    diff = torch.nan_to_num((got - want).abs(), nan=float("inf"))
    flat = int(diff.reshape(-1).argmax()) if diff.numel() else 0
    index = tuple(int(i) for i in torch.unravel_index(torch.tensor(flat), got.shape))
    inp = entry["input"]
    value = None
    if inp is not None and tuple(inp.shape) == tuple(got.shape):
        value = float(inp[index]) if index else float(inp)
    return {
        "index": index or None,
        "input_value": value,
        "got": float(got[index]) if index else float(got),
        "expected": float(want[index]) if index else float(want),
    }


def first_difference(
    oracle: nn.Module,
    trace: Any,
    renames: dict[str, str] | None = None,
    rtol: float = RTOL,
    atol: float = ATOL,
    train: bool = False,
    sizes: dict[str, int] | None = None,
    deadline: float | None = None,
) -> Difference | None:
    """The first traced call (in the order calls finish: the innermost part first) whose output
    differs from what the reference's part of the same name gives for the same input; None when
    every call that can be compared agrees.

    ``oracle`` (the reference module) holds the same weights as the student's module and is put
    in eval mode, as the trace was run (``train``: both in train mode, for dropout rates of 0 or
    1 only, where a run is deterministic); ``trace`` is ``grader.worker.trace``'s list,
    from a worker;
    ``renames`` maps the student's module names to the reference's (``module_renames``). Only
    calls with one argument are replayed: the reference's part is called as ``part(input)``.
    The trace is the student's to shape, so its cost is bounded: with ``sizes`` (the number of
    values each reference part received on the same input), a call is replayed only on at most
    ``SIZE_SLACK`` times what the reference's part received; past ``deadline``
    (``time.monotonic()``), nothing more is replayed and None is returned.
    """
    if not isinstance(trace, list):
        return None
    renames = renames or {}
    oracle.train(train)
    parts = dict(oracle.named_modules())
    seen: list[str] = []
    agreed: list[str] = []  # the calls compared and equal
    unknown: list[str] = []  # the calls that could not be compared
    checked: list[dict] = []  # the entries read so far, in order
    for raw in trace[:MAX_ENTRIES]:
        if deadline is not None and time.monotonic() > deadline:
            return None
        entry = _entry(raw)
        if entry is None:
            continue
        checked.append(entry)
        name = entry["name"]
        call = seen.count(name) + 1
        seen.append(name)
        part = parts.get(_reference_name(name, renames))
        expected = None
        if part is not None and entry["args"] == 1 and entry["input"] is not None:
            if sizes is None or entry["input"].numel() <= SIZE_SLACK * sizes.get(
                _reference_name(name, renames), 0
            ):
                expected = _replay(part, entry["input"])
        if expected is None:
            unknown.append(name)
            continue
        found = _compare(entry, expected, rtol, atol)
        if found is None:
            agreed.append(name)
            continue
        inside = [n for n in agreed if _inside(n, name)]
        own = bool(inside) and not any(_inside(n, name) for n in unknown)
        wiring = ""
        if own and part is not None:  # ``part`` was replayed above: never None here
            # The entries that finished inside this call: after its previous call's.
            start = max((i + 1 for i, e in enumerate(checked[:-1]) if e["name"] == name), default=0)
            wiring = describe(
                checked[start:-1],
                name,
                entry["input"],
                entry["output"],
                part,
                lambda n: _reference_name(n, renames),
            )
        return Difference(
            name,
            entry["class"],
            call,
            own_forward=own,
            **found,
            given=entry["input"],
            gave=entry["output"],
            reference=_reference_name(name, renames),
            wiring=wiring,
        )
    return None


def _inside(part: str, module: str) -> bool:
    """Whether ``part`` names a submodule of ``module`` (``""``: the traced module itself)."""
    return part != module and (not module or part.startswith(module + "."))
