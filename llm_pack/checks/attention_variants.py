"""What an attention module's forward computes instead of the book's, when its parts agree.

Fault localization (``llm_pack.checks.localized``) can end in an attention module's own forward:
its projections give the book's outputs, yet its context vectors differ. Then the judge replays
the book's forward with one step changed at a time (the softmax over the queries, the scores
scaled by another number, no mask, the mask applied after the softmax) on the input the
student's module received, with the same weights. When the student's output is exactly one of
these, that step is the cause, named with its evidence; when none (or several that differ in
what they say) matches, nothing is claimed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from grader.pack.judge import ATOL, RTOL


@dataclass(frozen=True)
class Variant:
    """One step of the forward changed: ``key`` (what makes it one cause), what the student's
    forward does instead (``text``), and ``hint``."""

    key: str
    text: str
    hint: str


SCALE_HINT = (
    "the book divides the attention scores by sqrt(head_dim), the square root of the size of "
    "each key vector (keys.shape[-1]), before the softmax."
)
VARIANTS: dict[str, Variant] = {
    "softmax-queries": Variant(
        "softmax-queries",
        "its softmax normalizes each column (over the queries, dim=1) instead of each row (over "
        "the keys, dim=-1)",
        "each query's attention weights must sum to 1: torch.softmax(scores, dim=-1).",
    ),
    "scale-tokens": Variant(
        "scale-tokens",
        "it scales the scores by the square root of the number of tokens (keys.shape[1]) "
        "instead of sqrt(head_dim)",
        SCALE_HINT,
    ),
    "scale-heads": Variant(
        "scale-heads",
        "it scales the scores by the square root of num_heads instead of sqrt(head_dim)",
        SCALE_HINT,
    ),
    "scale-d_out": Variant(
        "scale-d_out",
        "it scales the scores by the square root of d_out (all heads together) instead of "
        "sqrt(head_dim)",
        SCALE_HINT,
    ),
    "scale-d_in": Variant(
        "scale-d_in",
        "it scales the scores by the square root of d_in instead of sqrt(head_dim)",
        SCALE_HINT,
    ),
    "scale-none": Variant(
        "scale-none", "it does not scale the scores before the softmax", SCALE_HINT
    ),
    "scale-no-sqrt": Variant(
        "scale-no-sqrt",
        "it divides the scores by head_dim itself, not by its square root",
        SCALE_HINT,
    ),
    "no-mask": Variant(
        "no-mask",
        "it applies no causal mask: every token attends to the tokens after it",
        "fill the scores above the diagonal with -inf before the softmax: "
        "scores.masked_fill(mask.bool()[:n, :n], -torch.inf).",
    ),
    "mask-after-softmax": Variant(
        "mask-after-softmax",
        "it masks the weights after the softmax (so a row no longer sums to 1) instead of the "
        "scores before it",
        "mask the scores with -inf before the softmax: the softmax then gives the masked "
        "places weight 0 and each row still sums to 1.",
    ),
}


SCALED_OTHERWISE = Variant(
    "scale-other", "it scales the scores by another number than sqrt(head_dim)", SCALE_HINT
)


def _attend(
    module: nn.Module, x: torch.Tensor, softmax_dim: int, scale: Callable, mask: str
) -> torch.Tensor:
    """The book's attention forward (CausalAttention or MultiHeadAttention, eval mode) on
    ``x`` (batch, tokens, d_in), with the softmax over ``softmax_dim`` of the scores (batch,
    heads, queries, keys), the scores divided by ``scale(tokens, heads, head_dim, d_in)`` and
    the mask applied ``"before"`` the softmax, ``"after"`` it or ``"none"``."""
    b, t, d_in = x.shape
    heads = int(getattr(module, "num_heads", 1))
    q, k, v = module.W_query(x), module.W_key(x), module.W_value(x)
    d = q.shape[-1] // heads
    q, k, v = (m.view(b, t, heads, d).transpose(1, 2) for m in (q, k, v))
    scores = q @ k.transpose(2, 3)
    future = module.mask.bool()[:t, :t]
    if mask == "before":
        scores = scores.masked_fill(future, -torch.inf)
    weights = torch.softmax(scores / scale(t, heads, d, d_in), dim=softmax_dim)
    if mask == "after":
        weights = weights.masked_fill(future, 0.0)
    context = (weights @ v).transpose(1, 2).reshape(b, t, heads * d)
    out_proj = getattr(module, "out_proj", None)
    return out_proj(context) if isinstance(out_proj, nn.Module) else context


_BOOK = (-1, lambda t, h, d, i: d**0.5, "before")
_CHANGED: dict[str, tuple[int, Callable, str]] = {
    "softmax-queries": (-2, _BOOK[1], "before"),
    "scale-tokens": (-1, lambda t, h, d, i: t**0.5, "before"),
    "scale-heads": (-1, lambda t, h, d, i: h**0.5, "before"),
    "scale-d_out": (-1, lambda t, h, d, i: (h * d) ** 0.5, "before"),
    "scale-d_in": (-1, lambda t, h, d, i: i**0.5, "before"),
    "scale-none": (-1, lambda t, h, d, i: 1.0, "before"),
    "scale-no-sqrt": (-1, lambda t, h, d, i: float(d), "before"),
    "no-mask": (-1, _BOOK[1], "none"),
    "mask-after-softmax": (-1, _BOOK[1], "after"),
}


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and torch.allclose(a.double(), b.double(), rtol=RTOL, atol=ATOL)


def what_it_computes(module: nn.Module, given: torch.Tensor, gave: torch.Tensor) -> Variant | None:
    """The one changed step of the book's forward that gives ``gave`` (the student's output)
    for ``given`` (the input the student's module received), with ``module``'s weights (the
    book's class: CausalAttention or MultiHeadAttention); None when the book's own forward
    cannot be replayed here, or when no variant, or variants of different kinds, match."""
    if given.dim() != 3 or not all(hasattr(module, n) for n in ("W_query", "W_key", "mask")):
        return None
    x = given.float()
    try:
        with torch.no_grad():
            if not _close(_attend(module, x, *_BOOK), module.eval()(x)):
                return None  # not the book's forward: the variants would say nothing
            found = {key for key, how in _CHANGED.items() if _close(_attend(module, x, *how), gave)}
    except Exception:  # shapes the book's forward cannot take: nothing to say
        return None
    if len(found) == 1:
        return VARIANTS[found.pop()]
    if found and all(key.startswith("scale-") for key in found):  # t == heads, say: one claim
        return SCALED_OTHERWISE
    return None
