"""Hints chosen by the kind of failure, not by the check alone.

Every failure has a *kind*, a short tag set where the failure is found:

- ``not-done``: the student's code still raises ``NotImplementedError`` (or holds the stub's
  empty placeholder): never a hint, there is nothing to explain yet;
- ``raised:<Type>``: the student's code raised that exception;
- ``type:<Name>``: a value of the wrong type came back (``type:NoneType``: nothing was returned);
- ``shape`` / ``values``: a tensor with the wrong shape / the wrong values;
- ``count`` / ``count:<mistake>``: a wrong number, or one off by a known term (the causal mask
  buffer, the biases, the untied output head) or inexact;
- ``structure``: the module returned is not built like the reference's class;
- ``inconsistent``: the same input failed once and passed when run again;
- ``wrong``: anything else the check found wrong.

A check's own hint is about the kinds it lists (``Check.hint_kinds``; by default ``wrong``,
``shape``, ``values`` and ``count``, each with any detail after a colon). ``KNOWN`` holds the
hints that depend only on what went wrong, whatever the check. ``choose`` picks, in this order:
the check's hint for a kind it names exactly, a known hint, the check's hint for a family it
names, and else nothing: no hint is better than a misleading one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

NOT_DONE = "not-done"
WRONG = "wrong"
SHAPE = "shape"
VALUES = "values"
COUNT = "count"
STRUCTURE = "structure"
INCONSISTENT = "inconsistent"
OWN_KINDS: tuple[str, ...] = (WRONG, SHAPE, VALUES, COUNT)


# How PyTorch says that two tensors' shapes do not fit (copy_, matmul, broadcasting, view).
_SHAPE_ERROR = re.compile(
    r"broadcast shape|size mismatch|shape mismatch|the size of tensor|cannot be multiplied|"
    r"must match the size|is invalid for input of size",
    re.IGNORECASE,
)


def raised(info: dict) -> str:
    """The kind of a failure in which the student's code raised (``info`` from the worker):
    ``shape`` for PyTorch's errors about shapes that do not fit, which the check's own hint
    (about the shapes it handles) explains better than the exception's type."""
    kind = info.get("type") or "Exception"
    if kind == "RuntimeError" and _SHAPE_ERROR.search(str(info.get("message", ""))):
        return SHAPE
    return f"raised:{kind}"


def returned(type_name: str) -> str:
    """The kind of a failure in which a value of type ``type_name`` came back."""
    return f"type:{type_name}"


def count(mistake: str = "") -> str:
    """The kind of a wrong count: ``count``, or ``count:<mistake>`` for a known one."""
    return f"{COUNT}:{mistake}" if mistake else COUNT


@dataclass(frozen=True)
class Known:
    """A hint for one kind of failure, wherever it happens; ``pattern`` (a regular
    expression) narrows it to the failures whose message matches."""

    kind: str
    hint: str
    pattern: str = ""


KNOWN: tuple[Known, ...] = (
    Known(
        "raised:TypeError",
        "PyTorch only lets an nn.Parameter (or None) replace an nn.Parameter attribute of a "
        "module: assign nn.Parameter(tensor), or copy into the existing parameter in place "
        "under torch.no_grad() (e.g. module.weight.copy_(...)).",
        r"cannot assign .* as parameter",
    ),
    Known(
        "type:NoneType",
        "your function returned None: is a return statement missing?",
    ),
    Known(
        "type:Tensor",
        "return a plain Python number (an int for a count): sum(p.numel() for p in "
        "module.parameters()) is already one; a tensor's .item() gives one too.",
    ),
    Known(
        INCONSISTENT,
        "the grader calls your code many times, on inputs in any order: keep no state from "
        "one call to the next (a global counter, a cached result, a module changed in place) "
        "and draw no random numbers of your own without seeding them.",
    ),
    Known(
        STRUCTURE,
        "the grader rebuilds the reference's class from your module's state_dict() and "
        "attributes: return the reference's class itself (imported, not redefined) or an "
        "unchanged copy that keeps its attribute names and buffers.",
    ),
)


def _names(kinds: tuple[str, ...], kind: str, family: bool) -> bool:
    if not family:
        return kind in kinds
    return ":" in kind and kind.split(":", 1)[0] in kinds


def choose(
    kind: str,
    message: str,
    own_hint: str,
    own_kinds: tuple[str, ...] = OWN_KINDS,
    known: tuple[Known, ...] = (),
) -> str:
    """The hint for a failure of ``kind`` with ``message`` in a check whose own hint is
    ``own_hint`` about ``own_kinds`` and whose pack knows the mistakes ``known`` (tried before
    the grader's own); ``""`` when nothing fits."""
    if kind == NOT_DONE:
        return ""
    if _names(own_kinds, kind, family=False):
        return own_hint
    for one in (*known, *KNOWN):
        if one.kind == kind and (not one.pattern or re.search(one.pattern, message)):
            return one.hint
    return own_hint if _names(own_kinds, kind, family=True) else ""
