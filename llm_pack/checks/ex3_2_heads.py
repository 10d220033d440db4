"""Exercise 3.2's check that the two heads are two: each has weights of its own.

The other 3.2 checks rebuild the book's wrapper from the student's own weights and compare the
two modules. A wrapper whose heads are one module listed twice (``[CausalAttention(...)] *
num_heads`` in a copy of the book's classes, instead of a new ``CausalAttention`` per head)
passes them all: its ``state_dict()`` holds ``heads.0.*`` and ``heads.1.*`` with equal values,
the rebuilt wrapper has two equal heads, and both compute the same. Yet it is one head of
parameters, used twice, that can never learn two things: not the book's wrapper with two heads.

So here the judge draws weights of its own, different for every parameter of every head, loads
them into the student's module (parameters only: the causal masks stay the module's own) and
into the rebuilt wrapper, and compares the two outputs in eval mode. Heads that are one module
end up with the last head's weights, and the message says so.
"""

from __future__ import annotations

import re

import torch
from torch import nn

from grader.pack import judge as hints
from grader.pack.judge import Check, CheckFailed, Worker, largest_text, pair_text
from llm_pack.checks.attention_rebuild import (
    INPUT_SOURCE,
    build_student,
    call_student,
    judge_input,
    rebuild_wrapper,
    reference_forward,
    same,
    student_forward,
)
from llm_pack.checks.ex3_2_strategies import asked_text, call_text, wrapper_inputs

HEAD = re.compile(r"^heads\.\d+\.")
# The kind of this check's failure when the evidence shows heads that are one module: the only
# failure its hint (which names that cause) is for.
ONE_MODULE = "wrong:one-module"


def judge_weights(reference: nn.Module, seed: int) -> dict[str, torch.Tensor]:
    """Weights of the judge's own for every parameter of ``reference``, uniform in [-1, 1) and
    different in every head, made exactly as the reproduce snippet makes them."""
    g = torch.Generator().manual_seed(seed)
    return {
        k: torch.rand(tuple(v.shape), generator=g) * 2 - 1 for k, v in reference.named_parameters()
    }


def as_one_head(weights: dict[str, torch.Tensor], heads: int) -> dict[str, torch.Tensor]:
    """What loading ``weights`` leaves in a wrapper whose heads are one module: every head holds
    the weights loaded last, those of head ``heads - 1``."""
    return {k: weights[HEAD.sub(f"heads.{heads - 1}.", k)] for k in weights}


def check_own_weights(worker: Worker, ex: dict) -> None:
    call = call_text(ex)
    owner = f"the module {call} returned"
    reply = build_student(
        worker,
        call,
        asked_text(ex),
        d_in=ex["d_in"],
        context_length=ex["context_length"],
        dropout=ex["dropout"],
        seed=ex["seed"],
    )
    reference = rebuild_wrapper(reply["module"], owner)  # a new one: its weights change here
    heads = len(reference.heads)
    weights = judge_weights(reference, ex["seed"])
    reference.load_state_dict(weights, strict=False)
    loaded = call_student(
        worker,
        "load",
        f"loading weights into {owner} failed",
        handle=reply["handle"],
        weights=weights,
    )
    buffers = set(reply["module"]["buffers"]) | {k for k, _ in reference.named_buffers()}
    missing = [k for k in loaded["missing"] if k not in buffers]
    if missing:
        raise CheckFailed(f"{owner} has no {', '.join(missing[:5])} to load weights into")
    x = judge_input((ex["batch"], ex["num_tokens"], ex["d_in"]), ex["seed"])
    got = student_forward(worker, reply["handle"], x, call)
    expected = reference_forward(reference, x)
    if same(got, expected):
        return
    message = (
        f"with weights of the grader's own loaded into every head (model.load_state_dict), "
        f"the output of {owner} differs from the book's MultiHeadAttentionWrapper's with the "
        "same weights"
    )
    kind = hints.WRONG
    if heads > 1:
        reference.load_state_dict(as_one_head(weights, heads), strict=False)
        if same(got, reference_forward(reference, x)):
            kind = ONE_MODULE
            message += (
                f": its {heads} heads are one module listed "
                f"{'twice' if heads == 2 else f'{heads} times'} (the weights loaded "
                f"into heads.0 were overwritten by those of heads.{heads - 1}), so they always "
                "hold the same weights and compute the same context vectors"
            )
    detail = largest_text(expected, got)
    raise CheckFailed(
        f"{message}{f' ({detail})' if detail else ''}\n{pair_text(expected, got)}", kind
    )


def reproduce_own_weights(ex: dict) -> str:
    shape = (ex["batch"], ex["num_tokens"], ex["d_in"])
    return f"""\
import torch
from reference import MultiHeadAttentionWrapper
from exercises.ex3_2_wrapper_2d import make_2d_wrapper

torch.manual_seed({ex["seed"]})
mha = {call_text(ex)}
x = {INPUT_SOURCE.format(shape=shape, seed=ex["seed"])}
print("the heads are one module:", len(mha.heads) > 1 and mha.heads[0] is mha.heads[1])
# The book's wrapper of the same sizes; weights of the grader's own, different in every head.
head = mha.heads[0]
book = MultiHeadAttentionWrapper(
    head.W_query.in_features, head.W_query.out_features, head.mask.shape[0],
    head.dropout.p, num_heads=len(mha.heads), qkv_bias=head.W_query.bias is not None)
g = torch.Generator().manual_seed({ex["seed"]})
weights = {{k: torch.rand(tuple(v.shape), generator=g) * 2 - 1
           for k, v in book.named_parameters()}}
book.load_state_dict(weights, strict=False)
mha.load_state_dict(weights, strict=False)  # parameters only: the masks stay your own
mha.eval(), book.eval()
with torch.no_grad():
    got, expected = mha(x), book(x)
print("yours: ", got)
print("book's:", expected)
print("same:", torch.allclose(got, expected, atol=1e-5))
"""


HEADS_CHECK = Check(
    name="each of its two heads has weights of its own",
    points=0.5,
    strategy=wrapper_inputs(),
    run=check_own_weights,
    hint="build a new CausalAttention for every head, as the book's wrapper does with "
    "[CausalAttention(...) for _ in range(num_heads)]; [CausalAttention(...)] * num_heads puts "
    "one module in the list twice, so both heads always hold the same weights.",
    reproduce=reproduce_own_weights,
    hint_kinds=(ONE_MODULE,),
    max_examples=5,
)
