"""Checks for exercise 3.1: transferring SelfAttention_v2's weights into SelfAttention_v1."""

from __future__ import annotations

import torch
from torch import nn

from grader.pack import judge as hints
from grader.pack.judge import Cause, Check, CheckFailed, Worker, assert_close, remembered, seeded
from llm_pack.strategies import attention_shapes
from reference import SelfAttention_v1, SelfAttention_v2

NAMES = ("W_query", "W_key", "W_value")


@remembered
def build(ex: dict):
    """The judge's own modules and input, made exactly as the reproduce snippet makes them
    (shared: read only)."""
    with seeded(ex["seed"]):
        sa_v2 = SelfAttention_v2(ex["d_in"], ex["d_out"])
        sa_v1 = SelfAttention_v1(ex["d_in"], ex["d_out"])
        x = torch.rand(ex["n_tokens"], ex["d_in"])
    return sa_v2, sa_v1, x


@remembered
def expected_output(ex: dict) -> torch.Tensor:
    """``sa_v2(x)``, which ``sa_v1(x)`` must equal after the transfer."""
    sa_v2, _, x = build(ex)
    return sa_v2(x)


def transfer(worker: Worker, ex: dict):
    sa_v2, sa_v1, x = build(ex)
    reply = worker.call(
        "transfer",
        d_in=ex["d_in"],
        d_out=ex["d_out"],
        v2_state=sa_v2.state_dict(),
        v1_state=sa_v1.state_dict(),
    )
    return sa_v2, x, reply


def equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    return tuple(a.shape) == tuple(b.shape) and torch.allclose(a, b, rtol=1e-6, atol=1e-7)


def _holds(w: torch.Tensor, sa_v2: nn.Module, v1_before: dict, name: str) -> str:
    """What ``w``, sa_v1's ``name`` after the transfer, holds, in words; ``""`` when it holds
    what it should (sa_v2's layer of the same name, its weight transposed)."""
    weights = {n: getattr(sa_v2, n).weight for n in NAMES}

    if equal(w, weights[name].T):
        return ""
    for other in NAMES:
        if other != name and equal(w, weights[other].T):
            return f"sa_v2.{other}'s weight (transposed), not sa_v2.{name}'s"
    for other in NAMES:
        if equal(w, weights[other]):
            whose = "" if other == name else f", and it is sa_v2.{other}'s, not sa_v2.{name}'s"
            return f"sa_v2.{other}.weight as it is, not transposed{whose}"
        if w.numel() == weights[other].numel() and equal(w, weights[other].reshape(w.shape)):
            return (
                f"sa_v2.{other}.weight reshaped, not transposed: reshape and view keep the "
                "numbers in their order"
            )
    if name in v1_before and equal(w, v1_before[name]):
        return "its own initial values: nothing was transferred into it"
    return "values that are none of sa_v2's weights"


def copied_back(ex: dict, weights: dict, v2_after: dict | None) -> Cause | None:
    """The cause of a transfer made the other way round: sa_v1's weights unchanged and sa_v2's
    layers holding sa_v1's initial values (transposed or as they are) after the call; None
    when the values did not go that way (``weights``: sa_v1's after the call; ``v2_after``:
    sa_v2's state after it)."""
    if not isinstance(v2_after, dict):
        return None
    sa_v2, sa_v1, _ = build(ex)
    back = []
    for name in NAMES:
        own, now, w = getattr(sa_v1, name).detach(), v2_after.get(f"{name}.weight"), weights[name]
        if not (isinstance(now, torch.Tensor) and isinstance(w, torch.Tensor)):
            return None
        if not equal(w, own) or equal(now, getattr(sa_v2, name).weight):
            return None  # sa_v1 changed, or sa_v2's layer kept its weight
        if equal(now, own.T) or equal(now, own):
            back.append(name)
    if not back:
        return None
    layers = ", ".join(f"sa_v2.{n}.weight" for n in back)
    said = (
        f"transfer_weights(sa_v2, sa_v1) copied the other way, from sa_v1 into sa_v2: after "
        f"the call {layers} hold the values sa_v1's {', '.join(back)} had before it, and "
        "sa_v1 is unchanged"
    )
    hint = (
        "copy from sa_v2 into sa_v1, never the other way: the first argument is the source, "
        "e.g. sa_v1.W_query.copy_(sa_v2.W_query.weight.T) under torch.no_grad()."
    )
    return Cause("weights:other-way", said, hint)


def weights_cause(
    ex: dict, weights: dict, added: list | None = None, v2_after: dict | None = None
) -> Cause | None:
    """The parameters of sa_v1 that do not hold what they should after the transfer, each named
    with what it holds instead (``weights``: the student's sa_v1 weights by name; ``added``:
    the tensors the transfer gave sa_v1 under other names); None when they all do (or one is
    not a tensor: its own message says so). Values copied from sa_v1 into sa_v2 (``v2_after``:
    sa_v2's state after the call) are said as that (``copied_back``)."""
    sa_v2, sa_v1, _ = build(ex)
    before = {k: v.detach() for k, v in sa_v1.state_dict().items()}
    if not all(isinstance(weights.get(n), torch.Tensor) for n in NAMES):
        return None
    if (back := copied_back(ex, weights, v2_after)) is not None:
        return back
    wrong = {n: h for n in NAMES if (h := _holds(weights[n], sa_v2, before, n))}
    if not wrong:
        return None
    said = "; ".join(f"sa_v1.{n} holds {h}" for n, h in wrong.items())
    new = [str(n) for n in added or [] if isinstance(n, str)]
    if new and all("its own initial values" in h for h in wrong.values()):
        names = ", ".join(f"sa_v1.{n}" for n in new)
        return Cause(
            "weights:new-attributes",
            f"transfer_weights gave sa_v1 new attributes ({names}) that SelfAttention_v1's "
            f"forward never reads; it reads {', '.join(wrong)}, which still hold their own "
            "initial values",
            "assign to (or copy into) the attributes forward reads: sa_v1.W_query, "
            "sa_v1.W_key and sa_v1.W_value, with their capital letters.",
        )
    right = [n for n in NAMES if n not in wrong]
    if right:
        said += f" ({' and '.join(right)} hold what they should)"
    transposed = any("not transposed" in h for h in wrong.values())
    hint = (
        "nn.Linear(d_in, d_out) stores its weight with shape (d_out, d_in) and computes "
        "x @ weight.T, while SelfAttention_v1 computes x @ W with W of shape (d_in, d_out): "
        "copy weight.T (a transpose, not a reshape)."
        if transposed
        else "each of sa_v1's W_query, W_key and W_value takes the weight of sa_v2's layer of "
        "the same name, transposed: check each of the three lines."
    )
    key = ",".join(f"{n}:{h.split(':')[0]}" for n, h in wrong.items())
    return Cause(f"weights:{key}", f"after transfer_weights(sa_v2, sa_v1), {said}", hint)


def check_outputs(worker: Worker, ex: dict) -> None:
    _, x, reply = transfer(worker, ex)
    weights = {name: reply["v1"][name]["value"] for name in NAMES}
    added = reply.get("added") if isinstance(reply.get("added"), list) else []
    v2_after = reply.get("v2_state")
    with seeded(None):  # its weights are replaced below; the lock keeps its draws apart
        rebuilt = SelfAttention_v1(ex["d_in"], ex["d_out"])
    for name in NAMES:
        w = weights[name]
        if not isinstance(w, torch.Tensor):
            kind = hints.returned(type(w).__name__)
            raise CheckFailed(f"after the transfer, sa_v1.{name} is not a tensor", kind)
        want = (ex["d_in"], ex["d_out"])
        if tuple(w.shape) != want:
            raise CheckFailed(
                f"after the transfer, sa_v1.{name} has shape {tuple(w.shape)}; "
                f"SelfAttention_v1({ex['d_in']}, {ex['d_out']}) needs {want}",
                hints.SHAPE,
                cause=weights_cause(ex, weights, added, v2_after),
            )
        setattr(rebuilt, name, nn.Parameter(w.clone()))
    try:
        assert_close(
            rebuilt(x), expected_output(ex), "sa_v1(x) after the transfer (expected: sa_v2(x))"
        )
    except CheckFailed as failed:
        failed.cause = weights_cause(ex, weights, added, v2_after)
        raise


def check_v2_unchanged(worker: Worker, ex: dict) -> None:
    sa_v2, _, reply = transfer(worker, ex)
    before = sa_v2.state_dict()
    after = reply["v2_state"]
    if set(after) != set(before):
        raise CheckFailed(
            f"sa_v2's parameters changed names: before {sorted(before)}, after {sorted(after)}"
        )
    for key, value in before.items():
        if not isinstance(after[key], torch.Tensor) or not torch.equal(after[key], value):
            weights = {name: reply["v1"][name]["value"] for name in NAMES}
            raise CheckFailed(
                f"transfer_weights changed sa_v2.{key}; only sa_v1 may change",
                cause=copied_back(ex, weights, after),
            )


def check_trainable(worker: Worker, ex: dict) -> None:
    _, _, reply = transfer(worker, ex)
    for name in NAMES:
        info = reply["v1"][name]
        if not info["registered"] or not info["is_parameter"]:
            raise CheckFailed(
                f"after the transfer, sa_v1.{name} is a plain {info['type']}, not an "
                "nn.Parameter registered on the module: an optimizer would no longer train it"
            )
        if not info["requires_grad"]:
            raise CheckFailed(
                f"after the transfer, sa_v1.{name} has requires_grad=False: gradients no "
                "longer reach it"
            )


def reproduce(ex: dict) -> str:
    return f"""\
import torch
from reference import SelfAttention_v1, SelfAttention_v2
from exercises.ex3_1_weight_transfer import transfer_weights

torch.manual_seed({ex["seed"]})
sa_v2 = SelfAttention_v2(d_in={ex["d_in"]}, d_out={ex["d_out"]})
sa_v1 = SelfAttention_v1(d_in={ex["d_in"]}, d_out={ex["d_out"]})
x = torch.rand({ex["n_tokens"]}, {ex["d_in"]})
before = {{k: v.clone() for k, v in sa_v2.state_dict().items()}}
transfer_weights(sa_v2, sa_v1)
print("sa_v2(x) =", sa_v2(x))
print("sa_v1(x) =", sa_v1(x))
print("same output:", torch.allclose(sa_v1(x), sa_v2(x), atol=1e-5))
print("sa_v2 unchanged:", all(torch.equal(before[k], v) for k, v in sa_v2.state_dict().items()))
print("trainable:", {{n: isinstance(getattr(sa_v1, n), torch.nn.Parameter)
                     and getattr(sa_v1, n).requires_grad for n in ("W_query", "W_key", "W_value")}})
"""


CHECKS = [
    Check(
        name="sa_v1 computes what sa_v2 computes, for any d_in, d_out and input",
        points=5,
        strategy=attention_shapes(),
        run=check_outputs,
        hint="nn.Linear(d_in, d_out) stores its weight with shape (d_out, d_in) and computes "
        "x @ weight.T; SelfAttention_v1 computes x @ W with W of shape (d_in, d_out). A "
        "mistake here is invisible when d_in == d_out.",
        hint_kinds=(hints.SHAPE,),  # a shape that does not fit is the evidence for this hint
        reproduce=reproduce,
    ),
    Check(
        name="sa_v2 is left unchanged",
        points=2,
        strategy=attention_shapes(max_dim=5, max_tokens=3),
        run=check_v2_unchanged,
        hint="copy from sa_v2 into sa_v1, never the other way; in-place operations such as "
        "t_() or copy_() on sa_v2's weights change sa_v2.",
        reproduce=reproduce,
        max_examples=10,
    ),
    Check(
        name="sa_v1's weights are still trainable parameters",
        points=3,
        strategy=attention_shapes(max_dim=5, max_tokens=3),
        run=check_trainable,
        hint="copy into the existing parameters under torch.no_grad(), or assign new "
        "nn.Parameter objects; a detached tensor or requires_grad=False stops training.",
        reproduce=reproduce,
        max_examples=10,
    ),
]
