"""Exercise 4.3's models that differ from the book's in names only.

A ``GPTModel`` whose blocks live in ``self.transformer_blocks`` instead of the book's
``self.trf_blocks`` computes exactly what the book's computes, but the book's weights do not load
into it by name. The exercise asks for the book's names, and the state-dict keys check deducts
that, once, saying which names differ (``naming_only``). The behaviour checks load the book's
weights under the student's names (``under_student_names``) when the two lists of parameters
match one to one, in order and shape (``one_to_one``): a renamed attribute keeps the order in
which the book creates its modules. A model that differs in more than names (another shape,
another count, another order) is loaded by name as before, and fails where it differs.
``BOOK_WEIGHTS_SOURCE`` does the same in the reproduce snippets.
"""

from __future__ import annotations

import re
from typing import Any

import torch

Entry = tuple[str, tuple[int, ...] | None]  # a state-dict key and its shape (None: no tensor)


def one_to_one(reference: list[Entry], student: list[Entry]) -> dict[str, str] | None:
    """The student's name for each of the reference's keys, when the two lists have the same
    length and the same shapes in the same order, and the student's names are distinct; else
    None."""
    names = [name for name, _ in student]
    if len(reference) != len(student) or len(set(names)) != len(names):
        return None
    if any(a != b for (_, a), (_, b) in zip(reference, student, strict=True)):
        return None
    return {ref: mine for (ref, _), (mine, _) in zip(reference, student, strict=True)}


def _shape(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, list) and all(type(n) is int for n in value):
        return tuple(value)
    return None


def student_parameters(description: dict) -> list[Entry] | None:
    """The described module's parameters with their shapes, in the order it created them (None
    when the worker's description does not hold them as it should)."""
    params, shapes = description.get("parameters"), description.get("shapes")
    if not isinstance(params, dict) or not isinstance(shapes, dict):
        return None
    entries = [(name, _shape(shapes.get(name))) for name in params]
    if any(not isinstance(name, str) or shape is None for name, shape in entries):
        return None
    return entries


def under_student_names(weights: dict[str, torch.Tensor], description: dict) -> dict:
    """``weights`` (the reference's parameters, in its order) under the described module's own
    names, when those differ from the reference's in names only; else ``weights`` as they
    are (loaded by name)."""
    student = student_parameters(description)
    if student is None or set(weights) <= {name for name, _ in student}:
        return weights
    mapping = one_to_one([(k, tuple(v.shape)) for k, v in weights.items()], student)
    return weights if mapping is None else {mapping[k]: v for k, v in weights.items()}


# --- saying what was renamed --------------------------------------------------------------------

_INDEX = re.compile(r"^\d+$")


def _general(parts: list[str]) -> str:
    return ".".join("*" if _INDEX.match(p) else p for p in parts)


def renaming(ref: str, mine: str) -> str:
    """One key renamed, said in general: the parts that differ, between what the two keys share
    before and after them (indices as ``*``): ``trf_blocks.* as transformer_blocks.*``."""
    a, b = ref.split("."), mine.split(".")
    start = 0
    while start < min(len(a), len(b)) and a[start] == b[start]:
        start += 1
    end = 0
    while end < min(len(a), len(b)) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    prefix = _general(a[:start]) + "." if start else ""
    suffix = ".*" if end else ""
    old, new = _general(a[start : len(a) - end]), _general(b[start : len(b) - end])
    return f"{prefix}{old}{suffix} as {prefix}{new}{suffix}"


def naming_only(expected: dict[str, tuple[int, ...]], shapes: dict[str, Any]) -> str | None:
    """The keys check's message for a state_dict that differs from the reference's (``expected``,
    key -> shape, in order) in names only, or None when it differs in more."""
    student = [(k, _shape(v)) for k, v in shapes.items()]  # None (not a tensor) matches nothing
    mapping = one_to_one(list(expected.items()), student)
    if mapping is None:
        return None
    said = list(dict.fromkeys(renaming(a, b) for a, b in mapping.items() if a != b))
    if not said:
        return None
    names = ", ".join(said[:4]) + (f" and {len(said) - 4} more" if len(said) > 4 else "")
    return (
        f"your state_dict names {names}: the exercise asks for the book's names (a checkpoint "
        "of the book's model must load into yours). In everything else its keys match the "
        "book's one to one, in order and shape, so the other checks load the book's weights "
        "under your names"
    )


BOOK_WEIGHTS_SOURCE = """\
def book_weights(model, reference):
    # The reference's parameters (the causal masks stay your model's own), under your
    # model's names where these differ from the book's in names only (matched in order).
    weights, mine = dict(reference.named_parameters()), dict(model.named_parameters())
    shapes = [p.shape for p in mine.values()] == [w.shape for w in weights.values()]
    if not set(weights) <= set(mine) and shapes:
        weights = dict(zip(mine, weights.values()))
    return weights
"""
