"""Checks for exercise 3.2: a two-head ``MultiHeadAttentionWrapper`` with 2-D context vectors.

``make_2d_wrapper(d_in, context_length, dropout)`` runs in the worker with arguments the judge
draws (never only the book's 3 and 6); the judge rebuilds the book's wrapper from the returned
module's weights (``llm_pack.checks.attention_rebuild``) and compares the two on its own inputs.
"""

from __future__ import annotations

import re

import torch

from grader.pack.judge import (
    ROOT,
    WRONG,
    Cause,
    Check,
    CheckFailed,
    Worker,
    assert_close,
    same_weights,
)
from llm_pack.checks.attention_rebuild import (
    INPUT_SOURCE,
    NO_MASK,
    assert_causal,
    build_student,
    judge_input,
    rebuild_wrapper,
    reference_forward,
    shape_text,
    student_forward,
)
from llm_pack.checks.ex3_2_heads import HEADS_CHECK
from llm_pack.checks.ex3_2_strategies import (
    asked_text,
    call_text,
    causal_cases,
    default_cases,
    wrapper_arguments,
    wrapper_inputs,
)
from llm_pack.checks.localized import localized
from llm_pack.strategies import dropout_rates

# --- the judge's side -------------------------------------------------------------------------

PROJECTION = re.compile(r"(?:.*\.)?W_(?:query|key|value)\.weight")
MASK = re.compile(r"(?:.*\.)?mask")
# The kinds the default-dropout and causality hints are for: a rate found in the module's
# dropout layers; a mask found missing (the causality check's own failure shows only that a
# token sees later ones: the mask may be there, and the softmax run over the wrong dimension).
DEFAULT_RATE = "wrong:default-rate"
# The kind of a width failure of a module that is the book's wrapper: what the width hint is for.
HEAD_WIDTH = "wrong:head-width"
ARGUMENTS_HINT = (
    "pass the function's own d_in, context_length and dropout on to the wrapper; the book's "
    "example values (d_in=3, context_length=6, dropout=0.0) fit only that example."
)


def rebuilt(reply: dict, owner: str) -> torch.nn.Module:
    """The book's wrapper rebuilt from the student's module (shared: read only)."""
    description = reply["module"]
    return same_weights.reused("wrapper", description, lambda: rebuild_wrapper(description, owner))


def expected_output(
    reference: torch.nn.Module, ex: dict, x: torch.Tensor, train: bool
) -> torch.Tensor:
    """The rebuilt wrapper's output on ``x``, the example's input (``batch_of``)."""
    key = (ex["batch"], ex["num_tokens"], ex["d_in"], ex["seed"], train)
    return same_weights.expected(
        reference, key, lambda: reference_forward(reference, x, train, ex["seed"])
    )


def build(worker: Worker, ex: dict) -> dict:
    return build_student(
        worker,
        call_text(ex),
        asked_text(ex),
        d_in=ex["d_in"],
        context_length=ex["context_length"],
        dropout=ex["dropout"],
        seed=ex["seed"],
    )


def batch_of(ex: dict) -> torch.Tensor:
    return judge_input((ex["batch"], ex["num_tokens"], ex["d_in"]), ex["seed"])


def check_two_heads(worker: Worker, ex: dict) -> None:
    reply = build(worker, ex)
    owner = f"the module {call_text(ex)} returned"
    heads = len(rebuilt(reply, owner).heads)
    if heads != 2:
        raise CheckFailed(
            f"{call_text(ex)} returned a MultiHeadAttentionWrapper with {heads} "
            f"head{'s' if heads != 1 else ''}; the exercise keeps num_heads=2"
        )


def check_2d(worker: Worker, ex: dict) -> None:
    reply = build(worker, ex)
    x = batch_of(ex)
    out = student_forward(worker, reply["handle"], x, call_text(ex))
    want = (ex["batch"], ex["num_tokens"], 2)
    if tuple(out.shape) != want:
        width = f" ({out.shape[-1]}-dimensional context vectors)" if out.ndim == 3 else ""
        raise CheckFailed(
            f"the module {call_text(ex)} returned gives an output of shape "
            f"{shape_text(out.shape)}{width} for an input of shape {shape_text(x.shape)}; "
            f"expected {shape_text(want)}: one 2-dimensional context vector per token",
            HEAD_WIDTH if is_wrapper(reply, f"the module {call_text(ex)} returned") else WRONG,
        )


def is_wrapper(reply: dict, owner: str) -> bool:
    """Whether the module is the book's wrapper (it rebuilds as one): only then is its width
    the number of heads times the width of one head, which the width hint is about."""
    try:
        rebuilt(reply, owner)
    except CheckFailed:
        return False
    return True


def check_arguments(worker: Worker, ex: dict) -> None:
    description = build(worker, ex)["module"]
    problems = []
    tensors = {k: v for k, v in description["state"].items() if isinstance(v, torch.Tensor)}
    widths = {k: v.shape[1] for k, v in tensors.items() if PROJECTION.fullmatch(k) and v.ndim == 2}
    wrong = {k: w for k, w in widths.items() if w != ex["d_in"]}
    if wrong:
        key = min(wrong)
        problems.append(
            f"its query/key/value weights take inputs of width "
            f"{' and '.join(str(w) for w in sorted(set(wrong.values())))}, not d_in = "
            f"{ex['d_in']} ({key} has shape {tuple(tensors[key].shape)})"
        )
    want = (ex["context_length"],) * 2
    masks = sorted({tuple(v.shape) for k, v in tensors.items() if MASK.fullmatch(k)} - {want})
    if masks:
        problems.append(
            f"its causal masks have shape {' and '.join(str(m) for m in masks)}, not {want}: "
            f"they were built for another context_length than {ex['context_length']}"
        )
    rates = description["dropouts"]
    if not rates and ex["dropout"]:
        problems.append("it has no nn.Dropout at all")
    wrong_rates = sorted({p for p in rates.values() if abs(p - ex["dropout"]) > 1e-9})
    if wrong_rates:
        problems.append(
            f"its dropout layers drop with p = {' and '.join(f'{p:g}' for p in wrong_rates)}, "
            f"not dropout = {ex['dropout']:g}"
        )
    if problems:
        said = f"{call_text(ex)} did not build its module from the arguments it was given: "
        said += "; ".join(problems)
        # A module built for other sizes than asked explains the failures that follow from it.
        raise CheckFailed(said, cause=Cause("arguments", said, ARGUMENTS_HINT, ROOT))


def check_same_computation(worker: Worker, ex: dict) -> None:
    reply = build(worker, ex)
    owner = f"the module {call_text(ex)} returned"
    reference = rebuilt(reply, owner)
    x = batch_of(ex)
    # Train mode too when the rate is not 0: dropout must draw the same masks as the book's.
    for train in (False, True) if ex["dropout"] else (False,):
        got = student_forward(worker, reply["handle"], x, call_text(ex), train, ex["seed"])
        mode = f"train mode after torch.manual_seed({ex['seed']})" if train else "eval mode"
        with localized(worker, reply, lambda: reference, x):
            assert_close(
                got,
                expected_output(reference, ex, x, train),
                f"in {mode}, the output of {owner} (expected: the book's "
                "MultiHeadAttentionWrapper with the same weights and dropout)",
            )


def check_default_dropout(worker: Worker, ex: dict) -> None:
    reply = build(worker, ex)
    owner = f"the module {call_text(ex)} returned"
    rates = sorted({p for p in reply["module"]["dropouts"].values() if p != 0})
    if rates:
        raise CheckFailed(
            f"called without dropout, {call_text(ex)} returned a module whose dropout layers "
            f"drop with p = {' and '.join(f'{p:g}' for p in rates)}: the default is "
            "dropout=0.0, so in train mode nothing may be dropped",
            DEFAULT_RATE,
        )
    reference = rebuilt(reply, owner)  # every rate 0.0: none was found above
    x = batch_of(ex)
    got = student_forward(worker, reply["handle"], x, call_text(ex), True, ex["seed"])
    with localized(worker, reply, lambda: reference, x):
        assert_close(
            got,
            expected_output(reference, ex, x, True),
            f"in train mode after torch.manual_seed({ex['seed']}), the output of {owner} "
            "(expected: the book's MultiHeadAttentionWrapper with the same weights and "
            "dropout=0.0, the default: nothing dropped)",
        )


def check_causal(worker: Worker, ex: dict) -> None:
    reply = build(worker, ex)
    owner = f"the module {call_text(ex)} returned"
    x = batch_of(ex)
    with localized(worker, reply, lambda: rebuilt(reply, owner), x):
        assert_causal(worker, reply["handle"], x, ex["keep"], ex["seed"], call_text(ex), owner, 2)


# --- snippets ---------------------------------------------------------------------------------


def _setup(ex: dict) -> str:
    shape = (ex.get("batch", 2), ex.get("num_tokens", ex["context_length"]), ex["d_in"])
    return f"""\
import torch
from reference import MultiHeadAttentionWrapper
from exercises.ex3_2_wrapper_2d import make_2d_wrapper

torch.manual_seed({ex["seed"]})
mha = {call_text(ex)}
x = {INPUT_SOURCE.format(shape=shape, seed=ex["seed"])}
"""


def reproduce_heads(ex: dict) -> str:
    return (
        _setup(ex)
        + """\
print(mha)
print("class:", type(mha).__name__)
print("number of heads:", len(mha.heads) if hasattr(mha, "heads") else "no .heads", "(expected 2)")
"""
    )


def reproduce_2d(ex: dict) -> str:
    return (
        _setup(ex)
        + f"""\
mha.eval()
with torch.no_grad():
    context_vecs = mha(x)
print("output shape:", tuple(context_vecs.shape), "expected:", {(ex["batch"], ex["num_tokens"], 2)})
"""
    )


def reproduce_arguments(ex: dict) -> str:
    return (
        _setup(ex)
        + f"""\
print(mha)
for name, value in mha.state_dict().items():
    print(name, tuple(value.shape))
print("dropout rates:", [m.p for m in mha.modules() if isinstance(m, torch.nn.Dropout)])
print("expected: d_in = {ex["d_in"]} (the second size of each weight), masks of shape "
      "({ex["context_length"]}, {ex["context_length"]}), dropout rates {ex["dropout"]}")
"""
    )


def reproduce_same(ex: dict) -> str:
    return (
        _setup(ex)
        + f"""\
# The book's wrapper with your module's weights (and a fresh causal mask).
head = mha.heads[0]
book = MultiHeadAttentionWrapper(
    head.W_query.in_features, head.W_query.out_features, head.mask.shape[0],
    head.dropout.p, num_heads=len(mha.heads), qkv_bias=head.W_query.bias is not None)
weights = {{k: v for k, v in mha.state_dict().items() if not k.endswith("mask")}}
book.load_state_dict(weights, strict=False)  # the masks stay the book's own
with torch.no_grad():
    for mode in ("eval", "train"):
        getattr(mha, mode)(), getattr(book, mode)()
        torch.manual_seed({ex["seed"]})
        got = mha(x)
        torch.manual_seed({ex["seed"]})
        expected = book(x)
        print(mode, "mode, yours:", got)
        print(mode, "mode, book's:", expected)
        print(mode, "mode, same:", torch.allclose(got, expected, atol=1e-5))
"""
    )


def reproduce_default_dropout(ex: dict) -> str:
    return (
        _setup(ex)
        + f"""\
print("dropout rates:", [m.p for m in mha.modules() if isinstance(m, torch.nn.Dropout)],
      "(expected: all 0.0, the default)")
# The book's wrapper with your module's weights and dropout=0.0.
head = mha.heads[0]
book = MultiHeadAttentionWrapper(
    head.W_query.in_features, head.W_query.out_features, head.mask.shape[0],
    0.0, num_heads=len(mha.heads), qkv_bias=head.W_query.bias is not None)
weights = {{k: v for k, v in mha.state_dict().items() if not k.endswith("mask")}}
book.load_state_dict(weights, strict=False)  # the masks stay the book's own
mha.train(), book.train()
with torch.no_grad():
    torch.manual_seed({ex["seed"]})
    got = mha(x)
    torch.manual_seed({ex["seed"]})
    expected = book(x)
print("train mode, same as with dropout=0.0:", torch.allclose(got, expected, atol=1e-5))
"""
    )


def reproduce_causal(ex: dict) -> str:
    changed = INPUT_SOURCE.format(
        shape=(ex["batch"], ex["num_tokens"] - ex["keep"], ex["d_in"]), seed=ex["seed"] + 1
    )
    return (
        _setup(ex)
        + f"""\
changed = x.clone()
changed[:, {ex["keep"]}:] = {changed}  # only the later tokens change
mha.eval()
with torch.no_grad():
    both = mha(torch.cat([x, changed]))  # both batches in one forward pass
    before, after = both[:{ex["batch"]}], both[{ex["batch"]}:]
print("tokens 0..{ex["keep"] - 1} before:", before[:, :{ex["keep"]}])
print("tokens 0..{ex["keep"] - 1} after: ", after[:, :{ex["keep"]}])
print("unchanged (causal):", torch.allclose(before[:, :{ex["keep"]}], after[:, :{ex["keep"]}]))
"""
    )


CHECKS = [
    Check(
        name="it is a MultiHeadAttentionWrapper with exactly two heads",
        points=2.5,
        strategy=wrapper_arguments(),
        run=check_two_heads,
        hint="keep num_heads=2 and the book's MultiHeadAttentionWrapper (one CausalAttention per "
        "head in self.heads); make the output narrower with another argument.",
        reproduce=reproduce_heads,
        max_examples=5,
    ),
    HEADS_CHECK,
    Check(
        name="its context vectors are 2-dimensional for any d_in, context_length, batch and "
        "num_tokens",
        points=3,
        strategy=wrapper_inputs(),
        run=check_2d,
        hint="the wrapper concatenates its heads' outputs along the last dimension, so a context "
        "vector is (number of heads) x (width of one head's output) wide. Which argument sets "
        "the width of one head's output?",
        reproduce=reproduce_2d,
        hint_kinds=(HEAD_WIDTH,),  # about the book's wrapper: not for a module of another kind
        max_examples=15,
    ),
    Check(
        name="the d_in, context_length and dropout it is given are the ones it uses",
        points=1.5,
        strategy=wrapper_arguments(),
        run=check_arguments,
        hint=ARGUMENTS_HINT,
        reproduce=reproduce_arguments,
        max_examples=10,
    ),
    Check(
        name="called without dropout, it drops nothing, even in train mode (the default "
        "dropout=0.0)",
        points=0.5,
        strategy=default_cases(),
        run=check_default_dropout,
        hint="keep the signature make_2d_wrapper(d_in, context_length, dropout=0.0): the "
        "default rate is 0.0, and a call without dropout passes that 0.0 on to the wrapper.",
        reproduce=reproduce_default_dropout,
        hint_kinds=(DEFAULT_RATE,),
        max_examples=3,
    ),
    Check(
        name="it computes what the book's MultiHeadAttentionWrapper computes with its weights",
        points=1,
        strategy=wrapper_inputs(rates=dropout_rates()),
        run=check_same_computation,
        hint="return the book's MultiHeadAttentionWrapper (or an unchanged copy of the book's "
        "classes); a subclass or an edited copy whose forward differs computes something else.",
        reproduce=reproduce_same,
        max_examples=10,
    ),
    Check(
        name="it is causal: a token never sees the tokens after it",
        points=1,
        strategy=causal_cases(),
        run=check_causal,
        hint="each head must keep the causal mask: the scores above the diagonal are filled "
        "with -inf before the softmax, so token i attends only to tokens 0..i.",
        reproduce=reproduce_causal,
        hint_kinds=(NO_MASK,),
        max_examples=10,
    ),
]
