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
hints that depend only on what went wrong, whatever the check and whatever the pack: they name
no pack's classes, configs or code (a pack's own words for a kind go in its ``hints``, tried
first: ``Known``). ``choose`` picks, in this order:
the check's hint for a kind it names exactly, a known hint, the check's hint for a family it
names, and else nothing: no hint is better than a misleading one. A known hint with a pattern
the message matches comes first of all: the message is evidence for it.

An exception's own evidence comes first (``from_exception``): a ``KeyError`` raised on a line
that reads that key of a dict (``cfg["drop"]``) says which dict lacks which key, which code
reads it (the student's line, or the shared code's: a class imported unchanged), and the keys
of the example's dicts that look like it.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Any

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
        "return a plain Python number: a one-element tensor's .item() gives one.",
        r"should be an? (number|int|float)\b|not a number",
    ),
    Known(
        "type:list",
        "return a tensor: torch.tensor(values) makes one from a list of numbers, "
        "torch.stack(tensors) from a list of tensors of one shape.",
        r"should be a tensor, but it is list",
    ),
    Known(
        "type:tuple",
        "return a tensor: torch.tensor(values) makes one from a tuple of numbers, "
        "torch.stack(tensors) from a tuple of tensors of one shape.",
        r"should be a tensor, but it is tuple",
    ),
    Known(
        INCONSISTENT,
        "the grader calls your code many times, on inputs in any order: keep no state from "
        "one call to the next (a global counter, a cached result, a module changed in place) "
        "and draw no random numbers of your own without seeding them.",
    ),
    Known(
        STRUCTURE,
        "your module is not built as the statement asks: give it the parts, names and shapes "
        "the statement gives (print(your_module) and your_module.state_dict().keys() show what "
        "it has).",
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
    fitting = [
        one
        for one in (*known, *KNOWN)
        if one.kind == kind and (not one.pattern or re.search(one.pattern, message))
    ]
    evidence = [one for one in fitting if one.pattern]  # the message itself bears it out
    if evidence:
        return evidence[0].hint
    if _names(own_kinds, kind, family=False):
        return own_hint
    if fitting:
        return fitting[0].hint
    return own_hint if _names(own_kinds, kind, family=True) else ""


# A dict's missing key as KeyError says it: its repr, a plain string.
_MISSING_KEY = re.compile(r"""^(['"])([^'"\\]{1,80})\1$""")


def _dicts(value: Any, depth: int = 3) -> list[dict]:
    """The dicts in a JSON-like example, its own first (a few levels deep)."""
    if depth < 0:
        return []
    if isinstance(value, dict):
        return [value, *(d for v in value.values() for d in _dicts(v, depth - 1))]
    if isinstance(value, list):
        return [d for v in value[:20] for d in _dicts(v, depth - 1)]
    return []


def _like(key: str, example: Any) -> list[str]:
    """The keys of the example's dicts that lack ``key`` and look like it (``key_emb`` for
    ``key``, or close in spelling)."""
    for found in _dicts(example):
        keys = [k for k in found if isinstance(k, str)]
        if key in keys:
            continue
        near = [k for k in keys if k.startswith(key) or (len(k) > 3 and key.startswith(k))]
        near += difflib.get_close_matches(key, keys, n=3, cutoff=0.75)
        if near:
            return list(dict.fromkeys(near))[:4]
    return []


def _quoted(keys: list[str]) -> str:
    said = [repr(k) for k in keys]
    return said[0] if len(said) == 1 else f"{', '.join(said[:-1])} and {said[-1]}"


def _own_read(key: str, read: str, holder: str, like: list[str], frame: dict) -> str:
    """The hint for the student's own line ``read`` (``cfg['key']``) that raised: the dict the
    grader gave their code lacks ``key``, whatever their own config holds, so the fix is to read
    the key that dict has (``like``), never to add ``key`` to a config of theirs."""
    given = "the config your code was given" if holder == "your config" else holder
    where = f"in {frame['file']}, line {frame['line']}, in {frame['function']}"
    said = f"{given} has no {key!r}" + (f" (it has {_quoted(like)})" if like else "")
    prefixed = [k for k in like if k.startswith(key) or key.startswith(k)]
    one = prefixed if len(prefixed) == 1 else like if len(like) == 1 else []
    if one:
        fix = (
            f"Read {one[0]!r} there, the exercise's name for it, and give your own config "
            "that name too"
        )
    else:
        fix = f"Read a key {given} has there"
    return f"{said}: your code reads {read} ({where}). {fix}."


def missing_key(info: dict, example: Any = None) -> str:
    """The hint for a ``KeyError`` raised on a line that reads that key of a dict (the last of
    ``info``'s frames: the student's, or shared code's, whose file is a path ``pkg/mod.py``),
    with the keys like it in ``example`` (the counterexample); ``""`` for any other."""
    said = _MISSING_KEY.match(str(info.get("message", "")).strip())
    frames = info.get("frames") or []
    if info.get("type") != "KeyError" or not said or not frames:
        return ""
    key, frame = said.group(2), frames[-1]
    read = re.search(rf"""([A-Za-z_][\w.]*)\[\s*(['"]){re.escape(key)}\2\s*\]""", frame["code"])
    if read is None:
        return ""
    holder = "your config" if re.search(r"cfg|conf", read.group(1), re.I) else read.group(1)
    like = _like(key, example)
    lacks = f"{holder} has no {key!r}" + (f" (it has {_quoted(like)})" if like else "")
    if "/" not in frame["file"]:  # the student's own line
        return _own_read(key, read.group(0), holder, like, frame)
    owner, method = frame["function"].split(".")[0], "." in frame["function"]
    return (
        f"{lacks}: {frame['function']} at {frame['file']}, line {frame['line']} reads it. "
        f"That code is not in your files: use a {'class' if method else 'function'} of your "
        f"own that reads the keys {holder} has, instead of {owner}."
    )


def from_exception(info: dict, example: Any = None) -> str:
    """The hint that an exception's own evidence gives (the worker's ``info`` and the
    counterexample), before any hint chosen by kind; ``""`` when it gives none."""
    return missing_key(info, example)
