"""What a module's forward passes to its parts, told apart from the reference's: the evidence
behind "the difference is in its own forward" (``grader.judge.localize``).

When every part of a student's module gives the reference's output for what it receives and the
module's output still differs, the mistake is in the module's own forward: a part fed the wrong
tensor (``norm1`` where the reference's uses ``norm2``), a part never called, a shortcut added
to the wrong tensor. Here the tensors of one call of the module (its input, each direct part's
input and output, from the worker's trace) are named by where they come from: each part's input
and the module's output is matched, value for value, against the module's input, the inputs and
outputs of the parts that finished before it, and the sums (a shortcut) and differences of two
of those. The reference's module, run on the same input with the same weights, is named the
same way. Where a part's input (or the output) comes from somewhere in the student's module and
from somewhere else in the reference's, and no source is common to both, that is the sentence:
"att is given norm2's output, where the reference's is given norm1's output". Nothing is said
where either side cannot be named or the sources overlap (two tensors that happen to be equal),
nor of a part never called that returns what it is given (a dropout in eval mode) or whose
output the forward computes all the same: a wiring is claimed only from evidence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from grader.shared.tensors import first_tensor

MAX_PARTS = 16  # direct part calls looked at in one call of the module
MAX_SENTENCES = 2
# A trace comes from a worker: sums are tried only for tensors the size an honest trace sends
# (the worker keeps at most 8192 values), and at most this many pairs for one tensor.
MAX_SUM_ELEMENTS = 8192
MAX_PAIRS = 1024

# A source of a tensor: ("input",), ("in" | "out", part, call), ("twice", source), or
# ("sum" | "difference", source, source).
Source = tuple


@dataclass(frozen=True)
class Call:
    """One finished call of a direct part: its reference name, which call of it, what it was
    given and what it returned (None: not recorded)."""

    part: str
    number: int
    given: torch.Tensor | None
    gave: torch.Tensor | None


def _same(a: torch.Tensor | None, b: torch.Tensor | None) -> bool:
    return (
        a is not None
        and b is not None
        and a.shape == b.shape
        and a.dtype == b.dtype
        and bool(torch.equal(a, b))
    )


def _known(inp: torch.Tensor | None, calls: list[Call]) -> list[tuple[Source, torch.Tensor]]:
    known: list[tuple[Source, torch.Tensor]] = []
    if inp is not None:
        known.append((("input",), inp))
    for call in calls:
        for kind, value in (("in", call.given), ("out", call.gave)):
            if value is not None and value.is_floating_point():
                known.append(((kind, call.part, call.number), value))
    return known


def sources(value: torch.Tensor | None, inp: torch.Tensor | None, before: list[Call]) -> set:
    """Where ``value`` comes from: each known tensor equal to it, and each sum (a tensor added
    to itself, too) or difference of two known tensors equal to it (the module's input ``inp``
    and the calls that finished ``before``)."""
    if value is None:
        return set()
    known = _known(inp, before)
    found = {source for source, t in known if _same(value, t)}
    if not value.is_floating_point() or value.numel() > MAX_SUM_ELEMENTS:
        return found
    alike = [(s, t) for s, t in known if t.shape == value.shape and t.dtype == value.dtype]
    for a, x in alike:
        if bool(torch.equal(x + x, value)):
            found.add(("twice", a))
    pairs = [(p, q) for i, p in enumerate(alike) for q in alike[i + 1 :]][:MAX_PAIRS]
    for (a, x), (b, y) in pairs:
        if bool(torch.equal(x + y, value)):
            found.add(("sum", *sorted((a, b))))
        if bool(torch.equal(x - y, value)):
            found.add(("difference", a, b))
        if bool(torch.equal(y - x, value)):
            found.add(("difference", b, a))
    return found


def student_calls(entries: list[dict], module: str, renames: Callable[[str], str]) -> list[Call]:
    """The calls of ``module``'s direct parts in one call of it (the trace's entries that
    finished inside it, in order), under the reference's names: a part is direct when the
    reference's name for it is (``renames``: the student's name -> the reference's)."""
    base = renames(module)
    prefix = f"{base}." if base else ""
    calls: list[Call] = []
    numbers: dict[str, int] = {}
    for entry in entries:
        name = renames(entry["name"])
        part = name[len(prefix) :] if name.startswith(prefix) else ""
        if not part or "." in part or len(calls) >= MAX_PARTS:
            continue
        numbers[part] = numbers.get(part, 0) + 1
        calls.append(Call(part, numbers[part], entry["input"], entry["output"]))
    return calls


def reference_calls(part: nn.Module, inp: torch.Tensor) -> tuple[list[Call], Any] | None:
    """The calls of the reference module's direct parts when it runs on ``inp``, and its
    output (None when it cannot take ``inp``)."""
    calls: list[Call] = []
    pending: dict[str, list[torch.Tensor | None]] = {}
    numbers: dict[str, int] = {}
    handles = []

    def first(value: Any) -> torch.Tensor | None:
        tensor = first_tensor(value)
        return None if tensor is None else tensor.detach().clone()

    for name, child in part.named_children():

        def before(mod, args, kwargs, name=name):
            pending.setdefault(name, []).append(first([*args, *kwargs.values()]))

        def after(mod, args, kwargs, output, name=name):
            given = pending[name].pop() if pending.get(name) else None
            if len(calls) < MAX_PARTS:
                numbers[name] = numbers.get(name, 0) + 1
                calls.append(Call(name, numbers[name], given, first(output)))

        handles.append(child.register_forward_pre_hook(before, with_kwargs=True))
        handles.append(child.register_forward_hook(after, with_kwargs=True))
    try:
        with torch.no_grad():
            out = part(inp)
    except Exception:
        return None
    finally:
        for handle in handles:
            handle.remove()
    return calls, first(out)


def _label(source: Source, repeated: set[str]) -> str:
    if source[0] == "input":
        return "its input"
    if source[0] == "twice":
        return f"twice {_label(source[1], repeated)}"
    if source[0] == "difference":
        return f"{_label(source[1], repeated)} - {_label(source[2], repeated)}"
    if source[0] == "sum":  # a part's output first, then what it is added to
        a, b = sorted(source[1:], key=lambda s: (s[0] != "out", s[0] == "input"))
        return f"{_label(a, repeated)} + {_label(b, repeated)}"
    kind, part, number = source
    what = "output" if kind == "out" else "input"
    if part in repeated:
        return f"the {what} of {part}'s call {number}"
    return f"{part}'s {what}"


def _named(found: set, calls: list[Call], repeated: set[str]) -> str:
    """The one of several equal sources to name: the module's input first, then a single
    tensor, a tensor twice, a sum, a difference; an output before an input, and of those the
    latest call's (what the forward most likely used: an eval-mode dropout returns what it is
    given)."""
    when = {(c.part, c.number): i for i, c in enumerate(calls)}

    def rank(source: Source) -> tuple:
        if source[0] == "input":
            return (0, 0)
        if source[0] == "twice":
            return (2, *rank(source[1]))
        if source[0] in ("sum", "difference"):
            order = 3 if source[0] == "sum" else 4
            return (order, *sorted((rank(source[1]), rank(source[2]))))
        return (1, (0 if source[0] == "out" else 1) - when.get(source[1:], 0) * 2)

    return _label(min(found, key=rank), repeated)


def describe(
    entries: list[dict],
    module: str,
    given: torch.Tensor,
    gave: torch.Tensor | None,
    oracle: nn.Module,
    renames: Callable[[str], str],
) -> str:
    """The differences between what the student's ``module`` (one call of it: the trace's
    ``entries`` that finished inside it, its input ``given`` and output ``gave``) passes to its
    parts and returns, and what ``oracle`` (the reference's module, the same weights) does on
    the same input; "" when none is shown by the evidence."""
    ran = reference_calls(oracle, given)
    if ran is None:
        return ""
    theirs, their_output = ran
    mine = student_calls(entries, module, renames)
    repeated = {c.part for c in [*mine, *theirs] if c.number > 1}
    said: list[str] = []
    called = {c.part for c in mine}
    # A part that returns what it is given (a dropout in eval mode) changes nothing by not
    # being called, and one whose output the student's forward computes anyway (written out
    # with the part's weights) is not missing: neither is named for it.
    acting = {c.part for c in theirs if not _same(c.given, c.gave)}
    present = [t for _, t in _known(given, mine)] + ([gave] if gave is not None else [])
    for part in dict.fromkeys(c.part for c in theirs):
        outputs = [c.gave for c in theirs if c.part == part]
        computed = any(_same(out, t) for out in outputs for t in present)
        if called and part in acting - called and not computed and len(said) < MAX_SENTENCES:
            said.append(f"{part} is never called")
    for k, call in enumerate(theirs):
        if len(said) >= MAX_SENTENCES:
            break
        same = [i for i, c in enumerate(mine) if (c.part, c.number) == (call.part, call.number)]
        if not same:
            continue
        j = same[0]
        ours = sources(mine[j].given, given, mine[:j])
        want = sources(call.given, given, theirs[:k])
        if ours and want and not ours & want:
            said.append(
                f"{_name(call, repeated)} is given {_named(ours, mine, repeated)}, "
                f"where the reference's is given {_named(want, theirs, repeated)}"
            )
    if len(said) < MAX_SENTENCES:
        ours = sources(gave, given, mine)
        want = sources(their_output, given, theirs)
        if ours and want and not ours & want:
            said.append(
                f"it returns {_named(ours, mine, repeated)}, where the reference "
                f"returns {_named(want, theirs, repeated)}"
            )
    return "; ".join(said)


def _name(call: Call, repeated: set[str]) -> str:
    return f"{call.part} (call {call.number})" if call.part in repeated else call.part
