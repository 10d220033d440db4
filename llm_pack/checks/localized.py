"""Where a student's module first departs from the reference, said as the first line of a
failed check's message (``grader.judge.localize``).

Used by the checks that compare a whole module's output with the reference's for the same
weights (4.3's logits and block, 3.2's and 3.3's attention modules against the book's classes
rebuilt from their weights). Only once such a check has failed, the worker traces the student's
module (the ``trace`` probe, ``grader.worker.trace``) in eval mode on a small part of the
failing input (one sequence, at most ``MAX_TOKENS`` tokens), and the judge replays each traced
part of the reference on what the student's part received. A train-mode check that fails
because of a part that is wrong in eval mode too (a GELU) names that part; a dropout in the
wrong place shows in no eval-mode trace, and its message stays as it was. A correct answer
never gets here, so its grading is no slower.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import torch
from torch import nn

from grader.pack.judge import (
    ATOL,
    PART,
    RTOL,
    Cause,
    CheckFailed,
    Difference,
    StudentError,
    Worker,
    first_difference,
    module_renames,
)
from llm_pack.checks.attention_variants import what_it_computes
from llm_pack.checks.renames import under_student_names

MAX_TOKENS = 8

# The kind of a failure whose first difference is a part's own output (a GELU, a LayerNorm): the
# sentence names the cause with its evidence, so no hint is chosen for it (a check's own hint,
# "dropout must do nothing in eval mode", would name a cause the evidence does not show).
LOCATED = "located"

# What to compare in a part the trace found to differ, by its class: the book's own definition.
PART_HINTS = {
    "GELU": "compare your GELU with the book's tanh approximation, constant by constant: "
    "0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3))).",
    "LayerNorm": "the book's LayerNorm takes the mean and the biased variance (unbiased=False) "
    "over the last dimension, divides by sqrt(var + 1e-5), then applies scale and shift.",
}


def small_input(x: torch.Tensor) -> torch.Tensor:
    """The first sequence of a batch, cut to ``MAX_TOKENS`` tokens (keeps the trace small)."""
    return x[:1, :MAX_TOKENS] if x.dim() >= 2 else x


def localize(
    worker: Worker, reply: dict, reference: nn.Module, x: torch.Tensor
) -> tuple[Difference, nn.Module] | None:
    """The first part of the student's module (kept by the worker under ``reply["handle"]``,
    loaded with ``reference``'s weights) whose output differs from ``reference``'s part for the
    same input, on ``x``, and that part of the reference; None when none is found (or the
    student's code raises while traced). ``reference`` is copied first: a shared (remembered)
    module is never changed."""
    reference = copy.deepcopy(reference)
    weights = {k: v.detach() for k, v in reference.named_parameters()}
    mapped = under_student_names(weights, reply["module"])
    renames = module_renames(dict(zip(weights, mapped, strict=True)))
    try:
        trace = worker.call("trace", handle=reply["handle"], x=small_input(x))
    except StudentError:
        return None
    found = first_difference(reference, trace, renames, rtol=RTOL, atol=ATOL)
    if found is None:
        return None
    return found, dict(reference.named_modules()).get(found.reference, reference)


def cause_of(found: Difference, part: nn.Module) -> Cause:
    """The cause a difference found in ``part`` (the reference's) names: for a part whose own
    forward differs, the changed step of the book's forward that gives the student's output
    (``attention_variants``) when one does; else the part, with what to compare in it."""
    if found.own_forward and found.given is not None and found.gave is not None:
        variant = what_it_computes(part, found.given, found.gave)
        if variant is not None:
            text = f"inside {found.where()}, {variant.text}"
            return Cause(f"forward:{found.reference}:{variant.key}", text, variant.hint, PART)
    hint = PART_HINTS.get(found.cls, "") if not found.own_forward else ""
    # By class: a class computes the same wherever it is used (each block, a block alone).
    where = "own-forward" if found.own_forward else "output"
    return Cause(f"part:{found.cls}:{where}", found.sentence(), hint, PART)


def reported() -> bool:
    """Whether a failure here is the one the report shows: hypothesis's final run of the shrunk
    example (``is_final``), or a run outside hypothesis (a replayed example). The failures met
    while shrinking are not localized: their messages are never read."""
    try:
        from hypothesis.control import current_build_context

        return bool(getattr(current_build_context(), "is_final", True))
    except Exception:  # no build context: not inside hypothesis (or a release without one)
        return True


@contextmanager
def localized(
    worker: Worker, reply: dict, reference: Callable[[], nn.Module], x: torch.Tensor
) -> Iterator[None]:
    """Run the comparison inside; if it fails, put the sentence of ``localize``'s difference
    first in its message. The verdict and points do not change; the kind (which chooses the hint)
    becomes ``LOCATED`` when the difference is in a part's own output, and stays the same when it
    is in how a module combines parts that each agree (the check's hint may be about that).
    ``reference`` gives the reference module whose weights the student's holds (called only
    after a failure; it may be a shared, remembered one: ``localize`` copies it)."""
    try:
        yield
    except CheckFailed as failed:
        if not reported():
            raise
        try:
            rebuilt = reference()
        except CheckFailed:  # the module cannot be rebuilt: its own check says why
            raise failed from None
        located = localize(worker, reply, rebuilt, x)
        if located is None:
            raise
        found, part = located
        # One cause for every check that finds its first difference in the same part; the same
        # exception, its message and kind changed: whatever else it carries stays. The sentence
        # of the difference leads the message unless the cause says more (a changed step).
        failed.cause = cause_of(found, part)
        if not failed.cause.key.startswith("forward:"):
            failed.args = (f"{found.sentence()}\n{failed}",)
        if not found.own_forward or failed.cause.key.startswith("forward:"):
            failed.kind = LOCATED
        raise
