"""Where a student's module first departs from the book's: the grader's fault localization
(``grader.pack.judge.localized``) with what this pack knows of its parts.

Used by the checks that compare a whole module's output with the reference's for the same
weights (4.3's logits and block, 3.2's and 3.3's attention modules against the book's classes
rebuilt from their weights). The book's weights are loaded under the student's names where a
model differs from the book's in names only (``under_student_names``); a part whose
own output differs gets the book's definition of its class as its hint (``PART_HINTS``); an
attention module whose parts agree and whose own forward differs is replayed with one step of
the book's forward changed (``attention_variants``), and the step that gives the student's
output is the cause.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager

import torch
from torch import nn

from grader.pack.judge import PART, Cause, Difference, Worker, under_student_names
from grader.pack.judge import localized as located
from llm_pack.checks.attention_variants import what_it_computes
from llm_pack.checks.dropout_places import dropout_in_another_place, dropout_of_another_rate

# What to compare in a part the trace found to differ, by its class: the book's own definition.
PART_HINTS = {
    "GELU": "compare your GELU with the book's tanh approximation, constant by constant: "
    "0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3))).",
    "LayerNorm": "the book's LayerNorm takes the mean and the biased variance (unbiased=False) "
    "over the last dimension, divides by sqrt(var + 1e-5), then applies scale and shift.",
}


def changed_step(found: Difference, part: nn.Module) -> Cause | None:
    """For an attention module whose own forward differs, the one changed step of the book's
    forward that gives the student's output (``attention_variants``); None otherwise."""
    if not found.own_forward or found.given is None or found.gave is None:
        return None
    variant = what_it_computes(part, found.given, found.gave)
    if variant is None:
        return None
    text = f"inside {found.where()}, {variant.text}"
    return Cause(f"forward:{found.reference}:{variant.key}", text, variant.hint, PART)


def localized(
    worker: Worker,
    reply: dict,
    reference: Callable[[], nn.Module],
    x: torch.Tensor,
    train: bool = False,
) -> AbstractContextManager[None]:
    """The grader's ``localized`` with this pack's names, changed steps and part hints
    (``train``: traced in train mode, for dropout rates of 0 and 1 only)."""
    return located(
        worker,
        reply,
        reference,
        x,
        names=under_student_names,
        explain=lambda found, part: (
            dropout_of_another_rate(found, part)
            or dropout_in_another_place(found, part)
            or changed_step(found, part)
        ),
        part_hints=PART_HINTS,
        train=train,
    )
