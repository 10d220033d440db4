"""The judge's side of exercises 3.2 and 3.3, where the student returns an attention module.

The worker builds the student's module and describes it (``grader.worker.probes.describe_module``:
class, state, dropout rates, a few attributes). From that description the judge rebuilds a clean
reference module (``rebuild_wrapper``, ``rebuild_mha``) with the student's weights and its own,
clean causal mask, and compares it with the student's module, which runs in the worker on
inputs the judge draws (``judge_input``). A module that is not built like the book's class
cannot be rebuilt, and the reason says why in plain words.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import torch
from torch import nn

from grader.pack import judge as hints
from grader.pack.judge import (
    ATOL,
    ROOT,
    RTOL,
    STATEMENT,
    Cause,
    CheckFailed,
    StudentError,
    Worker,
    constructor_cause,
    expect_tensor,
    explain_student_error,
    is_stub,
    pair_text,
    seeded,
    too_big,
)
from llm_pack.checks import attention_sizes
from reference import MultiHeadAttention, MultiHeadAttentionWrapper

# How a reproduce snippet makes the judge's input: its own generator, so that building the
# module first (which draws random weights) does not change the input.
INPUT_SOURCE = "torch.rand({shape}, generator=torch.Generator().manual_seed({seed}))"


def judge_input(shape: tuple[int, ...], seed: int) -> torch.Tensor:
    """The input the judge feeds both modules, made exactly as ``INPUT_SOURCE`` makes it."""
    return torch.rand(shape, generator=torch.Generator().manual_seed(seed))


# The kind of a causality failure whose evidence shows the causal mask missing: the only one the
# causality checks' hints (which name that cause) are for.
NO_MASK = "wrong:no-mask"

# A wrapper with more heads than this is not rebuilt: it is wrong anyway (3.2 asks for two), and
# rebuilding thousands of heads per example would stall the judge.
MAX_HEADS = 64


def shape_text(shape: Any) -> str:
    return "(" + ", ".join(str(int(n)) for n in shape) + ")"


# --- calling the student's module -------------------------------------------------------------


def call_student(worker: Worker, action: str, what: str, **args: Any) -> Any:
    """Run a probe; an exception in student code fails the check with ``what`` as context.

    A stub's ``NotImplementedError`` passes through, so that it reads "not done yet".
    """
    try:
        return worker.call(action, **args)
    except StudentError as exc:
        if is_stub(exc.info):
            raise
        cause = constructor_cause(worker, exc.info, {})  # a misspelled __init__ of theirs
        raise CheckFailed(
            f"{what}: {explain_student_error(exc.info)}", hints.raised(exc.info), exc.info, cause
        ) from None


def build_student(worker: Worker, call: str, asked: str = "", **args: Any) -> dict:
    """Build the student's module in the worker: ``{"handle", "module": description}``.

    A module too big to be the answer (over ``attention_sizes.STATE_BOUND``: ``too_big``)
    fails, saying what it is and what the exercise asks for (``asked``), and is not built
    again in this worker."""
    message = too_big.refused(worker)
    if message is None:
        bound = attention_sizes.STATE_BOUND
        what = f"calling {call} failed"
        reply = call_student(worker, "build", what, max_state_bytes=bound, **args)
        if not reply["module"]["is_module"]:
            kind = hints.returned(reply["module"]["class"])
            raise CheckFailed(
                f"{call} returned a {reply['module']['class']}, not a torch.nn.Module", kind
            )
        if "too_big" not in reply["module"]:
            _note_context(worker, reply)
            return reply
        message = too_big.refusal(call, reply["module"], asked, attention_sizes.MARGIN)
        too_big.remember(worker, message)
    # One place raises it, first time or not: hypothesis takes another place for another bug.
    raise CheckFailed(message, TOO_BIG)


# The kind of a module far too big to be the answer: its message says what it is and what the
# exercise asks for; the rebuild hint (attribute names, buffers) is not about it.
TOO_BIG = "wrong:too-big"


# The context_length of each module built (the side of its causal masks), by worker and handle:
# what an input of full length is, to tell a failure on shorter inputs apart.
_CONTEXT: dict[tuple[int, int], int] = {}
MASK_KEY = re.compile(r"(?:.*\.)?mask")


def _note_context(worker: Worker, reply: dict) -> None:
    state = reply["module"].get("state") or {}
    sides = {
        int(v.shape[-1])
        for k, v in state.items()
        if MASK_KEY.fullmatch(k) and isinstance(v, torch.Tensor) and v.ndim == 2
    }
    if len(sides) == 1 and isinstance(reply.get("handle"), int):
        _CONTEXT[(id(worker), reply["handle"])] = sides.pop()


def student_forward(
    worker: Worker,
    handle: int,
    x: torch.Tensor,
    call: str,
    train: bool = False,
    seed: int = 0,
) -> torch.Tensor:
    """The student's module applied to ``x`` in the worker (eval mode unless ``train``). When
    it raises on an input shorter than its context_length and runs on one of full length, the
    failure says so: its forward is sized for context_length, not for the input."""
    mode = "train" if train else "eval"
    what = f"the module {call} returned, in {mode} mode, on an input of shape {shape_text(x.shape)}"
    try:
        out = call_student(
            worker, "forward", f"{what} failed", handle=handle, x=x, train=train, seed=seed
        )
    except CheckFailed as failed:
        failed.cause = failed.cause or _too_short(worker, handle, x, seed)
        raise
    return expect_tensor(out, f"the output of {what}")


def _too_short(worker: Worker, handle: int, x: torch.Tensor, seed: int) -> Cause | None:
    """The cause of a forward that raised on ``x`` when it runs on an input of the module's
    full context_length (the same tokens, then more); None when it does not, or cannot be told."""
    full = _CONTEXT.get((id(worker), handle))
    if full is None or x.dim() != 3 or x.shape[1] >= full:
        return None
    longer = torch.cat([x, judge_input((x.shape[0], full - x.shape[1], x.shape[2]), seed)], 1)
    try:
        worker.call("forward", handle=handle, x=longer, train=False, seed=seed)
    except StudentError:
        return None
    n = x.shape[1]
    return Cause(
        "length:context",
        f"your module runs on inputs of context_length = {full} tokens and raises on shorter "
        f"ones ({n} token{'s' if n != 1 else ''}): its forward is sized for context_length, "
        "not for the input (a causal mask not cut to the input's length, say)",
        "cut the mask to the input's length before it meets the scores: "
        "self.mask.bool()[:num_tokens, :num_tokens].",
        ROOT,
    )


def reference_forward(
    module: nn.Module, x: torch.Tensor, train: bool = False, seed: int = 0
) -> torch.Tensor:
    """The rebuilt reference applied to ``x`` after ``torch.manual_seed(seed)``; the mode is
    set under the same lock, as the module may be shared (``same_weights``)."""
    try:
        with seeded(seed):
            return module.train(train)(x)
    except Exception as exc:  # the student's weights may not fit the judge's input
        raise CheckFailed(
            f"the book's {type(module).__name__} rebuilt from your module's weights cannot run "
            f"on an input of shape {shape_text(x.shape)}: {str(exc).splitlines()[0][:300]}",
            hints.SHAPE,  # its sizes do not fit the input: it was rebuilt, the structure holds
        ) from None


def same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and torch.allclose(
        a.to(b.dtype), b, rtol=RTOL, atol=ATOL, equal_nan=True
    )


def first_changed_token(before: torch.Tensor, after: torch.Tensor, keep: int) -> int | None:
    """The first of the tokens ``0 .. keep-1`` whose output differs between the two runs."""
    for t in range(keep):
        if not same(after[:, t], before[:, t]):
            return t
    return None


def assert_causal(
    worker: Worker,
    handle: int,
    x: torch.Tensor,
    keep: int,
    seed: int,
    call: str,
    owner: str,
    width: int,
) -> None:
    """Change only tokens ``keep ..`` of ``x`` and fail unless the outputs of tokens before
    ``keep`` stay the same (``owner`` names the module, ``width`` its output width)."""
    batch, n, d_in = x.shape
    changed = x.clone()
    changed[:, keep:] = judge_input((batch, n - keep, d_in), seed + 1)
    # One forward pass over both batches (sequences of a batch never see each other).
    both = student_forward(worker, handle, torch.cat([x, changed]), call)
    before, after = both[:batch], both[batch:]
    if before.shape != after.shape or before.ndim < 2 or before.shape[1] != n:
        raise CheckFailed(
            f"{owner} gives outputs of shape {shape_text(before.shape)}, not one context vector "
            f"per token ({shape_text((batch, n, width))})"
        )
    token = first_changed_token(before, after, keep)
    if token is not None:
        later = f"token {keep}" if keep == n - 1 else f"tokens {keep} to {n - 1}"
        raise CheckFailed(
            f"changing only {later} of the input (counting from 0) changed the context vector "
            f"of token {token}: the module lets a token see the tokens after it.\n"
            + pair_text(before[:, token], after[:, token], ("Before", "After"))
        )


# --- rebuilding the reference from a description ------------------------------------------------


def _keys_text(keys: list[str], limit: int = 6) -> str:
    return ", ".join(keys[:limit]) + (" ..." if len(keys) > limit else "")


def _tensor(state: dict, key: str, ndim: int, owner: str) -> torch.Tensor:
    value = state.get(key)
    if not isinstance(value, torch.Tensor) or value.ndim != ndim:
        have = _keys_text(sorted(state)) or "nothing"
        raise CheckFailed(
            f"{owner} has no {ndim}-D tensor {key!r} in its state_dict(), so it is not built "
            f"like the book's class (its state_dict() holds: {have})",
            hints.STRUCTURE,
        )
    return value


def _square(mask: torch.Tensor, owner: str, key: str) -> int:
    if mask.shape[0] != mask.shape[1]:
        raise CheckFailed(
            f"{owner}'s causal mask {key!r} has shape {tuple(mask.shape)}; the book's mask is "
            "square: (context_length, context_length)",
            hints.STRUCTURE,
        )
    return int(mask.shape[0])


def load_into(reference: nn.Module, description: dict, owner: str) -> nn.Module:
    """``reference`` with the described module's parameters and its own clean buffers, in eval
    mode; fails unless the two have exactly the same state_dict() keys and shapes."""
    state = description["state"]
    expected = reference.state_dict()
    missing = sorted(set(expected) - set(state))
    extra = sorted(set(state) - set(expected))
    problems = []
    if missing:
        problems.append("missing " + _keys_text(missing))
    if extra:
        problems.append("unexpected " + _keys_text(extra))
    problems += [
        f"{k} has shape {tuple(state[k].shape)}, expected {tuple(v.shape)}"
        for k, v in expected.items()
        if k in state
        and (not isinstance(state[k], torch.Tensor) or tuple(state[k].shape) != tuple(v.shape))
    ]
    if problems:
        raise CheckFailed(
            f"{owner} ({description['class']}) is not built like the book's "
            f"{type(reference).__name__}: its state_dict() has " + "; ".join(problems),
            hints.STRUCTURE,
        )
    buffers = {name for name, _ in reference.named_buffers()}
    clean = {k: (expected[k] if k in buffers else state[k]) for k in expected}
    reference.load_state_dict(clean, strict=True)
    return reference.eval()


def wrapper_config(description: dict, owner: str) -> dict:
    """The ``MultiHeadAttentionWrapper`` arguments a described module was built with."""
    state = description["state"]
    num_heads = 0
    while f"heads.{num_heads}.W_query.weight" in state:
        num_heads += 1
    if num_heads == 0:
        have = _keys_text(sorted(state)) or "nothing"
        kind = description["class"]
        book = "MultiHeadAttentionWrapper"
        other = "" if kind == book else f", not the book's {book}"
        raise CheckFailed(
            f"{owner} is a {kind}{other}: its state_dict() has no heads.0.W_query.weight, and "
            f"the book's {book} keeps one CausalAttention per head in self.heads. Your "
            f"module's state_dict() holds: {have}",
            hints.STRUCTURE,
        )
    if num_heads > MAX_HEADS:
        raise CheckFailed(
            f"{owner} has {num_heads} heads; the grader rebuilds wrappers of at most "
            f"{MAX_HEADS} heads (the exercise asks for 2)"
        )
    weight = _tensor(state, "heads.0.W_query.weight", 2, owner)
    mask = _tensor(state, "heads.0.mask", 2, owner)
    return {
        "d_in": int(weight.shape[1]),
        "d_out": int(weight.shape[0]),
        "context_length": _square(mask, owner, "heads.0.mask"),
        "dropout": float(description["dropouts"].get("heads.0.dropout", 0.0)),
        "num_heads": num_heads,
        "qkv_bias": "heads.0.W_query.bias" in state,
    }


@contextmanager
def structure_cause(description: dict) -> Iterator[None]:
    """A module the judge cannot rebuild as the book's class (a ``STRUCTURE`` failure) is not
    the structure the statement asks for: that failure is the answer's root cause
    (``STATEMENT``), ranked before what the other checks find in the module, which follows
    from it (its dropout layers, widths, outputs)."""
    try:
        yield
    except CheckFailed as failed:
        if failed.kind == hints.STRUCTURE and failed.cause is None:
            said = str(failed).partition("\n")[0]
            failed.cause = Cause(f"structure:{description.get('class')}", said, rank=STATEMENT)
        raise


def rebuild_wrapper(description: dict, owner: str) -> nn.Module:
    """A clean reference ``MultiHeadAttentionWrapper`` holding the described module's weights
    and dropout rates."""
    with structure_cause(description):
        return _rebuild_wrapper(description, owner)


def _rebuild_wrapper(description: dict, owner: str) -> nn.Module:
    cfg = wrapper_config(description, owner)
    with warnings.catch_warnings():  # zero-width heads are the student's; no warning here
        warnings.simplefilter("ignore")
        with seeded(None):  # its weights are replaced below; the lock keeps its draws apart
            reference = MultiHeadAttentionWrapper(**cfg)
    for i, head in enumerate(reference.heads):
        head.dropout.p = float(description["dropouts"].get(f"heads.{i}.dropout", cfg["dropout"]))
    return load_into(reference, description, owner)


def mha_config(description: dict, owner: str) -> dict:
    """The ``MultiHeadAttention`` arguments a described module was built with."""
    state = description["state"]
    weight = _tensor(state, "W_query.weight", 2, owner)
    mask = _tensor(state, "mask", 2, owner)
    d_out = int(weight.shape[0])
    num_heads = description["attrs"].get("num_heads")
    if type(num_heads) is not int or num_heads < 1 or d_out % num_heads:
        raise CheckFailed(
            f"{owner} ({description['class']}) has num_heads = {num_heads!r}; the book's "
            f"MultiHeadAttention stores a whole number of heads that divides d_out = {d_out}",
            hints.STRUCTURE,
        )
    return {
        "d_in": int(weight.shape[1]),
        "d_out": d_out,
        "context_length": _square(mask, owner, "mask"),
        "dropout": float(description["dropouts"].get("dropout", 0.0)),
        "num_heads": num_heads,
        "qkv_bias": "W_query.bias" in state,
    }


def rebuild_mha(description: dict, owner: str) -> nn.Module:
    """A clean reference ``MultiHeadAttention`` holding the described module's weights."""
    with structure_cause(description):
        cfg = mha_config(description, owner)
        with seeded(None):  # its weights are replaced by load_into; the lock keeps its draws apart
            reference = MultiHeadAttention(**cfg)
        return load_into(reference, description, owner)
