"""Fault localization for any pack's module exercise: where a student's module first departs
from the reference, found only after a check comparing the two has failed.

A check that compares a whole module's output with the reference's for the same weights runs its
comparison inside ``localized(worker, reply, oracle, x)``. Only when the comparison fails, the
worker traces the student's module (the ``trace`` probe a pack declares: ``grader.pack.worker.
trace_kept``) in eval mode on a small part of the failing input (one sequence, at most
``max_tokens`` tokens); the judge replays each traced part of the reference on what the
student's part received (``grader.judge.localize.first_difference``) and names the first that
differs. The failure's message then starts with that sentence, and the failure carries it as
its cause (``grader.judge.causes``), one cause per class of part, so that every check that
fails because of the same part explains it once. A pack may say more with ``explain`` (a
changed step of a part's own forward, say) and ``part_hints`` (what to compare in a part of a
given class). A correct answer never gets here: its grading is no slower.

The diagnosis never changes a verdict: a failure inside it (a value the judge cannot compare,
a bug of ours) leaves the check's failure as it was, without a cause, and goes to the grader's
log (``GRADE_TRACE_LOG``). Its cost is bounded whatever the trace holds: a part is replayed on
at most ``localize.SIZE_SLACK`` times what the reference's part receives on the same input
(``input_sizes``), and all of one answer's diagnoses stop at ``DIAGNOSIS_SHARE`` of the
exercise's time budget (``WorkerHandle.diagnosed_s`` counts them).
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

import torch
from torch import nn

from grader.judge.causes import PART, Cause
from grader.judge.launch.handle import StudentError, WorkerHandle
from grader.judge.localize import Difference, first_difference
from grader.judge.properties import ATOL, RTOL, CheckFailed
from grader.judge.renames import module_renames
from grader.judge.resilience import log_trace
from grader.protocol.described import ModuleDescription
from grader.protocol.limits import Limits
from grader.shared.tensors import first_tensor

MAX_TOKENS = 8
# The share of an exercise's time budget the judge may spend locating faults in one worker's
# answer (all its checks together): past it, failures keep their verdicts without a cause.
DIAGNOSIS_SHARE = 0.1

# The kind of a failure whose first difference is a part's own output (an activation, a norm):
# the sentence names the cause with its evidence, so no hint is chosen by kind for it (a check's
# own hint would name a cause the evidence does not show).
LOCATED = "located"

# The reference's weights under the student's names (``names(weights, description)``), for a
# module whose parameters are named otherwise; by default they are loaded by name.
Names = Callable[[dict, ModuleDescription], dict]
# A pack's fuller cause for a difference found in a part (the reference's): None to keep the
# part's own sentence.
Explain = Callable[[Difference, nn.Module], Cause | None]


def small_input(x: torch.Tensor, max_tokens: int = MAX_TOKENS) -> torch.Tensor:
    """The first sequence of a batch, cut to ``max_tokens`` tokens (keeps the trace small)."""
    return x[:1, :max_tokens] if x.dim() >= 2 else x


def localize(
    worker: WorkerHandle,
    reply: dict,
    oracle: nn.Module,
    x: torch.Tensor,
    names: Names | None = None,
    max_tokens: int = MAX_TOKENS,
    train: bool = False,
) -> tuple[Difference, nn.Module] | None:
    """The first part of the student's module (kept by the worker under ``reply["handle"]``,
    described in ``reply["module"]``, loaded with ``oracle``'s weights) whose output differs
    from ``oracle``'s part for the same input, on ``x``, and that part of the reference; None
    when none is found (or the student's code raises while traced). ``oracle`` is copied
    first: a shared (remembered) module is never changed. ``train``: both run in train mode
    (only for dropout rates of 0 or 1: deterministic)."""
    oracle = copy.deepcopy(oracle)
    weights = {k: v.detach() for k, v in oracle.named_parameters()}
    mapped = names(weights, reply["module"]) if names is not None else weights
    renames = module_renames(dict(zip(weights, mapped, strict=True)))
    mode = {"train": True} if train else {}  # a pack's own trace probe may take no train
    budget = _budget_left(worker)
    if budget <= 0:  # this answer's diagnoses have had their share: no more traces
        return None
    small = small_input(x, max_tokens)
    try:
        trace = worker.call("trace", handle=reply["handle"], x=small, **mode)
    except StudentError:
        return None
    began = time.monotonic()
    try:
        sizes = input_sizes(oracle, small)
        found = first_difference(
            oracle,
            trace,
            renames,
            rtol=RTOL,
            atol=ATOL,
            train=train,
            sizes=sizes,
            deadline=began + budget,
        )
    finally:
        _spent(worker, time.monotonic() - began)
    if found is None:
        return None
    return found, dict(oracle.named_modules()).get(found.reference, oracle)


def _budget_left(worker: WorkerHandle) -> float:
    """The seconds of diagnosis left to this worker's answer (``DIAGNOSIS_SHARE`` of its
    exercise's budget, less what its diagnoses spent). A pack's stand-in for a worker (the
    ``Worker`` protocol: ``call`` alone) gets the default limits' share."""
    limits = getattr(worker, "limits", None) or Limits()
    return DIAGNOSIS_SHARE * limits.exercise_budget_s - getattr(worker, "diagnosed_s", 0.0)


def _spent(worker: WorkerHandle, seconds: float) -> None:
    try:
        worker.diagnosed_s = getattr(worker, "diagnosed_s", 0.0) + seconds
    except AttributeError:  # a stand-in that takes no attribute: it has no account
        pass


def input_sizes(oracle: nn.Module, x: torch.Tensor) -> dict[str, int]:
    """How many values each part of ``oracle`` receives (its first tensor argument) when
    ``oracle`` runs on ``x`` in eval mode: what a replay of that part may cost, give or take
    ``SIZE_SLACK`` (parts it does not call: 0). Hooks are removed, the mode is left eval."""
    sizes: dict[str, int] = {}
    handles = []

    def hook(name: str) -> Callable[..., None]:
        def record(module: nn.Module, args: tuple) -> None:
            first = first_tensor(list(args))
            if first is not None:
                sizes[name] = max(sizes.get(name, 0), first.numel())

        return record

    for name, part in oracle.named_modules():
        handles.append(part.register_forward_pre_hook(hook(name)))
    oracle.eval()
    try:
        with torch.no_grad():
            oracle(x)
    except Exception:  # the reference does not take this input: nothing is replayed
        sizes.clear()
    finally:
        for handle in handles:
            handle.remove()
    return sizes


def part_cause(found: Difference, part_hints: Mapping[str, str] | None = None) -> Cause:
    """The cause a difference names by itself: the part (one cause per class of part, and
    whether it is the part's output or its own forward that differs), with the hint for its class
    when its own output differs."""
    hint = (part_hints or {}).get(found.cls, "") if not found.own_forward else ""
    where = "own-forward" if found.own_forward else "output"
    return Cause(f"part:{found.cls}:{where}", found.sentence(), hint, PART)


def reported() -> bool:
    """Whether a failure here is the one the report shows: hypothesis's final run of the shrunk
    example (``is_final``), or a run outside hypothesis (a replayed example). The failures met
    while shrinking are not localized: their messages are never read."""
    try:
        from hypothesis.control import current_build_context

        return bool(getattr(current_build_context(), "is_final", True))
    except Exception:  # no build context: not inside hypothesis
        return True


@contextmanager
def localized(
    worker: WorkerHandle,
    reply: dict,
    oracle: Callable[[], nn.Module],
    x: torch.Tensor,
    *,
    names: Names | None = None,
    explain: Explain | None = None,
    part_hints: Mapping[str, str] | None = None,
    max_tokens: int = MAX_TOKENS,
    train: bool = False,
) -> Iterator[None]:
    """Run the comparison inside; if it fails, name where the student's module first departs
    from ``oracle()`` (called only after a failure; it may be a shared, remembered module:
    it is copied) as the failure's cause, its sentence first in the message (unless ``explain``
    gives a fuller cause, which then says it). The verdict and points do not change; the kind
    becomes ``LOCATED`` where the cause says all there is (a part's own output with
    ``part_hints`` given, or a cause of ``explain``'s), and stays the check's (its own hint
    shown) where a module combines parts that each agree or no ``part_hints`` are given.
    ``train``: the trace and the reference run in train mode, for a check whose dropout rates
    are all 0 or 1 (a train-mode run is deterministic only then)."""
    try:
        yield
    except CheckFailed as failed:
        if not reported():
            raise
        try:
            rebuilt = oracle()
        except CheckFailed:  # the module cannot be rebuilt: its own check says why
            raise failed from None
        try:
            diagnosis = _diagnose(
                worker, reply, rebuilt, x, names, explain, part_hints, max_tokens, train
            )
        except Exception:  # the diagnosis is the grader's: its failure never changes a verdict
            log_trace("fault localization failed; the check keeps its verdict, without a cause")
            raise failed from None
        if diagnosis is None:
            raise
        cause, sentence, kind = diagnosis
        failed.cause = cause
        if sentence:  # the same exception, its message changed: all else it carries stays
            failed.args = (f"{sentence}\n{failed}",)
        if kind:
            failed.kind = kind
        raise


def _diagnose(
    worker: WorkerHandle,
    reply: dict,
    rebuilt: nn.Module,
    x: torch.Tensor,
    names: Names | None,
    explain: Explain | None,
    part_hints: Mapping[str, str] | None,
    max_tokens: int,
    train: bool,
) -> tuple[Cause, str, str] | None:
    """What ``localized`` adds to a failure: its cause, the sentence to put first in its message
    ("" for none: the cause says it) and its new kind ("" to keep the check's); None when no
    part is found, or the diagnosis ran out of its budget (``DIAGNOSIS_SHARE``)."""
    located = localize(worker, reply, rebuilt, x, names, max_tokens, train)
    if located is None:
        return None
    found, part = located
    fuller = explain(found, part) if explain is not None else None
    cause = fuller or part_cause(found, part_hints)
    # without part_hints, the check's own hint stays: the pack has no better one for a part
    located_kind = fuller is not None or (not found.own_forward and part_hints is not None)
    kind = LOCATED if located_kind else ""
    return cause, "" if fuller is not None else found.sentence(), kind
