"""Hypothesis strategies shared by the checks: shapes, seeds and GPT configs.

Each draws what the book's examples never exercise: non-square projections, single tokens and
long inputs, several batch sizes, inputs shorter than the context, random valid GPT configs.
"""

from __future__ import annotations

from functools import cache

from hypothesis import strategies as st

# Each factory returns one strategy object for the same arguments (``functools.cache``): a
# composite that draws from ``gpt_configs()`` calls it on every draw, and hypothesis validates
# a new strategy object (its properties, its filters) before drawing from it, thousands of
# times while it shrinks a counterexample. The examples drawn are the same.


@cache
def torch_seeds() -> st.SearchStrategy[int]:
    return st.integers(min_value=0, max_value=2**16)


@cache
def dims(max_value: int = 8) -> st.SearchStrategy[int]:
    return st.integers(min_value=1, max_value=max_value)


@cache
@st.composite
def attention_shapes(draw, max_dim: int = 8, max_tokens: int = 8) -> dict:
    """``d_in``, ``d_out``, ``n_tokens`` and a seed for the single-sequence attention classes."""
    return {
        "d_in": draw(dims(max_dim)),
        "d_out": draw(dims(max_dim)),
        "n_tokens": draw(dims(max_tokens)),
        "seed": draw(torch_seeds()),
    }


@cache
@st.composite
def batched_inputs(draw, max_d_in: int = 8, max_context: int = 12, max_batch: int = 3) -> dict:
    """``d_in``, ``context_length``, ``batch`` and ``num_tokens <= context_length``, and a seed."""
    context_length = draw(st.integers(min_value=1, max_value=max_context))
    return {
        "d_in": draw(dims(max_d_in)),
        "context_length": context_length,
        "batch": draw(st.integers(min_value=1, max_value=max_batch)),
        "num_tokens": draw(st.integers(min_value=1, max_value=context_length)),
        "seed": draw(torch_seeds()),
    }


@cache
def dropout_rates() -> st.SearchStrategy[float]:
    """Rates with few decimals, so that counterexamples read well."""
    return st.sampled_from([0.0, 0.05, 0.1, 0.2, 0.25, 0.3, 0.5, 0.75])


@cache
@st.composite
def gpt_configs(
    draw,
    max_heads: int = 6,
    max_head_dim: int = 8,
    max_layers: int = 3,
    max_vocab: int = 64,
    max_context: int = 16,
) -> dict:
    """A valid GPT config (``emb_dim`` divisible by ``n_heads``), small enough to run."""
    n_heads = draw(st.integers(min_value=1, max_value=max_heads))
    head_dim = draw(st.integers(min_value=1, max_value=max_head_dim))
    return {
        "vocab_size": draw(st.integers(min_value=2, max_value=max_vocab)),
        "context_length": draw(st.integers(min_value=1, max_value=max_context)),
        "emb_dim": n_heads * head_dim,
        "n_heads": n_heads,
        "n_layers": draw(st.integers(min_value=1, max_value=max_layers)),
        "drop_rate": draw(dropout_rates()),
        "qkv_bias": draw(st.booleans()),
    }


@cache
def wide_gpt_configs() -> st.SearchStrategy[dict]:
    """Small GPT configs at least 4 wide, for checks that look where a dropout acts: LayerNorm
    over 2 values squashes any input to about +-1, which would hide it."""
    return gpt_configs().filter(lambda cfg: cfg["emb_dim"] >= 4)


@cache
def large_gpt_configs() -> st.SearchStrategy[dict]:
    """Configs of realistic size, only ever built on the meta device."""
    return gpt_configs(
        max_heads=32, max_head_dim=128, max_layers=64, max_vocab=100_000, max_context=4096
    )


@cache
@st.composite
def split_dropout_rates(draw) -> dict:
    """Three distinct non-zero rates, in any order of size."""
    rates = draw(
        st.lists(
            st.sampled_from([0.1, 0.2, 0.3, 0.4, 0.5, 0.6]), min_size=3, max_size=3, unique=True
        )
    )
    return dict(zip(("drop_rate_emb", "drop_rate_shortcut", "drop_rate_attn"), rates, strict=True))
