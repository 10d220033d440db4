"""Modules that differ from the reference in names only, for any pack's module exercise.

A student's module whose blocks live in ``self.blocks`` where the reference's live in
``self.layers`` computes exactly what the reference computes, but the reference's weights do not
load into it by name. When the two lists of parameters match one to one, in order and shape
(``one_to_one``: a renamed attribute keeps the order in which the reference creates its
modules), the reference's weights load under the student's names (``under_student_names``,
a ``names`` for ``grader.pack.judge.localized``), the modules they sit in map to the
reference's (``module_renames``), and ``renamings`` says which names differ, in general
(``trf_blocks.* as transformer_blocks.*``), for a pack's message. A module that differs in
more than names (another shape, another count, another order) is loaded by name, and fails
where it differs.
"""

from __future__ import annotations

import re
from typing import Any

import torch

from grader.protocol.described import ModuleDescription

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


MAX_DIMS = 16  # a shape from a worker longer than this is no tensor's


def plain_shape(value: Any) -> tuple[int, ...] | None:
    """A tensor's shape as a worker sends it (a short list of ints), or None for anything
    else."""
    if isinstance(value, list) and len(value) <= MAX_DIMS and all(type(n) is int for n in value):
        return tuple(value)
    return None


def module_renames(parameter_names: dict[str, str]) -> dict[str, str]:
    """Student's module name -> the reference's, from a mapping of the reference's parameter
    names to the student's (for modules named differently but holding the same parameters in
    the same places): each pair of names, without its last part, names two modules, and so on
    up while both have parts left."""
    modules: dict[str, str] = {}
    for ref, mine in parameter_names.items():
        a, b = ref.split(".")[:-1], mine.split(".")[:-1]
        while a and b:
            modules.setdefault(".".join(b), ".".join(a))
            a, b = a[:-1], b[:-1]
    return modules


def student_parameters(description: ModuleDescription) -> list[Entry] | None:
    """The described module's parameters with their shapes, in the order it created them (None
    when the worker's description does not hold them as it should)."""
    params, shapes = description.get("parameters"), description.get("shapes")
    if not isinstance(params, dict) or not isinstance(shapes, dict):
        return None
    entries = [(name, plain_shape(shapes.get(name))) for name in params]
    if any(not isinstance(name, str) or shape is None for name, shape in entries):
        return None
    return entries


def under_student_names(
    weights: dict[str, torch.Tensor], description: ModuleDescription
) -> dict[str, torch.Tensor]:
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


def renamings(expected: dict[str, tuple[int, ...]], shapes: dict[str, Any]) -> list[str] | None:
    """What a state_dict (``shapes``: key -> shape, from a worker) renames of the reference's
    (``expected``: key -> shape, in order), each renaming said once in general (``renaming``),
    when the two differ in names only; None when they differ in more, or in nothing."""
    student = [(k, plain_shape(v)) for k, v in shapes.items()]  # None (no tensor) matches nothing
    mapping = one_to_one(list(expected.items()), student)
    if mapping is None:
        return None
    said = list(dict.fromkeys(renaming(a, b) for a, b in mapping.items() if a != b))
    return said or None
