"""Checks for exercise 3.3: a ``MultiHeadAttention`` the size of GPT-2 small's.

``gpt2_small_attention()`` takes no arguments, so the worker builds the student's module once
per worker (after ``torch.manual_seed(BUILD_SEED)``, as the snippets do) and every check reuses
it: one build costs a 768-wide model and a 1024 x 1024 mask. The judge rebuilds the book's class
from the module's description once too (``llm_pack.checks.attention_rebuild``).

Inputs are 768 wide and mostly short (token counts are drawn on a log scale, up to 512); the
single token and the full 1,024 tokens are explicit examples of one check, because a
1,024-token forward pass costs a few tenths of a second.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch
from hypothesis import strategies as st
from torch import nn

from grader.pack import judge as hints
from grader.pack.judge import ROOT, Cause, Check, CheckFailed, Worker, assert_close, same_weights
from llm_pack.checks.attention_rebuild import (
    INPUT_SOURCE,
    NO_MASK,
    assert_causal,
    build_student,
    judge_input,
    rebuild_mha,
    reference_forward,
    shape_text,
    student_forward,
)
from llm_pack.checks.attention_sizes import GPT2_SMALL_ATTENTION, asked_mha
from llm_pack.checks.localized import localized
from llm_pack.strategies import torch_seeds

CALL = "gpt2_small_attention()"
OWNER = f"the module {CALL} returned"
BUILD_SEED = 123
ANSWER = GPT2_SMALL_ATTENTION
EMB, HEADS, CONTEXT = ANSWER["d_out"], ANSWER["num_heads"], ANSWER["context_length"]
ASKED = asked_mha(**ANSWER)

# --- strategies -------------------------------------------------------------------------------


@st.composite
def gpt2_inputs(draw, max_tokens: int = CONTEXT) -> dict:
    """A batch of ``n_tokens`` 768-wide tokens, ``n_tokens`` drawn on a log scale up to
    ``max_tokens``; inputs longer than 64 tokens come one at a time."""
    top = max(0, (max_tokens - 1).bit_length())
    power = draw(st.integers(min_value=0, max_value=top))
    low = 1 if power == 0 else 2 ** (power - 1) + 1
    n_tokens = draw(st.integers(min_value=low, max_value=min(2**power, max_tokens)))
    batch = draw(st.integers(min_value=1, max_value=2)) if n_tokens <= 64 else 1
    return {"batch": batch, "n_tokens": n_tokens, "seed": draw(torch_seeds())}


@st.composite
def gpt2_causal_cases(draw, max_tokens: int = 16) -> dict:
    """A short input of which the first ``keep`` tokens stay and the rest change."""
    n_tokens = draw(st.integers(min_value=2, max_value=max_tokens))
    return {
        "batch": draw(st.integers(min_value=1, max_value=2)),
        "n_tokens": n_tokens,
        "keep": draw(st.integers(min_value=1, max_value=n_tokens - 1)),
        "seed": draw(torch_seeds()),
    }


# --- the judge's side -------------------------------------------------------------------------


@dataclass
class Built:
    """The student's module in one worker, and the book's class rebuilt from it (lazily)."""

    worker: Worker
    handle: int
    description: dict
    rebuilt: nn.Module | None = field(default=None)


_last: Built | None = None  # one slot: a judge grades one submission at a time


def built(worker: Worker) -> Built:
    """The student's module, built once per worker."""
    global _last
    last = _last
    if last is not None and last.worker is worker:
        return last
    reply = build_student(worker, CALL, ASKED, seed=BUILD_SEED)
    _last = Built(worker, reply["handle"], reply["module"])
    return _last


def rebuilt(worker: Worker) -> nn.Module:
    b = built(worker)
    if b.rebuilt is None:
        b.rebuilt = same_weights.reused(
            "mha", b.description, lambda: rebuild_mha(b.description, OWNER)
        )
    return b.rebuilt


def batch_of(ex: dict) -> torch.Tensor:
    return judge_input((ex["batch"], ex["n_tokens"], EMB), ex["seed"])


# The kind of a head count that is the width each of GPT-2 small's heads has (d_out / 12): the
# number of heads and the width of one head passed the other way round, what the hint is about.
HEADS_SWAPPED = "wrong:heads-swapped"


def check_heads(worker: Worker, _: Any) -> None:
    module = rebuilt(worker)
    heads, d_out = module.num_heads, module.d_out
    if heads != HEADS:
        swapped = d_out % HEADS == 0 and heads == d_out // HEADS
        raise CheckFailed(
            f"{CALL} returned a MultiHeadAttention with num_heads = {heads} (heads of "
            f"{d_out // heads if d_out % heads == 0 else '?'} dimensions); GPT-2 small has "
            f"{HEADS} heads",
            HEADS_SWAPPED if swapped else hints.WRONG,
        )


SIZES = "wrong:sizes"  # a size read from the module that is not GPT-2 small's


def check_sizes(worker: Worker, _: Any) -> None:
    state = built(worker).description["state"]
    problems = []
    kind = hints.WRONG  # sizes unread (no such weight): the sizes hint is for sizes read wrong
    for key in ("W_query.weight", "W_key.weight", "W_value.weight", "out_proj.weight"):
        value = state.get(key)
        if isinstance(value, torch.Tensor) and value.ndim == 2:
            d_out, d_in = value.shape
            if (d_in, d_out) != (EMB, EMB):
                problems.append(f"{key.removesuffix('.weight')} maps {d_in} -> {d_out} values")
                kind = SIZES
        else:
            problems.append(f"it has no {key}")
    mask = state.get("mask")
    if not isinstance(mask, torch.Tensor):
        problems.append("it has no causal mask buffer 'mask', which fixes context_length")
    elif tuple(mask.shape) != (CONTEXT, CONTEXT):
        kind = SIZES
        problems.append(
            f"its causal mask has shape {tuple(mask.shape)}, so its context_length is not {CONTEXT}"
        )
    if problems:
        raise CheckFailed(
            f"GPT-2 small's attention maps {EMB} -> {EMB} values (d_in = d_out = {EMB}) with "
            f"context_length = {CONTEXT}, but in {OWNER} " + "; ".join(problems),
            kind,
            # Sizes read wrong explain the failures on inputs of GPT-2's sizes that follow.
            cause=Cause("sizes", "; ".join(problems), rank=ROOT) if kind == SIZES else None,
        )


def check_any_length(worker: Worker, ex: dict) -> None:
    x = batch_of(ex)
    out = student_forward(worker, built(worker).handle, x, CALL)
    want = (ex["batch"], ex["n_tokens"], EMB)
    if tuple(out.shape) != want:
        raise CheckFailed(
            f"{OWNER} gives an output of shape {shape_text(out.shape)} for an input of shape "
            f"{shape_text(x.shape)}; expected {shape_text(want)}",
            hints.SHAPE,
        )
    if not torch.isfinite(out).all():
        raise CheckFailed(
            f"{OWNER} gives NaN or infinite values for an input of shape {shape_text(x.shape)}"
        )


def check_same_computation(worker: Worker, ex: dict) -> None:
    x = batch_of(ex)
    got = student_forward(worker, built(worker).handle, x, CALL)
    reference = rebuilt(worker)
    key = (ex["batch"], ex["n_tokens"], ex["seed"])
    b = built(worker)
    with localized(worker, {"handle": b.handle, "module": b.description}, lambda: reference, x):
        assert_close(
            got,
            same_weights.expected(reference, key, lambda: reference_forward(reference, x)),
            f"in eval mode, the output of {OWNER} (expected: the book's MultiHeadAttention with "
            "the same weights)",
        )


def check_causal(worker: Worker, ex: dict) -> None:
    b, x = built(worker), batch_of(ex)
    # Where the module departs from the book's (its mask, its softmax) is the evidence a hint
    # needs: the localized cause brings its own.
    with localized(
        worker, {"handle": b.handle, "module": b.description}, lambda: rebuilt(worker), x
    ):
        assert_causal(worker, b.handle, x, ex["keep"], ex["seed"], CALL, OWNER, EMB)


# --- snippets ---------------------------------------------------------------------------------


def _setup(ex: dict | None = None) -> str:
    text = f"""\
import torch
from reference import MultiHeadAttention
from exercises.ex3_3_gpt2_attention import gpt2_small_attention

torch.manual_seed({BUILD_SEED})
mha = gpt2_small_attention()
"""
    if ex:
        shape = (ex["batch"], ex["n_tokens"], EMB)
        text += f"x = {INPUT_SOURCE.format(shape=shape, seed=ex['seed'])}\n"
    return text


def reproduce_heads(_: Any) -> str:
    return (
        _setup()
        + f"""\
print(mha)
print("class:", type(mha).__name__)
print("num_heads:", getattr(mha, "num_heads", "no num_heads attribute"), "(expected {HEADS})")
print("head_dim:", getattr(mha, "head_dim", "no head_dim attribute"), "(expected {EMB // HEADS})")
"""
    )


def reproduce_sizes(_: Any) -> str:
    return (
        _setup()
        + f"""\
for name, value in mha.state_dict().items():
    print(name, tuple(value.shape))
print("expected: weights of shape ({EMB}, {EMB}), mask of shape ({CONTEXT}, {CONTEXT})")
"""
    )


def reproduce_any_length(ex: dict) -> str:
    return (
        _setup(ex)
        + f"""\
mha.eval()
with torch.no_grad():
    out = mha(x)
print("output shape:", tuple(out.shape), "expected:", {(ex["batch"], ex["n_tokens"], EMB)})
print("all finite:", torch.isfinite(out).all().item())
"""
    )


def reproduce_same(ex: dict) -> str:
    return (
        _setup(ex)
        + """\
# The book's class with your module's weights (and a fresh causal mask).
book = MultiHeadAttention(
    mha.W_query.in_features, mha.W_query.out_features, mha.mask.shape[0], 0.0,
    num_heads=mha.num_heads, qkv_bias=mha.W_query.bias is not None)
weights = {k: v for k, v in mha.state_dict().items() if k != "mask"}
book.load_state_dict(weights, strict=False)  # the masks stay the book's own
mha.eval(), book.eval()
with torch.no_grad():
    got, expected = mha(x), book(x)
print("yours: ", got)
print("book's:", expected)
print("same:", torch.allclose(got, expected, atol=1e-5))
"""
    )


def reproduce_causal(ex: dict) -> str:
    changed = INPUT_SOURCE.format(
        shape=(ex["batch"], ex["n_tokens"] - ex["keep"], EMB), seed=ex["seed"] + 1
    )
    keep = ex["keep"]
    return (
        _setup(ex)
        + f"""\
changed = x.clone()
changed[:, {keep}:] = {changed}  # only the later tokens change
mha.eval()
with torch.no_grad():
    both = mha(torch.cat([x, changed]))  # both batches in one forward pass
    before, after = both[:{ex["batch"]}], both[{ex["batch"]}:]
print("tokens 0..{keep - 1} before:", before[:, :{keep}])
print("tokens 0..{keep - 1} after: ", after[:, :{keep}])
print("unchanged (causal):", torch.allclose(before[:, :{keep}], after[:, :{keep}], atol=1e-5))
"""
    )


def _none(_: Any) -> None:
    return None


CHECKS = [
    Check(
        name="it is the book's MultiHeadAttention with 12 heads",
        points=3,
        strategy=st.just(None),
        run=check_heads,
        hint="num_heads is the number of heads, and each head gets d_out / num_heads of the "
        "output's dimensions (head_dim): check which of the two numbers you passed.",
        hint_kinds=(HEADS_SWAPPED,),  # the hint says the two were swapped: only then
        reproduce=reproduce_heads,
        counterexample=_none,
        max_examples=1,
    ),
    Check(
        name="d_in = d_out = 768 and context_length = 1024",
        points=2,
        strategy=st.just(None),
        run=check_sizes,
        hint="GPT-2 small's token embeddings and context vectors are both 768 wide, and its "
        "longest input is 1,024 tokens; the book's example uses other sizes (d_in=3, "
        "context_length=6).",
        reproduce=reproduce_sizes,
        hint_kinds=(SIZES,),
        counterexample=_none,
        max_examples=1,
    ),
    Check(
        name="it works on any input of shape (batch, n_tokens <= 1024, 768), from 1 token to 1024",
        points=2,
        strategy=gpt2_inputs(max_tokens=512),
        run=check_any_length,
        # A too-short mask found by its probe brings its own hint; this one names no cause.
        hint="the module takes any input of shape (batch, n_tokens, 768) with n_tokens up to "
        "1024: print its weights' shapes and its mask's, and run it on the snippet's input.",
        reproduce=reproduce_any_length,
        hint_kinds=(*hints.OWN_KINDS, "raised:RuntimeError"),  # a mask too short for the input
        max_examples=8,
        examples=(
            {"batch": 1, "n_tokens": 1, "seed": 0},
            {"batch": 1, "n_tokens": CONTEXT, "seed": 0},
        ),
    ),
    Check(
        name="it computes what the book's MultiHeadAttention computes with its weights",
        points=1,
        strategy=gpt2_inputs(max_tokens=16),
        run=check_same_computation,
        hint="return the book's MultiHeadAttention (or an unchanged copy of the book's class); "
        "a subclass or an edited copy whose forward differs computes something else.",
        reproduce=reproduce_same,
        max_examples=8,
    ),
    Check(
        name="it is causal: a token never sees the tokens after it",
        points=2,
        strategy=gpt2_causal_cases(),
        run=check_causal,
        hint="keep the causal mask: the scores above the diagonal are filled with -inf before "
        "the softmax (cut to the input's length), so token i attends only to tokens 0..i.",
        reproduce=reproduce_causal,
        hint_kinds=(NO_MASK,),  # the hint names that cause: only with the evidence for it
        max_examples=8,
    ),
]
